#include "nnergy/core/error.h"
#include "nnergy/regress/regressor.h"

namespace nnergy::regress {

void RegressorRegistry::add(const std::string& name, std::string summary,
                            RegressorFactory factory) {
  if (contains(name)) {
    throw InternalError("regressor '" + name + "' registered twice");
  }
  entries_.push_back({name, std::move(summary), std::move(factory)});
}

std::unique_ptr<Regressor> RegressorRegistry::create(const std::string& name) const {
  for (const Entry& entry : entries_) {
    if (entry.name == name) {
      return entry.factory();
    }
  }
  std::vector<std::string> known;
  for (const Entry& entry : entries_) {
    known.push_back(entry.name);
  }
  throw InvalidInput("unknown predictor '" + name + "'; known: " + join_with_commas(known));
}

bool RegressorRegistry::contains(const std::string& name) const {
  for (const Entry& entry : entries_) {
    if (entry.name == name) {
      return true;
    }
  }
  return false;
}

std::vector<std::pair<std::string, std::string>> RegressorRegistry::entries() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Entry& entry : entries_) {
    out.emplace_back(entry.name, entry.summary);
  }
  return out;
}

}  // namespace nnergy::regress
