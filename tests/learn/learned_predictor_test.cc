#include "nnergy/learn/learned_predictor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "learn_fixture.h"
#include "nnergy/core/error.h"
#include "nnergy/network/clock_sweep.h"
#include "nnergy/network/network_prediction.h"
#include "nnergy/predict/analytical_predictor.h"

namespace nnergy::predict {
namespace {

using learn::LearnedPredictor;
using learn::testing::LearnTest;
using ::testing::HasSubstr;
namespace testing = learn::testing;

class LearnedPredictorTest : public LearnTest {
 protected:
  std::shared_ptr<const learn::ModelFile> train(const testing::SyntheticDataset& spec) {
    testing::write_dataset(file("d.sqlite"), spec);
    table_ = learn::build_training_table(file("d.sqlite"), testing::test_catalog(), {});
    learn::TrainSettings settings;
    settings.extra = testing::small_forest();
    return std::make_shared<const learn::ModelFile>(
        learn::ModelFile::train(table_, registry_, settings));
  }

  network::PredictionSettings settings_at_boost(graph::Mode mode) const {
    network::PredictionSettings s;
    s.mode = mode;
    s.point.clock_mhz = table_.device.clock.boost_mhz;
    return s;
  }

  learn::TrainingTable table_;
  regress::RegressorRegistry registry_ = testing::standard_registry();
};

TEST_F(LearnedPredictorTest, NetworkOpsGetTheFeaturesOfTheirDatasetRows) {
  testing::SyntheticDataset spec;
  spec.networks = testing::two_chains();
  const auto model = train(spec);
  const LearnedPredictor predictor(model, table_.device, "m.nnp");
  EXPECT_EQ(predictor.name(), "forest (time) + analytical (power)");
  EXPECT_THAT(predictor.power_source(), HasSubstr("analytical"));

  // The regressor's prediction for each dataset row, by (signature, mode).
  const auto direct = model->time().regressor->predict(table_.features);
  std::map<std::pair<std::string, std::string>, regress::Prediction> by_key;
  for (std::size_t i = 0; i < table_.rows.size(); ++i) {
    by_key[{table_.rows[i].signature, table_.rows[i].mode}] = direct[i];
  }
  const graph::Network& net = spec.networks.front();
  const network::CostedNetwork costed(net);
  for (const graph::Mode mode : {graph::Mode::kInference, graph::Mode::kTraining}) {
    const network::NetworkPrediction p =
        network::predict_network(costed, predictor, settings_at_boost(mode));
    EXPECT_EQ(p.predictor_name, predictor.name());
    std::size_t checked = 0;
    for (const network::LayerPrediction& layer : p.layers) {
      if (!layer.node_index) continue;  // the optimizer step is analytical
      const graph::Node& node = net.nodes()[*layer.node_index];
      const std::string signature = graph::describe_op(net, node).signature;
      const auto it = by_key.find({signature, std::string(graph::to_string(mode))});
      ASSERT_NE(it, by_key.end()) << signature;
      EXPECT_NEAR(layer.time_s, it->second.value, 1e-12 * it->second.value) << signature;
      EXPECT_NEAR(layer.time_std_s, it->second.stddev, 1e-12 * it->second.value) << signature;
      // Energy = learned time × analytical power (seed 000 §5.1).
      EXPECT_NEAR(layer.energy_j, layer.time_s * layer.power_w, 1e-12 * layer.energy_j);
      EXPECT_GT(layer.power_w, 0);
      ++checked;
    }
    EXPECT_EQ(checked, 32u);

    // Each op alone, outside the batch predict_network asks for: the same figures.
    for (const network::LayerPrediction& layer : p.layers) {
      if (!layer.node_index) continue;
      const graph::Node& node = net.nodes()[*layer.node_index];
      const analytical::OpEstimate one = predictor.predict_one(
          {net, node, costed.costs()[*layer.node_index], mode, settings_at_boost(mode).point});
      EXPECT_NEAR(one.time_s, layer.time_s, 1e-12 * layer.time_s) << node.name;
      EXPECT_NEAR(one.energy_j, layer.energy_j, 1e-12 * layer.energy_j) << node.name;
    }
  }
}

TEST_F(LearnedPredictorTest, LearnedPowerGivesEnergyAndItsUncertainty) {
  testing::SyntheticDataset spec;
  spec.networks = testing::two_chains();
  spec.power_w = [](const graph::OpDescriptor& op, const std::string& mode) {
    return std::optional<double>((mode == "training" ? 30.0 : 20.0) +
                                 1e-7 * op.inference.flop_count);
  };
  const auto model = train(spec);
  const LearnedPredictor predictor(model, table_.device, "m.nnp");
  EXPECT_EQ(predictor.name(), "forest (time, power)");
  const graph::Network& net = spec.networks.front();
  const network::CostedNetwork costed(net);
  const network::NetworkPrediction p =
      network::predict_network(costed, predictor, settings_at_boost(graph::Mode::kInference));
  for (const network::LayerPrediction& layer : p.layers) {
    EXPECT_NEAR(layer.energy_j, layer.time_s * layer.power_w, 1e-12 * layer.energy_j);
    EXPECT_NEAR(layer.energy_std_j,
                std::hypot(layer.power_w * layer.time_std_s, layer.time_s * layer.power_std_w),
                1e-12 * layer.energy_j);
    EXPECT_GT(layer.power_std_w, 0) << "the forest gives a spread";
    // Trained on 20 W + 1e-7 W per flop: the forest stays inside the range it saw.
    EXPECT_GE(layer.power_w, 20.0);
    EXPECT_LT(layer.power_w, 30.0);
  }
}

TEST_F(LearnedPredictorTest, RefusesWhatTheModelNeverSawAndNamesExtrapolation) {
  testing::SyntheticDataset spec;
  spec.networks = {testing::conv_chain("c", {3, 4, 8, 12, 16, 20, 24})};
  const auto model = train(spec);
  const LearnedPredictor predictor(model, table_.device, "m.nnp");
  try {
    predictor.check_applicable(graph::Mode::kInference, device::Precision::kFp16);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("--precision fp16"));
    EXPECT_THAT(e.what(), HasSubstr("m.nnp"));
    EXPECT_THAT(e.what(), HasSubstr("fp32"));
  }
  EXPECT_NO_THROW(predictor.check_applicable(graph::Mode::kTraining, device::Precision::kFp32));
  const graph::Network& net = spec.networks.front();
  EXPECT_TRUE(predictor.caveats(net, {table_.device.clock.boost_mhz}).empty());
  const auto clock_caveats = predictor.caveats(net, {1500, table_.device.clock.boost_mhz});
  ASSERT_EQ(clock_caveats.size(), 1u);
  EXPECT_THAT(clock_caveats.front(), HasSubstr("1500"));

