#pragma once

#include <string>

namespace nnergy::core {

/// `j` (nlohmann::json or ordered_json) as JSON text indented by `indent` spaces, ending in a
/// newline. Names nnergy copies from its inputs (ONNX node and tensor names, trace event names,
/// device names) need not be valid UTF-8; their invalid bytes are written as U+FFFD instead of
/// failing the whole document, as the text reports print them.
template <typename Json>
std::string json_text(const Json& j, int indent = 2) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace nnergy::core
