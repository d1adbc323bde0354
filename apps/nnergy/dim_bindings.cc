// The --dim NAME=VALUE option of `predict` and `compare`.
#include <map>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/core/error.h"

namespace nnergy::cli {

std::map<std::string, std::int64_t> parse_dim_bindings(const std::vector<std::string>& dims) {
  std::map<std::string, std::int64_t> named;
  for (const std::string& item : dims) {
    const auto eq = item.find('=');
    std::size_t used = 0;
    std::int64_t value = 0;
    bool ok = eq != std::string::npos && eq > 0 && eq + 1 < item.size();
    if (ok) {
      try {
        value = std::stoll(item.substr(eq + 1), &used);
      } catch (const std::exception&) {
        ok = false;
      }
      ok = ok && used == item.size() - eq - 1;
    }
    if (!ok) throw InvalidInput("--dim " + item + ": expected NAME=VALUE with an integer VALUE");
    named[item.substr(0, eq)] = value;
  }
  return named;
}

}  // namespace nnergy::cli
