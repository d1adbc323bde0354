#include "nnergy/calibration/published_serving.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"

namespace nnergy::calibration {

namespace {

using json = nlohmann::json;

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput(path.string() + ": cannot be opened for reading");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return core::parse_json_document(text.str(), path.string());
  } catch (const json::exception& e) {
    throw InvalidInput(path.string() + ": not valid JSON (" + std::string(e.what()) + ")");
  }
}

std::optional<double> positive(const json& o, const char* key) {
  if (!o.contains(key) || !o[key].is_number() || !(o[key].get<double>() > 0)) return std::nullopt;
  return o[key].get<double>();
}

int parallel_degree(const std::string& text, const std::string& prefix) {
  const std::regex re(prefix + "(\\d+)");
  std::smatch m;
  return std::regex_search(text, m, re) ? std::stoi(m[1]) : 1;
}

std::string task_of(const json& record) {
  const std::string path = record["source"].value("path", "");
  return path.find("/code/") != std::string::npos ? "code" : "chat";
}

}  // namespace

std::string_view to_string(ServingQuantity q) {
  switch (q) {
    case ServingQuantity::kTokensPerS:
      return "tokens_per_s";
    case ServingQuantity::kTimePerOutputToken:
      return "time_per_output_token_s";
    case ServingQuantity::kEnergyPerOutputToken:
      return "energy_per_output_token_j";
    case ServingQuantity::kAvgPower:
      return "avg_power_w";
  }
  return "tokens_per_s";
}

std::optional<double> figure(const ServingFigures& f, ServingQuantity q) {
  switch (q) {
    case ServingQuantity::kTokensPerS:
      return f.tokens_per_s;
    case ServingQuantity::kTimePerOutputToken:
      return f.time_per_output_token_s;
    case ServingQuantity::kEnergyPerOutputToken:
      return f.energy_per_output_token_j;
    case ServingQuantity::kAvgPower:
      return f.avg_power_w;
  }
  return std::nullopt;
}

PublishedServing read_published_serving(const std::filesystem::path& records_path,
                                        const std::filesystem::path& mapping_path,
                                        const llm::ModelCatalog& models,
                                        const device::DeviceCatalog& devices) {
  const json records = read_json(records_path);
  const json mapping = read_json(mapping_path);
  if (!records.is_array()) throw InvalidInput(records_path.string() + ": expected a JSON array");
  if (!mapping.is_object() || !mapping.contains("sources")) {
    throw InvalidInput(mapping_path.string() + ": expected an object with \"sources\"");
  }
  PublishedServing out;
  out.records_source = records_path.string();
  const json& model_map = mapping.value("models", json::object());
  const json& skip_models = mapping.value("skip_models", json::object());
  const json& gpu_map = mapping.value("gpus", json::object());
  const json& skip_sources = mapping.value("skip_sources", json::object());
  for (const json& r : records) {
    const std::string id = r.value("id", "");
    const std::string title = r.contains("source") ? r["source"].value("title", "") : "";
    const json* source = nullptr;
    for (const json& s : mapping["sources"]) {
      if (title.find(s.value("match", "\x01")) != std::string::npos) source = &s;
    }
    if (source == nullptr) {
      std::string why = "no source of llm_runs.json matches '" + title + "'";
      for (auto it = skip_sources.begin(); it != skip_sources.end(); ++it)
        if (title.find(it.key()) != std::string::npos) why = it.value().get<std::string>();
      out.skipped.push_back({id, why});
      continue;
    }
    PublishedServingRun run;
    run.id = id;
    run.source = source->value("key", "");
    run.model_name = r["model"].value("name", "");
    if (skip_models.contains(run.model_name)) {
      out.skipped.push_back({id, skip_models[run.model_name].get<std::string>()});
      continue;
    }
    const std::string model_name = model_map.contains(run.model_name)
                                       ? model_map[run.model_name].value("id", run.model_name)
                                       : run.model_name;
    const std::optional<llm::ResolvedModel> resolved = models.resolve(model_name);
    if (!resolved) {
      out.skipped.push_back({id, "model '" + run.model_name + "' is not in the catalog"});
      continue;
    }
    run.model_id = resolved->model->id;
    run.gpu_name = r.value("gpu", "");
    const std::string gpu = gpu_map.contains(run.gpu_name)
                                ? gpu_map[run.gpu_name].value("id", run.gpu_name)
                                : run.gpu_name;
    try {
      run.device_id = devices.find(gpu, "gpu").id;
    } catch (const InvalidInput&) {
      out.skipped.push_back({id, "GPU '" + run.gpu_name + "' is not in the device catalog"});
      continue;
    }
    run.engine_id = source->value("engine", "");
    run.workload = serve::parse_workload(source->value("workload", "serving"), "workload");
    const std::string parallelism = r.value("parallelism", "");
    run.tp = parallel_degree(parallelism, "TP");
    run.pp = parallel_degree(parallelism, "PP");
    run.gpus = r.value("gpu_count", run.tp * run.pp);
    const json& batch_rule = (*source)["batch"];
    if (batch_rule.is_number()) {
      run.batch = batch_rule.get<double>();
    } else if (batch_rule == "avg_running_batch" && r["batch_or_concurrency"].is_object()) {
      run.batch = positive(r["batch_or_concurrency"], "avg_running_batch");
    }
    const std::optional<double> out_tokens = positive(r, "output_tokens");
    if (!out_tokens) {
      out.skipped.push_back({id, "the record gives no output length"});
      continue;
    }
    run.output_tokens = std::round(*out_tokens);
    if (const auto in = positive(r, "input_tokens")) {
      run.input_tokens = *in;
    } else if (source->contains("prompt_tokens")) {
      run.input_tokens = (*source)["prompt_tokens"].value(task_of(r), 0.0);
    }
    if (!(run.input_tokens > 0)) {
      out.skipped.push_back({id, "the record gives no prompt length and its source no assumption"});
      continue;
    }
    const std::string precision = source->value("precision", r.value("precision", ""));
    if (precision == "fp8") run.precision = llm::WeightFormat::kFp8;
    if (precision == "fp16") run.precision = llm::WeightFormat::kFp16;
    run.tpot_is_decode_step = source->value("time_per_output_token", "") == "decode_step";
    const json& m = r["measured"];
    run.measured.tokens_per_s = positive(m, "tokens_per_s");
    if (const auto tpot = positive(m, "time_per_output_token_ms")) {
      run.measured.time_per_output_token_s = *tpot / 1000;
    }
    if (const auto per_request = positive(m, "energy_per_request_j")) {
      run.measured.energy_per_output_token_j = *per_request / *out_tokens;
    }
    if (run.measured.energy_per_output_token_j && run.measured.tokens_per_s) {
      run.measured.avg_power_w =
          *run.measured.energy_per_output_token_j * *run.measured.tokens_per_s;
    }
    for (const json& q : source->value("quantities", json::array())) {
      for (int k = 0; k < kServingQuantities; ++k) {
        const auto quantity = static_cast<ServingQuantity>(k);
        if (q == to_string(quantity) && figure(run.measured, quantity))
          run.scored.push_back(quantity);
      }
    }
    if (run.scored.empty()) {
      out.skipped.push_back({id, "no scored quantity is measured"});
      continue;
    }
    out.runs.push_back(std::move(run));
  }
  return out;
}

}  // namespace nnergy::calibration
