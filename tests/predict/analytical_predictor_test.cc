#include "nnergy/predict/analytical_predictor.h"

#include <gtest/gtest.h>

#include <vector>

namespace nnergy::predict {
namespace {

using device::Precision;

device::DeviceSpec toy_device() {
  device::DeviceSpec d;
  d.id = "toy";
  d.peak_flop_per_s = {{Precision::kFp32, 10e12}};
  d.memory_bandwidth_byte_per_s = 1e12;
  d.tdp_w = 400;
  d.idle_w = 50;
  d.clock = {500, 1000, 1000, 100};
  d.efficiency.compute = 0.5;
  d.efficiency.memory = 1.0;
  d.efficiency.kernel_overhead_s = 0.0;
  d.archline[Precision::kFp32] = {10e-12, 100e-12, 100, "toy", false, std::nullopt, std::nullopt};
  return d;
}

TEST(AnalyticalPredictor, PredictsEachQueryOfABatchAsThePassModelInOrder) {
  const device::DeviceSpec d = toy_device();
  const AnalyticalPredictor p(d);
  graph::Network network;
  graph::Node node;
  graph::OpCost matrix;
  matrix.op_class = graph::OpClass::kMatrix;
  matrix.inference = {0, 1e12, 1e9, 1};
  matrix.training_forward = matrix.inference;
  matrix.backward = {0, 2e12, 2e9, 2};
  graph::OpCost stream;
  stream.op_class = graph::OpClass::kElementwise;
  stream.inference = {0, 1e6, 1e9, 1};
  const std::vector<OpQuery> queries = {
      {network, node, matrix, graph::Mode::kInference, {Precision::kFp32, 1000}},
      {network, node, stream, graph::Mode::kInference, {Precision::kFp32, 500}},
      {network, node, matrix, graph::Mode::kTraining, {Precision::kFp32, 1000}}};
  const std::vector<analytical::OpEstimate> batch = p.predict(queries);
  ASSERT_EQ(batch.size(), 3u);
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const analytical::OpEstimate one =
        analytical::predict_op(d, queries[i].cost, queries[i].mode, queries[i].point);
    EXPECT_DOUBLE_EQ(batch[i].time_s, one.time_s) << i;
    EXPECT_DOUBLE_EQ(batch[i].energy_j, one.energy_j) << i;
    EXPECT_DOUBLE_EQ(p.predict_one(queries[i]).time_s, one.time_s) << i;
  }
  EXPECT_GT(batch[2].time_s, batch[0].time_s);  // the training step adds the gradient pass
  EXPECT_TRUE(p.predict({}).empty());
  EXPECT_EQ(p.device().id, "toy");
  EXPECT_EQ(p.description(), analytical::describe(d));
}

}  // namespace
}  // namespace nnergy::predict
