#include "nnergy/learn/model_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <type_traits>

#include "nnergy/core/atomic_file.h"
#include "nnergy/core/error.h"
#include "nnergy/core/fit_metrics.h"
#include "nnergy/core/json_document.h"
#include "nnergy/core/version.h"
#include "nnergy/dataset/dataset_time.h"
#include "nnergy/learn/regressor_settings.h"

namespace nnergy::learn {

namespace {

using nlohmann::json;

// In-sample quality per mode: how well the model reproduces the rows it was fitted on. Optimistic
// by construction; `nnergy evaluate` gives the held-out figures.
json training_set_metrics(const TrainingTable& table, const std::vector<std::size_t>& indices,
                          Target target, const std::vector<regress::Prediction>& predictions) {
  json by_mode = json::object();
  for (const std::string mode : {"inference", "training"}) {
    std::vector<double> actual;
    std::vector<double> predicted;
    for (std::size_t k = 0; k < indices.size(); ++k) {
      if (table.rows[indices[k]].mode != mode) continue;
      actual.push_back(table.values(target, {indices[k]}).front());
      predicted.push_back(predictions[k].value);
    }
    if (!actual.empty()) by_mode[mode] = core::fit_metrics(actual, predicted).to_json();
  }
  return {{"training_set", by_mode},
          {"note",
           "in-sample figures of the rows the model was fitted on (optimistic); run `nnergy "
           "evaluate` for cross-validated and held-out figures"}};
}

TargetModel fit_target(const TrainingTable& table, const regress::RegressorRegistry& registry,
                       const TrainSettings& settings, Target target) {
  const std::vector<std::size_t> indices = table.rows_with(target);
  const features::FeatureMatrix x = table.features.select(indices);
  const std::vector<double> y = table.values(target, indices);
  TargetModel model;
  model.regressor = registry.create(settings.predictor);
  regress::FitOptions options;
  options.seed = settings.seed;
  options.threads = settings.threads;
  options.extra = settings_for_target(settings.extra, to_string(target));
  model.regressor->fit(x, y, options);
  model.feature_names = x.names;
  model.metrics = training_set_metrics(table, indices, target, model.regressor->predict(x));
  return model;
}

json target_json(const TargetModel& model) {
  return {{"regressor", model.regressor->name()},
          {"feature_names", model.feature_names},
          {"model", model.regressor->save()},
          {"metrics", model.metrics}};
}

// Reads the fields of one JSON object, naming the file and the field in every error.
class Reader {
 public:
  Reader(const json& object, std::string where) : object_(object), where_(std::move(where)) {
    if (!object_.is_object()) throw InvalidInput(where_ + ": expected a JSON object");
  }
  const json& at(const std::string& key) const {
    if (!object_.contains(key)) throw InvalidInput(where_ + ": missing field '" + key + "'");
    return object_.at(key);
  }
  std::string text(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_string()) throw InvalidInput(where_ + "." + key + ": expected a string");
    return v.get<std::string>();
  }
  const json& object(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_object()) throw InvalidInput(where_ + "." + key + ": expected a JSON object");
    return v;
  }
  bool has(const std::string& key) const { return object_.contains(key); }

 private:
  const json& object_;
  std::string where_;
};

