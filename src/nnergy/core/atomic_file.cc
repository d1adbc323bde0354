#include "nnergy/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "nnergy/core/error.h"

namespace nnergy {

namespace {

// Creates the temporary file of `path` next to it: `<path>.tmp.XXXXXX`, a name nobody can
// predict, created exclusively (mkostemp: O_EXCL, so a planted file or symbolic link of that
// name is never followed or reused), close-on-exec, mode 0644. Returns the descriptor and fills
// `temporary`; -1 with errno set on failure.
int create_temporary(const std::filesystem::path& path, std::filesystem::path& temporary) {
  std::string name = path.string() + ".tmp.XXXXXX";
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return -1;
  ::fchmod(fd, 0644);
  temporary = name;
  return fd;
}

bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
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
    std::filesystem::path temporary;
    const int fd = create_temporary(file.path, temporary);
    if (fd < 0) fail(file, std::strerror(errno));
    temporaries.push_back(temporary);
    const bool written = write_all(fd, file.text);
    const int write_errno = errno;
    if (::close(fd) != 0 || !written) {
      fail(file, written ? "write failed" : std::strerror(write_errno));
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(temporaries[i], files[i].path, ec);
    if (ec) fail(files[i], ec.message());
  }
}

}  // namespace nnergy
