#include "nnergy/graph/op_catalog.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "nnergy/core/error.h"
#include "nnergy/graph/arithmetic_cost.h"
#include "nnergy/graph/cost_input.h"
#include "nnergy/graph/einsum_cost.h"
#include "nnergy/graph/index_cost.h"
#include "nnergy/graph/normalization_cost.h"
#include "nnergy/graph/recurrent_cost.h"
#include "nnergy/graph/resampling_cost.h"
#include "nnergy/graph/strided_views.h"

namespace nnergy::graph {

namespace {

using CostFunction = std::function<OpCost(const CostInput&)>;

// A matrix operator Y = op(X, W) [+ bias] with `macs` multiply-accumulates: the forward pass,
// and as backward (PALEO) a data gradient when X needs one and a weight gradient when W does,
// each as many MACs as the forward pass, plus the bias gradient (a reduction of dY).
OpCost matrix_op(const CostInput& c, double macs) {
  const bool has_bias = c.in.size() > 2;
  const double bias_flops = has_bias ? c.out_elements() : 0.0;
  PassCost forward = pass(macs, 2 * macs + bias_flops, c.all_in_bytes() + c.out_bytes(), 1);
  PassCost backward;
  const double grad_out = c.out_bytes();
  for (std::size_t i = 0; i < 2; ++i) {
    // dX reads dY and W and writes dX; dW reads dY and X and writes dW.
    if (c.needs_grad(i))
      backward += pass(macs, 2 * macs, grad_out + c.in_bytes(1 - i) + c.in_bytes(i), 1);
  }
  if (has_bias && c.needs_grad(2)) backward += pass(0, bias_flops, grad_out + c.in_bytes(2), 1);
  return same_forward(OpClass::kMatrix, forward, backward);
}

// Sets the GEMMs of a matrix operator whose forward pass is `forward`: the data gradient
// (m × n by n × k) when input 0 needs a gradient, the weight gradient (k × m by m × n, per
// product) when input 1 does.
void set_gemms(OpCost& cost, const CostInput& c, const GemmDims& forward) {
  if (!(forward.m >= 1 && forward.n >= 1 && forward.k >= 1 && forward.batch >= 1)) return;
  cost.forward_gemms = {forward};
  if (c.needs_grad(0))
    cost.backward_gemms.push_back(
        {forward.m, forward.k, forward.n, forward.batch, forward.convolution});
  if (c.needs_grad(1))
    cost.backward_gemms.push_back(
        {forward.k, forward.n, forward.m, forward.batch, forward.convolution});
}

// Which kernel family cuDNN runs a (forward) convolution as. Two-group convolutions (AlexNet's
// towers) run as two dense convolutions and stay GEMMs; depthwise convolutions (one group per
// input channel) are memory-bound and are left to the reduction-length rule.
MatrixKind convolution_kind(const CostInput& c) {
  const Shape& w = c.in[1]->shape;  // [Cout, Cin/groups, k...]
  const std::int64_t groups = c.node.int_attribute("group", 1);
  const std::int64_t in_channels = w.size() > 1 ? w[1] * groups : 0;
  if (groups >= 4 && groups < in_channels) return MatrixKind::kGroupedConv;
  auto all_ones = [](const std::vector<std::int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [](std::int64_t x) { return x == 1; });
  };
  const bool unit = all_ones(c.node.ints_attribute("strides", {})) &&
                    all_ones(c.node.ints_attribute("dilations", {}));
  const bool three_by_three = w.size() == 4 && w[2] == 3 && w[3] == 3;  // 2-D only
  if (groups == 1 && unit && three_by_three) return MatrixKind::kConv3x3;
  return MatrixKind::kGemm;
}

// Convolution, forward and transposed, of any spatial rank (1-D to 3-D) and any groups. MACs
// per output element of a convolution are (Cin/groups)·prod(kernel) = prod(W.shape[1:]) with W
// [Cout, Cin/groups, k...]; a transposed convolution, W [Cin, Cout/groups, k...], does
// (Cout/groups)·prod(kernel) = prod(W.shape[1:]) MACs per *input* element.
OpCost convolution(const CostInput& c, bool transposed) {
  if (c.in.size() < 2 || c.out.empty()) throw InternalError(c.node.name + ": Conv without weight");
  const double anchor_elements = transposed ? c.in_elements(0) : c.out_elements();
  OpCost cost = matrix_op(c, anchor_elements * product(c.in[1]->shape, 1));
  if (!transposed) {
    cost.matrix_kind = convolution_kind(c);
    // Implicit GEMM: the output positions × the output channels of a group, reducing over the
    // group's input channels times the taps; one product per group.
    const Shape& w = c.in[1]->shape;  // [Cout, Cin/groups, k...]
    const double groups = static_cast<double>(c.node.int_attribute("group", 1));
    if (!w.empty() && w[0] > 0 && groups >= 1) {
      const double out_channels = static_cast<double>(w[0]);
      set_gemms(
          cost, c,
          {c.out_elements() / out_channels, out_channels / groups, product(w, 1), groups, true});
    }
  }
  return cost;
}

// Gemm: Y = alpha·A'·B' + beta·C with A' (M×K), B' (K×N).
OpCost gemm(const CostInput& c) {
  const Shape& a = c.in.at(0)->shape;
  const bool trans_a = c.node.int_attribute("transA", 0) != 0;
  const double k = static_cast<double>(trans_a ? a.at(0) : a.at(1));
  OpCost cost = matrix_op(c, c.out_elements() * k);
  const Shape& y = c.out.at(0)->shape;
  if (y.size() == 2)
    set_gemms(cost, c, {static_cast<double>(y[0]), static_cast<double>(y[1]), k, 1});
  return cost;
}

// MatMul with numpy broadcasting: every output element is a dot product over K.
OpCost matmul(const CostInput& c) {
  const Shape& a = c.in.at(0)->shape;
  const double k = a.empty() ? 1.0 : static_cast<double>(a.back());
  OpCost cost = matrix_op(c, c.out_elements() * k);
  // A product by a matrix (a Linear layer's weight) folds the batch axes into its rows, as
  // PyTorch runs it; a product of two batched operands is a batched GEMM.
  const Shape& b = c.in.at(1)->shape;
  const Shape& y = c.out.at(0)->shape;
  if (a.size() >= 1 && b.size() >= 2 && !y.empty()) {
    const double n = static_cast<double>(b.back());
    const double rows = n > 0 ? c.out_elements() / n : 0;
    if (b.size() == 2) {
      set_gemms(cost, c, {rows, n, k, 1});
    } else if (y.size() >= 2) {
      const double m = static_cast<double>(y[y.size() - 2]);
      set_gemms(cost, c, {m, n, k, m > 0 ? rows / m : 0});
    }
  }
  return cost;
}

// Elementwise operators: `forward_flops` and `backward_flops` per output element.
// Transcendental functions (exp, erf, tanh) count as one flop each.
CostFunction elementwise(double forward_flops, double backward_flops) {
  return [=](const CostInput& c) {
    const double n = c.out_elements();
    PassCost forward = pass(0, forward_flops * n, c.all_in_bytes() + c.out_bytes(), 1);
    PassCost backward;
    if (c.any_grad()) {
      // Reads the output gradient and the saved inputs, writes each needed input gradient.
      backward = pass(0, backward_flops * n, c.out_bytes() + c.all_in_bytes() + c.grad_in_bytes(),
                      static_cast<double>(c.grad_inputs()));
    }
    return same_forward(OpClass::kElementwise, forward, backward);
  };
}

// BatchNormalization. Inference folds the statistics into one scale and shift per channel
// (2 flops per element, one pass). Training computes batch statistics first (a second read
// of the input, 3 more flops per element), and its backward reads input and output gradient
// twice (reduction pass, then gradient pass), about 7 flops per element.
OpCost batch_norm(const CostInput& c) {
  const double n = c.in_elements(0);
  const double x = c.in_bytes(0);
  const double y = c.out.empty() ? x : c.out[0]->bytes();
  double params = 0;
  for (std::size_t i = 1; i < c.in.size(); ++i) params += c.in_bytes(i);
  OpCost cost;
  cost.op_class = OpClass::kNormalization;
  cost.known = true;
  cost.inference = pass(0, 2 * n, x + y + params, 1);
  cost.training_forward = pass(0, 5 * n, 2 * x + y + params, 2);
  if (c.any_grad()) cost.backward = pass(0, 7 * n, 2 * x + 2 * y + x + params, 2);
  cost.statistics = StatisticsPasses::kTraining;
  return cost;
}

// LayerNormalization over the trailing axes: mean and variance in one pass (3 flops per
// element), normalize and affine (4 flops); backward about 9 flops per element, one kernel for
// the input gradient and one for the scale/bias gradients.
OpCost layer_norm(const CostInput& c) {
  const double n = c.in_elements(0);
  const double x = c.in_bytes(0);
  double params = 0;
  for (std::size_t i = 1; i < c.in.size(); ++i) params += c.in_bytes(i);
  PassCost forward = pass(0, 7 * n, x + x + params, 1);
  PassCost backward;
  if (c.any_grad()) backward = pass(0, 9 * n, x + x + x + 2 * params, 2);
  OpCost cost = same_forward(OpClass::kNormalization, forward, backward);
  cost.statistics = StatisticsPasses::kAll;
  return cost;
}

// Softmax: max, subtract, exp, sum, divide (5 flops per element); backward
// dx = y·(dy − Σ dy·y): 4 flops per element.
OpCost softmax(const CostInput& c) {
  const double n = c.in_elements(0);
  PassCost forward = pass(0, 5 * n, c.in_bytes(0) + c.out_bytes(), 1);
  PassCost backward;
  if (c.any_grad()) backward = pass(0, 4 * n, 3 * c.out_bytes(), 1);
  return same_forward(OpClass::kNormalization, forward, backward);
}

// Windowed pooling: `window_flops` per window element per output element (one comparison or
// addition; LpPool's |x|^p and addition make two).
OpCost windowed_pool(const CostInput& c, bool is_max, double window_flops) {
  const std::vector<std::int64_t> kernel = c.node.ints_attribute("kernel_shape", {});
  double window = 1;
  for (std::int64_t k : kernel) window *= static_cast<double>(k);
  const double n_out = c.out.empty() ? 0.0 : static_cast<double>(c.out[0]->elements());
  PassCost forward = pass(0, n_out * window * window_flops, c.in_bytes(0) + c.out_bytes(), 1);
  PassCost backward;
  if (c.any_grad()) {
    // Max pooling scatters through saved int64 indices; average pooling spreads each gradient.
    const double indices = is_max ? n_out * 8.0 : 0.0;
    backward = pass(0, is_max ? n_out : n_out * window * window_flops,
                    c.out[0]->bytes() + indices + c.in_bytes(0), 1);
  }
  return same_forward(OpClass::kPooling, forward, backward);
}

// Global pooling and reductions: `flops_per_element` per input element (1 for sum, mean, max,
// min, prod; 2 for the square or absolute value and the sum of ReduceSumSquare, ReduceL1,
// ReduceL2, GlobalLpPool). Backward broadcasts the gradient back (one kernel).
CostFunction reduction(double flops_per_element) {
  return [=](const CostInput& c) {
    const double n = c.in_elements(0);
    PassCost forward = pass(0, flops_per_element * n, c.in_bytes(0) + c.out_bytes(), 1);
    PassCost backward;
    if (c.any_grad()) backward = pass(0, flops_per_element * n, c.out_bytes() + c.in_bytes(0), 1);
    return same_forward(OpClass::kPooling, forward, backward);
  };
}

// ReduceLogSumExp as eager torch.logsumexp: amax, x − max, exp, sum, then log and + max on the
// reduced tensor: 4 flops per input element in six kernels, the input-sized ones reading and
// writing the input's size. Backward: dX = dY·exp(x − y), about 3 flops per element.
OpCost reduce_log_sum_exp(const CostInput& c) {
  const double n = c.in_elements(0);
  const double x = c.in_bytes(0);
  PassCost forward = pass(0, 4 * n, 6 * x + 3 * c.out_bytes(), 6);
  PassCost backward;
  if (c.any_grad()) backward = pass(0, 3 * n, 6 * x + 2 * c.out_bytes(), 3);
  return same_forward(OpClass::kPooling, forward, backward);
}

// Copies that read what they write (Concat, Transpose, Pad, Expand, Tile, ReverseSequence...).
OpCost copy_all_inputs(const CostInput& c) {
  // Only the data input is read; shape and index operands are tiny or shape-valued.
  double read = 0;
  for (const TensorInfo* t : c.in) read += t->shape_valued ? 0.0 : t->bytes();
  PassCost forward = pass(0, 0, read + c.out_bytes(), 1);
  PassCost backward;
  if (c.any_grad()) backward = pass(0, 0, c.out_bytes() + c.grad_in_bytes(), 1);
  return same_forward(OpClass::kDataMovement, forward, backward);
}

// Copies that read only what they write: Slice, Split, Gather (embedding lookups included).
// Their backward zero-fills the input gradient and scatters (adds) the output gradient into it.
OpCost copy_selected(const CostInput& c) {
  double index_bytes = 0;
  for (std::size_t i = 1; i < c.in.size(); ++i) {
    index_bytes += c.in[i]->shape_valued ? 0.0 : c.in[i]->bytes();
  }
  PassCost forward = pass(0, 0, 2 * c.out_bytes() + index_bytes, 1);
  PassCost backward;
  if (c.any_grad()) {
    backward = pass(0, c.out_elements(), c.out_bytes() + index_bytes + c.grad_in_bytes(), 2);
  }
  OpCost cost = same_forward(OpClass::kDataMovement, forward, backward);
  return cost;
}

// Dropout: a no-op (a view) in eval mode; in train mode it draws a mask, stores it (1 byte per
// element) and multiplies; backward multiplies the gradient by the mask.
OpCost dropout(const CostInput& c) {
  const double n = c.in_elements(0);
  OpCost cost;
  cost.op_class = OpClass::kView;
  cost.known = true;
  cost.training_forward = pass(0, 2 * n, c.in_bytes(0) + c.out[0]->bytes() + n, 1);
  if (c.any_grad()) cost.backward = pass(0, n, 2 * c.in_bytes(0) + n, 1);
  return cost;
}

const std::map<std::string, CostFunction, std::less<>>& catalog() {
  static const std::map<std::string, CostFunction, std::less<>> kCatalog = [] {
    std::map<std::string, CostFunction, std::less<>> m;
    m["Conv"] = [](const CostInput& c) { return convolution(c, false); };
    m["ConvTranspose"] = [](const CostInput& c) { return convolution(c, true); };
    m["Gemm"] = gemm;
    m["MatMul"] = matmul;
    m["Einsum"] = einsum_cost;
    m["LSTM"] = [](const CostInput& c) { return recurrent_cost(c, 4); };
    m["GRU"] = [](const CostInput& c) { return recurrent_cost(c, 3); };
    m["RNN"] = [](const CostInput& c) { return recurrent_cost(c, 1); };
    m["BatchNormalization"] = batch_norm;
    m["LayerNormalization"] = layer_norm;
    m["InstanceNormalization"] = instance_norm_cost;
    m["GroupNormalization"] = group_norm_cost;
    m["LpNormalization"] = lp_norm_cost;
    m["Softmax"] = softmax;
    m["LogSoftmax"] = softmax;
    m["Hardmax"] = hardmax_cost;
    m["MaxPool"] = [](const CostInput& c) { return windowed_pool(c, true, 1); };
    m["AveragePool"] = [](const CostInput& c) { return windowed_pool(c, false, 1); };
    m["LpPool"] = [](const CostInput& c) { return windowed_pool(c, false, 2); };
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceSum",
                           "ReduceMax", "ReduceMin", "ReduceProd"}) {
      m[op] = reduction(1);
    }
    for (const char* op : {"GlobalLpPool", "ReduceL1", "ReduceL2", "ReduceSumSquare"}) {
      m[op] = reduction(2);
    }
    m["ReduceLogSumExp"] = reduce_log_sum_exp;
    m["ArgMax"] = arg_reduction_cost;
    m["ArgMin"] = arg_reduction_cost;
    m["TopK"] = top_k_cost;
    m["Add"] = add_cost;
    m["Sub"] = sub_cost;
    m["Mul"] = mul_cost;
    m["Div"] = div_cost;
    // {forward, backward} flops per output element. Transcendental functions count one flop;
    // their derivatives count the arithmetic around them (tan' = 1 + tan², asin' = 1/√(1 − x²)).
    // Comparisons, logic and bit operations are one operation and have no gradient.
    // Quantization: (x − zero point)·scale is 2; x/scale, round, + zero point, clamp is 4.
    const std::map<std::string, std::pair<double, double>> kElementwise = {
        {"Relu", {1, 1}},
        {"LeakyRelu", {2, 2}},
        {"PRelu", {2, 3}},
        {"Elu", {3, 3}},
        {"Selu", {4, 3}},
        {"Celu", {4, 3}},
        {"Sigmoid", {4, 3}},
        {"Tanh", {1, 3}},
        {"HardSigmoid", {3, 1}},
        {"HardSwish", {4, 4}},
        {"Gelu", {8, 12}},
        {"Erf", {1, 3}},
        {"Exp", {1, 1}},
        {"Log", {1, 1}},
        {"Sqrt", {1, 2}},
        {"Pow", {1, 3}},
        {"Neg", {1, 1}},
        {"Abs", {1, 1}},
        {"Reciprocal", {1, 2}},
        {"Clip", {2, 1}},
        {"Softplus", {3, 3}},
        {"Mish", {6, 8}},
        {"Sin", {1, 1}},
        {"Cos", {1, 1}},
        {"Tan", {1, 3}},
        {"Asin", {1, 4}},
        {"Acos", {1, 5}},
        {"Atan", {1, 3}},
        {"Sinh", {1, 2}},
        {"Cosh", {1, 2}},
        {"Asinh", {1, 4}},
        {"Acosh", {1, 4}},
        {"Atanh", {1, 3}},
        {"Softsign", {3, 4}},
        {"ThresholdedRelu", {1, 1}},
        {"Shrink", {3, 1}},
        {"Max", {1, 1}},
        {"Min", {1, 1}},
        {"Sum", {1, 1}},
        {"Mean", {2, 1}},
        {"Mod", {3, 1}},
        {"Where", {1, 1}},
        {"Equal", {1, 0}},
        {"Greater", {1, 0}},
        {"Less", {1, 0}},
        {"GreaterOrEqual", {1, 0}},
        {"LessOrEqual", {1, 0}},
        {"Not", {1, 0}},
        {"And", {1, 0}},
        {"Or", {1, 0}},
        {"Xor", {1, 0}},
        {"BitShift", {1, 0}},
        {"IsNaN", {1, 0}},
        {"IsInf", {1, 0}},
        {"Floor", {1, 0}},
        {"Ceil", {1, 0}},
        {"Round", {1, 0}},
        {"Sign", {1, 0}},
        {"Cast", {0, 0}},
        {"CastLike", {0, 0}},
        {"DequantizeLinear", {2, 2}},
        {"QuantizeLinear", {4, 1}},
    };
    for (const auto& [op, flops] : kElementwise) m[op] = elementwise(flops.first, flops.second);
    // SiLU as one kernel, x·sigmoid(x) (what op_fusion writes for Sigmoid → Mul); backward
    // dx = dy·s·(1 + x·(1 − s)).
    m["Swish"] = elementwise(5, 8);
    m["Resize"] = resize_cost;
    m["Upsample"] = resize_cost;
    m["GridSample"] = grid_sample_cost;
    m["RoiAlign"] = roi_align_cost;
    m["Transpose"] = [](const CostInput& c) {
      return c.node.int_attribute(kStridedViewAttribute, 0) != 0 ? no_cost(OpClass::kView)
                                                                 : copy_all_inputs(c);
    };
    for (const char* op : {"Concat", "Pad", "Expand", "Tile", "DepthToSpace", "SpaceToDepth",
                           "ScatterND", "ScatterElements", "Scatter", "ConstantOfShape", "Range",
                           "Trilu", "CumSum", "ReverseSequence"}) {
      m[op] = copy_all_inputs;
    }
    for (const char* op : {"Slice", "Split", "Gather", "GatherElements", "GatherND"}) {
      m[op] = copy_selected;
    }
    m["NonZero"] = non_zero_cost;
    m["Compress"] = compress_cost;
    m["OneHot"] = one_hot_cost;
    m["MaxUnpool"] = max_unpool_cost;
    for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}) {
      m[op] = [](const CostInput&) { return no_cost(OpClass::kView); };
    }
    m["Dropout"] = dropout;
    for (const char* op : {"Shape", "Size", "Constant"}) {
      m[op] = [](const CostInput&) { return no_cost(OpClass::kShape); };
    }
    return m;
  }();
  return kCatalog;
}

