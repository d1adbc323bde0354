#pragma once

// Reading a whole file into memory, with the one refusal every reader gives.

#include <filesystem>
#include <string>

namespace nnergy {

/// The bytes of `path`. Throws InvalidInput "PATH: cannot be opened for reading" when it cannot.
std::string read_whole_file(const std::filesystem::path& path);

}  // namespace nnergy
