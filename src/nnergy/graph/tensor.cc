#include "nnergy/graph/tensor.h"

#include "nnergy/core/error.h"

namespace nnergy::graph {

std::int64_t element_count(const Shape& shape) {
  std::int64_t count = 1;
  for (std::int64_t dim : shape) count *= dim;
  return count;
}

std::string to_string(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string_view to_string(TensorRole role) {
  switch (role) {
    case TensorRole::kDataInput:
      return "data";
    case TensorRole::kParameter:
      return "parameter";
    case TensorRole::kBuffer:
      return "buffer";
    case TensorRole::kConstant:
      return "constant";
    case TensorRole::kActivation:
      return "activation";
  }
  return "activation";
}

TensorRole parse_tensor_role(std::string_view name, std::string_view where) {
  for (const TensorRole role : {TensorRole::kDataInput, TensorRole::kParameter, TensorRole::kBuffer,
                                TensorRole::kConstant, TensorRole::kActivation}) {
    if (to_string(role) == name) return role;
  }
  throw InvalidInput(std::string(where) + ": unknown tensor role '" + std::string(name) +
                     "'; accepted: data, parameter, buffer, constant, activation");
}

double TensorInfo::bytes() const {
  return static_cast<double>(elements()) * static_cast<double>(bytes_per_element(dtype));
}

}  // namespace nnergy::graph
