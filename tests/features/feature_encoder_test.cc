#include "nnergy/features/feature_encoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "nnergy/analytical/pass_model.h"
#include "nnergy/core/error.h"
#include "nnergy/dataset/dataset_store.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/graph/op_cost.h"

namespace nnergy::features {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Relative tolerance of values computed twice by the same formula in another order.
constexpr double kRelTolerance = 1e-12;

const std::filesystem::path kDataDir(NNERGY_TEST_DATA_DIR);

const device::DeviceSpec& a100() {
  static const device::DeviceCatalog catalog =
      device::DeviceCatalog::load(kDataDir / "devices.json");
  return catalog.find("a100-40gb");
}

// A 3x3 convolution, 1x64x56x56 -> 1x64x56x56, with round hand-set costs.
graph::OpDescriptor conv() {
  graph::OpDescriptor op;
  op.signature = "conv-test";
  op.op_type = "Conv";
  op.op_class = graph::OpClass::kMatrix;
  op.dtype = graph::DataType::kFloat32;
  op.inputs = {{graph::TensorRole::kActivation, {1, 64, 56, 56}, graph::DataType::kFloat32, true},
               {graph::TensorRole::kParameter, {64, 64, 3, 3}, graph::DataType::kFloat32, true}};
  op.attributes = {{"dilations", std::vector<std::int64_t>{1, 1}},
                   {"group", std::int64_t{1}},
                   {"kernel_shape", std::vector<std::int64_t>{3, 3}},
                   {"pads", std::vector<std::int64_t>{1, 1, 1, 1}},
                   {"strides", std::vector<std::int64_t>{1, 1}},
                   {"auto_pad", std::string("NOTSET")}};
  op.parameter_count = 36864;
  op.inference = {.mac_count = 1e9, .flop_count = 2e9, .byte_count = 1e7, .kernel_count = 1};
  op.training_forward = {
      .mac_count = 1e9, .flop_count = 2e9, .byte_count = 1.2e7, .kernel_count = 2};
  op.backward = {.mac_count = 2e9, .flop_count = 4e9, .byte_count = 3e7, .kernel_count = 3};
  return op;
}

graph::OpDescriptor relu() {
  graph::OpDescriptor op;
  op.signature = "relu-test";
  op.op_type = "Relu";
  op.op_class = graph::OpClass::kElementwise;
  op.dtype = graph::DataType::kFloat32;
  op.inputs = {{graph::TensorRole::kActivation, {1, 64, 56, 56}, graph::DataType::kFloat32, false}};
  op.inference = {.mac_count = 0, .flop_count = 2e5, .byte_count = 1.6e6, .kernel_count = 1};
  op.training_forward = op.inference;
  op.backward = op.inference;
  return op;
}

double value(const FeatureEncoder& encoder, const std::vector<double>& row,
             const std::string& name) {
  const auto it = std::find(encoder.names().begin(), encoder.names().end(), name);
  if (it == encoder.names().end()) {
    ADD_FAILURE() << "no column " << name;
    return NAN;
  }
  return row[static_cast<std::size_t>(it - encoder.names().begin())];
}

bool has_column(const FeatureEncoder& encoder, const std::string& name) {
  return std::find(encoder.names().begin(), encoder.names().end(), name) != encoder.names().end();
}

FeatureEncoder conv_relu_encoder() {
  const std::vector<graph::OpDescriptor> ops = {relu(), conv()};
  return FeatureEncoder::fit(ops);
}

TEST(FeatureEncoderTest, FixedColumnsComeFirstInTheDocumentedOrder) {
  const FeatureEncoder encoder = conv_relu_encoder();
  const std::vector<std::string> first(encoder.names().begin(), encoder.names().begin() + 19);
  EXPECT_THAT(first, ElementsAre("flop_count", "byte_count", "parameter_count", "kernel_count",
                                 "intensity_flop_per_byte", "roofline_time_s", "analytical_time_s",
                                 "analytical_power_w", "log_flop_count", "log_byte_count",
                                 "log_roofline_time_s", "core_clock_mhz", "training",
                                 "device_peak_flop_per_s", "device_bandwidth_byte_per_s",
                                 "device_sm_count", "device_tdp_w", "op=Conv", "op=Relu"));
}

TEST(FeatureEncoderTest, ConvInferenceKnownAnswersAtHalfTheBoostClock) {
  const FeatureEncoder encoder = conv_relu_encoder();
  const device::DeviceSpec& device = a100();
  const double clock_mhz = device.clock.boost_mhz / 2;  // 705 MHz
  const auto row = encoder.encode(conv(), {.device = &device, .clock_mhz = clock_mhz});

  EXPECT_EQ(value(encoder, row, "flop_count"), 2e9);
  EXPECT_EQ(value(encoder, row, "byte_count"), 1e7);
  EXPECT_EQ(value(encoder, row, "parameter_count"), 36864);
  EXPECT_EQ(value(encoder, row, "kernel_count"), 1);
  EXPECT_DOUBLE_EQ(value(encoder, row, "intensity_flop_per_byte"), 200);
  // Compute bound: 2e9 flop / (19.5e12 flop/s * 0.5) = 205.128... us > 1e7 B / 1.555e12 B/s.
  EXPECT_NEAR(value(encoder, row, "roofline_time_s"), 2e9 / 9.75e12, 2e9 / 9.75e12 * 1e-12);
  // Analytical: the same work at the catalog's compute efficiency plus one launch overhead.
  const double analytical_s =
      2e9 / (device.efficiency.compute * 19.5e12 * 0.5) + device.efficiency.kernel_overhead_s;
  EXPECT_NEAR(value(encoder, row, "analytical_time_s"), analytical_s, analytical_s * kRelTolerance);
  const auto estimate = analytical::predict_pass(device, conv().inference, graph::OpClass::kMatrix,
                                                 {device::Precision::kFp32, clock_mhz});
  EXPECT_NEAR(value(encoder, row, "analytical_power_w"), estimate.power_w,
              estimate.power_w * kRelTolerance);
  EXPECT_DOUBLE_EQ(value(encoder, row, "log_flop_count"), std::log(1 + 2e9));
  EXPECT_DOUBLE_EQ(value(encoder, row, "log_byte_count"), std::log(1 + 1e7));
  EXPECT_DOUBLE_EQ(value(encoder, row, "log_roofline_time_s"), std::log1p(2e9 / 9.75e12));
  EXPECT_EQ(value(encoder, row, "core_clock_mhz"), 705);
  EXPECT_EQ(value(encoder, row, "training"), 0);
  EXPECT_EQ(value(encoder, row, "device_peak_flop_per_s"), 19.5e12);
  EXPECT_EQ(value(encoder, row, "device_bandwidth_byte_per_s"), 1.555e12);
  EXPECT_EQ(value(encoder, row, "device_sm_count"), 108);
  EXPECT_EQ(value(encoder, row, "device_tdp_w"), 400);
}

TEST(FeatureEncoderTest, TrainingSumsForwardAndBackward) {
  const FeatureEncoder encoder = conv_relu_encoder();
  const device::DeviceSpec& device = a100();
  const auto row = encoder.encode(conv(), {.device = &device, .mode = graph::Mode::kTraining});
  EXPECT_EQ(value(encoder, row, "flop_count"), 6e9);
  EXPECT_EQ(value(encoder, row, "byte_count"), 4.2e7);
  EXPECT_EQ(value(encoder, row, "kernel_count"), 5);
  EXPECT_EQ(value(encoder, row, "training"), 1);
  // Clock 0 is the boost clock: 6e9 flop / 19.5e12 flop/s.
  EXPECT_EQ(value(encoder, row, "core_clock_mhz"), 1410);
  EXPECT_NEAR(value(encoder, row, "roofline_time_s"), 6e9 / 19.5e12, 6e9 / 19.5e12 * 1e-12);

  const device::OperatingPoint point{device::Precision::kFp32, 1410};
  const auto forward =
      analytical::predict_pass(device, conv().training_forward, graph::OpClass::kMatrix, point);
  const auto backward =
      analytical::predict_pass(device, conv().backward, graph::OpClass::kMatrix, point);
  const double time_s = forward.time_s + backward.time_s;
  EXPECT_NEAR(value(encoder, row, "analytical_time_s"), time_s, time_s * kRelTolerance);
  const double power_w = (forward.energy_j + backward.energy_j) / time_s;
  EXPECT_NEAR(value(encoder, row, "analytical_power_w"), power_w, power_w * kRelTolerance);
}

TEST(FeatureEncoderTest, RooflineUsesTensorPeakOnlyForMatrixOps) {
  const FeatureEncoder encoder = conv_relu_encoder();
  const device::DeviceSpec& device = a100();
  graph::OpDescriptor dense_conv = conv();
  dense_conv.inference.byte_count = 1e6;  // 0.64 us of traffic: compute bound even on tensor cores
  const auto conv_row =
      encoder.encode(dense_conv, {.device = &device, .precision = device::Precision::kFp16});
  EXPECT_NEAR(value(encoder, conv_row, "roofline_time_s"), 2e9 / 312e12, 2e9 / 312e12 * 1e-12);
  EXPECT_EQ(value(encoder, conv_row, "device_peak_flop_per_s"), 312e12);
  // Relu is memory bound anyway; a compute-heavy elementwise op shows the vector peak.
  graph::OpDescriptor heavy = relu();
  heavy.inference = {.mac_count = 0, .flop_count = 1e10, .byte_count = 1, .kernel_count = 1};
  const auto relu_row =
      encoder.encode(heavy, {.device = &device, .precision = device::Precision::kFp16});
  EXPECT_NEAR(value(encoder, relu_row, "roofline_time_s"), 1e10 / 19.5e12, 1e10 / 19.5e12 * 1e-12);
}

TEST(FeatureEncoderTest, OneHotAndPaddingFlags) {
  const FeatureEncoder encoder = conv_relu_encoder();
  const device::DeviceSpec& device = a100();
  const auto conv_row = encoder.encode(conv(), {.device = &device});
  const auto relu_row = encoder.encode(relu(), {.device = &device});

  EXPECT_EQ(value(encoder, conv_row, "op=Conv"), 1);
  EXPECT_EQ(value(encoder, conv_row, "op=Relu"), 0);
  EXPECT_EQ(value(encoder, relu_row, "op=Conv"), 0);
  EXPECT_EQ(value(encoder, relu_row, "op=Relu"), 1);

  // pads has 4 slots, kernel_shape 2, group 1; the string attribute auto_pad has none.
  EXPECT_TRUE(has_column(encoder, "attr:pads[3]:present"));
  EXPECT_FALSE(has_column(encoder, "attr:pads[4]"));
  EXPECT_TRUE(has_column(encoder, "attr:group[0]"));
  EXPECT_FALSE(has_column(encoder, "attr:group[1]"));
  EXPECT_FALSE(has_column(encoder, "attr:auto_pad[0]"));
  EXPECT_EQ(value(encoder, conv_row, "attr:kernel_shape[1]"), 3);
  EXPECT_EQ(value(encoder, conv_row, "attr:kernel_shape[1]:present"), 1);
  EXPECT_EQ(value(encoder, conv_row, "attr:group[0]"), 1);
  EXPECT_EQ(value(encoder, relu_row, "attr:kernel_shape[1]"), -1);
  EXPECT_EQ(value(encoder, relu_row, "attr:kernel_shape[1]:present"), 0);

  // Input 0 has rank 4 in both; input 1 (the weight) exists only for Conv.
  EXPECT_EQ(value(encoder, conv_row, "input0_dim1"), 64);
  EXPECT_EQ(value(encoder, relu_row, "input0_dim3"), 56);
  EXPECT_EQ(value(encoder, relu_row, "input0_dim3:present"), 1);
  EXPECT_EQ(value(encoder, conv_row, "input1_dim2"), 3);
  EXPECT_EQ(value(encoder, conv_row, "input1_dim2:present"), 1);
  EXPECT_EQ(value(encoder, relu_row, "input1_dim2"), -1);
  EXPECT_EQ(value(encoder, relu_row, "input1_dim2:present"), 0);
  EXPECT_FALSE(has_column(encoder, "input2_dim0"));
}

TEST(FeatureEncoderTest, ShorterListsArePaddedPerSlot) {
  graph::OpDescriptor pool = relu();
  pool.op_type = "MaxPool";
  pool.op_class = graph::OpClass::kPooling;
  pool.attributes = {{"pads", std::vector<std::int64_t>{1, 1}}};
  const std::vector<graph::OpDescriptor> ops = {conv(), pool};
  const FeatureEncoder encoder = FeatureEncoder::fit(ops);
  const auto row = encoder.encode(pool, {.device = &a100()});
  EXPECT_EQ(value(encoder, row, "attr:pads[1]"), 1);
  EXPECT_EQ(value(encoder, row, "attr:pads[1]:present"), 1);
  EXPECT_EQ(value(encoder, row, "attr:pads[2]"), -1);
  EXPECT_EQ(value(encoder, row, "attr:pads[2]:present"), 0);
}

TEST(FeatureEncoderTest, UnknownOpKindGetsNoOneHotAndExtraSlotsAreDropped) {
  const std::vector<graph::OpDescriptor> ops = {relu()};
  const FeatureEncoder encoder = FeatureEncoder::fit(ops);
  graph::OpDescriptor other = conv();
  other.op_type = "ConvTranspose";
  const auto row = encoder.encode(other, {.device = &a100()});
  ASSERT_EQ(row.size(), encoder.names().size());
  EXPECT_EQ(value(encoder, row, "op=Relu"), 0);
  EXPECT_FALSE(has_column(encoder, "op=ConvTranspose"));
  EXPECT_FALSE(has_column(encoder, "input1_dim0"));
  EXPECT_EQ(value(encoder, row, "input0_dim1"), 64);
  EXPECT_EQ(value(encoder, row, "flop_count"), 2e9);
}

TEST(FeatureEncoderTest, SchemaJsonRoundTripsExactly) {
  const FeatureEncoder encoder = conv_relu_encoder();
  const nlohmann::json schema = encoder.to_json();
  const FeatureEncoder restored = FeatureEncoder::from_json(nlohmann::json::parse(schema.dump()));
  EXPECT_EQ(restored.to_json(), schema);
  EXPECT_EQ(restored.names(), encoder.names());
  const FeatureContext context{.device = &a100(), .clock_mhz = 900, .mode = graph::Mode::kTraining};
  EXPECT_EQ(restored.encode(conv(), context), encoder.encode(conv(), context));
}

std::string from_json_message(const nlohmann::json& schema) {
  try {
    FeatureEncoder::from_json(schema);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no InvalidInput thrown)";
}

TEST(FeatureEncoderTest, MalformedSchemaIsInvalidInput) {
  const nlohmann::json good = conv_relu_encoder().to_json();
  EXPECT_THAT(from_json_message(nlohmann::json::array()), HasSubstr("expected a JSON object"));

  nlohmann::json missing = good;
  missing.erase("op_types");
  EXPECT_THAT(from_json_message(missing), HasSubstr("missing \"op_types\""));

  nlohmann::json version = good;
  version["version"] = 99;
  EXPECT_THAT(from_json_message(version), HasSubstr("version 99"));

  nlohmann::json format = good;
  format["format"] = "other";
  EXPECT_THAT(from_json_message(format), HasSubstr("\"format\""));

  nlohmann::json unsorted = good;
  unsorted["op_types"] = {"Relu", "Conv"};
  EXPECT_THAT(from_json_message(unsorted), HasSubstr("sorted"));

  nlohmann::json renamed = good;
  renamed["names"][0] = "flops";
  EXPECT_THAT(from_json_message(renamed), HasSubstr("column 0 is \"flops\""));

  nlohmann::json shorter = good;
  shorter["names"].erase(shorter["names"].size() - 1);
  EXPECT_THAT(from_json_message(shorter), HasSubstr("\"names\" lists"));

  nlohmann::json slots = good;
  slots["attribute_slots"][0]["slots"] = 0;
  EXPECT_THAT(from_json_message(slots), HasSubstr("attribute_slots"));

  nlohmann::json ranks = good;
  ranks["input_rank_slots"][0] = -1;
  EXPECT_THAT(from_json_message(ranks), HasSubstr("input_rank_slots"));
}

std::string encode_message(const graph::OpDescriptor& op, const FeatureContext& context) {
  const FeatureEncoder encoder = conv_relu_encoder();
  try {
    encoder.encode(op, context);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no InvalidInput thrown)";
}

TEST(FeatureEncoderTest, MalformedOpsAndContextsAreInvalidInput) {
  graph::OpDescriptor op = conv();
  op.inputs[0].shape = {1, -3};
  EXPECT_THAT(encode_message(op, {.device = &a100()}),
              HasSubstr("input 0 has a negative dimension"));
  EXPECT_THAT(encode_message(op, {.device = &a100()}), HasSubstr("conv-test"));
  EXPECT_THAT(encode_message(conv(), {}), HasSubstr("no device"));
  EXPECT_THAT(encode_message(conv(), {.device = &a100(), .clock_mhz = -5}),
              HasSubstr("core clock"));
}

TEST(FeatureEncoderTest, OpClassNamesRoundTrip) {
  for (const graph::OpClass op_class :
       {graph::OpClass::kMatrix, graph::OpClass::kElementwise, graph::OpClass::kNormalization,
        graph::OpClass::kPooling, graph::OpClass::kDataMovement, graph::OpClass::kView,
        graph::OpClass::kShape, graph::OpClass::kUnknown}) {
    EXPECT_EQ(graph::parse_op_class(graph::to_string(op_class), "test"), op_class);
  }
  EXPECT_THROW(graph::parse_op_class("Matrix", "test"), InvalidInput);
}

TEST(FeatureEncoderTest, AppendAddsTheRowWithItsFamily) {
  const FeatureEncoder encoder = conv_relu_encoder();
  features::FeatureMatrix matrix = encoder.empty_matrix();
  encoder.append(matrix, conv(), {.device = &a100()});
  encoder.append(matrix, relu(), {.device = &a100()});
  ASSERT_EQ(matrix.rows(), 2U);
  EXPECT_THAT(matrix.families, ElementsAre("Conv", "Relu"));
  EXPECT_EQ(matrix.row(1)[matrix.column("op=Relu")], 1);

  features::FeatureMatrix other;
  other.names = {"flop_count"};
  EXPECT_THROW(encoder.append(other, conv(), {.device = &a100()}), InvalidInput);
}

TEST(FeatureEncoderTest, EncodesEveryOpOfTheCpuDatasetWithFiniteValues) {
  const dataset::DatasetStore store = dataset::DatasetStore::open(
      (kDataDir / "datasets" / "cpu.sqlite").string(), dataset::OpenMode::kReadOnly);
  std::vector<graph::OpDescriptor> ops;
  for (const dataset::OpRecord& record : store.ops()) ops.push_back(record.op);
  ASSERT_GT(ops.size(), 500U);
  const FeatureEncoder encoder = FeatureEncoder::fit(ops);
  EXPECT_TRUE(has_column(encoder, "op=Conv"));
  EXPECT_TRUE(has_column(encoder, "attr:kernel_shape[1]"));
  std::size_t rows = 0;
  for (const graph::Mode mode : {graph::Mode::kInference, graph::Mode::kTraining}) {
    for (const graph::OpDescriptor& op : ops) {
      const auto row = encoder.encode(op, {.device = &a100(), .mode = mode});
      ASSERT_EQ(row.size(), encoder.names().size());
      for (std::size_t c = 0; c < row.size(); ++c) {
        ASSERT_TRUE(std::isfinite(row[c])) << op.signature << " " << encoder.names()[c];
      }
      ++rows;
    }
  }
  EXPECT_EQ(rows, 2 * ops.size());
}

}  // namespace
}  // namespace nnergy::features
