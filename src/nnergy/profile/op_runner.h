#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nnergy/graph/data_type.h"
#include "nnergy/graph/mode.h"
#include "nnergy/graph/network.h"
#include "nnergy/graph/node.h"
#include "nnergy/graph/tensor.h"

/// Runs single operators of the Network IR with LibTorch so that their time (and later power) can
/// be measured, as in seed 000 §4.2. This header does not include LibTorch: the rest of nnergy
/// never compiles its headers.
namespace nnergy::profile {

/// How a runner is built.
struct RunnerOptions {
  /// Element type of every floating-point tensor (parameters, activations, gradients); the
  /// dtypes recorded in the IR are ignored for floating-point tensors. kFloat32 and kBFloat16
  /// run on the CPU and on CUDA, kFloat16 on CUDA only; other types throw InvalidInput.
  graph::DataType dtype = graph::DataType::kFloat32;
  /// CUDA device index the tensors live on (LibTorch's cuda:N), or -1 for the CPU. build()
  /// throws DeviceError when LibTorch has no such device (Debian's LibTorch has no CUDA).
  int cuda_device = -1;
  /// Operator instances with their own random parameters, cycled through iteration by iteration:
  /// seed 000 §4.2's middle ground between re-using one instance (always cache-hot) and building
  /// a fresh one per iteration (initialization overhead). At least 1.
  int instances = 8;
  /// Upper bound, in bytes, on the parameters of all instances together: fewer instances are
  /// built for large operators (never fewer than 1).
  std::int64_t max_parameter_block_bytes = std::int64_t{256} << 20;
  /// Seed of the random parameters, inputs and output gradient.
  std::uint64_t seed = 0;
};

/// One IR operator instantiated with LibTorch: a block of instances, one input tensor per data
/// input, and for training a preallocated random output gradient. Not thread-safe: use one
/// runner from one thread at a time. Movable, not copyable.
class OpRunner {
 public:
  /// Builds the operator of `node` (an element of `network.nodes()`) from its ONNX attributes and
  /// the shapes of its IR tensors. Inputs with the role kParameter or kBuffer are per-instance
  /// random tensors; other inputs are shared. Throws InvalidInput naming the node and its op type
  /// when the op type is not in supported_ops(), an attribute has a value the runner cannot
  /// express, or `options` is invalid.
  static std::unique_ptr<OpRunner> build(const graph::Network& network, const graph::Node& node,
                                         const RunnerOptions& options);

  /// Builds the whole `network` as one runner that executes its nodes in dataflow (topological)
  /// order with one set of random parameters and one random input per data input: seed 000
  /// §6.1's measured network, to compare with the sum of its measured operations. Besides the op
  /// types of supported_ops() it runs the layout and glue nodes of the zoo's CNNs (network_ops());
  /// nodes that only compute shapes are skipped. A training iteration runs the forward pass and
  /// the backward pass from a fixed random gradient of the (first) output. Throws InvalidInput
  /// naming the network and listing every node type it cannot run, with counts.
  static std::unique_ptr<OpRunner> build_network(const graph::Network& network,
                                                 const RunnerOptions& options);

  OpRunner(const OpRunner&) = delete;
  OpRunner& operator=(const OpRunner&) = delete;
  ~OpRunner();

  /// Runs `iterations` iterations of `mode`, cycling through the instances, and returns when the
  /// work has completed (so that the wall time around the call is the time of the work): on CUDA
  /// it waits for the device (torch::cuda::synchronize) before returning, so the queue is also
  /// empty when the next call starts.
  /// Training iterations reset the input gradients each time (seed 000 §4.2.2); parameter
  /// gradients accumulate, as when gradients are retained across a benchmark loop. Throws
  /// InvalidInput naming the node when LibTorch rejects the operator.
  void run(graph::Mode mode, std::int64_t iterations);

  /// Runs one forward pass of instance 0 in `mode` and returns the shape of its output, to check
  /// the runner against the IR. Throws as run().
  graph::Shape output_shape(graph::Mode mode);

  /// One line, e.g. "Conv /conv1/Conv [1, 3, 8, 8] -> [1, 4, 8, 8] fp32, 8 instances".
  std::string description() const;

  /// Number of instances actually built (RunnerOptions::instances, or fewer for large operators).
  int instances() const;

  /// True when training runs a backward pass: some input of the node needs a gradient (a
  /// parameter, or an activation input); false for an operator whose inputs are all data or
  /// constants, whose training iteration is the forward pass only.
  bool has_backward() const;

 private:
  struct Impl;
  explicit OpRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// ONNX operator types OpRunner::build accepts, sorted.
std::vector<std::string> supported_ops();

/// ONNX operator types OpRunner::build_network runs: supported_ops() plus Clip, Concat, Dropout
/// (identity, as in eval mode), Flatten, Identity and Reshape, sorted.
std::vector<std::string> network_ops();

/// True when OpRunner::build accepts `op_type`.
bool is_supported_op(std::string_view op_type);

/// Sets the number of CPU threads LibTorch uses inside one operator (process-wide; Debian's
/// LibTorch uses 1 unless told). Throws InvalidInput unless `threads` >= 1. Not thread-safe: call
/// it before building runners.
void set_cpu_threads(int threads);

/// The number of CPU threads LibTorch uses inside one operator.
int cpu_threads();

/// Number of CUDA devices LibTorch can use; 0 when LibTorch was built without CUDA (Debian's).
int cuda_device_count();

/// Allows or forbids TF32 tensor-core math for fp32 matrix multiplications (cuBLAS) and
/// convolutions (cuDNN), process-wide (seed 000 §6.1.5: tensor cores change the time of these
/// ops several-fold). PyTorch's own defaults differ between the two (cuDNN on, cuBLAS off); a
/// campaign sets both explicitly. No effect on the CPU. Not thread-safe: call it before running.
void set_tf32(bool allowed);

}  // namespace nnergy::profile
