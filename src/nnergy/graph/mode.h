#pragma once

#include <string>
#include <string_view>

namespace nnergy::graph {

/// What one iteration of a network does: inference (a forward pass in eval mode) or one training
/// step (a forward pass in train mode, then the backward pass), as predicted, profiled and
/// stored.
enum class Mode { kInference, kTraining };

/// "inference", "training".
std::string_view to_string(Mode mode);
/// Parses "inference" (or "infer") and "training" (or "train"), in any ASCII case. Throws
/// InvalidInput naming `flag` otherwise, with the accepted names and, for a near miss,
/// "did you mean".
Mode parse_mode(const std::string& name, const std::string& flag);

}  // namespace nnergy::graph
