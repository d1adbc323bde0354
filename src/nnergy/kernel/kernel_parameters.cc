#include "nnergy/kernel/kernel_parameters.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/core/read_file.h"
#include "nnergy/kernel/attention_model.h"

namespace nnergy::kernel {

namespace {

using json = nlohmann::ordered_json;

// Where a format without a fit of its own takes its parameters from, nearest first: the same
// kernels' family (block-scaled and int8 products are fp8-like CUTLASS kernels; NVFP4 the next
// narrower one), weight-only and tf32 products the 16-bit ones.
const std::map<std::string, std::vector<std::string>>& transfers() {
  static const std::map<std::string, std::vector<std::string>> kTransfers = {
      {"fp8_block", {"fp8", "bf16"}},
      {"fp8", {"fp8_block", "bf16"}},
      {"int8", {"fp8", "bf16"}},
      {"nvfp4", {"fp8", "bf16"}},
      {"int4_wo", {"int8_wo", "bf16"}},
      {"int8_wo", {"int4_wo", "bf16"}},
      {"tf32", {"bf16"}},
      {"fp32", {}},
      {"bf16", {}},
  };
  return kTransfers;
}

double number(const json& o, const char* key, double fallback, const std::string& where, double low,
              double high) {
  if (!o.contains(key)) return fallback;
  if (!o[key].is_number() || !(o[key].get<double>() >= low && o[key].get<double>() <= high)) {
    throw InvalidInput(fmt::format("{}: field '{}': expected a number in [{}, {}], found {}", where,
                                   key, low, high, core::describe_json_value(o[key])));
  }
  return o[key].get<double>();
}

GemmParameters gemm_of(const json& o, const std::string& where) {
  if (!o.is_object()) throw InvalidInput(where + ": expected an object");
  GemmParameters p;
  p.compute_efficiency = number(o, "compute_efficiency", p.compute_efficiency, where, 1e-3, 1);
  p.memory_efficiency = number(o, "memory_efficiency", p.memory_efficiency, where, 1e-3, 1);
  p.latency_s = number(o, "latency_s", p.latency_s, where, 0, 1e-2);
  p.k_half = number(o, "k_half", p.k_half, where, 0, 1e6);
  p.tile_exponent = number(o, "tile_exponent", p.tile_exponent, where, 0, 4);
  p.overlap_loss = number(o, "overlap_loss", p.overlap_loss, where, 0, 1);
  p.quantize_latency_s = number(o, "quantize_latency_s", p.quantize_latency_s, where, 0, 1e-2);
  p.measurements = static_cast<int>(number(o, "measurements", 0, where, 0, 1e9));
  p.fitted_on = o.value("fitted_on", "");
  return p;
}

json gemm_json(const GemmParameters& p) {
  return json{{"compute_efficiency", p.compute_efficiency},
              {"memory_efficiency", p.memory_efficiency},
              {"latency_s", p.latency_s},
              {"k_half", p.k_half},
              {"tile_exponent", p.tile_exponent},
              {"overlap_loss", p.overlap_loss},
              {"quantize_latency_s", p.quantize_latency_s},
              {"measurements", p.measurements},
              {"fitted_on", p.fitted_on}};
}

AttentionParameters attention_of(const json& o, const std::string& where) {
  if (!o.is_object()) throw InvalidInput(where + ": expected an object");
  AttentionParameters p;
  p.compute_efficiency = number(o, "compute_efficiency", p.compute_efficiency, where, 1e-3, 1);
  p.exp_efficiency = number(o, "exp_efficiency", p.exp_efficiency, where, 1e-3, 1e3);
  p.memory_efficiency = number(o, "memory_efficiency", p.memory_efficiency, where, 1e-3, 1);
  p.latency_s = number(o, "latency_s", p.latency_s, where, 0, 1e-2);
  p.cta_s = number(o, "cta_s", p.cta_s, where, 0, 1e-2);
  p.overlap_loss = number(o, "overlap_loss", p.overlap_loss, where, 0, 1);
  p.saturating_ctas = number(o, "saturating_ctas", p.saturating_ctas, where, 1e-3, 1e3);
  p.measurements = static_cast<int>(number(o, "measurements", 0, where, 0, 1e9));
  p.fitted_on = o.value("fitted_on", "");
  return p;
}

json attention_json(const AttentionParameters& p) {
  return json{{"compute_efficiency", p.compute_efficiency},
              {"exp_efficiency", p.exp_efficiency},
              {"memory_efficiency", p.memory_efficiency},
              {"latency_s", p.latency_s},
              {"cta_s", p.cta_s},
              {"overlap_loss", p.overlap_loss},
              {"saturating_ctas", p.saturating_ctas},
              {"measurements", p.measurements},
              {"fitted_on", p.fitted_on}};
}

CollectiveParameters collective_of(const json& o, const std::string& where) {
  if (!o.is_object()) throw InvalidInput(where + ": expected an object");
  CollectiveParameters p;
  p.latency_s = number(o, "latency_s", p.latency_s, where, 0, 1e-2);
  p.step_s = number(o, "step_s", p.step_s, where, 0, 1e-3);
  p.efficiency = number(o, "efficiency", p.efficiency, where, 1e-3, 1.5);
  if (o.contains("one_shot")) {
    if (!o["one_shot"].is_boolean())
      throw InvalidInput(where + ": field 'one_shot': expected true or false");
    p.one_shot = o["one_shot"].get<bool>();
  }
  p.measurements = static_cast<int>(number(o, "measurements", 0, where, 0, 1e9));
  p.fitted_on = o.value("fitted_on", "");
  return p;
}

json collective_json(const CollectiveParameters& p) {
  return json{{"latency_s", p.latency_s},       {"step_s", p.step_s},
              {"efficiency", p.efficiency},     {"one_shot", p.one_shot},
              {"measurements", p.measurements}, {"fitted_on", p.fitted_on}};
}

// Reads `root[name]` (engine → format → GEMM parameters) into `out`.
void read_gemm_map(const json& root, const char* name, const std::string& source,
                   std::map<std::string, std::map<std::string, GemmParameters>>& out) {
  if (!root.contains(name)) return;
  const json& o = root[name];
  if (!o.is_object()) throw InvalidInput(fmt::format("{}: '{}': expected an object", source, name));
  for (auto e = o.begin(); e != o.end(); ++e) {
    const std::string where = fmt::format("{}: {}.{}", source, name, e.key());
    if (!e.value().is_object()) throw InvalidInput(where + ": expected an object");
    for (auto f = e.value().begin(); f != e.value().end(); ++f) {
      if (!parse_gemm_format(f.key()))
        throw InvalidInput(fmt::format("{}.{}: not a GEMM format; expected one of: {}", where,
                                       f.key(), known_gemm_formats()));
      out[e.key()][f.key()] = gemm_of(f.value(), where + "." + f.key());
    }
  }
}

json gemm_map_json(const std::map<std::string, std::map<std::string, GemmParameters>>& map) {
  json g = json::object();
  for (const auto& [engine, formats] : map) {
    json e = json::object();
    for (const auto& [format, p] : formats) e[format] = gemm_json(p);
    g[engine] = e;
  }
  return g;
}

// The parameters of `format` under `engine` in `map` with gemm_for's fallbacks.
GemmParameters lookup_gemm(const std::map<std::string, std::map<std::string, GemmParameters>>& map,
                           const char* kernels, GemmFormat format, const std::string& engine,
                           std::string* from) {
  const std::string name(info(format).name);
  std::vector<std::string> engines = {engine};
  if (engine != KernelParameters::kDefaultEngine)
    engines.emplace_back(KernelParameters::kDefaultEngine);
  // Then any engine's kernels of the format (fp32 GEMMs are measured under PyTorch only).
  for (const auto& [e, by_format] : map)
    if (std::find(engines.begin(), engines.end(), e) == engines.end()) engines.push_back(e);
  std::vector<std::string> formats = {name};
  if (auto it = transfers().find(name); it != transfers().end())
    formats.insert(formats.end(), it->second.begin(), it->second.end());
  for (const std::string& f : formats) {
    for (const std::string& e : engines) {
      const auto eng = map.find(e);
      if (eng == map.end()) continue;
      const auto p = eng->second.find(f);
      if (p == eng->second.end()) continue;
      if (from != nullptr && (f != name || e != engine)) {
        *from = fmt::format("{} {} {} (no fit of {} {} {})", e, f, kernels, engine, name, kernels);
      }
      return p->second;
    }
  }
  if (from != nullptr) *from = "the built-in defaults (no kernel calibration)";
  return {};
}

}  // namespace

std::string attention_parameters_key(AttentionPhase phase, const AttentionFormat& format) {
  return fmt::format("attention {} {}", to_string(phase), format.name());
}

KernelParameters KernelParameters::load(const std::filesystem::path& data_dir) {
  const std::filesystem::path path = data_dir / "kernel" / "calibrated.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  return parse(read_whole_file(path), path.string());
}

const KernelParameters& KernelParameters::shipped() {
  static const KernelParameters parameters = load(data_directory());
  return parameters;
}

KernelParameters KernelParameters::parse(const std::string& text, const std::string& source) {
  json root;
  try {
    root = core::parse_ordered_json_document(text, source);
  } catch (const json::exception& e) {
    throw InvalidInput(source + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!root.is_object()) throw InvalidInput(source + ": expected a JSON object");
  KernelParameters k;
  k.provenance = root.value("provenance", "");
  read_gemm_map(root, "gemm", source, k.gemm);
  read_gemm_map(root, "moe", source, k.moe);
  if (root.contains("attention")) {
    if (!root["attention"].is_object())
      throw InvalidInput(source + ": 'attention': expected an object");
    for (auto e = root["attention"].begin(); e != root["attention"].end(); ++e) {
      if (!e.value().is_object())
        throw InvalidInput(source + ": attention." + e.key() + ": expected an object");
      for (auto f = e.value().begin(); f != e.value().end(); ++f)
        k.attention[e.key()][f.key()] =
            attention_of(f.value(), source + ": attention." + e.key() + "." + f.key());
    }
  }
  if (root.contains("collective")) {
    if (!root["collective"].is_object())
      throw InvalidInput(source + ": 'collective': expected an object");
    for (auto e = root["collective"].begin(); e != root["collective"].end(); ++e) {
      if (!e.value().is_object())
        throw InvalidInput(source + ": collective." + e.key() + ": expected an object");
      for (auto f = e.value().begin(); f != e.value().end(); ++f)
        k.collective[e.key()][f.key()] =
            collective_of(f.value(), source + ": collective." + e.key() + "." + f.key());
    }
  }
  if (root.contains("power")) {
    const json& o = root["power"];
    const std::string where = source + ": power";
    if (!o.is_object()) throw InvalidInput(where + ": expected an object");
    PowerParameters& p = k.power;
    p.base = number(o, "base", p.base, where, 0, 2);
    p.compute = number(o, "compute", p.compute, where, 0, 4);
    p.memory = number(o, "memory", p.memory, where, 0, 4);
    p.clock_exponent = number(o, "clock_exponent", p.clock_exponent, where, 0.5, 4);
    p.measurements = static_cast<int>(number(o, "measurements", 0, where, 0, 1e9));
    p.fitted_on = o.value("fitted_on", "");
    if (o.contains("format_weight") && o["format_weight"].is_object()) {
      for (auto f = o["format_weight"].begin(); f != o["format_weight"].end(); ++f) {
        if (!f.value().is_number() || f.value().get<double>() <= 0)
          throw InvalidInput(where + ".format_weight." + f.key() + ": expected a positive number");
        p.format_weight[f.key()] = f.value().get<double>();
      }
    }
  }
  if (root.contains("time_log_sigma") && root["time_log_sigma"].is_object()) {
    for (auto f = root["time_log_sigma"].begin(); f != root["time_log_sigma"].end(); ++f)
      k.time_log_sigma[f.key()] =
          number(root["time_log_sigma"], f.key().c_str(), 0, source + ": time_log_sigma", 0, 5);
  }
  k.power_log_sigma = number(root, "power_log_sigma", 0, source, 0, 5);
  if (root.contains("accuracy") && root["accuracy"].is_object()) {
    k.accuracy.time = root["accuracy"].value("time", "");
    k.accuracy.power = root["accuracy"].value("power", "");
    k.accuracy.attention = root["accuracy"].value("attention", "");
    k.accuracy.collective = root["accuracy"].value("collective", "");
    k.accuracy.moe = root["accuracy"].value("moe", "");
  }
  return k;
}

std::string KernelParameters::to_json_text() const {
  json root;
  root["description"] =
      "nnergy kernel model parameters: GEMM time per engine and format, kernel board power "
      "(src/nnergy/kernel/, docs/kernel-model.md); written by nnergy calibrate --kernels";
  root["provenance"] = provenance;
  root["gemm"] = gemm_map_json(gemm);
  root["moe"] = gemm_map_json(moe);
  json a = json::object();
  for (const auto& [engine, keys] : attention) {
    json e = json::object();
    for (const auto& [key, p] : keys) e[key] = attention_json(p);
    a[engine] = e;
  }
  root["attention"] = a;
  json c = json::object();
  for (const auto& [library, keys] : collective) {
    json e = json::object();
    for (const auto& [key, p] : keys) e[key] = collective_json(p);
    c[library] = e;
  }
  root["collective"] = c;
  json w = json::object();
  for (const auto& [format, weight] : power.format_weight) w[format] = weight;
  root["power"] = json{{"base", power.base},
                       {"compute", power.compute},
                       {"memory", power.memory},
                       {"format_weight", w},
                       {"clock_exponent", power.clock_exponent},
                       {"measurements", power.measurements},
                       {"fitted_on", power.fitted_on}};
  json s = json::object();
  for (const auto& [format, sigma] : time_log_sigma) s[format] = sigma;
  root["time_log_sigma"] = s;
  root["power_log_sigma"] = power_log_sigma;
  root["accuracy"] = json{{"time", accuracy.time},
                          {"power", accuracy.power},
                          {"attention", accuracy.attention},
                          {"collective", accuracy.collective},
                          {"moe", accuracy.moe}};
  return root.dump(2) + "\n";
}

GemmParameters KernelParameters::gemm_for(GemmFormat format, const std::string& engine,
                                          std::string* from) const {
  return lookup_gemm(gemm, "kernels", format, engine, from);
}

GemmParameters KernelParameters::moe_for(GemmFormat format, const std::string& engine,
                                         std::string* from) const {
  return lookup_gemm(moe, "MoE kernels", format, engine, from);
}

AttentionParameters KernelParameters::attention_for(AttentionPhase phase,
                                                    const AttentionFormat& format,
                                                    const std::string& engine,
                                                    std::string* from) const {
  const std::string key = attention_parameters_key(phase, format);
  std::vector<std::string> engines = {engine};
  if (engine != kDefaultEngine) engines.emplace_back(kDefaultEngine);
  // Nearest formats: the format itself, then 16-bit products over the same cache, then all 16-bit.
  std::vector<std::string> keys = {key};
  if (format.fp8_math) keys.push_back(attention_parameters_key(phase, {false, format.fp8_cache}));
  if (format.fp8_cache) keys.push_back(attention_parameters_key(phase, {false, false}));
  for (const std::string& k : keys) {
    for (const std::string& e : engines) {
      const auto eng = attention.find(e);
      if (eng == attention.end()) continue;
      const auto p = eng->second.find(k);
      if (p == eng->second.end()) continue;
      if (from != nullptr && (k != key || e != engine))
        *from = fmt::format("{} {} kernels (no fit of {} {} kernels)", e, k, engine, key);
      return p->second;
    }
  }
  if (from != nullptr) *from = "the built-in attention defaults (no kernel calibration)";
  return {};
}

CollectiveParameters KernelParameters::collective_for(const std::string& library,
                                                      const std::string& key,
                                                      std::string* from) const {
  for (const std::string& l : {library, std::string("nccl")}) {
    const auto lib = collective.find(l);
    if (lib == collective.end()) continue;
    const auto p = lib->second.find(key);
    if (p == lib->second.end()) continue;
    if (from != nullptr && l != library)
      *from = fmt::format("nccl {} kernels (no fit of {}'s)", key, library);
    return p->second;
  }
  if (from != nullptr) *from = "the built-in collective defaults (no kernel calibration)";
  return {};
}

double KernelParameters::power_weight(GemmFormat format) const {
  const auto it = power.format_weight.find(std::string(info(format).name));
  return it == power.format_weight.end() ? 1.0 : it->second;
}

}  // namespace nnergy::kernel
