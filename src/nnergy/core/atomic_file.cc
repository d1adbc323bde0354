#include "nnergy/core/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "nnergy/core/error.h"

namespace nnergy {

namespace {

std::filesystem::path temporary_of(const std::filesystem::path& path) {
  std::filesystem::path temporary = path;
  temporary += ".tmp." + std::to_string(::getpid());
  return temporary;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           const std::string& what) {
  write_files_atomically({{path, text, what}});
}

void write_files_atomically(const std::vector<FileToWrite>& files) {
  std::vector<std::filesystem::path> temporaries;
  const auto fail = [&](const FileToWrite& file, const std::string& reason) {
    std::error_code ignored;
    for (const std::filesystem::path& t : temporaries) std::filesystem::remove(t, ignored);
    throw InvalidInput(file.what + " " + file.path.string() + ": cannot write the file (" + reason +
                       ")");
  };
  for (const FileToWrite& file : files) {
    temporaries.push_back(temporary_of(file.path));
    std::ofstream out(temporaries.back(), std::ios::binary | std::ios::trunc);
    if (!out) fail(file, std::strerror(errno));
    out.write(file.text.data(), static_cast<std::streamsize>(file.text.size()));
    out.close();
    if (!out) fail(file, "write failed");
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(temporaries[i], files[i].path, ec);
    if (ec) fail(files[i], ec.message());
  }
}

}  // namespace nnergy
