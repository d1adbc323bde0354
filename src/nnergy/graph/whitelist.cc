#include "nnergy/graph/whitelist.h"

#include <onnx/defs/schema.h>

#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/core/nearest_name.h"
#include "nnergy/graph/op_catalog.h"

namespace nnergy::graph {

namespace {

// The operator types of nnergy's op catalog and of the standard ONNX operator set (its latest
// version), sorted and without repeats: the candidates of "did you mean".
std::vector<std::string> operator_types() {
  std::set<std::string> types;
  for (const std::string& op : known_op_types()) types.insert(op);
  for (const onnx::OpSchema& schema : onnx::OpSchemaRegistry::get_all_schemas()) {
    if (schema.domain().empty()) types.insert(schema.Name());
  }
  return {types.begin(), types.end()};
}

}  // namespace

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
    // A custom-domain type ("com.microsoft.FusedConv") cannot be checked; a plain one must be
    // a known operator type, so that a typo does not silently whitelist nothing.
    if (item.find('.') == std::string::npos && !is_known_op(item) &&
        onnx::OpSchemaRegistry::Schema(item) == nullptr) {
      const std::string hint = did_you_mean(item, operator_types());
      throw InvalidInput(std::string(flag) + " '" + std::string(list) +
                         "': expected ONNX operator types (e.g. Conv, Gemm, MatMul, Relu; "
                         "case-sensitive), found '" +
                         item + "'; " + (hint.empty() ? "" : hint + " ") +
                         "correct or remove it (a custom-domain type is written domain.Type)");
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
