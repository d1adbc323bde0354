#include "nnergy/graph/tensor.h"

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

double TensorInfo::bytes() const {
  return static_cast<double>(elements()) * static_cast<double>(bytes_per_element(dtype));
}

}  // namespace nnergy::graph
