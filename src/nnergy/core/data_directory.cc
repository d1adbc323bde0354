#include "nnergy/core/data_directory.h"

#include <cstdlib>
#include <system_error>

#include "nnergy/core/error.h"

namespace nnergy {

std::filesystem::path data_directory() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("NNERGY_DATA_DIR"); env != nullptr && *env != '\0') {
    fs::path dir(env);
    if (!fs::is_directory(dir)) {
      throw InvalidInput("NNERGY_DATA_DIR=" + dir.string() +
                         ": expected a directory holding zoo/ and devices.json, found none");
    }
    return dir;
  }
  // Installed (cmake --install, pip install .) before the source tree it was built from, which
  // may have moved on since.
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "nnergy";
    if (fs::is_regular_file(installed / "devices.json", ec)) return installed;
  }
  fs::path source_dir(NNERGY_SOURCE_DATA_DIR);
  if (fs::is_directory(source_dir)) return source_dir;
  throw InvalidInput("nnergy data directory not found: tried " + source_dir.string() +
                     " and <prefix>/share/nnergy; set NNERGY_DATA_DIR");
}

}  // namespace nnergy
