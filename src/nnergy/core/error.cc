#include "nnergy/core/error.h"

namespace nnergy {

std::string join_with_commas(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& item : items) {
    if (!joined.empty()) joined += ", ";
    joined += item;
  }
  return joined;
}

}  // namespace nnergy
