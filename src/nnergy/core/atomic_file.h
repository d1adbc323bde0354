#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace nnergy {

/// Writes `text` to `path` atomically: a temporary file next to it (`<path>.tmp.<pid>`), closed,
/// then renamed over `path`, so that a reader never sees half a file and a failed write leaves
/// the old file (or none) in place. The directory must exist. Throws InvalidInput
/// "<what> <path>: cannot write the file (<reason>)", where `what` names the flag or the kind of
/// file (e.g. "--out", "model file"), and removes the temporary file.
void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           const std::string& what);

}  // namespace nnergy
