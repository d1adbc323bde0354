#include "nnergy/graph/onnx_importer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <tuple>

#include "nnergy/core/error.h"
#include "onnx_builder.h"

namespace nnergy::graph {
namespace {

using ::testing::HasSubstr;
using testing::OnnxBuilder;

// A two-layer MLP with a symbolic batch; weights are graph inputs (architecture-only export).
OnnxBuilder mlp() {
  OnnxBuilder b;
  b.input("x", {std::string("batch"), 16}).input("w1", {32, 16}).input("w2", {4, 32}).output("y");
  auto& g1 = b.node("Gemm", {"x", "w1"}, {"h"}, "/fc1/Gemm");
  OnnxBuilder::set_int(g1, "transB", 1);
  b.node("Relu", {"h"}, {"r"}, "/act/Relu");
  auto& g2 = b.node("Gemm", {"r", "w2"}, {"y"}, "/fc2/Gemm");
  OnnxBuilder::set_int(g2, "transB", 1);
  return b;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no InvalidInput thrown)";
}

TEST(OnnxImporter, BindsBatchAndInfersShapes) {
  DimBindings bindings;
  bindings.batch = 7;
  const Network net = import_onnx_bytes(mlp().bytes(), "mlp.onnx", bindings);
  ASSERT_EQ(net.nodes().size(), 3u);
  const Node& relu = net.nodes()[1];
  EXPECT_EQ(net.tensor(relu.outputs[0]).shape, (Shape{7, 32}));
  EXPECT_EQ(net.tensor(net.nodes()[2].outputs[0]).shape, (Shape{7, 4}));
  EXPECT_EQ(relu.module_path, "act");
  EXPECT_EQ(net.name, "mlp");
}

TEST(OnnxImporter, InputsWithoutSymbolicDimsAreParametersInArchitectureOnlyExports) {
  const Network net = import_onnx_bytes(mlp().bytes(), "mlp.onnx", DimBindings{});
  ASSERT_EQ(net.data_inputs().size(), 1u);
  EXPECT_EQ(net.tensor(net.data_inputs()[0]).name, "x");
  EXPECT_EQ(net.parameter_count(), 32 * 16 + 4 * 32);
  EXPECT_EQ(net.parameter_tensor_count(), 2u);
}

TEST(OnnxImporter, MetadataNamesTheDataInputs) {
  OnnxBuilder b = mlp();
  b.metadata("nnergy.data_inputs", "x, w2");
  const Network net = import_onnx_bytes(b.bytes(), "mlp.onnx", DimBindings{});
  EXPECT_EQ(net.data_inputs().size(), 2u);
  EXPECT_EQ(net.parameter_count(), 32 * 16);
}

TEST(OnnxImporter, InitializersAreParametersAndOtherInputsData) {
  OnnxBuilder b;
  b.input("x", {3, 16}).initializer("w", {8, 16}).output("y");
  OnnxBuilder::set_int(b.node("Gemm", {"x", "w"}, {"y"}), "transB", 1);
  const Network net = import_onnx_bytes(b.bytes(), "init.onnx", DimBindings{});
  EXPECT_EQ(net.parameter_count(), 8 * 16);
  ASSERT_EQ(net.data_inputs().size(), 1u);
  EXPECT_TRUE(net.tensor(net.nodes()[0].inputs[1]).requires_grad);
  EXPECT_FALSE(net.tensor(net.nodes()[0].inputs[0]).requires_grad);
}

std::string fixture_bytes(const std::string& name) {
  std::ifstream in(std::filesystem::path(NNERGY_TEST_FIXTURE_DIR) / "hostile" / name,
                   std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(OnnxImporter, NestedLoopsAreRefusedBeforeTheyAreUnrolled) {
  // 590 bytes: a Loop of 4096 iterations around one of 4096 (out of memory after 44 s under
  // 6 GB before the node budget); now refused before any copy is written.
  const std::string bytes = fixture_bytes("nested_constant_loops.onnx");
  ASSERT_FALSE(bytes.empty());
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THAT(message_of([&] { import_onnx_bytes(bytes, "loops.onnx", DimBindings{}); }),
              HasSubstr("loops.onnx: Loop 'outer_loop': unrolling its 4096 iterations"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
}

TEST(OnnxImporter, ALoopWhoseUnrolledGraphWouldExceedTheNodeBudgetIsRefused) {
  // 4096 iterations of a 32-node body: over 100,000 nodes, refused before any copy.
  const std::string bytes = fixture_bytes("long_loop_body.onnx");
  ASSERT_FALSE(bytes.empty());
  EXPECT_THAT(message_of([&] { import_onnx_bytes(bytes, "long.onnx", DimBindings{}); }),
              HasSubstr("long.onnx: Loop 'long_loop': unrolling its 4096 iterations of 33 nodes "
                        "would make the graph over 100000 nodes"));
}

TEST(OnnxImporter, ALoopThatWouldCopyThousandsOfLoopsIsRefused) {
  // Found by the fuzzer: the outer Loop's 4096 iterations copy an inner Loop whose trip count is
  // unknown, and ONNX's shape inference of 4096 Loops took 41 s.
  const std::string bytes = fixture_bytes("loop_copies_unresolved_loops.onnx");
  ASSERT_FALSE(bytes.empty());
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THAT(message_of([&] { import_onnx_bytes(bytes, "copies.onnx", DimBindings{}); }),
              HasSubstr("would copy 1 control-flow nodes (Loop, If or Scan) 4096 times"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
}

TEST(OnnxImporter, ASplitToSequenceOverAHugeDeclaredAxisAllocatesNothing) {
  // 161 bytes declaring 5·10^8 elements split one by one: 3.9 GB before its refusal before.
  const std::string bytes = fixture_bytes("split_to_sequence_bomb.onnx");
  ASSERT_FALSE(bytes.empty());
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THROW(import_onnx_bytes(bytes, "split.onnx", DimBindings{}), InvalidInput);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
}

TEST(OnnxImporter, NamedDimensionsMustBeBound) {
  OnnxBuilder b;
  b.input("ids", {std::string("batch"), std::string("seq")}, onnx::TensorProto_DataType_INT64)
      .input("table", {100, 8})
      .output("e");
  b.node("Gather", {"table", "ids"}, {"e"}, "/emb/Gather");
  const std::string bytes = b.bytes();
  EXPECT_THAT(message_of([&] { import_onnx_bytes(bytes, "lm.onnx", DimBindings{}); }),
              HasSubstr("--dim seq=VALUE"));
  DimBindings bindings;
  bindings.batch = 2;
  bindings.named["seq"] = 16;
  const Network net = import_onnx_bytes(bytes, "lm.onnx", bindings);
  EXPECT_EQ(net.tensor(net.nodes()[0].outputs[0]).shape, (Shape{2, 16, 8}));
}

TEST(OnnxImporter, UnknownDimNameIsRejected) {
  DimBindings bindings;
  bindings.named["seq"] = 3;
  EXPECT_THAT(message_of([&] { import_onnx_bytes(mlp().bytes(), "mlp.onnx", bindings); }),
              HasSubstr("no symbolic dimension 'seq' (it has: batch)"));
}

TEST(OnnxImporter, NonPositiveBatchIsRejected) {
  DimBindings bindings;
  bindings.batch = 0;
  EXPECT_THAT(message_of([&] { import_onnx_bytes(mlp().bytes(), "mlp.onnx", bindings); }),
              HasSubstr("expected a positive integer"));
}

TEST(OnnxImporter, MissingFileIsNamed) {
  EXPECT_THAT(message_of([] { import_onnx("/nonexistent/model.onnx", DimBindings{}); }),
              HasSubstr("/nonexistent/model.onnx: no such file"));
}

TEST(OnnxImporter, TextFileIsNotOnnx) {
  const auto path = std::filesystem::temp_directory_path() / "nnergy_not_onnx.onnx";
  std::ofstream(path) << "this is not a protobuf\n";
  EXPECT_THAT(message_of([&] { import_onnx(path, DimBindings{}); }),
              HasSubstr("not a readable ONNX"));
  std::filesystem::remove(path);
}

TEST(OnnxImporter, TruncatedModelIsRejected) {
  const std::string bytes = mlp().bytes();
  for (std::size_t cut : {std::size_t{0}, std::size_t{10}, bytes.size() / 2, bytes.size() - 3}) {
    EXPECT_THROW(import_onnx_bytes(bytes.substr(0, cut), "cut.onnx", DimBindings{}), InvalidInput)
        << "cut at " << cut << " of " << bytes.size();
  }
}

TEST(OnnxImporter, UninferableShapeNamesTheTensor) {
  // The Reshape target comes from a parameter input, not a constant: its output shape is unknown.
  OnnxBuilder b;
  b.input("x", {std::string("batch"), 8})
      .input("target", {2}, onnx::TensorProto_DataType_INT64)
      .output("y");
  b.node("Reshape", {"x", "target"}, {"r"}, "/view/Reshape");
  b.node("Relu", {"r"}, {"y"}, "/act/Relu");
  EXPECT_THAT(message_of([&] { import_onnx_bytes(b.bytes(), "dyn.onnx", DimBindings{}); }),
              HasSubstr("'r' (output of node '/view/Reshape', op Reshape) could not be inferred"));
}

onnx::AttributeProto int_attribute(const std::string& name, std::int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto_AttributeType_INT);
  a.set_i(value);
  return a;
}

const Node& only_node(const Network& net, const std::string& op_type) {
  const Node* found = nullptr;
  for (const Node& n : net.nodes()) {
    if (n.op_type == op_type) {
      EXPECT_EQ(found, nullptr) << "more than one " << op_type;
      found = &n;
    }
  }
  EXPECT_NE(found, nullptr) << "no " << op_type;
  return *found;
}

TEST(OnnxImporter, ShapeArithmeticIsFoldedIntoConstants) {
  OnnxBuilder b;
  b.input("x", {std::string("batch"), 4, 6}).output("y");
  b.node("Shape", {"x"}, {"s"}, "/Shape");
  b.int64_initializer("idx", {0});
  b.int64_initializer("rest", {-1});
  b.node("Gather", {"s", "idx"}, {"n"}, "/Gather");
  *b.node("Concat", {"n", "rest"}, {"target"}, "/Concat").add_attribute() =
      int_attribute("axis", 0);
  b.node("Reshape", {"x", "target"}, {"y"}, "/Reshape");
  DimBindings bindings;
  bindings.batch = 5;
  const Network net = import_onnx_bytes(b.bytes(), "flat.onnx", bindings);
  // Shape → Gather → Concat became one Constant (the unused intermediate constants are dropped).
  ASSERT_EQ(net.nodes().size(), 2U);
  EXPECT_EQ(net.nodes()[0].op_type, "Constant");
  EXPECT_TRUE(net.tensor(net.nodes()[0].outputs[0]).shape_valued);
  const Node& reshape = only_node(net, "Reshape");
  EXPECT_FALSE(net.tensor(reshape.outputs[0]).shape_valued);
  EXPECT_EQ(net.tensor(reshape.outputs[0]).shape, (Shape{5, 24}));
  EXPECT_EQ(net.batch, 5);
}

TEST(OnnxImporter, FoldsShapeArithmeticThatShapeInferenceCannotFollow) {
  // As exporters write a head split: n = Shape(x)[0]; heads = Div(Cast(Shape(x)[2]), 2) through
  // a float Cast and Floor, and a Range-built index, all of which ONNX inference does not follow.
  OnnxBuilder b;
  b.input("x", {std::string("batch"), 3, 8}).output("y");
  b.node("Shape", {"x"}, {"s"}, "/Shape");
  b.int64_initializer("i0", {0});
  b.int64_initializer("i2", {2});
  b.node("Gather", {"s", "i0"}, {"n"}, "/Gather0");
  b.node("Gather", {"s", "i2"}, {"c"}, "/Gather2");
  *b.node("Cast", {"c"}, {"cf"}, "/Cast").add_attribute() =
      int_attribute("to", onnx::TensorProto_DataType_FLOAT);
  b.int64_initializer("two_i", {2});
  *b.node("Cast", {"two_i"}, {"two_f"}, "/Cast2").add_attribute() =
      int_attribute("to", onnx::TensorProto_DataType_FLOAT);
  b.node("Div", {"cf", "two_f"}, {"half_f"}, "/Div");
  b.node("Floor", {"half_f"}, {"half_floor"}, "/Floor");
  *b.node("Cast", {"half_floor"}, {"half"}, "/Cast3").add_attribute() =
      int_attribute("to", onnx::TensorProto_DataType_INT64);
  b.int64_initializer("start", {0});
  b.int64_initializer("delta", {1});
  b.node("Squeeze", {"n"}, {"n_scalar"}, "/Squeeze");
  b.node("Range", {"start", "n_scalar", "delta"}, {"r"}, "/Range");
  b.node("Shape", {"r"}, {"rs"}, "/Shape2");
  b.int64_initializer("three", {3});
  *b.node("Concat", {"rs", "three", "half", "two_i"}, {"target"}, "/Concat").add_attribute() =
      int_attribute("axis", 0);
  b.node("Reshape", {"x", "target"}, {"y"}, "/Reshape");
  DimBindings bindings;
  bindings.batch = 7;
  const Network net = import_onnx_bytes(b.bytes(), "heads.onnx", bindings);
  EXPECT_EQ(net.tensor(only_node(net, "Reshape").outputs[0]).shape, (Shape{7, 3, 4, 2}));
}

// Found by fuzz/onnx_import: dimensions whose product is beyond int64 overflowed (undefined
// behaviour) in the folder and in every later element count; the importer refuses such a tensor,
// and a negative dimension, naming it.
TEST(OnnxImporter, TensorsBeyondInt64ElementsAreRefused) {
  const auto with_dims = [](const std::vector<std::int64_t>& dims) {
    OnnxBuilder b;
    b.input("x", {1, 4}).output("y");
    b.initializer("w", {2, 2});
    b.node("Identity", {"w"}, {"y"}, "/Identity");
    onnx::ModelProto model;
    model.ParseFromString(b.bytes());
    onnx::TensorProto* w = model.mutable_graph()->mutable_initializer(0);
    w->clear_float_data();
    w->clear_dims();
    for (std::int64_t d : dims) w->add_dims(d);
    return model.SerializeAsString();
  };
  EXPECT_THAT(message_of([&] {
                import_onnx_bytes(with_dims({1LL << 40, 1LL << 40}), "huge.onnx", {});
              }),
              HasSubstr("huge.onnx: tensor 'w' has the shape [1099511627776, 1099511627776], "
                        "whose element count is beyond 2^63"));
  EXPECT_THROW(import_onnx_bytes(with_dims({-3, 4}), "negative.onnx", {}), InvalidInput);
}

// Found by fuzz/onnx_import: ONNX 1.12's shape inference (data propagation) dereferenced a null
// pointer on a Gather/Unsqueeze chain whose inputs nothing defines; such a node is refused before
// inference runs.
TEST(OnnxImporter, InputsThatNothingDefinesAreRefusedBeforeShapeInference) {
  OnnxBuilder b;
  b.input("x", {2, 3}).output("y");
  b.node("Shape", {"x"}, {"s"}, "/Shape");
  b.node("Gather", {"s_renamed", "missing_index"}, {"n"}, "/Gather");
  b.node("Unsqueeze", {"n", "missing_axes"}, {"u"}, "/Unsqueeze");
  b.node("Reshape", {"x", "u"}, {"y"}, "/Reshape");
  EXPECT_THAT(message_of([&] { import_onnx_bytes(b.bytes(), "dangling.onnx", {}); }),
              HasSubstr("dangling.onnx: node '/Gather' (op Gather) reads 's_renamed', which no "
                        "node, input or initializer produces"));
}

// Found by fuzz/onnx_import: ONNX 1.12's Conv/Pool shape inference divides by the strides
// (SIGFPE on 0); window attributes and the group below 1 are refused before inference runs.
TEST(OnnxImporter, WindowAttributesBelowOneAreRefusedBeforeShapeInference) {
  const std::vector<std::tuple<std::string, std::vector<std::int64_t>, std::string>> cases = {
      {"strides", {0, 1}, "attribute strides = [0, 1]: expected every value >= 1"},
      {"dilations", {1, -2}, "attribute dilations = [1, -2]: expected every value >= 1"},
      {"kernel_shape", {0, 3}, "attribute kernel_shape = [0, 3]: expected every value >= 1"},
      {"group", {0}, "attribute group = 0: expected a value >= 1"}};
  for (const auto& [name, values, expected] : cases) {
    OnnxBuilder b;
    b.input("x", {1, 3, 8, 8}).output("y");
    b.initializer("w", {4, 3, 3, 3});
    onnx::NodeProto& conv = b.node("Conv", {"x", "w"}, {"y"}, "/conv");
    if (name == "group") {
      OnnxBuilder::set_int(conv, name, values[0]);
    } else {
      OnnxBuilder::set_ints(conv, name, values);
    }
    EXPECT_THAT(message_of([&] { import_onnx_bytes(b.bytes(), "window.onnx", {}); }),
                HasSubstr("window.onnx: node '/conv' (op Conv): " + expected))
        << name;
  }
}

// Found by fuzz/onnx_import: ONNX 1.12's Conv inference reads the kernel from the weight's
// dimensions without checking its rank (a segfault on a 1-D weight); a weight missing, with fewer
// than 3 dimensions, or of another rank than the input is refused before inference runs.
TEST(OnnxImporter, ConvolutionWeightsOfTheWrongRankAreRefusedBeforeShapeInference) {
  const auto conv_with = [](const std::vector<std::string>& inputs,
                            const std::vector<std::int64_t>& weight) {
    OnnxBuilder b;
    b.input("x", {1, 3, 8, 8}).output("y");
    b.initializer("w", weight);
    b.node("Conv", inputs, {"y"}, "/conv");
    return b.bytes();
  };
  EXPECT_THAT(message_of([&] {
                import_onnx_bytes(conv_with({"x", "w"}, {4}), "c.onnx", {});
              }),
              HasSubstr("c.onnx: node '/conv' (op Conv): weight 'w' has 1 dimensions; expected "
                        "at least 3"));
  EXPECT_THAT(message_of([&] {
                import_onnx_bytes(conv_with({"x", "w"}, {4, 3, 3, 3, 3}), "c.onnx", {});
              }),
              HasSubstr("input 'x' has 4 dimensions but weight 'w' has 5; expected the same rank"));
  EXPECT_THAT(message_of([&] {
                import_onnx_bytes(conv_with({"x"}, {4, 3, 3, 3}), "c.onnx", {});
              }),
              HasSubstr("expected a weight as input 2, found 1 inputs"));
  EXPECT_NO_THROW(import_onnx_bytes(conv_with({"x", "w"}, {4, 3, 3, 3}), "c.onnx", {}));
}

// Found by fuzz/onnx_import: shape arithmetic on a file's int64 constants overflowed (undefined
// behaviour) while folding; such a value is left unfolded. What ONNX's own inference then makes of
// the shape varies by op (an error, or a shape it computed itself): the import either succeeds or
// is InvalidInput naming the file, and never overflows (the sanitize preset's UBSan checks that).
TEST(OnnxImporter, ShapeArithmeticThatOverflowsIsNotFolded) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kHuge = std::int64_t{1} << 62;
  const std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> cases = {
      {"Mul", kHuge, 4}, {"Add", kHuge, kHuge}, {"Sub", -kHuge, kHuge},
      {"Div", kMin, -1}, {"Mod", kMin, -1},     {"Pow", kHuge, 2}};
  for (const auto& [op, a, k] : cases) {
    OnnxBuilder b;
    b.input("x", {2, 3}).output("y");
    b.int64_initializer("a", {a});
    b.int64_initializer("k", {k});
    b.node(op, {"a", "k"}, {"target"}, "/Op");
    b.node("Reshape", {"x", "target"}, {"y"}, "/Reshape");
    try {
      import_onnx_bytes(b.bytes(), "overflow.onnx", {});
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), HasSubstr("overflow.onnx")) << op;
    }
  }
}

// A batch-1 static export of x.view(x.size(0), -1) followed by a Linear: the exporter wrote the
// batch into the Reshape target as the literal [1, -1].
OnnxBuilder static_flatten_linear() {
  OnnxBuilder b;
  b.input("input", {1, 4, 2, 2}).output("output");
  b.initializer("w", {16, 10});
  b.int64_initializer("target", {1, -1});
  b.node("Relu", {"input"}, {"r"}, "/relu/Relu");
  b.node("Reshape", {"r", "target"}, {"flat"}, "/Reshape");
  b.node("MatMul", {"flat", "w"}, {"output"}, "/fc/MatMul");
  return b;
}

TEST(OnnxImporter, FixedBatchIsReboundAndReshapeTargetsFollowIt) {
  DimBindings bindings;
  bindings.batch = 12;
  const Network net = import_onnx_bytes(static_flatten_linear().bytes(), "static.onnx", bindings);
  EXPECT_EQ(net.batch, 12);
  EXPECT_EQ(net.tensor(net.data_inputs().at(0)).shape, (Shape{12, 4, 2, 2}));
  EXPECT_EQ(net.tensor(only_node(net, "MatMul").outputs[0]).shape, (Shape{12, 10}));
  ASSERT_EQ(net.import_notes.size(), 1U);
  EXPECT_THAT(net.import_notes[0], HasSubstr("fixes the batch at 1"));
  EXPECT_THAT(net.import_notes[0], HasSubstr("1 Reshape/Expand target that hard-coded"));
}

TEST(OnnxImporter, FixedBatchIsKeptWhenNoBatchIsAsked) {
  const Network net =
      import_onnx_bytes(static_flatten_linear().bytes(), "static.onnx", DimBindings{});
  EXPECT_EQ(net.batch, 1);
  EXPECT_TRUE(net.import_notes.empty());
  EXPECT_EQ(net.tensor(only_node(net, "MatMul").outputs[0]).shape, (Shape{1, 10}));
}

TEST(OnnxImporter, FixedBatchFoldedIntoATargetIsReboundAsItsOuterFactor) {
  // x.reshape(-1, 2) at batch 1 wrote [1*4*2, 2]: the batch is the outer factor of the first
  // entry (row-major order), so at batch 3 the target is [24, 2].
  OnnxBuilder b;
  b.input("input", {1, 4, 2, 2}).output("output");
  b.int64_initializer("target", {8, 2});
  b.node("Reshape", {"input", "target"}, {"output"}, "/Reshape");
  DimBindings bindings;
  bindings.batch = 3;
  const Network net = import_onnx_bytes(b.bytes(), "dir/static.onnx", bindings);
  EXPECT_EQ(net.batch, 3);
  EXPECT_EQ(net.tensor(only_node(net, "Reshape").outputs[0]).shape, (Shape{24, 2}));
}

TEST(OnnxImporter, FixedBatchThatCannotBeReboundIsRefusedWithTheExportFix) {
  // A constant the exporter wrote at the exported batch ([2, 4], e.g. a mask expanded to the
  // batch): at batch 3 it no longer broadcasts, and its values cannot be re-made.
  OnnxBuilder b;
  b.input("input", {2, 4}).output("output");
  b.initializer("mask", {2, 4});
  b.node("Add", {"input", "mask"}, {"output"}, "/Add");
  DimBindings bindings;
  bindings.batch = 3;
  const std::string message =
      message_of([&] { import_onnx_bytes(b.bytes(), "dir/static.onnx", bindings); });
  EXPECT_THAT(message, HasSubstr("dir/static.onnx: input 'input' has a fixed batch of 2"));
  EXPECT_THAT(message, HasSubstr("--batch 3 cannot be applied soundly"));
  EXPECT_THAT(message,
              HasSubstr("torch.onnx.export(model, x, \"static.onnx\", input_names=[\"input\"], "
                        "output_names=[\"output\"], dynamic_axes={\"input\": {0: \"batch\"}, "
                        "\"output\": {0: \"batch\"}})"));
  EXPECT_THAT(message, HasSubstr("or predict with --batch 2"));
}

TEST(OnnxImporter, AFileWithoutABatchAxisComputesOneSampleAndRefusesAnother) {
  // The reduction over axis 0 mixes the samples and the reshape splits axis 1: no axis is
  // independent per sample, so the file computes one sample; another batch is refused (not
  // re-bound into an output that would silently stay [1, 4]). (A leading axis of 1 would be
  // taken as the batch of a batch-1 export: see FixedBatchIsKeptWhenNoBatchIsAsked.)
  OnnxBuilder b;
  b.input("input", {2, 16}).output("output");
  b.int64_initializer("target", {-1, 4});
  b.int64_initializer("sum_axes", {0});
  b.node("Reshape", {"input", "target"}, {"r"}, "/Reshape");
  b.node("ReduceSum", {"r", "sum_axes"}, {"output"}, "/Sum");
  const Network one = import_onnx_bytes(b.bytes(), "sum.onnx", DimBindings{});
  EXPECT_EQ(one.batch, 1);
  ASSERT_FALSE(one.import_notes.empty());
  EXPECT_THAT(one.import_notes[0], HasSubstr("no batch axis"));
  DimBindings bindings;
  bindings.batch = 4;
  const std::string message =
      message_of([&] { import_onnx_bytes(b.bytes(), "sum.onnx", bindings); });
  EXPECT_THAT(message, HasSubstr("sum.onnx: 'input' has no batch axis"));
  EXPECT_THAT(message, HasSubstr("node '/Sum' (ReduceSum) reduces over it"));
  EXPECT_THAT(message, HasSubstr("--batch 4 cannot be applied"));
}

TEST(OnnxImporter, AnUnboundSymbolicDimensionSaysHowToBindIt) {
  OnnxBuilder b;
  b.input("x", {std::string("batch"), std::string("seq"), 8}).output("y");
  b.node("Relu", {"x"}, {"y"}, "/act/Relu");
  EXPECT_THAT(message_of([&] { import_onnx_bytes(b.bytes(), "seq.onnx", DimBindings{}); }),
              HasSubstr("seq.onnx: symbolic dimension 'seq' of 'x' is not bound; pass --dim "
                        "seq=VALUE"));
  DimBindings from_python;
  from_python.names = SettingNames::kKeyword;
  EXPECT_THAT(message_of([&] { import_onnx_bytes(b.bytes(), "seq.onnx", from_python); }),
              HasSubstr("is not bound; pass dims['seq']=VALUE"));
}

TEST(OnnxImporter, FileDefaultsBindSymbolicDimensionsLeftUnbound) {
  OnnxBuilder b;
  b.input("x", {std::string("batch"), std::string("seq"), 8}).output("y");
  b.node("Relu", {"x"}, {"y"}, "/act/Relu");
  b.metadata("nnergy.default_dims", "seq=6");
  const Network net = import_onnx_bytes(b.bytes(), "seq.onnx", DimBindings{});
  EXPECT_EQ(net.tensor(net.data_inputs().at(0)).shape, (Shape{1, 6, 8}));
  ASSERT_EQ(net.import_notes.size(), 1U);
  EXPECT_THAT(net.import_notes[0],
              HasSubstr("'seq' bound to the file's default 6 (--dim seq=N to change)"));
  // Python callers read the setting as they pass it.
  DimBindings from_python;
  from_python.names = SettingNames::kKeyword;
  EXPECT_THAT(import_onnx_bytes(b.bytes(), "seq.onnx", from_python).import_notes.at(0),
              HasSubstr("(dims['seq']=N to change)"));
  DimBindings bindings;
  bindings.named["seq"] = 10;
  EXPECT_EQ(import_onnx_bytes(b.bytes(), "seq.onnx", bindings).tensor(0).shape, (Shape{1, 10, 8}));
  b.metadata("nnergy.default_dims", "seq=x");
  EXPECT_THAT(message_of([&] { import_onnx_bytes(b.bytes(), "seq.onnx", DimBindings{}); }),
              HasSubstr("seq.onnx: metadata nnergy.default_dims entry 'seq=x'"));
}

TEST(OnnxImporter, AnIdentityOfAParameterIsAParameterOfItsOwn) {
  // torch.onnx.export writes the second of two equal (e.g. untrained) weights as Identity(first).
  OnnxBuilder b;
  b.input("x", {std::string("batch"), 4}).initializer("w1", {4, 4}).output("y");
  b.node("Identity", {"w1"}, {"w2"}, "Identity_0");
  b.node("MatMul", {"x", "w1"}, {"h"}, "/fc1/MatMul");
  b.node("MatMul", {"h", "w2"}, {"y"}, "/fc2/MatMul");
  const Network net = import_onnx_bytes(b.bytes(), "tied.onnx", DimBindings{});
  EXPECT_EQ(net.parameter_count(), 32);
  EXPECT_TRUE(net.tensor(only_node(net, "Identity").outputs[0]).requires_grad);
}

TEST(OnnxImporter, DimNamingTheBatchSetsTheBatchComputed) {
  DimBindings bindings;
  bindings.named["batch"] = 4;
  const Network net = import_onnx_bytes(mlp().bytes(), "mlp.onnx", bindings);
  EXPECT_EQ(net.batch, 4);
  EXPECT_EQ(net.tensor(net.data_inputs().at(0)).shape.at(0), 4);
}

}  // namespace
}  // namespace nnergy::graph
