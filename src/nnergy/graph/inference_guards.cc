// Guards in front of ONNX shape inference: what Debian's ONNX 1.12 would crash on is refused
// with a message instead (inference_guards.h).
#include "nnergy/graph/inference_guards.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "nnergy/core/error.h"

namespace nnergy::graph {
namespace {

// The weight's input index of the convolutions whose inference reads the kernel from it.
int weight_input(const std::string& op_type) {
  if (op_type == "Conv" || op_type == "ConvInteger" || op_type == "ConvTranspose") return 1;
  if (op_type == "QLinearConv") return 3;
  return -1;
}

// Ranks the file states: graph inputs and value_info with a shape, initializers.
std::map<std::string, int> stated_ranks(const onnx::GraphProto& graph) {
  std::map<std::string, int> ranks;
  const auto add = [&](const onnx::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().has_shape()) {
      ranks[v.name()] = v.type().tensor_type().shape().dim_size();
    }
  };
  for (const auto& v : graph.input()) add(v);
  for (const auto& v : graph.value_info()) add(v);
  for (const auto& init : graph.initializer()) ranks[init.name()] = init.dims_size();
  return ranks;
}

std::string node_label(const std::string& source, const onnx::NodeProto& node) {
  return source + ": node '" + node.name() + "' (op " + node.op_type() + ")";
}

}  // namespace

void check_for_shape_inference(const onnx::ModelProto& model, const std::string& source) {
  const onnx::ModelProto& parsed = model;
  // A node input that nothing defines is refused before ONNX shape inference sees it: ONNX 1.12's
  // data propagation dereferences a null pointer on some of them (found by fuzz/onnx_import).
  {
    std::set<std::string> defined;
    for (const auto& v : parsed.graph().input()) defined.insert(v.name());
    for (const auto& init : parsed.graph().initializer()) defined.insert(init.name());
    for (const auto& node : parsed.graph().node())
      defined.insert(node.output().begin(), node.output().end());
    for (const auto& node : parsed.graph().node()) {
      for (const auto& in : node.input()) {
        if (!in.empty() && defined.count(in) == 0) {
          throw InvalidInput(source + ": node '" + node.name() + "' (op " + node.op_type() +
                             ") reads '" + in + "', which no node, input or initializer produces");
        }
      }
    }
  }

  // Window attributes below 1 are refused before ONNX shape inference divides by them (ONNX
  // 1.12's convPoolShapeInference: SIGFPE on strides 0, found by fuzz/onnx_import).
  for (const auto& node : parsed.graph().node()) {
    for (const auto& attribute : node.attribute()) {
      const std::string& name = attribute.name();
      const bool window = name == "strides" || name == "dilations" || name == "kernel_shape";
      if (!window && name != "group") continue;
      std::vector<std::int64_t> values(attribute.ints().begin(), attribute.ints().end());
      if (name == "group") values = {attribute.i()};
      if (std::all_of(values.begin(), values.end(), [](std::int64_t v) { return v >= 1; })) {
        continue;
      }
      std::string listed;
      for (const std::int64_t v : values)
        listed += (listed.empty() ? "" : ", ") + std::to_string(v);
      throw InvalidInput(source + ": node '" + node.name() + "' (op " + node.op_type() +
                         "): attribute " + name + " = " + (window ? "[" + listed + "]" : listed) +
                         ": expected " + (window ? "every value" : "a value") + " >= 1");
    }
  }

  // A convolution's kernel comes from its weight when there is no kernel_shape attribute; ONNX
  // 1.12 then indexes it by the input's spatial dimensions without checking the weight's rank.
  const std::map<std::string, int> ranks = stated_ranks(parsed.graph());
  for (const auto& node : parsed.graph().node()) {
    const int w = weight_input(node.op_type());
    if (w < 0) continue;
    if (node.input_size() <= w || node.input(w).empty()) {
      throw InvalidInput(node_label(source, node) + ": expected a weight as input " +
                         std::to_string(w + 1) + ", found " + std::to_string(node.input_size()) +
                         " inputs");
    }
    const auto weight = ranks.find(node.input(w));
    if (weight == ranks.end()) continue;
    if (weight->second < 3) {
      throw InvalidInput(node_label(source, node) + ": weight '" + node.input(w) + "' has " +
                         std::to_string(weight->second) +
                         " dimensions; expected at least 3 (out channels, in channels, kernel)");
    }
    const auto input = ranks.find(node.input(0));
    if (input != ranks.end() && input->second != weight->second) {
      throw InvalidInput(node_label(source, node) + ": input '" + node.input(0) + "' has " +
                         std::to_string(input->second) + " dimensions but weight '" +
                         node.input(w) + "' has " + std::to_string(weight->second) +
                         "; expected the same rank");
    }
  }
}

}  // namespace nnergy::graph
