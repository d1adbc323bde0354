#include "nnergy/serve/engine.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/core/nearest_name.h"
#include "nnergy/core/text.h"

namespace nnergy::serve {

namespace {

using json = nlohmann::json;

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput(path.string() + ": cannot open the engine catalog");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return core::parse_json_document(text.str(), path.string());
  } catch (const json::exception& e) {
    throw InvalidInput(path.string() + ": not valid JSON (" + std::string(e.what()) + ")");
  }
}

double number(const json& o, const char* key, double fallback, const std::string& where) {
  if (!o.contains(key)) return fallback;
  if (!o[key].is_number() || o[key].get<double>() < 0) {
    throw InvalidInput(fmt::format("{}: field '{}': expected a non-negative number, found {}",
                                   where, key, core::describe_json_value(o[key])));
  }
  return o[key].get<double>();
}

bool boolean(const json& o, const char* key, bool fallback, const std::string& where) {
  if (!o.contains(key)) return fallback;
  if (!o[key].is_boolean()) {
    throw InvalidInput(fmt::format("{}: field '{}': expected true or false, found {}", where, key,
                                   core::describe_json_value(o[key])));
  }
  return o[key].get<bool>();
}

std::string text(const json& o, const char* key, const std::string& fallback,
                 const std::string& where) {
  if (!o.contains(key)) return fallback;
  if (!o[key].is_string()) {
    throw InvalidInput(fmt::format("{}: field '{}': expected a string, found {}", where, key,
                                   core::describe_json_value(o[key])));
  }
  return o[key].get<std::string>();
}

// The fields both engines.json and a calibration may set.
void read_fields(EngineProfile& e, const json& o, const std::string& where) {
  e.host_per_step_s = number(o, "host_per_step_s", e.host_per_step_s, where);
  e.host_per_sequence_s = number(o, "host_per_sequence_s", e.host_per_sequence_s, where);
  e.host_per_kernel_s = number(o, "host_per_kernel_s", e.host_per_kernel_s, where);
  e.kernels_per_op = number(o, "kernels_per_op", e.kernels_per_op, where);
  e.activation_workspace_gib =
      number(o, "activation_workspace_gib", e.activation_workspace_gib, where);
  e.link_efficiency = number(o, "link_efficiency", e.link_efficiency, where);
  e.pcie_efficiency = number(o, "pcie_efficiency", e.pcie_efficiency, where);
  if (o.contains("collective_latency_s")) {
    const json& c = o["collective_latency_s"];
    e.collective_latency_scale_up_s = number(c, "scale_up", e.collective_latency_scale_up_s, where);
    e.collective_latency_pcie_s = number(c, "pcie", e.collective_latency_pcie_s, where);
  }
}

EngineProfile read_engine(const json& o, const std::string& where) {
  if (!o.is_object() || !o.contains("id") || !o["id"].is_string()) {
    throw InvalidInput(where + ": expected an object with an \"id\"");
  }
  EngineProfile e;
  e.id = ascii_lower(o["id"].get<std::string>());
  const std::string w = where + " ('" + e.id + "')";
  e.release = text(o, "release", "", w);
  for (const json& a : o.value("aliases", json::array()))
    if (a.is_string()) e.aliases.push_back(ascii_lower(a.get<std::string>()));
  e.is_default = boolean(o, "default", false, w);
  e.continuous_batching = boolean(o, "continuous_batching", true, w);
  e.chunked_prefill = boolean(o, "chunked_prefill", true, w);
  e.max_batched_tokens = static_cast<int>(number(o, "max_batched_tokens", 8192, w));
  e.max_running_sequences = static_cast<int>(number(o, "max_running_sequences", 256, w));
  const std::string graphs = text(o, "cuda_graphs", "decode", w);
  if (graphs == "none") {
    e.cuda_graphs = CudaGraphs::kNone;
  } else if (graphs == "decode") {
    e.cuda_graphs = CudaGraphs::kDecode;
  } else if (graphs == "all") {
    e.cuda_graphs = CudaGraphs::kAll;
  } else {
    throw InvalidInput(w + ": field 'cuda_graphs': expected none, decode or all, found '" + graphs +
                       "'");
  }
  e.cuda_graph_max_tokens = static_cast<int>(number(o, "cuda_graph_max_tokens", 256, w));
  const std::string update = text(o, "kv_cache_update", "paged", w);
  if (update != "paged" && update != "concat") {
    throw InvalidInput(w + ": field 'kv_cache_update': expected paged or concat, found '" + update +
                       "'");
  }
  e.kv_cache_update = update == "concat" ? KvCacheUpdate::kConcat : KvCacheUpdate::kPaged;
  const std::string attention = text(o, "attention", "fused", w);
  if (attention != "fused" && attention != "eager") {
    throw InvalidInput(w + ": field 'attention': expected fused or eager, found '" + attention +
                       "'");
  }
  e.attention = attention == "eager" ? AttentionKernels::kEager : AttentionKernels::kFused;
  e.host_overlapped = boolean(o, "host_overlapped", true, w);
  e.memory_fraction_of_free = boolean(o, "memory_fraction_of_free", false, w);
  e.gpu_memory_fraction = number(o, "gpu_memory_fraction", 0.9, w);
  if (!(e.gpu_memory_fraction > 0 && e.gpu_memory_fraction <= 1)) {
    throw InvalidInput(w + ": field 'gpu_memory_fraction': expected a fraction in (0, 1]");
  }
  read_fields(e, o, w);
  for (const json& f : o.value("estimated", json::array()))
    if (f.is_string()) e.estimated.push_back(f.get<std::string>());
  e.source = text(o, "source", "", w);
  return e;
}

}  // namespace

EngineCatalog EngineCatalog::load(const std::filesystem::path& data_dir) {
  const std::filesystem::path path = data_dir / "llm" / "engines.json";
  const json root = read_json(path);
  if (!root.is_object() || !root.contains("engines") || !root["engines"].is_array()) {
    throw InvalidInput(path.string() + ": expected a JSON object with an \"engines\" array");
  }
  EngineCatalog catalog;
  for (std::size_t i = 0; i < root["engines"].size(); ++i) {
    catalog.engines_.push_back(
        read_engine(root["engines"][i], fmt::format("{}: engines[{}]", path.string(), i)));
  }
  return catalog;
}

const EngineProfile& EngineCatalog::default_engine() const {
  for (const EngineProfile& e : engines_) {
    if (e.is_default) return e;
  }
  if (engines_.empty()) throw InternalError("the engine catalog is empty");
  return engines_.front();
}

const EngineProfile& EngineCatalog::find(const std::string& name,
                                         const std::string& setting) const {
  const std::string key = ascii_lower(name);
  std::vector<std::string> ids;
  for (const EngineProfile& e : engines_) {
    if (e.id == key) return e;
    for (const std::string& a : e.aliases)
      if (a == key) return e;
    ids.push_back(e.id);
  }
  const std::string hint = did_you_mean(key, ids);
  throw InvalidInput(fmt::format("{} {}: expected an engine, one of {}{}", setting, name,
                                 join_with_commas(ids), hint.empty() ? "" : "; " + hint));
}

void EngineCatalog::replace(const EngineProfile& profile) {
  for (EngineProfile& e : engines_) {
    if (e.id == profile.id) e = profile;
  }
}

}  // namespace nnergy::serve
