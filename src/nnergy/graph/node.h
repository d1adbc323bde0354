#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace nnergy::graph {

/// One ONNX attribute value: int, float, string, or a list of ints or floats.
using AttributeValue =
    std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>, std::vector<double>>;

/// Attributes by name, sorted, so that iteration order is canonical.
using Attributes = std::map<std::string, AttributeValue>;

/// "5", "0.5", "'NOTSET'", "[1, 1]".
std::string to_string(const AttributeValue& value);

/// One operation of the network.
struct Node {
  std::string name;         ///< the exporter's node name, e.g. "/layer1/layer1.0/conv1/Conv"
  std::string op_type;      ///< ONNX operator type, e.g. "Conv"
  std::string module_path;  ///< module hierarchy, e.g. "layer1/0/conv1" (may be empty)
  std::vector<std::size_t> inputs;   ///< indices into Network::tensors(); absent optional inputs
                                     ///< are not listed
  std::vector<std::size_t> outputs;  ///< indices into Network::tensors()
  Attributes attributes;

  /// Integer attribute, or `fallback` when absent.
  std::int64_t int_attribute(const std::string& key, std::int64_t fallback) const;
  /// Integer-list attribute, or `fallback` when absent.
  std::vector<std::int64_t> ints_attribute(const std::string& key,
                                           std::vector<std::int64_t> fallback) const;
  /// String attribute (e.g. an Einsum equation, an LSTM direction), or `fallback` when absent.
  std::string string_attribute(const std::string& key, const std::string& fallback) const;
};

}  // namespace nnergy::graph
