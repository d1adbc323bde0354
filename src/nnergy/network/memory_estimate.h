#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "nnergy/graph/mode.h"
#include "nnergy/graph/op_catalog.h"
#include "nnergy/network/network_prediction.h"

namespace nnergy::network {

/// Estimated peak device memory of one iteration of a network, in bytes, by part.
///
/// The model (an estimate, not a measurement; see estimate_memory):
///   peak = weights + gradients + optimizer state + activations,
/// where only `activations_bytes` depends on the batch. The largest batch that fits assumes it
/// is proportional to the batch: M(b) = fixed + b·per_sample with per_sample = activations at
/// this batch / batch. Not included: the CUDA context and the framework's own state (about
/// 0.3–0.5 GiB per process, held outside the model's allocations), cuDNN/cuBLAS workspaces and
/// the caching allocator's fragmentation and rounding.
struct MemoryEstimate {
  graph::Mode mode = graph::Mode::kInference;
  graph::Optimizer optimizer = graph::Optimizer::kSgdMomentum;  ///< training only
  std::int64_t batch = 1;
  /// Parameters, buffers (BatchNorm running statistics) and floating constants, bytes.
  double weights_bytes = 0;
  /// Training: one gradient per trainable parameter, bytes; 0 for inference.
  double gradients_bytes = 0;
  /// Training: optimizer state, bytes: 0 (sgd), 1× (sgd-momentum) or 2× (adam, adamw) the
  /// trainable parameters; 0 for inference.
  double optimizer_state_bytes = 0;
  /// Peak of the batch-dependent memory, bytes: data inputs plus live activations (inference),
  /// or the larger of the forward and the backward peaks with the saved activations (training).
  double activations_bytes = 0;
  /// Training: data inputs plus the activations kept for the backward pass (part of
  /// `activations_bytes`), bytes; 0 for inference.
  double saved_activations_bytes = 0;
  /// weights + gradients + optimizer state + activations, bytes.
  double peak_bytes = 0;
  /// Batch-independent part: weights + gradients + optimizer state, bytes.
  double fixed_bytes = 0;
  /// activations / batch, bytes per sample.
  double per_sample_bytes = 0;
  /// Memory of the device, bytes; 0 when the catalog does not know it.
  double device_memory_bytes = 0;
  /// Largest batch with fixed + batch·per_sample ≤ device memory (0: not even one sample);
  /// absent when the device memory is unknown or nothing depends on the batch.
  std::optional<std::int64_t> largest_fitting_batch;

  /// True when the device memory is known and the peak exceeds it.
  bool exceeds_device() const {
    return device_memory_bytes > 0 && peak_bytes > device_memory_bytes;
  }
  /// True when the peak exceeds the device memory by more than the estimate's uncertainty
  /// (kMemoryEstimateUncertainty): a run that cannot fit, which predict refuses. Between the two
  /// the run may or may not fit, and predict warns.
  bool exceeds_device_beyond_uncertainty() const;
};

/// How far the estimated peak may lie above a run's real one. The saved activations match what
/// PyTorch's autograd saves within 3 % on 17 of the 20 zoo networks and within 15 % on all
/// (tools/validate_saved_activations.py, data/validation/saved_activations.json); the rest of
/// the peak (transient tensors, workspaces, the allocator's rounding) is not validated against
/// measured peaks, so 25 % is a judgement, not a fitted figure.
inline constexpr double kMemoryEstimateUncertainty = 0.25;

/// Bytes in `gib` GiB (2^30 bytes each).
double gib_to_bytes(double gib);

/// Estimates the peak device memory of one iteration of `network` in `mode` at batch `batch`
/// (the batch the network's shapes were bound to; the per-sample part is divided by it), with
/// `optimizer` in training, on a device of `device_memory_bytes` (0: unknown). Bytes per element
/// come from each tensor's dtype, so call it after any precision cast.
///
/// Activations, walking the nodes in topological (file) order as eager PyTorch runs them:
/// - a tensor occupies memory from the node producing it until its last consumer has run
///   (graph outputs until the end; data inputs for the whole iteration);
/// - view nodes (Reshape, Flatten, Squeeze, Unsqueeze, Identity, inference Dropout) alias their
///   input and allocate nothing; shape-valued tensors cost nothing; no in-place reuse is
///   assumed (a ReLU computed in place by PyTorch is counted as a new tensor);
/// - training keeps, until the backward pass of its producer, every floating activation that
///   requires a gradient and that some node's backward reads, as PyTorch's autograd saves it:
///   the inputs of matrix products, normalizations and activations that take their input (GELU,
///   SiLU), the outputs of those that take their output (ReLU, sigmoid, tanh, softmax, exp),
///   each Mul operand whose partner needs a gradient, a Div's divisor; not what sums, copies,
///   views, casts and index-only ops (Add, Transpose, Concat, Slice, Gather, Where) read; plus
///   the data inputs, train-mode Dropout masks (1 byte per element) and MaxPool's argmax
///   indices (8 bytes per output element). In-place operations
///   and activation recomputation are not modelled;
/// - the backward pass walks the nodes in reverse: a gradient is allocated when the first node
///   needing it runs and freed after its producer's backward; saved activations are freed
///   after their producer's backward. Parameter gradients are counted in full in
///   `gradients_bytes` (they are all alive at the optimizer step).
/// Throws InvalidInput when `batch` < 1.
MemoryEstimate estimate_memory(const CostedNetwork& network, graph::Mode mode,
                               graph::Optimizer optimizer, std::int64_t batch,
                               double device_memory_bytes);

/// One sentence saying what `estimate` includes and excludes, for report notes.
std::string memory_model_note(const MemoryEstimate& estimate);

}  // namespace nnergy::network
