#include "nnergy/dataset/op_record.h"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <variant>

#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"

namespace nnergy::dataset {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

json parse_json(std::string_view text, std::string_view where) {
  try {
    return core::parse_json_document(text, where);
  } catch (const json::exception& e) {  // parse_error, or out_of_range: a number > 1e308
    throw InvalidInput(fmt::format("{}: not valid JSON: {}", where, e.what()));
  }
}

// A JSON integer as int64, or std::nullopt for an unsigned one beyond int64's range.
std::optional<std::int64_t> as_int64(const json& value) {
  if (value.is_number_unsigned() &&
      value.get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return std::nullopt;
  }
  return value.get<std::int64_t>();
}

graph::AttributeValue attribute_of(const json& value, std::string_view where) {
  if (value.is_boolean()) return std::int64_t{value.get<bool>() ? 1 : 0};
  if (value.is_number_integer()) {
    if (const auto i = as_int64(value)) return *i;
    return value.get<double>();
  }
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {
    bool integers = true;
    for (const json& item : value) {
      if (!item.is_number()) {
        throw InvalidInput(
            fmt::format("{}: expected a number, a string or a list of numbers, found {}", where,
                        core::describe_json_value(value)));
      }
      integers = integers && item.is_number_integer() && as_int64(item).has_value();
    }
    if (integers) {
      std::vector<std::int64_t> ints;
      for (const json& item : value) ints.push_back(item.get<std::int64_t>());
      return ints;
    }
    std::vector<double> doubles;
    for (const json& item : value) doubles.push_back(item.get<double>());
    return doubles;
  }
  throw InvalidInput(fmt::format("{}: expected a number, a string or a list of numbers, found {}",
                                 where, core::describe_json_value(value)));
}

}  // namespace

std::string inputs_json(const std::vector<graph::OpInput>& inputs) {
  ordered_json array = ordered_json::array();
  for (const graph::OpInput& input : inputs) {
    array.push_back({{"role", graph::to_string(input.role)},
                     {"shape", input.shape},
                     {"dtype", graph::to_string(input.dtype)},
                     {"requires_grad", input.requires_grad}});
  }
  return array.dump();
}

std::string attributes_json(const graph::Attributes& attributes) {
  ordered_json object = ordered_json::object();
  for (const auto& [key, value] : attributes) {
    // An init-capture, not `&key`: clang before 16 cannot capture a structured binding.
    std::visit([&object, &name = key](const auto& v) { object[name] = v; }, value);
  }
  return object.dump();
}

std::vector<graph::OpInput> parse_inputs_json(std::string_view text, std::string_view where) {
  const json inputs = parse_json(text, where);
  if (!inputs.is_array()) {
    throw InvalidInput(
        fmt::format("{}: expected a JSON array, found {}", where, inputs.type_name()));
  }
  std::vector<graph::OpInput> out;
  out.reserve(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const json& input = inputs[k];
    const std::string at = fmt::format("{}[{}]", where, k);
    const auto field = [&](const char* key) -> const json* {
      const auto it = input.is_object() ? input.find(key) : input.end();
      return it == input.end() ? nullptr : &*it;
    };
    const json* role = field("role");
    const json* shape = field("shape");
    const json* dtype = field("dtype");
    const json* requires_grad = field("requires_grad");
    if (role == nullptr || !role->is_string() || shape == nullptr || !shape->is_array() ||
        dtype == nullptr || !dtype->is_string() || requires_grad == nullptr ||
        !requires_grad->is_boolean()) {
      throw InvalidInput(
          fmt::format("{}: expected {{\"role\": string, \"shape\": [integers], \"dtype\": string, "
                      "\"requires_grad\": true or false}}, found {}",
                      at, core::describe_json_value(input)));
    }
    graph::OpInput in;
    in.role = graph::parse_tensor_role(role->get<std::string>(), at + ".role");
    in.dtype = graph::parse_data_type(dtype->get<std::string>(), at + ".dtype");
    in.requires_grad = requires_grad->get<bool>();
    for (const json& dim : *shape) {
      if (!dim.is_number_integer() || !as_int64(dim) || dim.get<std::int64_t>() < 0) {
        throw InvalidInput(fmt::format("{}.shape: expected non-negative integers, found {}", at,
                                       core::describe_json_value(*shape)));
      }
      in.shape.push_back(dim.get<std::int64_t>());
    }
    out.push_back(std::move(in));
  }
  return out;
}

graph::Attributes parse_attributes_json(std::string_view text, std::string_view where) {
  const json object = parse_json(text, where);
  if (!object.is_object()) {
    throw InvalidInput(
        fmt::format("{}: expected a JSON object, found {}", where, object.type_name()));
  }
  graph::Attributes attributes;
  for (const auto& [name, value] : object.items())
    attributes.emplace(name, attribute_of(value, fmt::format("{}.{}", where, name)));
  return attributes;
}

}  // namespace nnergy::dataset
