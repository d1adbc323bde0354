#include "nnergy/features/feature_encoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <variant>

#include "nnergy/analytical/pass_model.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/device/precision.h"
#include "nnergy/graph/op_cost.h"

namespace nnergy::features {

namespace {

using nlohmann::json;

constexpr const char* kSchemaFormat = "nnergy-features";

// Seed 000 §5.2 (Fig. 5.1): an entry that does not apply to this op is -1 (no size or attribute
// the encoder sees is negative for a real entry of that slot's meaning) with its flag 0.
constexpr double kNotApplicable = -1;

// The fixed columns, in order; the regressors find them by name (see the header).
const std::vector<std::string>& fixed_names() {
  static const std::vector<std::string> kNames = {
      "flop_count",
      "byte_count",
      "parameter_count",
      "kernel_count",
      "intensity_flop_per_byte",
      "roofline_time_s",
      "analytical_time_s",
      "analytical_power_w",
      "log_flop_count",
      "log_byte_count",
      "log_roofline_time_s",
      "core_clock_mhz",
      "training",
      "device_peak_flop_per_s",
      "device_bandwidth_byte_per_s",
      "device_sm_count",
      "device_tdp_w",
  };
  return kNames;
}

std::string where(const graph::OpDescriptor& op) {
  return fmt::format("op {} ({})", op.op_type,
                     op.signature.empty() ? "no signature" : op.signature);
}

// The numeric values of one attribute: a number is one value, a list of numbers is the list.
// Strings are not encoded (an ONNX string attribute such as Pad's "mode" or auto_pad has too few
// distinct values in the datasets to justify a hashed or one-hot column per attribute):
// std::nullopt.
std::optional<std::vector<double>> numeric_values(const graph::AttributeValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value))
    return std::vector<double>{static_cast<double>(*i)};
  if (const auto* d = std::get_if<double>(&value)) return std::vector<double>{*d};
  if (const auto* ints = std::get_if<std::vector<std::int64_t>>(&value))
    return std::vector<double>(ints->begin(), ints->end());
  if (const auto* doubles = std::get_if<std::vector<double>>(&value)) return *doubles;
  return std::nullopt;
}

// The op's work in the context's mode: inference, or training forward + backward.
std::vector<graph::PassCost> mode_passes(const graph::OpDescriptor& op, graph::Mode mode) {
  if (mode == graph::Mode::kTraining) return {op.training_forward, op.backward};
  return {op.inference};
}

// Peak of the units that run `op_class` work at `precision` (analytical::units_of), falling back
// to the fp32 peak when the device lists none for those units.
double roofline_peak_flop_per_s(const device::DeviceSpec& device, graph::OpClass op_class,
                                device::Precision precision) {
  if (const auto peak = device.peak(analytical::units_of(op_class, precision))) return *peak;
  if (const auto peak = device.peak(device::Precision::kFp32)) return *peak;
  throw InvalidInput(fmt::format("device {} has no fp32 peak in the catalog", device.id));
}

void check_string_array(const json& value, const char* key) {
  if (!value.is_array()) {
    throw InvalidInput(fmt::format("feature schema: \"{}\" must be an array", key));
  }
  for (const json& item : value) {
    if (!item.is_string()) {
      throw InvalidInput(fmt::format("feature schema: \"{}\" must hold strings, found {}", key,
                                     core::describe_json_value(item)));
    }
  }
}

const json& required(const json& schema, const char* key) {
  const auto it = schema.find(key);
  if (it == schema.end()) {
    throw InvalidInput(fmt::format("feature schema: missing \"{}\"", key));
  }
  return *it;
}

}  // namespace

FeatureEncoder FeatureEncoder::fit(std::span<const graph::OpDescriptor> ops) {
  std::set<std::string> op_types;
  std::map<std::string, std::size_t> attribute_slots;
  std::vector<std::size_t> input_ranks;
  for (const graph::OpDescriptor& op : ops) {
    op_types.insert(op.op_type);
    for (const auto& [name, value] : op.attributes) {
      const auto values = numeric_values(value);
      if (!values || values->empty()) continue;
      std::size_t& slots = attribute_slots[name];
      slots = std::max(slots, values->size());
    }
    if (input_ranks.size() < op.inputs.size()) input_ranks.resize(op.inputs.size(), 0);
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      input_ranks[k] = std::max(input_ranks[k], op.inputs[k].shape.size());
    }
  }
  FeatureEncoder encoder;
  encoder.op_types_.assign(op_types.begin(), op_types.end());
  encoder.attribute_slots_.assign(attribute_slots.begin(), attribute_slots.end());
  encoder.input_rank_slots_ = std::move(input_ranks);
  encoder.build_names();
  return encoder;
}

