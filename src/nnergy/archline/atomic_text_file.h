#pragma once

#include <filesystem>
#include <string>

namespace nnergy::archline {

/// Writes `text` to `path` atomically: a temporary file in the same directory, flushed, then
/// renamed over `path`, so a reader never sees a half-written file. Creates missing parent
/// directories. Throws InvalidInput naming the path (and the flag `flag`) when it cannot write.
void write_text_file_atomically(const std::filesystem::path& path, const std::string& text,
                                const std::string& flag);

}  // namespace nnergy::archline
