#include "nnergy/graph/mode.h"

#include "nnergy/core/error.h"
#include "nnergy/core/nearest_name.h"
#include "nnergy/core/text.h"

namespace nnergy::graph {

std::string_view to_string(Mode mode) {
  return mode == Mode::kInference ? "inference" : "training";
}

Mode parse_mode(const std::string& name, const std::string& flag) {
  const std::string key = ascii_lower(name);
  if (key == "inference" || key == "infer") return Mode::kInference;
  if (key == "training" || key == "train") return Mode::kTraining;
  const std::string hint = did_you_mean(name, {"inference", "training", "infer", "train"});
  throw InvalidInput(flag +
                     ": expected a mode, inference or training (any case; also infer, train), "
                     "found '" +
                     name + "'" + (hint.empty() ? "" : "; " + hint));
}

}  // namespace nnergy::graph