OpCost memory_bound_fallback(const CostInput& c) {
  OpCost cost = elementwise(1, 1)(c);
  cost.op_class = OpClass::kUnknown;
  cost.known = false;
  return cost;
}

bool all_outputs_shape_valued(const CostInput& c) {
  return !c.out.empty() && std::all_of(c.out.begin(), c.out.end(),
                                       [](const TensorInfo* t) { return t->shape_valued; });
}

}  // namespace

OpCost op_cost(const Network& network, const Node& node) {
  CostInput input{node, {}, {}};
  for (std::size_t i : node.inputs) input.in.push_back(&network.tensor(i));
  for (std::size_t i : node.outputs) input.out.push_back(&network.tensor(i));

  OpCost cost;
  auto it = catalog().find(node.op_type);
  if (all_outputs_shape_valued(input) || node.outputs.empty()) {
    // Shape arithmetic (and nodes whose outputs nobody reads) never becomes a GPU kernel.
    cost = no_cost(OpClass::kShape);
    cost.known = it != catalog().end();
  } else if (it != catalog().end()) {
    cost = it->second(input);
  } else {
    cost = memory_bound_fallback(input);
  }
  for (const TensorInfo* t : input.in) {
    if (t->role == TensorRole::kParameter) cost.parameter_count += t->elements();
  }
  if (cost.op_class == OpClass::kMatrix && !input.out.empty() && input.out[0]->elements() > 0) {
    cost.reduction_length =
        cost.inference.mac_count / static_cast<double>(input.out[0]->elements());
  }
  return cost;
}

