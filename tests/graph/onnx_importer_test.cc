#include "nnergy/graph/onnx_importer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

TEST(OnnxImporter, ShapeArithmeticIsMarked) {
  OnnxBuilder b;
  b.input("x", {std::string("batch"), 4, 6}).output("y");
  b.node("Shape", {"x"}, {"s"}, "/Shape");
  b.int64_initializer("idx", {0});
  b.int64_initializer("rest", {-1});
  b.node("Gather", {"s", "idx"}, {"n"}, "/Gather");
  b.node("Concat", {"n", "rest"}, {"target"}, "/Concat").add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto_AttributeType_INT);
    a.set_i(0);
    return a;
  }());
  b.node("Reshape", {"x", "target"}, {"y"}, "/Reshape");
  DimBindings bindings;
  bindings.batch = 5;
  const Network net = import_onnx_bytes(b.bytes(), "flat.onnx", bindings);
  EXPECT_TRUE(net.tensor(net.nodes()[2].outputs[0]).shape_valued);
  EXPECT_FALSE(net.tensor(net.nodes()[3].outputs[0]).shape_valued);
  EXPECT_EQ(net.tensor(net.nodes()[3].outputs[0]).shape, (Shape{5, 24}));
}

}  // namespace
}  // namespace nnergy::graph
