#include "nnergy/network/runtime.h"

#include <fmt/format.h>

#include <algorithm>

#include "nnergy/core/error.h"

namespace nnergy::network {

std::string_view to_string(Runtime runtime) {
  switch (runtime) {
    case Runtime::kEager:
      return "eager";
    case Runtime::kCudaGraphs:
      return "cuda-graphs";
    case Runtime::kCompiled:
      return "compiled";
  }
  return "eager";
}

Runtime parse_runtime(std::string_view name, std::string_view setting) {
  for (const Runtime r : {Runtime::kEager, Runtime::kCudaGraphs, Runtime::kCompiled})
    if (name == to_string(r)) return r;
  throw InvalidInput(fmt::format(
      "{} {}: expected eager (PyTorch launching each kernel), cuda-graphs (kernels replayed "
      "from a captured graph) or compiled (torch.compile: pointwise chains fused)",
      setting, name));
}

double launch_share(Runtime runtime) {
  switch (runtime) {
    case Runtime::kEager:
      return 1;
    case Runtime::kCudaGraphs:
      return 0;
    case Runtime::kCompiled:
      return kCompiledLaunchShare;
  }
  return 1;
}

namespace {

bool pointwise(const graph::OpCost& c) { return c.op_class == graph::OpClass::kElementwise; }
bool fusable_producer(const graph::OpCost& c) {
  return c.op_class == graph::OpClass::kElementwise || c.op_class == graph::OpClass::kNormalization;
}

// Removes the write and the read-back of `bytes` and, from `absorbed`, its kernels; the
// backward pass loses the same share of its traffic and kernels.
void absorb(graph::OpCost& producer, graph::OpCost& absorbed, double bytes) {
  const auto scale_backward = [](graph::OpCost& c, double removed_forward_bytes) {
    if (c.inference.byte_count <= 0 || c.backward.byte_count <= 0) return;
    const double share = std::min(1.0, removed_forward_bytes / c.inference.byte_count);
    c.backward.byte_count *= 1 - share;
  };
  scale_backward(producer, bytes);
  scale_backward(absorbed, bytes);
  for (graph::PassCost* p : {&producer.inference, &producer.training_forward})
    p->byte_count = std::max(0.0, p->byte_count - bytes);
  for (graph::PassCost* p : {&absorbed.inference, &absorbed.training_forward}) {
    p->byte_count = std::max(0.0, p->byte_count - bytes);
    p->kernel_count = 0;
  }
  absorbed.backward.kernel_count = 0;
}

}  // namespace

CompiledFusion fuse_compiled(const graph::Network& network, std::vector<graph::OpCost>& costs) {
  const auto& nodes = network.nodes();
  CompiledFusion out;
  out.tags.assign(nodes.size(), "");
  // Producer and readers of each tensor.
  std::vector<std::ptrdiff_t> producer(network.tensors().size(), -1);
  std::vector<std::vector<std::size_t>> readers(network.tensors().size());
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    for (std::size_t t : nodes[n].outputs) producer[t] = static_cast<std::ptrdiff_t>(n);
    for (std::size_t t : nodes[n].inputs) readers[t].push_back(n);
  }
  std::vector<int> removed_in(nodes.size(), 0);     // intermediates no longer read
  std::vector<int> removed_out(nodes.size(), 0);    // intermediates no longer written
  std::vector<bool> absorbed(nodes.size(), false);  // runs inside another node's kernel
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    graph::OpCost& consumer = costs[n];
    if (!(pointwise(consumer) || consumer.op_class == graph::OpClass::kNormalization)) continue;
    for (std::size_t t : nodes[n].inputs) {
      const graph::TensorInfo& tensor = network.tensor(t);
      if (tensor.role != graph::TensorRole::kActivation || tensor.shape_valued) continue;
      if (producer[t] < 0 || readers[t].size() != 1) continue;
      const auto p = static_cast<std::size_t>(producer[t]);
      if (nodes[p].outputs.size() != 1) continue;
      graph::OpCost& made = costs[p];
      // A view or a node with no kernel of its own is not a kernel to fuse into, unless it
      // already runs inside a fused one (a chain continues).
      if (made.inference.kernel_count <= 0 && !absorbed[p]) continue;
      const double bytes = tensor.bytes();
      if (pointwise(consumer) && fusable_producer(made)) {
        absorb(made, consumer, bytes);  // epilogue: the consumer joins the producer's kernel
        absorbed[n] = true;
      } else if (consumer.op_class == graph::OpClass::kNormalization && pointwise(made)) {
        absorb(consumer, made, bytes);  // prologue: the producer joins the normalization's
        absorbed[p] = true;
      } else {
        continue;
      }
      ++removed_in[n];
      ++removed_out[p];
      out.bytes_removed += 2 * bytes;
      break;  // one fusion per consumer input chain; the next node continues the chain
    }
  }
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (removed_in[n] == 0 && removed_out[n] == 0) continue;
    if (absorbed[n]) {
      ++out.fused_nodes;
      out.kernels_removed += 1;
    }
    out.tags[n] = fmt::format("compiled:{}:{}:{}", removed_in[n], removed_out[n], absorbed[n]);
  }
  return out;
}

std::string runtime_summary(Runtime runtime, const CompiledFusion& fusion) {
  switch (runtime) {
    case Runtime::kEager:
      return "runtime eager: every kernel launched by the host (eager PyTorch); --runtime "
             "cuda-graphs or compiled for the others";
    case Runtime::kCudaGraphs:
      return "runtime cuda-graphs: the kernels replayed from a captured CUDA graph, no host "
             "launch per kernel (the GPU's own gap between kernels remains)";
    case Runtime::kCompiled:
      return fmt::format(
          "runtime compiled (torch.compile, Inductor's default mode): {} pointwise nodes fused "
          "into their neighbours' kernels, {:g} kernels and {:.1f} MB fewer per inference "
          "(matrix operators keep their library kernels); host launch per kernel estimated at "
          "{:.0f} % of eager PyTorch's (not measured)",
          fusion.fused_nodes, fusion.kernels_removed, fusion.bytes_removed / 1e6,
          kCompiledLaunchShare * 100);
  }
  return "";
}

}  // namespace nnergy::network
