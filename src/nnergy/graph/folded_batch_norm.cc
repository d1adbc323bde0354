#include "nnergy/graph/folded_batch_norm.h"

#include <set>
#include <string_view>
#include <vector>

namespace nnergy::graph {

namespace {

bool is_normalization(std::string_view op_type) {
  return op_type == "BatchNormalization" || op_type == "InstanceNormalization" ||
         op_type == "GroupNormalization" || op_type == "LayerNormalization";
}

// Ops a normalization may sit behind without changing what it normalizes: views, and the
// transposes a channels-last LayerNorm (ConvNeXt) puts around itself.
bool is_pass_through(std::string_view op_type) {
  return op_type == "Reshape" || op_type == "Flatten" || op_type == "Squeeze" ||
         op_type == "Unsqueeze" || op_type == "Identity" || op_type == "Transpose";
}

}  // namespace

FoldedBatchNormSignature detect_folded_batch_norm(const Network& network) {
  const auto& nodes = network.nodes();
  std::vector<std::vector<std::size_t>> consumers(network.tensors().size());
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    for (std::size_t in : nodes[n].inputs) consumers[in].push_back(n);
  }
  // True when tensor `t` reaches a normalization through pass-through ops only.
  auto reaches_normalization = [&](std::size_t t) {
    std::vector<std::size_t> pending = {t};
    std::set<std::size_t> seen;
    while (!pending.empty()) {
      const std::size_t tensor = pending.back();
      pending.pop_back();
      if (!seen.insert(tensor).second) continue;
      for (std::size_t n : consumers[tensor]) {
        if (is_normalization(nodes[n].op_type)) return true;
        if (is_pass_through(nodes[n].op_type)) {
          pending.insert(pending.end(), nodes[n].outputs.begin(), nodes[n].outputs.end());
        }
      }
    }
    return false;
  };
  FoldedBatchNormSignature s;
  for (const Node& node : nodes) {
    if (node.op_type != "Conv") continue;
    ++s.conv_count;
    // Conv inputs: X, W and the optional bias B (absent optional inputs are not listed).
    if (node.inputs.size() >= 3) ++s.biased_conv_count;
    if (!node.outputs.empty() && reaches_normalization(node.outputs.front())) {
      ++s.normalized_conv_count;
    }
  }
  s.matches =
      s.conv_count >= 2 && s.biased_conv_count == s.conv_count && s.normalized_conv_count == 0;
  return s;
}

std::string folded_batch_norm_warning(const FoldedBatchNormSignature& signature) {
  return "WARNING: all " + std::to_string(signature.conv_count) +
         " Conv nodes have a bias and no normalization follows any of them, as in an eval-mode "
         "ONNX export (torch.onnx.export's default), which folds BatchNorm into the Conv before "
         "it. If the model has BatchNorm layers, the export folded them and this training "
         "prediction lacks BatchNorm's forward and backward passes (time, energy and memory). "
         "Export it with BatchNorm kept: torch.onnx.export(model, x, f, "
         "training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False). "
         "Networks without BatchNorm (VGG, AlexNet) look the same: then ignore this note";
}

}  // namespace nnergy::graph
