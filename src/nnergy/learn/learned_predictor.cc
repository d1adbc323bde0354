#include "nnergy/learn/learned_predictor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "nnergy/core/error.h"
#include "nnergy/graph/op_descriptor.h"
#include "nnergy/graph/op_signature.h"
#include "nnergy/graph/whitelist.h"

namespace nnergy::learn {

LearnedPredictor::LearnedPredictor(std::shared_ptr<const learn::ModelFile> model,
                                   device::DeviceSpec device, std::string source)
    : model_(std::move(model)), device_(std::move(device)), source_(std::move(source)) {
  if (!model_) throw InternalError("LearnedPredictor without a model");
  // The encoder's one-hot columns are named "op=<type>" (features/feature_encoder.h).
  const std::string prefix = "op=";
  for (const std::string& name : model_->encoder().names()) {
    if (name.rfind(prefix, 0) == 0) known_op_types_.insert(name.substr(prefix.size()));
  }
}

bool LearnedPredictor::knows_op_type(const std::string& op_type) const {
  return known_op_types_.count(op_type) != 0;
}

std::string LearnedPredictor::name() const {
  const std::string regressor = model_->time().regressor->name();
  if (model_->power() != nullptr) {
    const std::string power = model_->power()->regressor->name();
    return power == regressor ? regressor + " (time, power)"
                              : regressor + " (time) + " + power + " (power)";
  }
  return regressor + " (time) + analytical (power)";
}

std::string LearnedPredictor::description() const {
  const nlohmann::json& dataset = model_->dataset();
  return fmt::format(
      "learned model {} ({}), trained on {} measured ops of {} from {}; {}",
      std::filesystem::path(source_).filename().string(), model_->time().regressor->description(),
      dataset.value("rows_used", std::size_t{0}), model_->device().dataset_name,
      dataset.value("path", std::string("?")),
      model_->power() != nullptr
          ? "time and power learned"
          : "time learned, power from the analytical archline model (the dataset has no power)");
}

std::string LearnedPredictor::time_source() const {
  return model_->time().regressor->name() + " from " + source_;
}

std::string LearnedPredictor::power_source() const {
  if (model_->power() != nullptr) return model_->power()->regressor->name() + " from " + source_;
  return "analytical (archline; " + source_ + " has no power model)";
}

void LearnedPredictor::check_applicable(graph::Mode mode, device::Precision precision,
                                        SettingNames names) const {
  const std::vector<std::string> modes = model_->trained_modes();
  const std::string mode_name(graph::to_string(mode));
  if (!modes.empty() && std::find(modes.begin(), modes.end(), mode_name) == modes.end()) {
    throw InvalidInput(fmt::format("{}: the model {} was trained on {} measurements only",
                                   setting_with_value(names, "mode", mode_name), source_,
                                   join_with_commas(modes)));
  }
  const std::vector<std::string> dtypes = model_->trained_dtypes();
  const std::string dtype(device::to_string(precision));
  if (!dtypes.empty() && std::find(dtypes.begin(), dtypes.end(), dtype) == dtypes.end()) {
    throw InvalidInput(fmt::format("{}: the model {} was trained on {} measurements only",
                                   setting_with_value(names, "precision", dtype), source_,
                                   join_with_commas(dtypes)));
  }
}

std::vector<std::string> LearnedPredictor::caveats(const graph::Network& network,
                                                   const std::vector<double>& clocks_mhz) const {
  std::vector<std::string> out;
  std::set<std::string> unseen_types;
  for (const graph::UniqueOperation& op :
       graph::unique_operations(network, graph::Whitelist::standard())) {
    if (!knows_op_type(op.op_type)) unseen_types.insert(op.op_type);
  }
  if (!unseen_types.empty()) {
    out.push_back(fmt::format(
        "op types the model never saw are predicted by the analytical model (time and power): {}",
        join_with_commas({unseen_types.begin(), unseen_types.end()})));
  }
  const device::DeviceSpec& d = device_;
  if (d.id != model_->device().catalog_id) {
    out.push_back(fmt::format(
        "the model was trained on {} ({}); predictions for {} extrapolate through the device "
        "descriptor features and are unvalidated",
        model_->device().catalog_id, model_->device().dataset_name, d.id));
  }
  std::vector<double> seen;
  for (const std::int64_t c : model_->trained_clocks_mhz()) {
    seen.push_back(c == 0 ? d.clock.boost_mhz : static_cast<double>(c));
  }
  std::vector<std::string> unseen;
  for (const double c : clocks_mhz) {
    if (std::find(seen.begin(), seen.end(), c) == seen.end())
      unseen.push_back(fmt::format("{:g}", c));
  }
  if (!seen.empty() && !unseen.empty()) {
    std::vector<std::string> seen_text;
    for (const double c : seen) seen_text.push_back(fmt::format("{:g}", c));
    out.push_back(fmt::format(
        "the model saw clocks {} MHz only; at {} of the {} clocks asked (e.g. {} MHz) it "
        "extrapolates: the clock reaches it only through the clock and roofline features, and "
        "no measurement taught it how time changes with the clock",
        join_with_commas(seen_text), unseen.size(), clocks_mhz.size(), unseen.front()));
  }
  return out;
}

std::vector<analytical::OpEstimate> LearnedPredictor::predict(
    std::span<const predict::OpQuery> queries) const {
  // One feature row per query whose op type the model knows; the others are the analytical
  // model's alone.
  features::FeatureMatrix x = model_->encoder().empty_matrix();
  std::vector<std::size_t> row_of(queries.size(), queries.size());
  std::size_t rows = 0;
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const predict::OpQuery& q = queries[i];
    if (!knows_op_type(q.node.op_type)) continue;
    features::FeatureContext context;
    context.device = &device_;
    context.clock_mhz = q.point.clock_mhz;
    context.precision = q.point.precision;
    context.mode = q.mode;
    model_->encoder().append(x, graph::describe_op(q.network, q.node), context);
    row_of[i] = rows++;
  }
  std::vector<regress::Prediction> times;
  std::vector<regress::Prediction> powers;
  if (rows > 0) {
    times = model_->time().regressor->predict(x);
    if (model_->power() != nullptr) powers = model_->power()->regressor->predict(x);
  }

  std::vector<analytical::OpEstimate> out;
  out.reserve(queries.size());
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const predict::OpQuery& q = queries[i];
    const analytical::OpEstimate analytical =
        analytical::predict_op(device_, q.cost, q.mode, q.point);
    if (row_of[i] == queries.size()) {
      out.push_back(analytical);
      continue;
    }
    const regress::Prediction& time = times.at(row_of[i]);
    analytical::OpEstimate e;
    e.time_s = std::max(time.value, 0.0);
    e.time_std_s = time.stddev;
    if (!powers.empty()) {
      e.power_w = std::max(powers.at(row_of[i]).value, 0.0);
      e.power_std_w = powers.at(row_of[i]).stddev;
    } else {
      e.power_w = analytical.power_w;
    }
    e.energy_j = e.time_s * e.power_w;
    e.energy_std_j = std::hypot(e.power_w * e.time_std_s, e.time_s * e.power_std_w);
    // The learned time is for the whole iteration; the forward share is the analytical model's.
    e.forward_time_s = analytical.time_s > 0 && q.mode == graph::Mode::kTraining
                           ? e.time_s * analytical.forward_time_s / analytical.time_s
                           : e.time_s;
    e.compute_bound = analytical.compute_bound;
    e.power_capped = false;
    out.push_back(e);
  }
  return out;
}

}  // namespace nnergy::learn
