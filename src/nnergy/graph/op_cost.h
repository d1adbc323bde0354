#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace nnergy::graph {

/// How an operator uses the GPU; decides which peak (matrix or vector) bounds its compute.
enum class OpClass {
  kMatrix,         ///< convolution / GEMM: multiply-accumulate bound, tensor-core eligible
  kElementwise,    ///< one value in, one value out, a few flops each
  kNormalization,  ///< BatchNorm, LayerNorm, Softmax: reductions plus elementwise
  kPooling,        ///< windowed or global pooling and reductions
  kDataMovement,   ///< copies: Concat, Transpose, Slice, Gather (embedding lookup), ...
  kView,           ///< Reshape, Flatten, Squeeze, inference Dropout: no kernel, no traffic
  kShape,          ///< shape arithmetic and constants: folded away when the network runs
  kUnknown,        ///< an operator nnergy does not know: memory-bound fallback
};

/// "matrix", "elementwise", "normalization", "pooling", "data-movement", "view", "shape",
/// "unknown".
std::string_view to_string(OpClass op_class);
/// Parses the names to_string gives; throws InvalidInput naming `where` otherwise.
OpClass parse_op_class(std::string_view name, std::string_view where);

/// The family of kernels a matrix operator runs as, which decides how close to the peak it gets
/// (cuDNN's algorithm regimes for convolutions).
enum class MatrixKind {
  kGemm,         ///< GEMM, MatMul, and every convolution not below (1×1, strided, depthwise, …)
  kConv3x3,      ///< dense 3×3 stride-1 convolution: Winograd-eligible on CUDA cores
  kGroupedConv,  ///< 4 or more groups, fewer than the input channels (ResNeXt): many small GEMMs
};

/// "gemm", "conv3x3", "grouped-conv".
std::string_view to_string(MatrixKind kind);

/// The matrix product a matrix operator's pass runs as: `batch` products of an m × k by a
/// k × n matrix (a convolution as an implicit GEMM: m the output positions, n the output
/// channels per group, k the input channels per group times the kernel's taps, batch the
/// groups).
struct GemmDims {
  double m = 0;
  double n = 0;
  double k = 0;
  double batch = 1;
  bool convolution = false;  ///< an implicit GEMM of a convolution (cuDNN), not a GEMM call
  bool operator==(const GemmDims&) const = default;
};

/// Work of one pass of an operator.
struct PassCost {
  double mac_count = 0;     ///< multiply-accumulates (matrix operators only)
  double flop_count = 0;    ///< floating-point operations; 1 MAC = 2 flops
  double byte_count = 0;    ///< bytes read + written, each tensor touched once: a lower bound
  double kernel_count = 0;  ///< kernel launches

  PassCost& operator+=(const PassCost& other);
  /// True when the pass does nothing at all.
  bool empty() const { return flop_count == 0 && byte_count == 0 && kernel_count == 0; }
  bool operator==(const PassCost&) const = default;
};

PassCost operator+(PassCost a, const PassCost& b);
PassCost operator*(PassCost a, double factor);

/// Which passes of a normalization compute statistics of their input (OpCost::statistics).
enum class StatisticsPasses {
  kNone,  ///< none: not a normalization with statistics (Softmax normalizes each row in one pass)
  kTraining,  ///< the training passes only (BatchNorm: inference folds the running statistics)
  kAll,       ///< every pass (LayerNorm, InstanceNorm, GroupNorm)
};

/// Cost of one operator for inference and for a training step, as in PALEO: the backward pass
/// is the data-gradient (for inputs that need one) plus the weight-gradient.
struct OpCost {
  OpClass op_class = OpClass::kUnknown;
  bool known = false;         ///< false when the memory-bound fallback was used
  PassCost inference;         ///< forward pass in eval mode
  PassCost training_forward;  ///< forward pass in train mode (differs for BatchNorm, Dropout)
  PassCost backward;          ///< zero when no input needs a gradient
  std::int64_t parameter_count = 0;  ///< elements of the parameter tensors the node reads
  /// Matrix operators: multiply-accumulates per output element of the forward pass (the K of
  /// the GEMM; C_in/groups·k_h·k_w for a convolution); 0 otherwise.
  double reduction_length = 0;
  /// Matrix operators: the kernel family (kGemm for every other class).
  MatrixKind matrix_kind = MatrixKind::kGemm;
  /// Matrix operators that run as GEMMs: the forward pass's product, and the gradient pass's
  /// (the data gradient dX = dY·Wᵀ and the weight gradient dW = Xᵀ·dY, those needed); empty
  /// for other operators and transposed convolutions.
  std::vector<GemmDims> forward_gemms;
  std::vector<GemmDims> backward_gemms;
  /// Normalizations that reduce their input to statistics (per channel, row or group) and then
  /// normalize with them: the passes that compute statistics. Their kernels reach less of the
  /// bandwidth than streaming kernels (device::Efficiency::statistics_memory_efficiency).
  StatisticsPasses statistics = StatisticsPasses::kNone;
};

}  // namespace nnergy::graph