void FeatureEncoder::build_names() {
  names_ = fixed_names();
  for (const std::string& type : op_types_) {
    names_.push_back("op=" + type);
  }
  for (const auto& [name, slots] : attribute_slots_) {
    for (std::size_t i = 0; i < slots; ++i) {
      names_.push_back(fmt::format("attr:{}[{}]", name, i));
      names_.push_back(fmt::format("attr:{}[{}]:present", name, i));
    }
  }
  for (std::size_t k = 0; k < input_rank_slots_.size(); ++k) {
    for (std::size_t d = 0; d < input_rank_slots_[k]; ++d) {
      names_.push_back(fmt::format("input{}_dim{}", k, d));
      names_.push_back(fmt::format("input{}_dim{}:present", k, d));
    }
  }
}

FeatureEncoder FeatureEncoder::from_json(const json& schema) {
  if (!schema.is_object()) {
    throw InvalidInput(
        fmt::format("feature schema: expected a JSON object, found {}", schema.type_name()));
  }
  const json& format = required(schema, "format");
  if (!format.is_string() || format.get<std::string>() != kSchemaFormat) {
    throw InvalidInput(fmt::format("feature schema: \"format\" must be \"{}\", found {}",
                                   kSchemaFormat, core::describe_json_value(format)));
  }
  const json& version = required(schema, "version");
  if (!version.is_number_integer() || version.get<int>() != kSchemaVersion) {
    throw InvalidInput(
        fmt::format("feature schema: version {} is not supported (this nnergy reads version {})",
                    core::describe_json_value(version), kSchemaVersion));
  }

  FeatureEncoder encoder;
  const json& op_types = required(schema, "op_types");
  check_string_array(op_types, "op_types");
  for (const json& type : op_types) {
    encoder.op_types_.push_back(type.get<std::string>());
  }
  if (!std::is_sorted(encoder.op_types_.begin(), encoder.op_types_.end()) ||
      std::adjacent_find(encoder.op_types_.begin(), encoder.op_types_.end()) !=
          encoder.op_types_.end()) {
    throw InvalidInput("feature schema: \"op_types\" must be sorted and unique");
  }

  const json& attributes = required(schema, "attribute_slots");
  if (!attributes.is_array()) {
    throw InvalidInput("feature schema: \"attribute_slots\" must be an array");
  }
  for (const json& entry : attributes) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() ||
        !entry.contains("slots") || !entry["slots"].is_number_unsigned() ||
        entry["slots"].get<std::size_t>() == 0 || entry.size() != 2) {
      throw InvalidInput(fmt::format(
          "feature schema: \"attribute_slots\" entries must be {{\"name\": string, \"slots\": "
          "positive integer}}, found {}",
          core::describe_json_value(entry)));
    }
    encoder.attribute_slots_.emplace_back(entry["name"].get<std::string>(),
                                          entry["slots"].get<std::size_t>());
  }
  for (std::size_t i = 1; i < encoder.attribute_slots_.size(); ++i) {
    if (encoder.attribute_slots_[i - 1].first >= encoder.attribute_slots_[i].first) {
      throw InvalidInput("feature schema: \"attribute_slots\" must be sorted by unique name");
    }
  }

  const json& ranks = required(schema, "input_rank_slots");
  if (!ranks.is_array()) {
    throw InvalidInput("feature schema: \"input_rank_slots\" must be an array");
  }
  for (const json& rank : ranks) {
    if (!rank.is_number_unsigned()) {
      throw InvalidInput(fmt::format(
          "feature schema: \"input_rank_slots\" must hold non-negative integers, found {}",
          core::describe_json_value(rank)));
    }
    encoder.input_rank_slots_.push_back(rank.get<std::size_t>());
  }

  encoder.build_names();
  const json& names = required(schema, "names");
  check_string_array(names, "names");
  if (names.size() != encoder.names_.size()) {
    throw InvalidInput(fmt::format(
        "feature schema: \"names\" lists {} columns, the schema describes {} (another nnergy "
        "feature version?)",
        names.size(), encoder.names_.size()));
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].get<std::string>() != encoder.names_[i]) {
      throw InvalidInput(fmt::format(
          "feature schema: column {} is \"{}\", this nnergy builds \"{}\" (another nnergy "
          "feature version?)",
          i, names[i].get<std::string>(), encoder.names_[i]));
    }
  }
  return encoder;
}

json FeatureEncoder::to_json() const {
  json attributes = json::array();
  for (const auto& [name, slots] : attribute_slots_) {
    attributes.push_back({{"name", name}, {"slots", slots}});
  }
  return {{"format", kSchemaFormat},
          {"version", kSchemaVersion},
          {"op_types", op_types_},
          {"attribute_slots", attributes},
          {"input_rank_slots", input_rank_slots_},
          {"names", names_}};
}

FeatureMatrix FeatureEncoder::empty_matrix() const {
  FeatureMatrix matrix;
  matrix.names = names_;
  return matrix;
}

