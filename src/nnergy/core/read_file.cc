#include "nnergy/core/read_file.h"

#include <fstream>
#include <sstream>

#include "nnergy/core/error.h"

namespace nnergy {

std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput(path.string() + ": cannot be opened for reading");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace nnergy
