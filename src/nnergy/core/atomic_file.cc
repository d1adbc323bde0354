#include "nnergy/core/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "nnergy/core/error.h"

namespace nnergy {

void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           const std::string& what) {
  std::filesystem::path temporary = path;
  temporary += ".tmp." + std::to_string(::getpid());
  const auto fail = [&](const std::string& reason) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw InvalidInput(what + " " + path.string() + ": cannot write the file (" + reason + ")");
  };
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) fail(std::strerror(errno));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) fail("write failed");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) fail(ec.message());
}

}  // namespace nnergy
