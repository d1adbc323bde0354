#include "nnergy/archline/atomic_text_file.h"

#include <fstream>
#include <system_error>

#include "nnergy/core/error.h"

namespace nnergy::archline {

void write_text_file_atomically(const std::filesystem::path& path, const std::string& text,
                                const std::string& flag) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::filesystem::path temporary = path;
  temporary += ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw InvalidInput(flag + " " + path.string() + ": cannot create " + temporary.string());
    }
    out << text;
    out.flush();
    if (!out) {
      std::filesystem::remove(temporary, ec);
      throw InvalidInput(flag + " " + path.string() + ": cannot write " + temporary.string());
    }
  }
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw InvalidInput(flag + " " + path.string() + ": cannot replace the file (" + ec.message() +
                       ")");
  }
}

}  // namespace nnergy::archline
