#include <gtest/gtest.h>

#include <string>

#include "nnergy/core/error.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/op_catalog.h"
#include "onnx_builder.h"
#include "tiny_network.h"

namespace nnergy::graph {
namespace {

using testing::OnnxBuilder;
using testing::TinyNetwork;

// MAC and flop counts are exact integers: compare exactly.

// Two stacked LSTM layers as torch.onnx exports nn.LSTM(256, 256, num_layers=2): one node per
// layer, the first layer's Y [seq, 1, batch, hidden] squeezed into the second's X.
Network two_layer_lstm() {
  OnnxBuilder b;
  b.input("x", {512, 32, 256});
  for (const char* layer : {"1", "2"}) {
    b.input(std::string("w") + layer, {1, 4 * 256, 256})
        .input(std::string("r") + layer, {1, 4 * 256, 256})
        .input(std::string("b") + layer, {1, 8 * 256});
  }
  b.metadata("nnergy.data_inputs", "x").int64_initializer("axes", {1}).output("y2");
  OnnxBuilder::set_int(b.node("LSTM", {"x", "w1", "r1", "b1"}, {"y1"}, "/lstm/LSTM"), "hidden_size",
                       256);
  b.node("Squeeze", {"y1", "axes"}, {"h1"});
  OnnxBuilder::set_int(b.node("LSTM", {"h1", "w2", "r2", "b2"}, {"y2"}, "/lstm/LSTM_1"),
                       "hidden_size", 256);
  return import_onnx_bytes(b.bytes(), "lstm.onnx", DimBindings{});
}

TEST(RecurrentCost, TwoLayerLstmMatchesTheClosedForm) {
  const Network net = two_layer_lstm();
  const OpCost first = op_cost(net, net.nodes()[0]);
  const OpCost second = op_cost(net, net.nodes()[2]);
  // 1 direction · 512 steps · batch 32 · 4 gates · hidden 256 · (input 256 + hidden 256).
  const double layer_macs = 1.0 * 512 * 32 * 4 * 256 * (256 + 256);
  // Gate sums with both biases (3 per gate element) and 18 activation flops per hidden unit.
  const double pointwise_flops = 512.0 * 32 * 4 * 256 * 3 + 512.0 * 32 * 256 * 18;
  for (const OpCost& layer : {first, second}) {
    EXPECT_TRUE(layer.known);
    EXPECT_EQ(layer.op_class, OpClass::kMatrix);
    EXPECT_DOUBLE_EQ(layer.inference.mac_count, layer_macs);
    EXPECT_DOUBLE_EQ(layer.inference.flop_count, 2 * layer_macs + pointwise_flops);
    // One input-projection GEMM, then a recurrent GEMM and a pointwise kernel per step.
    EXPECT_DOUBLE_EQ(layer.inference.kernel_count, 1 + 2 * 512);
    EXPECT_GT(layer.training_forward.byte_count,
              layer.inference.byte_count);  // saved gate activations
    EXPECT_EQ(layer.parameter_count, 2 * 1024 * 256 + 2048);
  }
  EXPECT_DOUBLE_EQ(first.inference.mac_count + second.inference.mac_count,
                   2 * 512.0 * 32 * 4 * 256 * 512);
  // Layer 1 reads the data input: the recurrence through time, dW and dR but no dX, i.e. three
  // products of 512·32·4·256·256 MACs. Layer 2 also computes dX: twice its forward MACs.
  EXPECT_DOUBLE_EQ(first.backward.mac_count, 3 * 512.0 * 32 * 4 * 256 * 256);
  EXPECT_DOUBLE_EQ(second.backward.mac_count, 2 * layer_macs);
  // 512 steps × (gate-gradient kernel + recurrent GEMM), then dX, dW, dR and dB.
  EXPECT_DOUBLE_EQ(second.backward.kernel_count, 2 * 512 + 4);
  EXPECT_DOUBLE_EQ(first.backward.kernel_count, 2 * 512 + 3);
}

Network bidirectional_gru(std::int64_t linear_before_reset) {
  OnnxBuilder b;
  b.input("x", {10, 4, 8}).input("w", {2, 48, 8}).input("r", {2, 48, 16}).input("b", {2, 96});
  b.metadata("nnergy.data_inputs", "x").output("y");
  auto& gru = b.node("GRU", {"x", "w", "r", "b"}, {"y"});
  OnnxBuilder::set_int(gru, "hidden_size", 16);
  OnnxBuilder::set_string(gru, "direction", "bidirectional");
  OnnxBuilder::set_int(gru, "linear_before_reset", linear_before_reset);
  return import_onnx_bytes(b.bytes(), "gru.onnx", DimBindings{});
}

TEST(RecurrentCost, BidirectionalGruAndLinearBeforeReset) {
  const Network onnx_default = bidirectional_gru(0);
  const Network torch_style = bidirectional_gru(1);
  const OpCost split = op_cost(onnx_default, onnx_default.nodes()[0]);
  const OpCost fused = op_cost(torch_style, torch_style.nodes()[0]);
  const double macs = 2.0 * 10 * 4 * 3 * 16 * (8 + 16);  // dirs·seq·batch·gates·hidden·(in+h)
  EXPECT_DOUBLE_EQ(split.inference.mac_count, macs);
  EXPECT_DOUBLE_EQ(fused.inference.mac_count, macs);
  EXPECT_DOUBLE_EQ(fused.inference.kernel_count, 2 * (1 + 2 * 10));
  // The reset gate before the recurrent product splits each step in two GEMMs + two kernels.
  EXPECT_DOUBLE_EQ(split.inference.kernel_count, 2 * (1 + 4 * 10));
  EXPECT_DOUBLE_EQ(fused.inference.flop_count,
                   2 * macs + 2.0 * 10 * 4 * 3 * 16 * 3 + 2.0 * 10 * 4 * 16 * 14);
}

TEST(RecurrentCost, RnnBatchFirstLayoutWithoutBias) {
  OnnxBuilder b;
  b.input("x", {4, 10, 8}).input("w", {1, 16, 8}).input("r", {1, 16, 16});
  b.metadata("nnergy.data_inputs", "x").output("y");
  auto& rnn = b.node("RNN", {"x", "w", "r"}, {"y"});
  OnnxBuilder::set_int(rnn, "hidden_size", 16);
  OnnxBuilder::set_int(rnn, "layout", 1);  // X is [batch 4, seq 10, input 8]
  const Network net = import_onnx_bytes(b.bytes(), "rnn.onnx", DimBindings{});
  const OpCost cost = op_cost(net, net.nodes()[0]);
  const double macs = 10.0 * 4 * 16 * (8 + 16);
  EXPECT_DOUBLE_EQ(cost.inference.mac_count, macs);
  // One sum per gate element (no bias) and the tanh.
  EXPECT_DOUBLE_EQ(cost.inference.flop_count, 2 * macs + 10.0 * 4 * 16 * (1 + 1));
  EXPECT_DOUBLE_EQ(cost.inference.kernel_count, 1 + 2 * 10);
}

TEST(RecurrentCost, DirectionThatDisagreesWithTheWeightsIsInvalidInput) {
  TinyNetwork t;
  const std::size_t x = t.tensor("x", {10, 4, 8}, TensorRole::kDataInput);
  const std::size_t w = t.tensor("w", {1, 64, 8}, TensorRole::kParameter);
  const std::size_t r = t.tensor("r", {1, 64, 16}, TensorRole::kParameter);
  const std::size_t y = t.tensor("y", {10, 2, 4, 16});
  t.node("LSTM", {x, w, r}, {y},
         {{"hidden_size", std::int64_t{16}}, {"direction", std::string("bidirectional")}});
  const Network net = t.done();
  try {
    op_cost(net, net.nodes()[0]);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("/LSTM0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bidirectional"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nnergy::graph
