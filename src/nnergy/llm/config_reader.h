#pragma once

// Reads a Hugging Face config.json into an Architecture: the embedded catalog's entries
// (model_catalog.h) and a user's own file go through the same reader.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "nnergy/llm/architecture.h"

namespace nnergy::llm {

/// The config.json model_type values the reader builds (one architecture family each).
const std::vector<std::string>& supported_model_types();

/// Builds the architecture a config.json describes. `where` names it in messages (the file's
/// path, or "catalog entry 'ID'"). A multimodal config's language model (`text_config`) is read;
/// its vision encoder is not part of the architecture. Throws InvalidInput naming `where` and the
/// field for a config that is not an object, a model_type the reader does not support (naming
/// the supported ones), a missing or malformed field (what was expected and found), or shapes
/// that contradict each other (heads not divisible by kv heads, a layer pattern of the wrong
/// length).
Architecture read_config(const nlohmann::json& config, const std::string& where);

/// read_config of the JSON text of a config.json; a text that is not JSON is InvalidInput naming
/// `where` and the parser's position.
Architecture parse_config(const std::string& text, const std::string& where);

}  // namespace nnergy::llm
