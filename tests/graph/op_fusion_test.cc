#include "nnergy/graph/op_fusion.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/op_catalog.h"
#include "onnx_builder.h"

namespace nnergy::graph {
namespace {

using testing::OnnxBuilder;

// Flop and byte counts are sums of whole numbers: they must match exactly, up to rounding.
constexpr double kCountTolerance = 1e-6;

// Adds a Constant node producing the float scalar `name`, as torch 2.x exports literals.
void constant(OnnxBuilder& b, const std::string& name, float value, const std::string& scope) {
  auto& node = b.node("Constant", {}, {name}, scope + "Constant_" + name);
  auto* attribute = node.add_attribute();
  attribute->set_name("value");
  attribute->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  attribute->mutable_t()->set_data_type(onnx::TensorProto_DataType_FLOAT);
  attribute->mutable_t()->add_float_data(value);
}

Network import(const OnnxBuilder& b) {
  return import_onnx_bytes(b.bytes(), "fusion.onnx", DimBindings{}, Fusion::kKeepDecomposedOps);
}

// Sum of a pass over every node of the network.
PassCost total(const Network& net, PassCost OpCost::*pass) {
  PassCost sum;
  for (const Node& node : net.nodes()) sum += op_cost(net, node).*pass;
  return sum;
}

// The nodes that are not Constant nodes.
std::vector<const Node*> compute_nodes(const Network& net) {
  std::vector<const Node*> nodes;
  for (const Node& node : net.nodes()) {
    if (node.op_type != "Constant") nodes.push_back(&node);
  }
  return nodes;
}

std::vector<std::string> input_names(const Network& net, const Node& node) {
  std::vector<std::string> names;
  for (std::size_t t : node.inputs) names.push_back(net.tensor(t).name);
  return names;
}

const std::string kLayerNormScope = "/encoder/layer.0/output/LayerNorm/";

// nn.LayerNorm(16) on a [2, 8, 16] activation as torch exports it below opset 17 (the
// native_layer_norm symbolic), followed by a Relu that reads its output.
OnnxBuilder layer_norm_model(bool extra_reader_of_mean = false) {
  const std::string& s = kLayerNormScope;
  OnnxBuilder b;
  b.input("x", {2, 8, 16}).initializer("gamma", {16}).initializer("beta", {16}).output("z");
  if (extra_reader_of_mean) b.output("mean_relu");
  constant(b, "two", 2.f, s);
  constant(b, "eps", 1e-12f, s);
  OnnxBuilder::set_ints(b.node("ReduceMean", {"x"}, {"mean"}, s + "ReduceMean"), "axes", {-1});
  b.node("Sub", {"x", "mean"}, {"d"}, s + "Sub");
  b.node("Pow", {"d", "two"}, {"d2"}, s + "Pow");
  OnnxBuilder::set_ints(b.node("ReduceMean", {"d2"}, {"var"}, s + "ReduceMean_1"), "axes", {-1});
  b.node("Add", {"var", "eps"}, {"ve"}, s + "Add");
  b.node("Sqrt", {"ve"}, {"sd"}, s + "Sqrt");
  b.node("Div", {"d", "sd"}, {"n"}, s + "Div");
  b.node("Mul", {"n", "gamma"}, {"ng"}, s + "Mul");
  b.node("Add", {"ng", "beta"}, {"y"}, s + "Add_1");
  b.node("Relu", {"y"}, {"z"}, "/encoder/layer.0/act/Relu");
  if (extra_reader_of_mean) b.node("Relu", {"mean"}, {"mean_relu"}, "/other/Relu");
  return b;
}

TEST(OpFusion, TheImporterFusesByDefaultAndSaysSo) {
  const Network net = import_onnx_bytes(layer_norm_model().bytes(), "ln.onnx", DimBindings{});
  ASSERT_EQ(compute_nodes(net).size(), 2u);
  EXPECT_EQ(compute_nodes(net)[0]->op_type, "LayerNormalization");
  ASSERT_EQ(net.import_notes.size(), 1u);
  EXPECT_EQ(net.import_notes[0].rfind("fused 1 LayerNormalization (9 nodes)", 0), 0u);
}

TEST(OpFusion, LayerNormBecomesOneNodeWiredToItsReaders) {
  const Network net = import(layer_norm_model());
  ASSERT_EQ(compute_nodes(net).size(), 10u);
  EXPECT_NEAR(total(net, &OpCost::inference).kernel_count, 10.0, kCountTolerance);

  FusionReport report;
  const Network fused = fuse_decomposed_ops(net, &report);
  ASSERT_EQ(fused.nodes().size(), 2u);  // the Constant nodes went with their readers
  const Node& ln = fused.nodes()[0];
  EXPECT_EQ(ln.op_type, "LayerNormalization");
  EXPECT_EQ(ln.module_path, "encoder/layer/0/output/LayerNorm");
  EXPECT_EQ(ln.name, kLayerNormScope + "LayerNormalization");
  EXPECT_EQ(input_names(fused, ln), (std::vector<std::string>{"x", "gamma", "beta"}));
  ASSERT_EQ(ln.outputs.size(), 1u);
  EXPECT_EQ(fused.tensor(ln.outputs[0]).name, "y");
  EXPECT_EQ(ln.int_attribute("axis", -1), 2);
  const Node& relu = fused.nodes()[1];
  ASSERT_EQ(relu.inputs.size(), 1u);
  EXPECT_EQ(relu.inputs[0], ln.outputs[0]);

  // Only x, gamma, beta, y and z remain; the parameters are unchanged.
  EXPECT_EQ(fused.tensors().size(), 5u);
  EXPECT_EQ(fused.parameter_count(), 32);
  EXPECT_EQ(fused.name, net.name);
  EXPECT_EQ(fused.source, net.source);

  // One LayerNormalization kernel over 2·8·16 = 256 elements: 7 flops each; the Relu adds one.
  const double elements = 256;
  const PassCost inference = total(fused, &OpCost::inference);
  EXPECT_NEAR(inference.kernel_count, 2.0, kCountTolerance);
  EXPECT_NEAR(op_cost(fused, ln).inference.flop_count, 7 * elements, kCountTolerance);
  // gamma and beta need gradients: the catalog's LayerNorm backward is two kernels.
  EXPECT_TRUE(fused.tensor(ln.outputs[0]).requires_grad);
  EXPECT_NEAR(op_cost(fused, ln).backward.kernel_count, 2.0, kCountTolerance);

  ASSERT_EQ(report.fused.count("LayerNormalization"), 1u);
  EXPECT_EQ(report.fused.at("LayerNormalization").groups, 1u);
  EXPECT_EQ(report.fused.at("LayerNormalization").nodes, 9u);
  EXPECT_EQ(report.total_groups(), 1u);
  EXPECT_EQ(report.summary(), "fused 1 LayerNormalization (9 nodes)");
}

TEST(OpFusion, LayerNormOpset18WithSquareByMulAndFoldedScalars) {
  // Opset 18 passes the axes as an input; a hand-written variance squares with Mul(d, d);
  // a folded export stores eps as a scalar initializer; no affine part.
  const std::string s = "/ln/";
  OnnxBuilder b(18);
  b.input("x", {4, 32}).initializer("eps", {}).output("y");
  b.int64_initializer("axes", {-1});
  b.node("ReduceMean", {"x", "axes"}, {"mean"}, s + "ReduceMean");
  b.node("Sub", {"x", "mean"}, {"d"}, s + "Sub");
  b.node("Mul", {"d", "d"}, {"d2"}, s + "Mul");
  b.node("ReduceMean", {"d2", "axes"}, {"var"}, s + "ReduceMean_1");
  b.node("Add", {"eps", "var"}, {"ve"}, s + "Add");
  b.node("Sqrt", {"ve"}, {"sd"}, s + "Sqrt");
  b.node("Div", {"d", "sd"}, {"y"}, s + "Div");
  const Network net = import(b);
  EXPECT_EQ(net.parameter_count(), 1);  // the folded eps counts as a parameter before fusion

  FusionReport report;
  const Network fused = fuse_decomposed_ops(net, &report);
  ASSERT_EQ(fused.nodes().size(), 1u);
  EXPECT_EQ(fused.nodes()[0].op_type, "LayerNormalization");
  EXPECT_EQ(fused.nodes()[0].module_path, "ln");
  EXPECT_EQ(input_names(fused, fused.nodes()[0]), (std::vector<std::string>{"x"}));
  EXPECT_EQ(fused.nodes()[0].int_attribute("axis", -1), 1);
  EXPECT_EQ(fused.parameter_count(), 0);
  EXPECT_EQ(report.fused.at("LayerNormalization").nodes, 7u);
  EXPECT_NEAR(total(fused, &OpCost::inference).flop_count, 7 * 4 * 32, kCountTolerance);
}

TEST(OpFusion, HalfPrecisionLayerNormWithItsCasts) {
  // An fp16 nn.LayerNorm: torch casts the centred input to float and the result back.
  const std::string s = "/norm/";
  OnnxBuilder b;
  b.input("x", {4, 32}, onnx::TensorProto_DataType_FLOAT16)
      .initializer("gamma", {32}, onnx::TensorProto_DataType_FLOAT16)
      .initializer("beta", {32}, onnx::TensorProto_DataType_FLOAT16)
      .output("y", onnx::TensorProto_DataType_FLOAT16);
  constant(b, "two", 2.f, s);
  constant(b, "eps", 1e-5f, s);
  OnnxBuilder::set_ints(b.node("ReduceMean", {"x"}, {"mean"}, s + "ReduceMean"), "axes", {1});
  b.node("Sub", {"x", "mean"}, {"d16"}, s + "Sub");
  OnnxBuilder::set_int(b.node("Cast", {"d16"}, {"d"}, s + "Cast"), "to",
                       onnx::TensorProto_DataType_FLOAT);
  b.node("Pow", {"d", "two"}, {"d2"}, s + "Pow");
  OnnxBuilder::set_ints(b.node("ReduceMean", {"d2"}, {"var"}, s + "ReduceMean_1"), "axes", {1});
  b.node("Add", {"var", "eps"}, {"ve"}, s + "Add");
  b.node("Sqrt", {"ve"}, {"sd"}, s + "Sqrt");
  b.node("Div", {"d", "sd"}, {"n"}, s + "Div");
  OnnxBuilder::set_int(b.node("Cast", {"n"}, {"n16"}, s + "Cast_1"), "to",
                       onnx::TensorProto_DataType_FLOAT16);
  b.node("Mul", {"n16", "gamma"}, {"ng"}, s + "Mul");
  b.node("Add", {"ng", "beta"}, {"y"}, s + "Add_1");
  FusionReport report;
  const Network fused = fuse_decomposed_ops(import(b), &report);
  ASSERT_EQ(fused.nodes().size(), 1u);
  EXPECT_EQ(fused.nodes()[0].op_type, "LayerNormalization");
  EXPECT_EQ(input_names(fused, fused.nodes()[0]), (std::vector<std::string>{"x", "gamma", "beta"}));
  EXPECT_EQ(report.fused.at("LayerNormalization").nodes, 11u);
  EXPECT_EQ(fused.tensor(fused.nodes()[0].outputs[0]).dtype, DataType::kFloat16);
}

TEST(OpFusion, LayerNormWithAnOutsideReaderOfTheMeanIsLeftAlone) {
  const Network net = import(layer_norm_model(/*extra_reader_of_mean=*/true));
  FusionReport report;
  const Network fused = fuse_decomposed_ops(net, &report);
  EXPECT_EQ(fused.nodes().size(), net.nodes().size());
  for (const Node& node : fused.nodes()) EXPECT_NE(node.op_type, "LayerNormalization");
  EXPECT_EQ(report.total_groups(), 0u);
  EXPECT_EQ(report.summary(), "no decomposed operators fused");
  EXPECT_NEAR(total(fused, &OpCost::inference).kernel_count,
              total(net, &OpCost::inference).kernel_count, kCountTolerance);
}

const std::string kGeluScope = "/encoder/layer.0/intermediate/intermediate_act_fn/";

// h = x·W (so that h needs a gradient), then GELU(h) in the erf form with the product order
// `tail`: 0 = (h·a)·0.5 (torch's symbolic), 1 = h·(a·0.5), 2 = (h·0.5)·a (hand-written).
// `divide` chooses Div(h, √2) or Mul(h, 1/√2).
OnnxBuilder gelu_erf_model(int tail, bool divide, bool erf_read_outside = false) {
  const std::string& s = kGeluScope;
  OnnxBuilder b;
  b.input("x", {2, 8, 16}).initializer("w", {16, 64}).output("y");
  if (erf_read_outside) b.output("erf_copy");
  constant(b, "sqrt2", divide ? 1.4142135f : 0.70710677f, s);
  constant(b, "one", 1.f, s);
  constant(b, "half", 0.5f, s);
  b.node("MatMul", {"x", "w"}, {"h"}, "/encoder/layer.0/intermediate/dense/MatMul");
  b.node(divide ? "Div" : "Mul", {"h", "sqrt2"}, {"s"}, s + "Div");
  b.node("Erf", {"s"}, {"e"}, s + "Erf");
  b.node("Add", {"e", "one"}, {"a"}, s + "Add");
  if (tail == 0) {
    b.node("Mul", {"h", "a"}, {"m"}, s + "Mul");
    b.node("Mul", {"m", "half"}, {"y"}, s + "Mul_1");
  } else if (tail == 1) {
    b.node("Mul", {"half", "a"}, {"m"}, s + "Mul");
    b.node("Mul", {"m", "h"}, {"y"}, s + "Mul_1");
  } else {
    b.node("Mul", {"h", "half"}, {"m"}, s + "Mul");
    b.node("Mul", {"m", "a"}, {"y"}, s + "Mul_1");
  }
  if (erf_read_outside) b.node("Identity", {"e"}, {"erf_copy"}, "/probe/Identity");
  return b;
}

TEST(OpFusion, GeluErfFormInEveryProductOrder) {
  const double elements = 2 * 8 * 64;
  for (int tail = 0; tail < 3; ++tail) {
    for (bool divide : {true, false}) {
      SCOPED_TRACE("tail order " + std::to_string(tail) + (divide ? ", Div" : ", Mul"));
      const Network net = import(gelu_erf_model(tail, divide));
      // MatMul plus the 5 GELU kernels.
      EXPECT_NEAR(total(net, &OpCost::inference).kernel_count, 6.0, kCountTolerance);
      FusionReport report;
      const Network fused = fuse_decomposed_ops(net, &report);
      ASSERT_EQ(fused.nodes().size(), 2u);
      const Node& gelu = fused.nodes()[1];
      EXPECT_EQ(gelu.op_type, "Gelu");
      EXPECT_EQ(gelu.module_path, "encoder/layer/0/intermediate/intermediate_act_fn");
      EXPECT_EQ(gelu.name, kGeluScope + "Gelu");
      ASSERT_EQ(gelu.inputs.size(), 1u);
      EXPECT_EQ(gelu.inputs[0], fused.nodes()[0].outputs[0]);
      EXPECT_EQ(fused.tensor(gelu.outputs[0]).name, "y");
      EXPECT_EQ(gelu.attributes.count("approximate"), 0u);
      EXPECT_EQ(report.fused.at("Gelu").nodes, 5u);

      const OpCost cost = op_cost(fused, gelu);
      EXPECT_TRUE(cost.known);
      EXPECT_NEAR(cost.inference.kernel_count, 1.0, kCountTolerance);
      EXPECT_NEAR(cost.inference.flop_count, 8 * elements, kCountTolerance);
      // Training: h needs a gradient, so the Gelu backward is one kernel of 12 flops/element.
      EXPECT_NEAR(cost.backward.kernel_count, 1.0, kCountTolerance);
      EXPECT_NEAR(cost.backward.flop_count, 12 * elements, kCountTolerance);
      EXPECT_NEAR(total(fused, &OpCost::inference).kernel_count, 2.0, kCountTolerance);
    }
  }
}

TEST(OpFusion, GeluWithAnOutsideReaderOfTheErfIsLeftAlone) {
  const Network net = import(gelu_erf_model(0, true, /*erf_read_outside=*/true));
  const Network fused = fuse_decomposed_ops(net);
  EXPECT_EQ(fused.nodes().size(), net.nodes().size());
  for (const Node& node : fused.nodes()) EXPECT_NE(node.op_type, "Gelu");
}

TEST(OpFusion, GeluNeedsAScalarDivisor) {
  // Div by a per-channel tensor is not the √2 of GELU.
  OnnxBuilder b;
  b.input("x", {4, 16}).initializer("c", {16}).output("y");
  constant(b, "one", 1.f, "/act/");
  constant(b, "half", 0.5f, "/act/");
  b.node("Div", {"x", "c"}, {"s"}, "/act/Div");
  b.node("Erf", {"s"}, {"e"}, "/act/Erf");
  b.node("Add", {"e", "one"}, {"a"}, "/act/Add");
  b.node("Mul", {"x", "a"}, {"m"}, "/act/Mul");
  b.node("Mul", {"m", "half"}, {"y"}, "/act/Mul_1");
  const Network net = import(b);
  EXPECT_EQ(fuse_decomposed_ops(net).nodes().size(), net.nodes().size());
}

// GELU tanh form: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), with x³ as Pow(x, 3) or as
// Mul(x, Mul(x, x)) (torch's gelu(approximate='tanh') symbolic).
OnnxBuilder gelu_tanh_model(bool pow) {
  const std::string s = "/h/0/mlp/act/";
  OnnxBuilder b;
  b.input("x", {2, 4, 32}).output("y");
  if (pow) constant(b, "three", 3.f, s);
  constant(b, "kappa", 0.044715f, s);
  constant(b, "beta", 0.7978846f, s);
  constant(b, "one", 1.f, s);
  constant(b, "half", 0.5f, s);
  if (pow) {
    b.node("Pow", {"x", "three"}, {"cube"}, s + "Pow");
  } else {
    b.node("Mul", {"x", "x"}, {"sq"}, s + "Mul");
    b.node("Mul", {"x", "sq"}, {"cube"}, s + "Mul_1");
  }
  b.node("Mul", {"kappa", "cube"}, {"kc"}, s + "Mul_2");
  b.node("Add", {"x", "kc"}, {"inner"}, s + "Add");
  b.node("Mul", {"beta", "inner"}, {"scaled"}, s + "Mul_3");
  b.node("Tanh", {"scaled"}, {"t"}, s + "Tanh");
  b.node("Add", {"one", "t"}, {"a"}, s + "Add_1");
  b.node("Mul", {"x", "a"}, {"m"}, s + "Mul_4");
  b.node("Mul", {"half", "m"}, {"y"}, s + "Mul_5");
  return b;
}

TEST(OpFusion, GeluTanhFormWithPowOrProducts) {
  for (bool pow : {true, false}) {
    SCOPED_TRACE(pow ? "Pow(x, 3)" : "Mul(x, Mul(x, x))");
    const Network net = import(gelu_tanh_model(pow));
    const double before = pow ? 8.0 : 9.0;
    EXPECT_NEAR(total(net, &OpCost::inference).kernel_count, before, kCountTolerance);
    FusionReport report;
    const Network fused = fuse_decomposed_ops(net, &report);
    ASSERT_EQ(fused.nodes().size(), 1u);
    const Node& gelu = fused.nodes()[0];
    EXPECT_EQ(gelu.op_type, "Gelu");
    EXPECT_EQ(gelu.module_path, "h/0/mlp/act");
    EXPECT_EQ(to_string(gelu.attributes.at("approximate")), "'tanh'");
    EXPECT_EQ(input_names(fused, gelu), (std::vector<std::string>{"x"}));
    EXPECT_EQ(report.fused.at("Gelu").nodes, static_cast<std::size_t>(before));
    EXPECT_NEAR(total(fused, &OpCost::inference).kernel_count, 1.0, kCountTolerance);
    EXPECT_NEAR(total(fused, &OpCost::inference).flop_count, 8 * 2 * 4 * 32, kCountTolerance);
  }
}

TEST(OpFusion, SiluBecomesSwishButAGateDoesNot) {
  OnnxBuilder b;
  b.input("x", {8, 64}).input("g", {8, 64}).output("y").output("gated");
  b.node("Sigmoid", {"x"}, {"s"}, "/blocks/0/act/Sigmoid");
  b.node("Mul", {"x", "s"}, {"y"}, "/blocks/0/act/Mul");
  // a·sigmoid(b), a ≠ b: a gate (two kernels in PyTorch too), not a SiLU.
  b.node("Sigmoid", {"g"}, {"gs"}, "/gate/Sigmoid");
  b.node("Mul", {"gs", "x"}, {"gated"}, "/gate/Mul");
  b.metadata("nnergy.data_inputs", "x, g");
  const Network net = import(b);
  FusionReport report;
  const Network fused = fuse_decomposed_ops(net, &report);
  ASSERT_EQ(fused.nodes().size(), 3u);
  const Node& swish = fused.nodes()[0];
  EXPECT_EQ(swish.op_type, "Swish");
  EXPECT_EQ(swish.name, "/blocks/0/act/Swish");
  EXPECT_EQ(swish.module_path, "blocks/0/act");
  EXPECT_EQ(input_names(fused, swish), (std::vector<std::string>{"x"}));
  EXPECT_EQ(fused.nodes()[1].op_type, "Sigmoid");
  EXPECT_EQ(fused.nodes()[2].op_type, "Mul");
  EXPECT_EQ(report.fused.at("Swish").groups, 1u);

  const OpCost cost = op_cost(fused, swish);
  EXPECT_TRUE(cost.known);
  EXPECT_EQ(cost.op_class, OpClass::kElementwise);
  EXPECT_NEAR(cost.inference.kernel_count, 1.0, kCountTolerance);
  EXPECT_NEAR(cost.inference.flop_count, 5 * 8 * 64, kCountTolerance);
  EXPECT_NEAR(total(fused, &OpCost::inference).kernel_count, 3.0, kCountTolerance);
}

// x·relu6(x + 3)/6 in the forms timm and torchvision code and the exporter give.
enum class HardForm { kDivThenMul, kMulThenDiv, kHardSigmoidOp, kSigmoidOnly };

OnnxBuilder hard_model(HardForm form) {
  const std::string s = "/features/1/act/";
  OnnxBuilder b;
  b.input("x", {2, 16, 8, 8}).output("y");
  if (form == HardForm::kHardSigmoidOp) {
    auto& hs = b.node("HardSigmoid", {"x"}, {"hs"}, s + "HardSigmoid");
    auto* alpha = hs.add_attribute();
    alpha->set_name("alpha");
    alpha->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    alpha->set_f(1.f / 6.f);
    b.node("Mul", {"x", "hs"}, {"y"}, s + "Mul");
    return b;
  }
  constant(b, "three", 3.f, s);
  constant(b, "zero", 0.f, s);
  constant(b, "six", 6.f, s);
  b.node("Add", {"x", "three"}, {"a"}, s + "Add");
  b.node("Clip", {"a", "zero", "six"}, {"c"}, s + "Clip");
  if (form == HardForm::kMulThenDiv) {
    b.node("Mul", {"x", "c"}, {"m"}, s + "Mul");
    b.node("Div", {"m", "six"}, {"y"}, s + "Div");
  } else if (form == HardForm::kDivThenMul) {
    b.node("Div", {"c", "six"}, {"d"}, s + "Div");
    b.node("Mul", {"d", "x"}, {"y"}, s + "Mul");
  } else {
    b.node("Div", {"c", "six"}, {"y"}, s + "Div");
  }
  return b;
}

TEST(OpFusion, HardSwishAndHardSigmoidForms) {
  const double elements = 2 * 16 * 8 * 8;
  struct Case {
    HardForm form;
    const char* op;
    double kernels_before;
    double flops_per_element;  // the catalog's HardSwish / HardSigmoid forward
  };
  for (const Case& c : {Case{HardForm::kDivThenMul, "HardSwish", 4, 4},
                        Case{HardForm::kMulThenDiv, "HardSwish", 4, 4},
                        Case{HardForm::kHardSigmoidOp, "HardSwish", 2, 4},
                        Case{HardForm::kSigmoidOnly, "HardSigmoid", 3, 3}}) {
    SCOPED_TRACE(std::string(c.op) + " form " + std::to_string(static_cast<int>(c.form)));
    const Network net = import(hard_model(c.form));
    EXPECT_NEAR(total(net, &OpCost::inference).kernel_count, c.kernels_before, kCountTolerance);
    FusionReport report;
    const Network fused = fuse_decomposed_ops(net, &report);
    ASSERT_EQ(fused.nodes().size(), 1u);
    EXPECT_EQ(fused.nodes()[0].op_type, c.op);
    EXPECT_EQ(fused.nodes()[0].module_path, "features/1/act");
    EXPECT_EQ(input_names(fused, fused.nodes()[0]), (std::vector<std::string>{"x"}));
    EXPECT_EQ(fused.tensor(fused.nodes()[0].outputs[0]).name, "y");
    EXPECT_EQ(report.fused.at(c.op).groups, 1u);
    const PassCost after = total(fused, &OpCost::inference);
    EXPECT_NEAR(after.kernel_count, 1.0, kCountTolerance);
    EXPECT_NEAR(after.flop_count, c.flops_per_element * elements, kCountTolerance);
  }
}

TEST(OpFusion, ClipAttributesMustBeRelu6BelowOpset11) {
  for (float high : {6.f, 1.f}) {
    SCOPED_TRACE("max " + std::to_string(high));
    OnnxBuilder b(10);
    b.input("x", {4, 8}).output("y");
    constant(b, "three", 3.f, "/act/");
    constant(b, "six", 6.f, "/act/");
    b.node("Add", {"x", "three"}, {"a"}, "/act/Add");
    auto& clip = b.node("Clip", {"a"}, {"c"}, "/act/Clip");
    for (const auto& [key, value] : {std::pair<const char*, float>{"min", 0.f}, {"max", high}}) {
      auto* attribute = clip.add_attribute();
      attribute->set_name(key);
      attribute->set_type(onnx::AttributeProto_AttributeType_FLOAT);
      attribute->set_f(value);
    }
    b.node("Div", {"c", "six"}, {"d"}, "/act/Div");
    b.node("Mul", {"x", "d"}, {"y"}, "/act/Mul");
    const Network fused = fuse_decomposed_ops(import(b));
    const std::size_t expected = high == 6.f ? 1u : 6u;
    EXPECT_EQ(fused.nodes().size(), expected);
  }
}

TEST(OpFusion, DecomposedSoftmaxBecomesOneSoftmax) {
  // torch.softmax(x, dim=1) exported without a known rank: ReduceMax → Sub → Exp → ReduceSum →
  // Div over axis 1 (opset 13: ReduceSum takes its axes as an input).
  const std::string s = "/head/";
  OnnxBuilder b(13);
  b.input("x", {2, 10, 7}).output("y");
  b.int64_initializer("axes", {1});
  auto& max = b.node("ReduceMax", {"x"}, {"m"}, s + "ReduceMax");
  OnnxBuilder::set_ints(max, "axes", {1});
  b.node("Sub", {"x", "m"}, {"d"}, s + "Sub");
  b.node("Exp", {"d"}, {"e"}, s + "Exp");
  b.node("ReduceSum", {"e", "axes"}, {"z"}, s + "ReduceSum");
  b.node("Div", {"e", "z"}, {"y"}, s + "Div");
  const Network net = import(b);
  EXPECT_NEAR(total(net, &OpCost::inference).kernel_count, 5.0, kCountTolerance);
  FusionReport report;
  const Network fused = fuse_decomposed_ops(net, &report);
  ASSERT_EQ(fused.nodes().size(), 1u);
  EXPECT_EQ(fused.nodes()[0].op_type, "Softmax");
  EXPECT_EQ(fused.nodes()[0].int_attribute("axis", -1), 1);
  EXPECT_EQ(fused.nodes()[0].module_path, "head");
  EXPECT_NEAR(total(fused, &OpCost::inference).kernel_count, 1.0, kCountTolerance);
  EXPECT_NEAR(total(fused, &OpCost::inference).flop_count, 5 * 2 * 10 * 7, kCountTolerance);
}

TEST(OpFusion, TransposedSoftmaxBelowOpset13BecomesOneSoftmax) {
  // torch.softmax(x, dim=1) at opset 11: the exporter moves axis 1 last and back again.
  for (bool swap_back : {true, false}) {
    SCOPED_TRACE(swap_back ? "same perm after" : "another perm after");
    OnnxBuilder b(11);
    b.input("x", {2, 10, 7}).output("y");
    OnnxBuilder::set_ints(b.node("Transpose", {"x"}, {"t"}, "/Transpose"), "perm", {0, 2, 1});
    OnnxBuilder::set_int(b.node("Softmax", {"t"}, {"s"}, "/Softmax"), "axis", 2);
    OnnxBuilder::set_ints(
        b.node("Transpose", {"s"}, {"y"}, "/Transpose_1"), "perm",
        swap_back ? std::vector<std::int64_t>{0, 2, 1} : std::vector<std::int64_t>{1, 0, 2});
    const Network net = import(b);
    EXPECT_NEAR(total(net, &OpCost::inference).kernel_count, 3.0, kCountTolerance);
    const Network fused = fuse_decomposed_ops(net);
    if (!swap_back) {
      EXPECT_EQ(fused.nodes().size(), 3u);
      continue;
    }
    ASSERT_EQ(fused.nodes().size(), 1u);
    EXPECT_EQ(fused.nodes()[0].op_type, "Softmax");
    EXPECT_EQ(fused.nodes()[0].name, "/Softmax");
    EXPECT_EQ(fused.nodes()[0].int_attribute("axis", -1), 1);
    EXPECT_EQ(fused.tensor(fused.nodes()[0].outputs[0]).shape, (Shape{2, 10, 7}));
    EXPECT_NEAR(total(fused, &OpCost::inference).kernel_count, 1.0, kCountTolerance);
  }
}

TEST(OpFusion, ScaledMaskedSoftmaxStaysThreeKernelsAsInEagerAttention) {
  // HF BERT eager attention: scores / √d, + mask, softmax: three kernels in PyTorch.
  const std::string s = "/encoder/layer.0/attention/self/";
  OnnxBuilder b;
  b.input("scores", {2, 4, 8, 8}).input("mask", {2, 1, 1, 8}).output("p");
  b.metadata("nnergy.data_inputs", "scores, mask");
  constant(b, "root_d", 8.f, s);
  b.node("Div", {"scores", "root_d"}, {"scaled"}, s + "Div");
  b.node("Add", {"scaled", "mask"}, {"masked"}, s + "Add");
  OnnxBuilder::set_int(b.node("Softmax", {"masked"}, {"p"}, s + "Softmax"), "axis", -1);
  const Network net = import(b);
  FusionReport report;
  const Network fused = fuse_decomposed_ops(net, &report);
  EXPECT_EQ(fused.nodes().size(), net.nodes().size());
  EXPECT_EQ(report.total_groups(), 0u);
  EXPECT_NEAR(total(fused, &OpCost::inference).kernel_count, 3.0, kCountTolerance);
}

TEST(OpFusion, FusedNodesGetDistinctNames) {
  OnnxBuilder b;
  b.input("x", {4, 8}).output("y");
  b.node("Sigmoid", {"x"}, {"s1"}, "Sigmoid_1");
  b.node("Mul", {"x", "s1"}, {"h1"}, "Mul_2");
  b.node("Sigmoid", {"h1"}, {"s2"}, "/act/Sigmoid");
  b.node("Mul", {"s2", "h1"}, {"h2"}, "/act/Mul");
  b.node("Sigmoid", {"h2"}, {"s3"}, "/act/Sigmoid_1");
  b.node("Mul", {"h2", "s3"}, {"y"}, "/act/Mul_1");
  const Network fused = fuse_decomposed_ops(import(b));
  ASSERT_EQ(fused.nodes().size(), 3u);
  EXPECT_EQ(fused.nodes()[0].name, "Swish_Mul_2");  // unscoped: no module
  EXPECT_EQ(fused.nodes()[0].module_path, "");
  EXPECT_EQ(fused.nodes()[1].name, "/act/Swish");
  EXPECT_EQ(fused.nodes()[2].name, "/act/Swish_1");
  EXPECT_EQ(fused.nodes()[2].module_path, "act");
  EXPECT_EQ(fused.nodes()[1].inputs[0], fused.nodes()[0].outputs[0]);
  EXPECT_EQ(fused.nodes()[2].inputs[0], fused.nodes()[1].outputs[0]);
}

}  // namespace
}  // namespace nnergy::graph
