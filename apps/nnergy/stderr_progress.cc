// Progress lines of long commands on stderr.
#include <unistd.h>

#include <cstdio>

#include "command.h"

namespace nnergy::cli {

std::unique_ptr<report::ProgressLine> stderr_progress(std::string what, std::string unit) {
  return std::make_unique<report::ProgressLine>(
      std::move(what), std::move(unit), ::isatty(STDERR_FILENO) == 1, [](std::string_view text) {
        std::fwrite(text.data(), 1, text.size(), stderr);
        std::fflush(stderr);
      });
}

}  // namespace nnergy::cli