bool is_known_op(std::string_view op_type) { return catalog().count(op_type) > 0; }

std::vector<std::string> known_op_types() {
  std::vector<std::string> types;
  for (const auto& [op, fn] : catalog()) types.push_back(op);
  return types;
}

std::string_view to_string(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kSgdMomentum:
      return "sgd-momentum";
    case Optimizer::kAdam:
      return "adam";
    case Optimizer::kAdamW:
      return "adamw";
  }
  return "sgd";
}

Optimizer parse_optimizer(std::string_view name, std::string_view flag) {
  for (Optimizer o :
       {Optimizer::kSgd, Optimizer::kSgdMomentum, Optimizer::kAdam, Optimizer::kAdamW}) {
    if (to_string(o) == name) return o;
  }
  throw InvalidInput(std::string(flag) + " " + std::string(name) +
                     ": unknown optimizer; accepted: sgd, sgd-momentum, adam, adamw");
}

PassCost optimizer_step_cost(Optimizer optimizer, double parameter_count,
                             std::size_t parameter_tensors, double bytes_per_parameter) {
  // Per parameter: flops, tensors read + written (parameter, gradient, optimizer state), and
  // update stages (foreach kernels).
  struct Rule {
    double flops;
    double tensors_moved;
    double stages;
  };
  Rule rule{};
  switch (optimizer) {
    case Optimizer::kSgd:
      rule = {2, 3, 1};
      break;  // p -= lr·g
    case Optimizer::kSgdMomentum:
      rule = {4, 5, 2};
      break;  // b = μb + g; p -= lr·b
    case Optimizer::kAdam:
      rule = {12, 7, 5};
      break;  // m, v, bias correction, update
    case Optimizer::kAdamW:
      rule = {14, 7, 6};
      break;  // Adam plus decoupled weight decay
  }
  constexpr double kTensorsPerLaunch = 64;
  const double launches =
      std::ceil(static_cast<double>(parameter_tensors) / kTensorsPerLaunch) * rule.stages;
  return PassCost{0, rule.flops * parameter_count,
                  rule.tensors_moved * parameter_count * bytes_per_parameter, launches};
}

}  // namespace nnergy::graph
