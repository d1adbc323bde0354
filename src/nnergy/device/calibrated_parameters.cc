#include "nnergy/device/calibrated_parameters.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/device/precision.h"

namespace nnergy::device {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

double positive(const json& object, const std::string& key, const std::string& where) {
  if (!object.contains(key) || !object.at(key).is_number() ||
      !(object.at(key).get<double>() >= 0)) {
    throw InvalidInput(
        fmt::format("{}: field '{}': expected a number >= 0, found {}", where, key,
                    object.contains(key) ? core::describe_json_value(object.at(key)) : "nothing"));
  }
  return object.at(key).get<double>();
}

// A count of measurements: a whole number from 0 to 10^12 (beyond that no size_t conversion is
// needed to know the file is wrong).
std::size_t count(const json& object, const std::string& key, const std::string& where) {
  const double v = positive(object, key, where);
  if (!(v <= 1e12) || v != std::floor(v)) {
    throw InvalidInput(
        fmt::format("{}: field '{}': expected a whole number of measurements, found {}", where, key,
                    core::describe_json_value(object.at(key))));
  }
  return static_cast<std::size_t>(v);
}

double fraction(const json& object, const std::string& key, const std::string& where) {
  const double v = positive(object, key, where);
  if (!(v > 0 && v <= 1)) {
    throw InvalidInput(
        fmt::format("{}: field '{}': expected a fraction in (0, 1], found {}", where, key, v));
  }
  return v;
}

// The text entries of `object`'s "devices" list (catalog ids); none when absent.
std::vector<std::string> device_ids(const json& object) {
  std::vector<std::string> ids;
  if (object.contains("devices") && object.at("devices").is_array()) {
    for (const json& d : object.at("devices")) {
      if (d.is_string()) ids.push_back(d.get<std::string>());
    }
  }
  return ids;
}

// The generation whose efficiencies `device` takes: `accept`ed generations only, its own first,
// else the nearest in release year (ties: more records).
const std::pair<const std::string, GenerationEfficiency>* nearest(
    const CalibratedParameters& p, const DeviceSpec& device,
    bool (*accept)(const GenerationEfficiency&)) {
  if (auto it = p.generations.find(device.generation());
      it != p.generations.end() && accept(it->second)) {
    return &*it;
  }
  const std::pair<const std::string, GenerationEfficiency>* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& entry : p.generations) {
    if (!accept(entry.second)) continue;
    const double distance = std::abs(entry.second.release_year - device.release_year);
    if (distance < best_distance ||
        (distance == best_distance && entry.second.records > best->second.records)) {
      best = &entry;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace

CalibratedParameters read_calibrated_parameters(const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file) {
    throw InvalidInput(path.string() +
                       ": cannot open the calibrated parameters (run `nnergy "
                       "calibrate` to write them)");
  }
  std::ostringstream text;
  text << file.rdbuf();
  const std::string where = path.string();
  json root;
  try {
    root = core::parse_json_document(text.str(), where);
  } catch (const json::exception& e) {  // parse_error, or out_of_range: a number > 1e308
    throw InvalidInput(where + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!root.is_object() || root.value("schema_version", 0) != 1 || !root.contains("generations") ||
      !root["generations"].is_object()) {
    throw InvalidInput(where +
                       ": expected an object with schema_version 1 and a \"generations\" object "
                       "(as `nnergy calibrate` writes)");
  }
  CalibratedParameters p;
  p.corpus = root.value("corpus", "");
  p.records = count(root, "records", where);
  p.kernel_overhead_s = positive(root, "kernel_overhead_s", where);
  p.work_half_flop_per_sm = positive(root, "work_half_flop_per_sm", where);
  p.reduction_half = positive(root, "reduction_half", where);
  // Absent from files written before the convolution regimes were fitted: no effect.
  if (root.contains("winograd_speedup"))
    p.winograd_speedup = positive(root, "winograd_speedup", where);
  if (root.contains("grouped_conv_efficiency"))
    p.grouped_conv_efficiency = positive(root, "grouped_conv_efficiency", where);
  if (root.contains("backward_matrix_efficiency"))
    p.backward_matrix_efficiency = positive(root, "backward_matrix_efficiency", where);
  if (root.contains("convolution_time_scale"))
    p.convolution_time_scale = positive(root, "convolution_time_scale", where);
  if (root.contains("statistics_memory_efficiency"))
    p.statistics_memory_efficiency = positive(root, "statistics_memory_efficiency", where);
  p.host_launch_s = positive(root, "host_launch_s", where);
  p.host_launch_source = root.value("host_launch_source", "");
  p.transferred_time_log_sigma = positive(root, "transferred_time_log_sigma", where);
  // Files written before hosts were told apart keep one host per source.
  for (const char* key : {"host_launch_by_host", "host_launch_by_source"}) {
    if (!root.contains(key)) continue;
    for (const auto& [host, value] : root[key].items())
      p.host_launch_by_host[host] = positive(root[key], host, where + ": " + key);
  }
  // Absent from files written before training's dispatch cost was fitted: no effect.
  if (root.contains("host_launch_training_factor"))
    p.host_launch_training_factor = positive(root, "host_launch_training_factor", where);
  if (root.contains("input_copy_bytes_per_s"))
    p.input_copy_bytes_per_s = positive(root, "input_copy_bytes_per_s", where);
  if (root.contains("power")) {
    const std::string at = where + ": power";
    const json& power = root["power"];
    if (!power.is_object()) throw InvalidInput(at + ": expected an object");
    PowerFit fit;
    fit.operand_share = positive(power, "operand_share", at);
    if (power.contains("tensor_flop_power")) {
      const json& tensor = power["tensor_flop_power"];
      if (!tensor.is_object()) throw InvalidInput(at + ": tensor_flop_power: expected an object");
      for (const auto& [name, value] : tensor.items()) {
        parse_precision(name, at + ": tensor_flop_power");  // throws for an unknown name
        fit.tensor_flop_power[name] = positive(tensor, name, at + ": tensor_flop_power");
      }
    }
    fit.records = count(power, "records", at);
    fit.power_log_sigma = positive(power, "power_log_sigma", at);
    fit.devices = device_ids(power);
    p.power = fit;
  }
  for (const auto& [name, g] : root["generations"].items()) {
    const std::string at = where + ": generations." + name;
    if (!g.is_object()) throw InvalidInput(at + ": expected an object");
    GenerationEfficiency e;
    e.compute = fraction(g, "compute", at);
    if (g.contains("tensor")) e.tensor = fraction(g, "tensor", at);
    e.memory = fraction(g, "memory", at);
    e.release_year = positive(g, "release_year", at);
    e.records = count(g, "records", at);
    e.time_log_sigma = positive(g, "time_log_sigma", at);
    e.devices = device_ids(g);
    p.generations[name] = e;
  }
  return p;
}

std::string calibrated_parameters_json(const CalibratedParameters& p) {
  ordered_json j;
  j["schema_version"] = 1;
  j["description"] =
      "Parameters of nnergy's analytical time and power model fitted by `nnergy calibrate` on "
      "published whole-network times and average powers; see data/calibration/README.md";
  j["corpus"] = p.corpus;
  j["records"] = p.records;
  j["kernel_overhead_s"] = p.kernel_overhead_s;
  j["work_half_flop_per_sm"] = p.work_half_flop_per_sm;
  j["reduction_half"] = p.reduction_half;
  j["winograd_speedup"] = p.winograd_speedup;
  j["grouped_conv_efficiency"] = p.grouped_conv_efficiency;
  j["backward_matrix_efficiency"] = p.backward_matrix_efficiency;
  j["convolution_time_scale"] = p.convolution_time_scale;
  j["statistics_memory_efficiency"] = p.statistics_memory_efficiency;
  j["host_launch_s"] = p.host_launch_s;
  j["host_launch_source"] = p.host_launch_source;
  j["host_launch_by_host"] = ordered_json::object();
  for (const auto& [host, value] : p.host_launch_by_host) j["host_launch_by_host"][host] = value;
  j["host_launch_training_factor"] = p.host_launch_training_factor;
  if (p.input_copy_bytes_per_s) j["input_copy_bytes_per_s"] = *p.input_copy_bytes_per_s;
  j["transferred_time_log_sigma"] = p.transferred_time_log_sigma;
  if (p.power) {
    j["power"] = {{"operand_share", p.power->operand_share},
                  {"tensor_flop_power", p.power->tensor_flop_power},
                  {"records", p.power->records},
                  {"devices", p.power->devices},
                  {"power_log_sigma", p.power->power_log_sigma}};
  }
  j["generations"] = ordered_json::object();
  for (const auto& [name, g] : p.generations) {
    ordered_json e;
    e["compute"] = g.compute;
    if (g.tensor) e["tensor"] = *g.tensor;
    e["memory"] = g.memory;
    e["release_year"] = g.release_year;
    e["records"] = g.records;
    e["devices"] = g.devices;
    e["time_log_sigma"] = g.time_log_sigma;
    j["generations"][name] = e;
  }
  return j.dump(2) + "\n";
}

bool apply_calibration(const CalibratedParameters& p, DeviceSpec& device) {
  if (device.vendor != "nvidia") return false;
  const auto* own = nearest(p, device, [](const GenerationEfficiency&) { return true; });
  if (own == nullptr) return false;
  const auto& [name, g] = *own;
  if (p.power) {
    PowerActivity& a = device.power_activity;
    a.operand_share = p.power->operand_share;
    for (const auto& [precision, ratio] : p.power->tensor_flop_power)
      a.tensor_flop_power[parse_precision(precision, "tensor_flop_power")] = ratio;
    a.power_log_sigma = p.power->power_log_sigma;
    std::string tensor;
    for (const auto& [precision, ratio] : p.power->tensor_flop_power)
      tensor += fmt::format("{}{} {:.2f}x", tensor.empty() ? "" : ", ", precision, ratio);
    if (!tensor.empty()) tensor = "; matrix-unit flop power at the tensor peak: " + tensor;
    a.provenance = fmt::format(
        "operand power κ = {:.2f} of the memory power{}, fitted on {} measured average powers "
        "({}); average power ±{:.0f} % (1σ, leave-one-network-out)",
        p.power->operand_share, tensor, p.power->records, join_with_commas(p.power->devices),
        100 * relative_spread(p.power->power_log_sigma));
  }
  Efficiency& e = device.efficiency;
  e.compute = g.compute;
  e.memory = g.memory;
  e.kernel_overhead_s = p.kernel_overhead_s;
  e.work_half_flop_per_sm = p.work_half_flop_per_sm;
  e.reduction_half = p.reduction_half;
  e.winograd_speedup = p.winograd_speedup;
  e.grouped_conv_efficiency = p.grouped_conv_efficiency;
  e.backward_matrix_efficiency = p.backward_matrix_efficiency;
  e.convolution_time_scale = p.convolution_time_scale;
  e.statistics_memory_efficiency = p.statistics_memory_efficiency;
  e.tensor.reset();
  std::string tensor_note;
  const bool matrix_units = device.has_matrix_units(Precision::kFp16) ||
                            device.has_matrix_units(Precision::kTf32) ||
                            device.has_matrix_units(Precision::kBf16);
  if (matrix_units) {
    const auto* t =
        nearest(p, device, [](const GenerationEfficiency& x) { return x.tensor.has_value(); });
    if (t != nullptr) {
      e.tensor = t->second.tensor;
      if (t->first != device.generation() && t->first != name)
        tensor_note = fmt::format("; tensor-core efficiency from {}", t->first);
    }
  }
  // The calibrated efficiencies replace the catalog's estimated ones.
  std::erase_if(device.estimated_fields,
                [](const std::string& f) { return f.starts_with("efficiency"); });
  CalibrationInfo& info = device.calibration;
  info.from_generation = name;
  info.transferred = name != device.generation();
  const std::string devices = join_with_commas(g.devices);
  if (info.transferred) {
    info.provenance = fmt::format(
        "transferred from {} ({} published measurements on {}) to this device's datasheet "
        "peaks{}",
        name, g.records, devices, tensor_note);
    info.time_log_sigma = std::max(p.transferred_time_log_sigma, g.time_log_sigma);
  } else {
    info.provenance = fmt::format("calibrated on {} measured whole-network times of {} GPUs ({}){}",
                                  g.records, name, devices, tensor_note);
    info.time_log_sigma = g.time_log_sigma;
  }
  return true;
}

}  // namespace nnergy::device