  const LearnedPredictor elsewhere(model, testing::test_catalog().find("a100-40gb"), "m.nnp");
  const auto device_caveats = elsewhere.caveats(net, {elsewhere.device().clock.boost_mhz});
  ASSERT_FALSE(device_caveats.empty());
  EXPECT_THAT(device_caveats.front(), HasSubstr("a100-40gb"));
}

TEST_F(LearnedPredictorTest, OpTypesTheModelNeverSawAreAnalytical) {
  testing::SyntheticDataset spec;
  spec.networks = {testing::conv_chain("c", {3, 4, 8, 12, 16, 20, 24})};
  const auto model = train(spec);
  LearnedPredictor predictor(model, table_.device, "m.nnp");
  EXPECT_TRUE(predictor.knows_op_type("Conv"));
  EXPECT_FALSE(predictor.knows_op_type("Flatten"));

  // The chain with a Flatten view appended: the dataset has no Flatten.
  graph::Network net = testing::conv_chain("c", {3, 4, 8});
  graph::TensorInfo flat;
  flat.name = "flat";
  flat.shape = {1, 8 * 8 * 8};
  const std::size_t out = net.add_tensor(std::move(flat));
  graph::Node flatten;
  flatten.name = "flatten";
  flatten.op_type = "Flatten";
  flatten.inputs = {net.nodes().back().outputs.front()};
  flatten.outputs = {out};
  net.add_node(std::move(flatten));
  net.propagate_tensor_flags();

  const auto caveats = predictor.caveats(net, {table_.device.clock.boost_mhz});
  ASSERT_EQ(caveats.size(), 1u);
  EXPECT_THAT(caveats.front(), HasSubstr("analytical model"));
  EXPECT_THAT(caveats.front(), HasSubstr("Flatten"));

  const network::CostedNetwork costed(net);
  const AnalyticalPredictor analytical_model(table_.device);
  const auto learned =
      network::predict_network(costed, predictor, settings_at_boost(graph::Mode::kInference));
  const auto reference = network::predict_network(costed, analytical_model,
                                                  settings_at_boost(graph::Mode::kInference));
  ASSERT_EQ(learned.layers.size(), 5u);
  EXPECT_EQ(learned.layers.back().op_type, "Flatten");
  EXPECT_DOUBLE_EQ(learned.layers.back().time_s, reference.layers.back().time_s);
  EXPECT_DOUBLE_EQ(learned.layers.back().energy_j, reference.layers.back().energy_j);
  EXPECT_EQ(learned.layers.back().time_std_s, 0.0);
}

// Fixed estimates with uncertainties: Relu 1 s ± 0.1 s at 10 W, Conv 2 s ± 0.5 s at 20 W.
class FixedPredictor : public OpPredictor {
 public:
  std::string name() const override { return "fixed"; }
  std::string description() const override { return "test estimates"; }
  const device::DeviceSpec& device() const override { return device_; }
  std::vector<analytical::OpEstimate> predict(std::span<const OpQuery> queries) const override {
    std::vector<analytical::OpEstimate> out;
    for (const OpQuery& query : queries) {
      analytical::OpEstimate e;
      const bool conv = query.node.op_type == "Conv";
      e.time_s = conv ? 2.0 : 1.0;
      e.time_std_s = conv ? 0.5 : 0.1;
      e.power_w = conv ? 20.0 : 10.0;
      e.energy_j = e.time_s * e.power_w;
      e.energy_std_j = e.power_w * e.time_std_s;
      e.forward_time_s = e.time_s;
      out.push_back(e);
    }
    return out;
  }