std::vector<double> FeatureEncoder::encode(const graph::OpDescriptor& op,
                                           const FeatureContext& context) const {
  if (context.device == nullptr) {
    throw InvalidInput(fmt::format("{}: no device to encode it for", where(op)));
  }
  const device::DeviceSpec& device = *context.device;
  if (!std::isfinite(context.clock_mhz) || context.clock_mhz < 0) {
    throw InvalidInput(fmt::format("{}: core clock must be a non-negative number of MHz, found {}",
                                   where(op), context.clock_mhz));
  }
  if (!(device.clock.boost_mhz > 0)) {
    throw InvalidInput(fmt::format("device {} has no boost clock in the catalog", device.id));
  }
  const double clock_mhz = context.clock_mhz == 0 ? device.clock.boost_mhz : context.clock_mhz;
  const device::Precision precision = context.precision;
  const graph::OpClass op_class = op.op_class;
  const bool training = context.mode == graph::Mode::kTraining;
  for (std::size_t k = 0; k < op.inputs.size(); ++k) {
    for (const std::int64_t dim : op.inputs[k].shape) {
      if (dim < 0) {
        throw InvalidInput(fmt::format("{}: input {} has a negative dimension, shape {}", where(op),
                                       k, graph::to_string(op.inputs[k].shape)));
      }
    }
  }

  graph::PassCost total;
  double analytical_time_s = 0;
  double analytical_energy_j = 0;
  for (const graph::PassCost& pass : mode_passes(op, context.mode)) {
    total += pass;
    const analytical::OpEstimate estimate =
        analytical::predict_pass(device, pass, op_class, {precision, clock_mhz});
    analytical_time_s += estimate.time_s;
    analytical_energy_j += estimate.energy_j;
  }

  // Seed 004 Eq. 1 special terms (flops, memory accesses) and the roofline bound
  // max(W / π(f), Q / β) with datasheet peaks, π(f) = π_boost · f / f_boost.
  const double peak = roofline_peak_flop_per_s(device, op_class, precision);
  const double compute_s = total.flop_count / (peak * clock_mhz / device.clock.boost_mhz);
  const double memory_s = device.memory_bandwidth_byte_per_s > 0
                              ? total.byte_count / device.memory_bandwidth_byte_per_s
                              : 0;
  const double roofline_time_s = std::max(compute_s, memory_s);
  const double descriptor_peak = device.peak(precision).value_or(peak);

  std::vector<double> row;
  row.reserve(names_.size());
  row.push_back(total.flop_count);
  row.push_back(total.byte_count);
  row.push_back(static_cast<double>(op.parameter_count));
  row.push_back(total.kernel_count);
  row.push_back(total.byte_count > 0 ? total.flop_count / total.byte_count : 0);
  row.push_back(roofline_time_s);
  row.push_back(analytical_time_s);
  row.push_back(analytical_time_s > 0 ? analytical_energy_j / analytical_time_s : 0);
  // Seed 004 §3.1: log terms, log(1 + x) so that zero work stays finite.
  row.push_back(std::log1p(total.flop_count));
  row.push_back(std::log1p(total.byte_count));
  row.push_back(std::log1p(roofline_time_s));
  row.push_back(clock_mhz);
  row.push_back(training ? 1 : 0);
  // Seed 000 §7.2: device descriptors let one model span devices.
  row.push_back(descriptor_peak);
  row.push_back(device.memory_bandwidth_byte_per_s);
  row.push_back(static_cast<double>(device.sm_count));
  row.push_back(device.tdp_w);

  for (const std::string& type : op_types_) {
    row.push_back(type == op.op_type ? 1 : 0);
  }
  for (const auto& [name, slots] : attribute_slots_) {
    const auto it = op.attributes.find(name);
    const std::optional<std::vector<double>> values =
        it == op.attributes.end() ? std::nullopt : numeric_values(it->second);
    for (std::size_t i = 0; i < slots; ++i) {
      const bool present = values && i < values->size();
      row.push_back(present ? (*values)[i] : kNotApplicable);
      row.push_back(present ? 1 : 0);
    }
  }
  for (std::size_t k = 0; k < input_rank_slots_.size(); ++k) {
    for (std::size_t d = 0; d < input_rank_slots_[k]; ++d) {
      const bool present = k < op.inputs.size() && d < op.inputs[k].shape.size();
      row.push_back(present ? static_cast<double>(op.inputs[k].shape[d]) : kNotApplicable);
      row.push_back(present ? 1 : 0);
    }
  }
  if (row.size() != names_.size()) {
    throw InternalError(
        fmt::format("feature encoder: {} values for {} columns", row.size(), names_.size()));
  }
  return row;
}

void FeatureEncoder::append(FeatureMatrix& matrix, const graph::OpDescriptor& op,
                            const FeatureContext& context) const {
  if (matrix.names != names_) {
    throw InvalidInput(fmt::format(
        "feature matrix has {} columns that are not this encoder's {} (another feature schema)",
        matrix.columns(), names_.size()));
  }
  matrix.add_row(encode(op, context), op.op_type);
}

}  // namespace nnergy::features
