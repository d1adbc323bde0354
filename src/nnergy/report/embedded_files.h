#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nnergy::report {

/// A file whose text is compiled into nnergy (cmake/NnergyEmbedFiles.cmake): the HTML reports'
/// template, style sheet and scripts, and the chart libraries they inline.
struct EmbeddedFile {
  std::string_view name;                     ///< e.g. "report.html", "vega.min.js"
  std::span<const std::string_view> chunks;  ///< the text, in pieces of at most 16 KiB

  std::string text() const {
    std::string out;
    for (std::string_view piece : chunks) out += piece;
    return out;
  }
};

/// Every embedded file, in the order CMake listed them.
const std::vector<EmbeddedFile>& embedded_files();

}  // namespace nnergy::report