 private:
  device::DeviceSpec device_ = testing::test_catalog().find("a100-40gb");
};

// x[1, 4, 8, 8] → 1×1 Conv → Relu → Relu → Relu: one Conv and three occurrences of one Relu op
// (every Relu reads an activation that needs a gradient, so they share one signature).
graph::Network conv_and_three_relus() {
  graph::Network net;
  net.name = "relus";
  const auto tensor = [&net](std::string name, graph::Shape shape, graph::TensorRole role) {
    graph::TensorInfo t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.role = role;
    return net.add_tensor(std::move(t));
  };
  const std::size_t x = tensor("x", {1, 4, 8, 8}, graph::TensorRole::kDataInput);
  const std::size_t w = tensor("w", {4, 4, 1, 1}, graph::TensorRole::kParameter);
  std::size_t current = tensor("c", {1, 4, 8, 8}, graph::TensorRole::kActivation);
  graph::Node conv;
  conv.name = "conv";
  conv.op_type = "Conv";
  conv.inputs = {x, w};
  conv.outputs = {current};
  net.add_node(std::move(conv));
  for (int i = 0; i < 3; ++i) {
    const std::size_t out =
        tensor("r" + std::to_string(i), {1, 4, 8, 8}, graph::TensorRole::kActivation);
    graph::Node relu;
    relu.name = "relu" + std::to_string(i);
    relu.op_type = "Relu";
    relu.inputs = {current};
    relu.outputs = {out};
    net.add_node(std::move(relu));
    current = out;
  }
  net.propagate_tensor_flags();
  return net;
}

TEST(NetworkUncertainty, OccurrencesCorrelatedOpsIndependent) {
  const graph::Network net = conv_and_three_relus();
  const network::CostedNetwork costed(net);
  ASSERT_EQ(costed.unique_count(), 2u);
  const FixedPredictor fixed;
  const AnalyticalPredictor analytical_model(testing::test_catalog().find("a100-40gb"));
  network::PredictionSettings settings;
  settings.point.clock_mhz = 1410;
  const network::NetworkTotals t = network::predict_network(costed, fixed, settings).totals;
  EXPECT_DOUBLE_EQ(t.time_s, 5.0);
  EXPECT_DOUBLE_EQ(t.energy_j, 70.0);
  // σ_T² = (3·0.1)² + 0.5², σ_E² = (3·1)² + 10², cov = 3²·10·0.1² + 20·0.5².
  EXPECT_NEAR(t.time_std_s, std::sqrt(0.34), 1e-12);
  EXPECT_NEAR(t.energy_std_j, std::sqrt(109.0), 1e-12);
  EXPECT_NEAR(t.edp_std_j_s, std::sqrt(25 * 109.0 + 4900 * 0.34 + 2 * 70 * 5 * 5.9), 1e-9);

  const network::NetworkTotals none =
      network::predict_network(costed, analytical_model, settings).totals;
  EXPECT_EQ(none.time_std_s, 0.0) << "the analytical model gives no uncertainty";
  EXPECT_EQ(none.edp_std_j_s, 0.0);
}

TEST(OptimumConfidence, ClearUncertainAndUnknownOptima) {
  const std::vector<double> energy = {5.0, 3.0, 3.5, 6.0};
  const network::OptimumConfidence clear =
      network::optimum_confidence(energy, {0.1, 0.2, 0.2, 0.1}, 1);
  EXPECT_TRUE(clear.uncertainty_known);
  EXPECT_EQ(clear.runner_up, 2u);
  EXPECT_NEAR(clear.margin_sigma, 0.5 / std::hypot(0.2, 0.2), 1e-12);
  EXPECT_FALSE(clear.overlaps_runner_up);
  EXPECT_EQ(clear.indistinguishable, std::vector<std::size_t>{1});

  const network::OptimumConfidence unsure =
      network::optimum_confidence(energy, {0.1, 0.3, 0.3, 0.1}, 1);
  EXPECT_TRUE(unsure.overlaps_runner_up);
  EXPECT_EQ(unsure.indistinguishable, (std::vector<std::size_t>{1, 2}));

  const network::OptimumConfidence unknown = network::optimum_confidence(energy, {0, 0, 0, 0}, 1);
  EXPECT_FALSE(unknown.uncertainty_known);
  EXPECT_TRUE(std::isinf(unknown.margin_sigma));
  EXPECT_FALSE(unknown.overlaps_runner_up);
}

}  // namespace
}  // namespace nnergy::predict