TargetModel parse_target(const json& j, const std::string& where,
                         const std::vector<std::string>& schema,
                         const regress::RegressorRegistry& registry) {
  const Reader r(j, where);
  TargetModel model;
  const std::string name = r.text("regressor");
  if (!registry.contains(name)) {
    throw InvalidInput(fmt::format("{}.regressor: '{}' is not a regressor of this build; known: {}",
                                   where, name, join_with_commas(registry.names())));
  }
  const json& names = r.at("feature_names");
  if (!names.is_array()) throw InvalidInput(where + ".feature_names: expected an array");
  for (const json& n : names) {
    if (!n.is_string()) throw InvalidInput(where + ".feature_names: expected strings");
    model.feature_names.push_back(n.get<std::string>());
  }
  if (model.feature_names != schema) {
    std::size_t i = 0;
    while (i < schema.size() && i < model.feature_names.size() &&
           schema[i] == model.feature_names[i]) {
      ++i;
    }
    const std::string in_schema = i < schema.size() ? "'" + schema[i] + "'" : "(end)";
    const std::string in_model =
        i < model.feature_names.size() ? "'" + model.feature_names[i] + "'" : "(end)";
    throw InvalidInput(fmt::format(
        "{}: the feature schema ({} columns) differs from the {} columns the regressor was "
        "fitted on: column {} is {} in the schema and {} in the regressor",
        where, schema.size(), model.feature_names.size(), i, in_schema, in_model));
  }
  model.regressor = registry.create(name);
  try {
    model.regressor->load(r.at("model"));
  } catch (const InvalidInput& e) {
    throw InvalidInput(where + ".model: " + e.what());
  }
  if (r.has("metrics")) model.metrics = r.at("metrics");
  return model;
}

template <typename T>
std::vector<T> distinct_training(const json& training, const std::string& key) {
  std::vector<T> out;
  if (!training.is_object() || !training.contains(key) || !training[key].is_array()) return out;
  for (const json& v : training[key]) {
    if constexpr (std::is_same_v<T, std::string>) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    } else {
      if (v.is_number_integer()) out.push_back(v.get<T>());
    }
  }
  return out;
}

}  // namespace

void check_output_directory(const std::string& path, const std::string& flag) {
  if (path.empty()) throw InvalidInput(flag + ": expected a file name");
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::filesystem::path dir = parent.empty() ? std::filesystem::path(".") : parent;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw InvalidInput(
        fmt::format("{} {}: directory '{}' does not exist", flag, path, dir.string()));
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw InvalidInput(fmt::format("{} {}: is a directory, expected a file name", flag, path));
  }
}

ModelFile ModelFile::train(const TrainingTable& table, const regress::RegressorRegistry& registry,
                           const TrainSettings& settings) {
  ModelFile m;
  m.predictor_ = settings.predictor;
  m.context_ = {{"tool_version", kToolVersion},
                {"created_utc", dataset::utc_now_iso8601()},
                {"command_line", settings.command_line}};
  m.device_ = table.device_resolution;
  const std::size_t power_rows = table.rows_with(Target::kPower).size();
  m.dataset_ = {{"path", table.dataset_path},         {"digest_algorithm", "fnv1a-64"},
                {"digest", table.dataset_digest},     {"rows_used", table.rows.size()},
                {"rows_dropped", table.dropped_rows}, {"power_values_dropped", table.dropped_power},
                {"error_rows", table.error_rows},     {"power_rows", power_rows}};
  m.encoder_ = table.encoder;
  const std::size_t targets = power_rows > 0 ? 2 : 1;
  if (settings.progress) settings.progress(0, targets);
  m.time_ = fit_target(table, registry, settings, Target::kTime);
  if (settings.progress) settings.progress(1, targets);
  if (power_rows > 0) {
    m.power_ = fit_target(table, registry, settings, Target::kPower);
    if (settings.progress) settings.progress(2, targets);
  }
  std::set<std::string> modes;
  std::set<std::string> dtypes;
  std::set<std::int64_t> clocks;
  for (const TrainingRow& row : table.rows) {
    modes.insert(row.mode);
    dtypes.insert(row.dtype);
    clocks.insert(row.clock_mhz);
  }
  m.training_ = {{"seed", settings.seed},      {"threads", settings.threads},
                 {"settings", settings.extra}, {"modes", modes},
                 {"dtypes", dtypes},           {"clocks_mhz", clocks}};
  return m;
}

