#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nnergy/graph/data_type.h"

namespace nnergy::graph {

/// Static tensor shape; every dimension is known (>= 0) once a network is imported.
using Shape = std::vector<std::int64_t>;

/// Number of elements of `shape` (1 for a scalar).
std::int64_t element_count(const Shape& shape);

/// "[32, 3, 224, 224]".
std::string to_string(const Shape& shape);

/// What a tensor is in the network.
enum class TensorRole {
  kDataInput,   ///< a model input fed with data (images, token ids)
  kParameter,   ///< a trainable weight: an initializer or a graph input that is not data
  kBuffer,      ///< non-trainable state read by a node: BatchNorm running mean and variance
  kConstant,    ///< a Constant node's output or an integer initializer (shapes, scalars, masks)
  kActivation,  ///< produced by a node
};

/// "data", "parameter", "buffer", "constant", "activation".
std::string_view to_string(TensorRole role);
/// Parses the names to_string gives; throws InvalidInput naming `where` otherwise.
TensorRole parse_tensor_role(std::string_view name, std::string_view where);

/// A tensor of the network with its static shape and element type.
struct TensorInfo {
  std::string name;
  Shape shape;
  DataType dtype = DataType::kFloat32;
  TensorRole role = TensorRole::kActivation;
  /// True when the tensor only carries shape arithmetic (Shape → Gather → Concat chains,
  /// integer constants feeding them): it costs nothing when the network runs.
  bool shape_valued = false;
  /// True when training computes a gradient for this tensor (parameters and every
  /// floating-point activation that depends on one).
  bool requires_grad = false;
  /// For graph inputs: the symbolic name of each dimension as declared in the file ("" for a
  /// static dimension), e.g. {"batch", "", "", ""}; empty for other tensors.
  std::vector<std::string> dim_params;

  /// Bytes of the whole tensor.
  double bytes() const;
  /// Number of elements.
  std::int64_t elements() const { return element_count(shape); }
};

}  // namespace nnergy::graph
