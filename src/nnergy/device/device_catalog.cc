#include "nnergy/device/device_catalog.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/core/nearest_name.h"
#include "nnergy/core/text.h"
#include "nnergy/core/units.h"

namespace nnergy::device {

namespace {

using nlohmann::json;

// Reads fields of one JSON object, naming the file, device and field in every error.
class FieldReader {
 public:
  FieldReader(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

  double number(const std::string& key, const std::string& unit) const {
    const json& v = required(key, "a number in " + unit);
    if (!v.is_number()) fail(key, "a number in " + unit, v);
    return v.get<double>();
  }
  // A whole number from `low` to `high` (a JSON number without a fraction).
  int integer(const std::string& key, const std::string& what, int low, int high) const {
    return checked_integer(key, required(key, "a whole number of " + what), what, low, high);
  }
  int integer_or(const std::string& key, int fallback, const std::string& what, int low,
                 int high) const {
    if (!object_.contains(key)) return fallback;
    return checked_integer(key, object_.at(key), what, low, high);
  }
  double number_or(const std::string& key, double fallback) const {
    if (!object_.contains(key)) return fallback;
    const json& v = object_.at(key);
    if (!v.is_number()) fail(key, "a number", v);
    return v.get<double>();
  }
  std::string text(const std::string& key) const {
    const json& v = required(key, "a string");
    if (!v.is_string()) fail(key, "a string", v);
    return v.get<std::string>();
  }
  std::string text_or(const std::string& key, const std::string& fallback) const {
    if (!object_.contains(key)) return fallback;
    const json& v = object_.at(key);
    if (!v.is_string()) fail(key, "a string", v);
    return v.get<std::string>();
  }
  std::vector<std::string> texts_or_empty(const std::string& key) const {
    std::vector<std::string> items;
    if (!object_.contains(key)) return items;
    const json& v = object_.at(key);
    if (!v.is_array()) fail(key, "an array of strings", v);
    for (const json& item : v) {
      if (!item.is_string()) fail(key, "an array of strings", v);
      items.push_back(item.get<std::string>());
    }
    return items;
  }
  bool boolean_or(const std::string& key, bool fallback) const {
    if (!object_.contains(key)) return fallback;
    const json& v = object_.at(key);
    if (!v.is_boolean()) fail(key, "true or false", v);
    return v.get<bool>();
  }
  FieldReader object(const std::string& key) const {
    const json& v = required(key, "an object");
    if (!v.is_object()) fail(key, "an object", v);
    return FieldReader(v, where_ + "." + key);
  }
  bool has(const std::string& key) const { return object_.contains(key); }
  const json& raw() const { return object_; }
  const std::string& where() const { return where_; }

  [[noreturn]] void fail(const std::string& key, const std::string& expected,
                         const json& found) const {
    throw InvalidInput(where_ + "." + key + ": expected " + expected + ", found " +
                       core::describe_json_value(found));
  }

 private:
  int checked_integer(const std::string& key, const json& v, const std::string& what, int low,
                      int high) const {
    const std::string expected = "a whole number of " + what + " from " + std::to_string(low) +
                                 " to " + std::to_string(high);
    if (!v.is_number()) fail(key, expected, v);
    const double x = v.get<double>();
    if (!(x >= low && x <= high) || x != std::floor(x)) fail(key, expected, v);
    return static_cast<int>(x);
  }

  const json& required(const std::string& key, const std::string& expected) const {
    if (!object_.contains(key)) {
      throw InvalidInput(where_ + ": missing field '" + key + "' (expected " + expected + ")");
    }
    return object_.at(key);
  }

  const json& object_;
  std::string where_;
};

DeviceSpec parse_device(const json& entry, const std::string& source, std::size_t index) {
  if (!entry.is_object()) {
    throw InvalidInput(source + ": devices[" + std::to_string(index) + "]: expected an object");
  }
  const std::string id_hint = entry.contains("id") && entry["id"].is_string()
                                  ? entry["id"].get<std::string>()
                                  : "#" + std::to_string(index);
  FieldReader r(entry, source + ": device '" + id_hint + "'");
  DeviceSpec d;
  d.id = ascii_lower(r.text("id"));
  for (const std::string& alias : r.texts_or_empty("aliases"))
    d.aliases.push_back(ascii_lower(alias));
  d.name = r.text("name");
  d.vendor = r.text_or("vendor", "");
  d.architecture = r.text_or("architecture", "");
  d.release_year = r.integer_or("release_year", 0, "years", 0, 9999);
  d.memory_gib = r.number_or("memory_gib", 0);
  d.memory_type = r.text_or("memory_type", "");
  d.sm_count = r.integer("sm_count", "streaming multiprocessors", 0, 1'000'000);
  d.exp_per_clock_per_sm = r.integer_or("exp_per_clock_per_sm", d.exp_per_clock_per_sm,
                                        "exponentials per clock per SM", 1, 1024);
  d.memory_bandwidth_byte_per_s = r.number("memory_bandwidth_byte_per_s", "B/s");
  d.tdp_w = r.number("tdp_w", "W");
  d.idle_w = r.number("idle_w", "W");

  FieldReader peaks = r.object("peak_flop_per_s");
  for (Precision p : all_precisions()) {
    const std::string key(to_string(p));
    if (peaks.has(key)) d.peak_flop_per_s[p] = peaks.number(key, "flop/s");
  }
  if (!d.peak(Precision::kFp32)) {
    throw InvalidInput(peaks.where() + ": missing field 'fp32' (expected a number in flop/s)");
  }

  FieldReader clock = r.object("clock_mhz");
  d.clock.min_mhz = clock.number("min", "MHz");
  d.clock.base_mhz = clock.number("base", "MHz");
  d.clock.boost_mhz = clock.number("boost", "MHz");
  d.clock.step_mhz = clock.number_or("step", 15);
  if (!(d.clock.min_mhz > 0 && d.clock.min_mhz <= d.clock.base_mhz &&
        d.clock.base_mhz <= d.clock.boost_mhz && d.clock.step_mhz > 0)) {
    throw InvalidInput(clock.where() + ": expected 0 < min <= base <= boost and step > 0, found " +
                       core::describe_json_value(clock.raw()));
  }

  d.dvfs.knee_mhz = d.clock.base_mhz;
  if (r.has("dvfs")) {
    FieldReader dvfs = r.object("dvfs");
    d.dvfs.v_min_ratio = dvfs.number_or("v_min_ratio", d.dvfs.v_min_ratio);
    d.dvfs.knee_mhz = dvfs.number_or("knee_mhz", d.dvfs.knee_mhz);
  }
  if (r.has("efficiency")) {
    d.efficiency_given = true;
    FieldReader eff = r.object("efficiency");
    d.efficiency.compute = eff.number_or("compute", d.efficiency.compute);
    d.efficiency.memory = eff.number_or("memory", d.efficiency.memory);
    d.efficiency.kernel_overhead_s =
        eff.number_or("kernel_overhead_s", d.efficiency.kernel_overhead_s);
    if (eff.has("tensor")) d.efficiency.tensor = eff.number("tensor", "fraction of peak");
    d.efficiency.work_half_flop_per_sm = eff.number_or("work_half_flop_per_sm", 0);
    d.efficiency.reduction_half = eff.number_or("reduction_half", 0);
    d.efficiency.winograd_speedup = eff.number_or("winograd_speedup", 1);
    d.efficiency.grouped_conv_efficiency = eff.number_or("grouped_conv_efficiency", 1);
    d.efficiency.backward_matrix_efficiency = eff.number_or("backward_matrix_efficiency", 1);
    d.efficiency.statistics_memory_efficiency = eff.number_or("statistics_memory_efficiency", 1);
  }
  const Efficiency& e = d.efficiency;
  if (!(e.compute > 0 && e.compute <= 1 && e.memory > 0 && e.memory <= 1 &&
        e.kernel_overhead_s >= 0 && e.tensor.value_or(1) > 0 && e.tensor.value_or(1) <= 1 &&
        e.work_half_flop_per_sm >= 0 && e.reduction_half >= 0 && e.winograd_speedup > 0 &&
        e.grouped_conv_efficiency > 0 && e.backward_matrix_efficiency > 0 &&
        e.statistics_memory_efficiency > 0)) {
    throw InvalidInput(r.where() +
                       ".efficiency: expected compute, memory and tensor in (0, 1], "
                       "kernel_overhead_s, work_half_flop_per_sm, reduction_half >= 0 and "
                       "winograd_speedup, grouped_conv_efficiency, backward_matrix_efficiency, "
                       "statistics_memory_efficiency > 0");
  }

  FieldReader archline = r.object("archline");
  for (Precision p : all_precisions()) {
    const std::string key(to_string(p));
    if (!archline.has(key)) continue;
    FieldReader a = archline.object(key);
    ArchlineParameters params;
    params.eps_flop_j = units::picojoules_to_joules(a.number("eps_flop_pj", "pJ/flop"));
    params.eps_mem_j_per_byte =
        units::picojoules_to_joules(a.number("eps_mem_pj_per_byte", "pJ/B"));
    params.pi0_w = a.number("pi0_w", "W");
    params.source = a.text_or("source", "");
    params.estimated = a.boolean_or("estimated", true);
    if (a.has("reference_peak_flop_per_s")) {
      params.reference_peak_flop_per_s = a.number("reference_peak_flop_per_s", "flop/s");
    }
    if (a.has("reference_bandwidth_byte_per_s")) {
      params.reference_bandwidth_byte_per_s = a.number("reference_bandwidth_byte_per_s", "B/s");
    }
    d.archline[p] = params;
  }
  if (d.archline.count(Precision::kFp32) == 0) {
    throw InvalidInput(archline.where() +
                       ": missing field 'fp32' (expected an object with "
                       "eps_flop_pj, eps_mem_pj_per_byte, pi0_w)");
  }
  if (r.has("interconnect")) {
    FieldReader link = r.object("interconnect");
    if (link.has("scale_up") && !link.raw().at("scale_up").is_null()) {
      FieldReader up = link.object("scale_up");
      d.interconnect.scale_up_name = up.text_or("name", "scale-up fabric");
      d.interconnect.scale_up_bidirectional_byte_per_s =
          up.number("bidirectional_byte_per_s", "B/s");
      d.interconnect.scale_up_domain_gpus = up.integer("domain_gpus", "GPUs", 1, 1'000'000);
    }
    if (link.has("pcie") && !link.raw().at("pcie").is_null()) {
      FieldReader pcie = link.object("pcie");
      d.interconnect.pcie_generation = pcie.integer_or("generation", 0, "PCIe generation", 0, 99);
      d.interconnect.pcie_bidirectional_byte_per_s = pcie.number("bidirectional_byte_per_s", "B/s");
    }
    d.interconnect.source = link.text_or("source", "");
  }
  d.estimated_fields = r.texts_or_empty("estimated_fields");
  d.sources = r.text_or("sources", "");
  if (d.tdp_w <= 0 || d.idle_w < 0 || d.idle_w >= d.tdp_w) {
    throw InvalidInput(r.where() + ": expected 0 <= idle_w < tdp_w");
  }
  return d;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file) throw InvalidInput(path.string() + ": cannot open device catalog");
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

DeviceCatalog DeviceCatalog::parse(const std::string& text, const std::string& source) {
  json root;
  try {
    root = core::parse_json_document(text, source);
  } catch (const json::exception& e) {  // parse_error, or out_of_range: a number > 1e308
    throw InvalidInput(source + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!root.is_object() || !root.contains("devices") || !root["devices"].is_array()) {
    throw InvalidInput(source + ": expected a JSON object with a \"devices\" array");
  }
  if (root.contains("schema_version") &&
      (!root["schema_version"].is_number_integer() || root["schema_version"].get<int>() != 1)) {
    throw InvalidInput(source + ": schema_version: expected 1, found " +
                       core::describe_json_value(root["schema_version"]));
  }
  DeviceCatalog catalog;
  catalog.sources_.push_back(source);
  std::size_t index = 0;
  for (const json& entry : root["devices"]) {
    DeviceSpec spec = parse_device(entry, source, index++);
    for (const DeviceSpec& existing : catalog.devices_) {
      if (existing.id == spec.id)
        throw InvalidInput(source + ": device id '" + spec.id + "' repeated");
    }
    catalog.devices_.push_back(std::move(spec));
  }
  return catalog;
}

DeviceCatalog DeviceCatalog::load(const std::filesystem::path& path) {
  return parse(read_file(path), path.string());
}

std::filesystem::path DeviceCatalog::user_catalog_path() {
  if (const char* env = std::getenv("NNERGY_USER_DEVICES"); env != nullptr && *env != '\0') {
    return env;
  }
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::filesystem::path(xdg) / "nnergy" / "devices.json";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr ? home : ".") / ".config" / "nnergy" /
         "devices.json";
}

std::filesystem::path DeviceCatalog::calibrated_parameters_path(
    const std::filesystem::path& data_dir) {
  return data_dir / "calibration" / "calibrated.json";
}

void DeviceCatalog::calibrate(const CalibratedParameters& parameters, const std::string& source) {
  for (DeviceSpec& d : devices_) apply_calibration(parameters, d);
  calibration_ = parameters;
  sources_.push_back(source);
}

DeviceCatalog DeviceCatalog::load_default(const std::filesystem::path& data_dir) {
  DeviceCatalog catalog = load(data_dir / "devices.json");
  std::error_code ec;
  const std::filesystem::path calibrated = calibrated_parameters_path(data_dir);
  if (std::filesystem::exists(calibrated, ec)) {
    catalog.calibrate(read_calibrated_parameters(calibrated), calibrated.string());
  }
  const std::filesystem::path user = user_catalog_path();
  if (std::filesystem::exists(user, ec)) catalog.merge(load(user));
  return catalog;
}

DeviceCatalog DeviceCatalog::load_with_user(const std::filesystem::path& data_dir,
                                            const std::filesystem::path& devices_file) {
  DeviceCatalog catalog = load_default(data_dir);
  if (!devices_file.empty()) catalog.merge(load(devices_file));
  return catalog;
}

void DeviceCatalog::merge(const DeviceCatalog& other) {
  for (const DeviceSpec& spec : other.devices_) {
    auto it = std::find_if(devices_.begin(), devices_.end(),
                           [&](const DeviceSpec& d) { return d.id == spec.id; });
    DeviceSpec added = spec;
    // A device added after calibration takes it unless its file set its own efficiencies.
    if (calibration_ && !added.efficiency_given) apply_calibration(*calibration_, added);
    if (it != devices_.end()) {
      *it = added;
    } else {
      devices_.push_back(added);
    }
  }
  sources_.insert(sources_.end(), other.sources_.begin(), other.sources_.end());
}

std::string normalize_device_name(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : name) {
    if (c == ' ' || c == '-' || c == '_' || c == '\t') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  static const std::vector<std::string> kVendorWords = {"nvidia", "tesla", "geforce", "amd",
                                                        "instinct"};
  std::size_t first = 0;
  while (first + 1 < words.size() &&
         std::find(kVendorWords.begin(), kVendorWords.end(), words[first]) != kVendorWords.end()) {
    ++first;
  }
  std::string out;
  for (std::size_t i = first; i < words.size(); ++i) {
    if (!out.empty()) out += ' ';
    out += words[i];
  }
  return out;
}

const DeviceSpec& DeviceCatalog::find(const std::string& name, std::string_view where) const {
  const std::string key = ascii_lower(name);
  for (const DeviceSpec& d : devices_) {
    if (d.id == key) return d;
  }
  for (const DeviceSpec& d : devices_) {
    if (std::find(d.aliases.begin(), d.aliases.end(), key) != d.aliases.end()) return d;
  }

  const std::string wanted = normalize_device_name(name);
  auto named = [&](const DeviceSpec& d) {
    if (normalize_device_name(d.id) == wanted || normalize_device_name(d.name) == wanted) {
      return true;
    }
    return std::any_of(d.aliases.begin(), d.aliases.end(), [&](const std::string& alias) {
      return normalize_device_name(alias) == wanted;
    });
  };
  std::vector<const DeviceSpec*> matches;
  if (!wanted.empty()) {
    for (const DeviceSpec& d : devices_) {
      if (named(d)) matches.push_back(&d);
    }
  }
  if (matches.size() == 1) return *matches.front();
  if (matches.size() > 1) {
    std::vector<std::string> candidates;
    for (const DeviceSpec* d : matches) candidates.push_back(d->id + " (" + d->name + ")");
    throw InvalidInput(std::string(where) + ": expected the name of one device, found '" + name +
                       "', which matches " + std::to_string(matches.size()) +
                       " devices once case, '-', '_', spaces and vendor words are ignored: " +
                       join_with_commas(candidates) + "; give one of these ids");
  }

  // Nothing matches: the nearest id or alias, compared in normalised form, if it is close.
  std::vector<std::string> ids;
  std::vector<std::string> names;     // ids and aliases
  std::vector<std::string> owners;    // the id of each
  std::vector<std::string> compared;  // their normalised forms
  for (const DeviceSpec& d : devices_) {
    ids.push_back(d.id);
    names.push_back(d.id);
    for (const std::string& alias : d.aliases) names.push_back(alias);
    owners.resize(names.size(), d.id);
  }
  for (const std::string& n : names) compared.push_back(normalize_device_name(n));
  std::string suggestion;
  if (const std::optional<std::size_t> i = nearest_index(wanted, compared); i && !wanted.empty()) {
    suggestion = "did you mean '" + names[*i] + "'" +
                 (owners[*i] != names[*i] ? " (" + owners[*i] + ")" : "") + "? ";
  }
  throw InvalidInput(std::string(where) +
                     ": expected a device of the catalog (an id, an alias or the GPU's name as "
                     "the driver reports it), found '" +
                     name + "'; " + suggestion + "accepted ids: " + join_with_commas(ids) +
                     " (`nnergy devices` lists them with their aliases)");
}

}  // namespace nnergy::device
