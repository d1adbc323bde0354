#include "nnergy/graph/whitelist.h"

#include <cctype>

#include "nnergy/core/error.h"

namespace nnergy::graph {

Whitelist Whitelist::standard() {
  Whitelist w;
  w.ops_ = {"Conv",
            "ConvTranspose",
            "Gemm",
            "MatMul",
            "BatchNormalization",
            "LayerNormalization",
            "Relu",
            "Gelu",
            "Sigmoid",
            "Tanh",
            "HardSwish",
            "HardSigmoid",
            "MaxPool",
            "AveragePool",
            "GlobalAveragePool",
            "Softmax",
            "Add",
            "Mul",
            "Gather"};
  return w;
}

Whitelist Whitelist::parse(std::string_view list, std::string_view flag) {
  Whitelist w;
  std::string item;
  auto flush = [&] {
    if (item.empty()) return;
    for (char c : item) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_') {
        throw InvalidInput(std::string(flag) + " '" + std::string(list) +
                           "': expected comma-separated ONNX operator types (e.g. Conv,Gemm), "
                           "found '" +
                           item + "'");
      }
    }
    w.ops_.insert(item);
    item.clear();
  };
  for (char c : list) {
    if (c == ',') {
      flush();
    } else if (c != ' ') {
      item += c;
    }
  }
  flush();
  if (w.ops_.empty()) {
    throw InvalidInput(std::string(flag) + ": expected at least one ONNX operator type");
  }
  return w;
}

}  // namespace nnergy::graph