json ModelFile::to_json() const {
  json j;
  j["format"] = kModelFileFormat;
  j["format_version"] = kModelFileFormatVersion;
  j["context"] = context_;
  j["predictor"] = predictor_;
  j["device"] = {{"catalog_id", device_.catalog_id},
                 {"dataset_name", device_.dataset_name},
                 {"kind", device_.dataset_kind},
                 {"matched_by", device_.how}};
  j["dataset"] = dataset_;
  j["features"] = encoder_.to_json();
  j["targets"] = json::object();
  j["targets"][to_string(Target::kTime)] = target_json(time_);
  if (power_) j["targets"][to_string(Target::kPower)] = target_json(*power_);
  j["training"] = training_;
  return j;
}

void ModelFile::save(const std::string& path) const {
  check_output_directory(path, "model file");
  write_file_atomically(path, to_json().dump() + "\n", "model file");
}

ModelFile ModelFile::load(const std::string& path, const regress::RegressorRegistry& registry) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InvalidInput(path + ": cannot open the model file");
  std::ostringstream text;
  text << file.rdbuf();
  return parse(text.str(), path, registry);
}

ModelFile ModelFile::parse(const std::string& text, const std::string& source,
                           const regress::RegressorRegistry& registry) {
  json root;
  try {
    root = core::parse_json_document(text, source);
  } catch (const json::exception& e) {  // parse_error, or out_of_range: a number > 1e308
    throw InvalidInput(source + ": not an nnergy model file: not valid JSON (" +
                       std::string(e.what()) + ")");
  }
  if (!root.is_object() || !root.contains("format") || root["format"] != kModelFileFormat) {
    throw InvalidInput(fmt::format("{}: not an nnergy model file (expected \"format\": \"{}\")",
                                   source, kModelFileFormat));
  }
  if (!root.contains("format_version") || root["format_version"] != kModelFileFormatVersion) {
    throw InvalidInput(fmt::format(
        "{}: model file format_version {}; this nnergy ({}) reads only version {} (retrain the "
        "model with `nnergy train`)",
        source,
        root.contains("format_version") ? core::describe_json_value(root["format_version"])
                                        : "missing",
        kToolVersion, kModelFileFormatVersion));
  }
  const Reader r(root, source);
  ModelFile m;
  m.predictor_ = r.text("predictor");
  m.context_ = r.object("context");
  const Reader device(r.object("device"), source + ": device");
  m.device_.catalog_id = device.text("catalog_id");
  m.device_.dataset_name = device.text("dataset_name");
  m.device_.dataset_kind = device.text("kind");
  if (device.has("matched_by")) m.device_.how = device.text("matched_by");
  m.dataset_ = r.object("dataset");
  try {
    m.encoder_ = features::FeatureEncoder::from_json(r.at("features"));
  } catch (const InvalidInput& e) {
    throw InvalidInput(source + ": features: " + e.what());
  }
  const Reader targets(r.object("targets"), source + ": targets");
  const std::string time_key = to_string(Target::kTime);
  const std::string power_key = to_string(Target::kPower);
  try {
    m.time_ = parse_target(targets.object(time_key), source + ": targets." + time_key,
                           m.encoder_.names(), registry);
    if (targets.has(power_key)) {
      m.power_ = parse_target(targets.object(power_key), source + ": targets." + power_key,
                              m.encoder_.names(), registry);
    }
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(source + ": malformed regressor model (" + std::string(e.what()) + ")");
  }
  m.training_ = r.has("training") ? r.at("training") : json::object();
  return m;
}

std::vector<std::string> ModelFile::trained_modes() const {
  return distinct_training<std::string>(training_, "modes");
}

std::vector<std::string> ModelFile::trained_dtypes() const {
  return distinct_training<std::string>(training_, "dtypes");
}

std::vector<std::int64_t> ModelFile::trained_clocks_mhz() const {
  return distinct_training<std::int64_t>(training_, "clocks_mhz");
}

}  // namespace nnergy::learn
