#include "nnergy/graph/op_fusion.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

namespace nnergy::graph {

// What is deliberately NOT fused: scaling and masking in front of a Softmax.
//
// Hand-written eager attention launches them as separate kernels. Hugging Face BERT ("eager"
// attention) computes scores = matmul(q, kᵀ); scores = scores / sqrt(d) (one kernel); scores =
// scores + attention_mask (one kernel); softmax (one kernel). GPT-2 adds torch.where(causal,
// scores, finfo.min) as a kernel of its own. nn.MultiheadAttention with need_weights=True
// scales q before the product and folds an additive mask into torch.baddbmm (the GEMM's
// epilogue), so there the Add belongs to the MatMul, not to the Softmax. PyTorch's one
// masked-softmax kernel (torch._masked_softmax) runs only on the inference fast path of
// nn.TransformerEncoderLayer / nn.MultiheadAttention, which does not export to ONNX as
// Add/Where → Softmax, and the flash / memory-efficient kernels of scaled_dot_product_attention
// fuse the whole MatMul-Softmax-MatMul block, which is a different transform. So a
// Div/Mul/Add/Where before a Softmax stays a kernel of its own here. The one softmax fusion
// done is the exporter's own decomposition of a single torch.softmax call (below).

namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// A recognised group of nodes and the node that replaces it.
struct Group {
  std::vector<std::size_t> nodes;   // indices into the original network's nodes
  std::string op_type;              // the fused node's type
  std::vector<std::size_t> inputs;  // external tensors read by the group: the fused node's inputs
  std::size_t output = kNone;       // output of the group's last node: the fused node's output
  Attributes attributes;
};

bool is_commutative(std::string_view op) { return op == "Add" || op == "Mul"; }

std::optional<double> float_attribute(const Node& node, const std::string& key) {
  auto it = node.attributes.find(key);
  if (it == node.attributes.end()) return std::nullopt;
  if (const auto* v = std::get_if<double>(&it->second)) return *v;
  if (const auto* v = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*v);
  return std::nullopt;
}

bool near(double value, double expected) { return std::abs(value - expected) <= 1e-4; }

// Finds the groups in one network. Every query answers kNone (or nullopt) for a missing
// tensor or node, so that matchers can chain them without checking each step.
class Matcher {
 public:
  explicit Matcher(const Network& network)
      : network_(network),
        nodes_(network.nodes()),
        producer_(network.tensors().size(), kNone),
        readers_(network.tensors().size()),
        claimed_(network.nodes().size(), false) {
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      for (std::size_t t : nodes_[n].inputs) {
        if (readers_[t].empty() || readers_[t].back() != n) readers_[t].push_back(n);
      }
      for (std::size_t t : nodes_[n].outputs) producer_[t] = n;
    }
  }

  const std::vector<std::size_t>& readers(std::size_t tensor) const { return readers_[tensor]; }
  std::size_t producer(std::size_t tensor) const { return producer_[tensor]; }

  // Every group, in the order of their first recognised node; no node is in two groups.
  std::vector<Group> find_groups() {
    std::vector<Group> groups;
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      if (claimed_[n]) continue;
      const std::string& op = nodes_[n].op_type;
      std::optional<Group> group;
      if (op == "ReduceMean") {
        group = layer_norm(n);
      } else if (op == "Erf") {
        group = gelu_erf(n);
      } else if (op == "Tanh") {
        group = gelu_tanh(n);
      } else if (op == "Sigmoid") {
        group = silu(n);
      } else if (op == "HardSigmoid") {
        group = hard_sigmoid_times_input(n);
      } else if (op == "Clip") {
        group = hard_sigmoid_or_swish(n);
      } else if (op == "ReduceMax") {
        group = softmax(n);
      } else if (op == "Softmax" || op == "LogSoftmax") {
        group = transposed_softmax(n);
      }
      if (group && is_self_contained(*group)) {
        for (std::size_t member : group->nodes) claimed_[member] = true;
        groups.push_back(std::move(*group));
      }
    }
    return groups;
  }

 private:
  // The single output of node `n`.
  std::size_t out(std::size_t n) const {
    return n != kNone && nodes_[n].outputs.size() == 1 ? nodes_[n].outputs[0] : kNone;
  }

  // The free node of type `op` that produces `tensor`.
  std::size_t producer_of(std::size_t tensor, std::string_view op) const {
    if (tensor == kNone) return kNone;
    const std::size_t p = producer_[tensor];
    return p != kNone && !claimed_[p] && nodes_[p].op_type == op ? p : kNone;
  }

  // The free node of type `op` that is the only reader of `tensor`.
  std::size_t sole_reader(std::size_t tensor, std::string_view op) const {
    if (tensor == kNone || readers_[tensor].size() != 1) return kNone;
    const std::size_t r = readers_[tensor][0];
    return !claimed_[r] && nodes_[r].op_type == op ? r : kNone;
  }

  // A value fixed when the network is exported: produced by a Constant node, or an
  // initializer / non-data graph input (scalar constants of a folded export are initializers).
  bool is_fixed(std::size_t tensor) const {
    const std::size_t p = producer_[tensor];
    // torch.onnx.export writes a parameter equal to another (untrained weights) as an Identity
    // of the first.
    if (p != kNone && nodes_[p].op_type == "Identity" && nodes_[p].inputs.size() == 1)
      return is_fixed(nodes_[p].inputs[0]);
    if (p != kNone) return nodes_[p].op_type == "Constant";
    return network_.tensor(tensor).role != TensorRole::kDataInput;
  }

  // A fixed scalar: the 2, eps, √2, 0.5, 3, 6 of the patterns (values are not in the IR).
  bool is_scalar_constant(std::size_t tensor) const {
    return tensor != kNone && network_.tensor(tensor).elements() == 1 && is_fixed(tensor);
  }

  // For binary node `n` of type `op` with one scalar-constant operand (the second one unless
  // `op` commutes), the other operand.
  std::size_t beside_constant(std::size_t n, std::string_view op) const {
    if (n == kNone) return kNone;
    const Node& node = nodes_[n];
    if (node.op_type != op || node.inputs.size() != 2) return kNone;
    const bool first = is_scalar_constant(node.inputs[0]);
    const bool second = is_scalar_constant(node.inputs[1]);
    if (second && !first) return node.inputs[0];
    if (first && !second && is_commutative(op)) return node.inputs[1];
    return kNone;
  }

  // For binary node `n` of type `op` reading `known` (first, or either when `op` commutes), the
  // other operand.
  std::size_t beside(std::size_t n, std::string_view op, std::size_t known) const {
    if (n == kNone || known == kNone) return kNone;
    const Node& node = nodes_[n];
    if (node.op_type != op || node.inputs.size() != 2) return kNone;
    if (node.inputs[0] == known) return node.inputs[1];
    if (is_commutative(op) && node.inputs[1] == known) return node.inputs[0];
    return kNone;
  }

  // The axes a keepdims reduction node averages over, sorted and non-negative; from the
  // `axes` attribute (opset < 18) or, when the axes are an input, from the shapes.
  std::optional<std::vector<std::int64_t>> reduced_axes(std::size_t n) const {
    const Node& node = nodes_[n];
    if (node.inputs.empty() || out(n) == kNone || node.int_attribute("keepdims", 1) != 1) {
      return std::nullopt;
    }
    const Shape& in = network_.tensor(node.inputs[0]).shape;
    const Shape& result = network_.tensor(out(n)).shape;
    const auto rank = static_cast<std::int64_t>(in.size());
    if (result.size() != in.size() || rank == 0) return std::nullopt;
    std::vector<std::int64_t> axes = node.ints_attribute("axes", {});
    if (node.inputs.size() >= 2) {
      if (!axes.empty() || !is_fixed(node.inputs[1])) return std::nullopt;
      for (std::int64_t i = 0; i < rank; ++i) {
        if (in[i] != result[i]) axes.push_back(i);
      }
      if (axes.empty()) return std::nullopt;  // only size-1 axes reduced: ambiguous
    }
    if (axes.empty()) return std::nullopt;  // reduce-all: not a per-row normalisation
    for (std::int64_t& axis : axes) {
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) return std::nullopt;
    }
    std::sort(axes.begin(), axes.end());
    for (std::int64_t axis : axes) {
      if (result[axis] != 1) return std::nullopt;
    }
    return axes;
  }

  // The first axis when reduction `n` averages over a trailing block of axes (what
  // nn.LayerNorm's normalized_shape means).
  std::optional<std::int64_t> trailing_axis(std::size_t n) const {
    const auto axes = reduced_axes(n);
    if (!axes) return std::nullopt;
    const auto rank = static_cast<std::int64_t>(network_.tensor(nodes_[n].inputs[0]).shape.size());
    for (std::size_t i = 0; i < axes->size(); ++i) {
      if ((*axes)[i] != rank - static_cast<std::int64_t>(axes->size() - i)) return std::nullopt;
    }
    return axes->front();
  }

  // LayerNorm: ReduceMean → Sub → [Cast] → Pow(2) | Mul(d, d) → ReduceMean → Add(eps) → Sqrt
  // → Div → [Cast] → [Mul(gamma) → [Add(beta)]]. The Casts are what torch writes for fp16.
  std::optional<Group> layer_norm(std::size_t mean_node) const {
    const std::optional<std::int64_t> axis = trailing_axis(mean_node);
    if (!axis) return std::nullopt;
    const std::size_t x = nodes_[mean_node].inputs[0];
    const std::size_t mean = out(mean_node);
    Group g;
    g.op_type = "LayerNormalization";
    const std::size_t sub = sole_reader(mean, "Sub");
    if (sub == kNone || nodes_[sub].inputs != std::vector<std::size_t>{x, mean})
      return std::nullopt;
    g.nodes = {mean_node, sub};
    std::size_t centred = out(sub);
    const std::size_t to_float = sole_reader(centred, "Cast");
    if (to_float != kNone) {
      g.nodes.push_back(to_float);
      centred = out(to_float);
    }
    if (centred == kNone || readers_[centred].size() != 2) return std::nullopt;
    std::size_t square = kNone;
    std::size_t div = kNone;
    for (std::size_t r : readers_[centred]) {
      const Node& node = nodes_[r];
      if (node.op_type == "Div" && node.inputs.size() == 2 && node.inputs[0] == centred) {
        div = r;
      } else if (node.op_type == "Pow" && beside_constant(r, "Pow") == centred) {
        square = r;
      } else if (node.op_type == "Mul" &&
                 node.inputs == std::vector<std::size_t>{centred, centred}) {
        square = r;
      }
    }
    const std::size_t variance = sole_reader(out(square), "ReduceMean");
    if (div == kNone || variance == kNone || trailing_axis(variance) != axis) return std::nullopt;
    const std::size_t add_eps = sole_reader(out(variance), "Add");
    if (beside_constant(add_eps, "Add") != out(variance)) return std::nullopt;
    const std::size_t sqrt = sole_reader(out(add_eps), "Sqrt");
    if (sqrt == kNone || sole_reader(out(sqrt), "Div") != div ||
        nodes_[div].inputs[1] != out(sqrt)) {
      return std::nullopt;
    }
    g.nodes.insert(g.nodes.end(), {square, variance, add_eps, sqrt, div});
    std::size_t y = out(div);
    if (to_float != kNone) {
      const std::size_t back = sole_reader(y, "Cast");
      if (back != kNone) {
        g.nodes.push_back(back);
        y = out(back);
      }
    }
    g.inputs = {x};
    // The affine part only when its operands have the normalised shape (nn.LayerNorm's weight
    // and bias), so that an unrelated scaling after a bare normalisation stays separate.
    const Shape& x_shape = network_.tensor(x).shape;
    std::int64_t normalised = 1;
    for (auto i = static_cast<std::size_t>(*axis); i < x_shape.size(); ++i)
      normalised *= x_shape[i];
    auto is_affine_operand = [&](std::size_t t) {
      return t != kNone && t != y && is_fixed(t) && network_.tensor(t).elements() == normalised;
    };
    const std::size_t scale = sole_reader(y, "Mul");
    const std::size_t gamma = beside(scale, "Mul", y);
    if (is_affine_operand(gamma)) {
      g.nodes.push_back(scale);
      g.inputs.push_back(gamma);
      y = out(scale);
      const std::size_t shift = sole_reader(y, "Add");
      const std::size_t beta = beside(shift, "Add", y);
      if (is_affine_operand(beta)) {
        g.nodes.push_back(shift);
        g.inputs.push_back(beta);
        y = out(shift);
      }
    }
    g.output = y;
    g.attributes["axis"] = *axis;
    return g;
  }

  // After a = 1 + erf(·) or 1 + tanh(·): the products with x and with 0.5, in the orders
  // exporters and hand-written code give them: (x·a)·0.5 (torch's symbolic), x·(a·0.5), and
  // (x·0.5)·a. Appends the nodes and returns the final tensor.
  std::size_t gelu_tail(std::size_t a, std::size_t x, std::vector<std::size_t>* nodes) const {
    const std::size_t first = sole_reader(a, "Mul");
    const std::size_t other = beside(first, "Mul", a);
    if (other == kNone) return kNone;
    if (other == x || is_scalar_constant(other)) {
      const std::size_t second = sole_reader(out(first), "Mul");
      const bool ok = other == x ? beside_constant(second, "Mul") == out(first)
                                 : beside(second, "Mul", out(first)) == x;
      if (!ok) return kNone;
      nodes->insert(nodes->end(), {first, second});
      return out(second);
    }
    const std::size_t half = producer_of(other, "Mul");
    if (half == kNone || beside_constant(half, "Mul") != x) return kNone;
    nodes->insert(nodes->end(), {half, first});
    return out(first);
  }

  // GELU, erf form: Div(x, √2) | Mul(x, 1/√2) → Erf → Add(1) → tail.
  std::optional<Group> gelu_erf(std::size_t erf) const {
    if (nodes_[erf].inputs.size() != 1) return std::nullopt;
    const std::size_t scaled = nodes_[erf].inputs[0];
    std::size_t scale = producer_of(scaled, "Div");
    std::size_t x = beside_constant(scale, "Div");
    if (x == kNone) {
      scale = producer_of(scaled, "Mul");
      x = beside_constant(scale, "Mul");
    }
    if (x == kNone) return std::nullopt;
    const std::size_t plus_one = sole_reader(out(erf), "Add");
    if (beside_constant(plus_one, "Add") != out(erf)) return std::nullopt;
    Group g;
    g.op_type = "Gelu";
    g.nodes = {scale, erf, plus_one};
    g.output = gelu_tail(out(plus_one), x, &g.nodes);
    if (g.output == kNone) return std::nullopt;
    g.inputs = {x};
    return g;
  }

  // x³ as Pow(x, 3) or Mul(x, Mul(x, x)) (either operand order); the nodes, or none.
  std::vector<std::size_t> cube_of(std::size_t cube, std::size_t x) const {
    const std::size_t pow = producer_of(cube, "Pow");
    if (pow != kNone) {
      if (beside_constant(pow, "Pow") == x) return {pow};
      return {};
    }
    const std::size_t outer = producer_of(cube, "Mul");
    const std::size_t square = producer_of(beside(outer, "Mul", x), "Mul");
    if (square == kNone || nodes_[square].inputs != std::vector<std::size_t>{x, x}) return {};
    return {square, outer};
  }

  // GELU, tanh form: x³ → Mul(0.044715) → Add(x) → Mul(√(2/π)) → Tanh → Add(1) → tail.
  std::optional<Group> gelu_tanh(std::size_t tanh) const {
    if (nodes_[tanh].inputs.size() != 1) return std::nullopt;
    const std::size_t scale = producer_of(nodes_[tanh].inputs[0], "Mul");
    const std::size_t sum = producer_of(beside_constant(scale, "Mul"), "Add");
    if (sum == kNone || nodes_[sum].inputs.size() != 2) return std::nullopt;
    for (std::size_t k = 0; k < 2; ++k) {
      const std::size_t x = nodes_[sum].inputs[k];
      const std::size_t kappa = producer_of(nodes_[sum].inputs[1 - k], "Mul");
      const std::vector<std::size_t> cube = cube_of(beside_constant(kappa, "Mul"), x);
      if (cube.empty()) continue;
      const std::size_t plus_one = sole_reader(out(tanh), "Add");
      if (beside_constant(plus_one, "Add") != out(tanh)) return std::nullopt;
      Group g;
      g.op_type = "Gelu";
      g.nodes = cube;
      g.nodes.insert(g.nodes.end(), {kappa, sum, scale, tanh, plus_one});
      g.output = gelu_tail(out(plus_one), x, &g.nodes);
      if (g.output == kNone) return std::nullopt;
      g.inputs = {x};
      g.attributes["approximate"] = std::string("tanh");
      return g;
    }
    return std::nullopt;
  }

  // SiLU: Sigmoid(x) → Mul(x, ·). A gate a·sigmoid(b) with a ≠ b is not a SiLU.
  std::optional<Group> silu(std::size_t sigmoid) const {
    if (nodes_[sigmoid].inputs.size() != 1) return std::nullopt;
    return gate_times_input(sigmoid, "Swish");
  }

  // Gate(x) → Mul(x, gate) as one `op_type` node: the gate's input must be the Mul's other
  // operand.
  std::optional<Group> gate_times_input(std::size_t gate, const char* op_type) const {
    const std::size_t x = nodes_[gate].inputs[0];
    const std::size_t mul = sole_reader(out(gate), "Mul");
    if (beside(mul, "Mul", out(gate)) != x) return std::nullopt;
    Group g;
    g.op_type = op_type;
    g.nodes = {gate, mul};
    g.inputs = {x};
    g.output = out(mul);
    return g;
  }

  // HardSwish as torch exports it below opset 14: HardSigmoid(x, alpha=1/6) → Mul(x, ·).
  std::optional<Group> hard_sigmoid_times_input(std::size_t hard_sigmoid) const {
    const Node& node = nodes_[hard_sigmoid];
    const std::optional<double> alpha = float_attribute(node, "alpha");
    const double beta = float_attribute(node, "beta").value_or(0.5);
    if (node.inputs.size() != 1 || !alpha || !near(*alpha, 1.0 / 6.0) || !near(beta, 0.5)) {
      return std::nullopt;
    }
    return gate_times_input(hard_sigmoid, "HardSwish");
  }

  // Clip(0, 6) as relu6 exports: bounds as scalar-constant inputs (opset ≥ 11) or as
  // attributes (opset < 11), whose values can be checked.
  bool is_relu6(std::size_t clip) const {
    const Node& node = nodes_[clip];
    if (node.inputs.size() == 3) {
      return is_scalar_constant(node.inputs[1]) && is_scalar_constant(node.inputs[2]);
    }
    const std::optional<double> low = float_attribute(node, "min");
    const std::optional<double> high = float_attribute(node, "max");
    return node.inputs.size() == 1 && low && high && near(*low, 0) && near(*high, 6);
  }

  // Division by 6 or multiplication by 1/6 of `tensor`, as its only reader.
  std::size_t sixth_of(std::size_t tensor) const {
    const std::size_t div = sole_reader(tensor, "Div");
    if (div != kNone) return beside_constant(div, "Div") == tensor ? div : kNone;
    const std::size_t mul = sole_reader(tensor, "Mul");
    return beside_constant(mul, "Mul") == tensor ? mul : kNone;
  }

  // Add(x, 3) → Clip(0, 6) → /6 ⇒ HardSigmoid; then → Mul(x, ·) ⇒ HardSwish; or
  // Add(x, 3) → Clip(0, 6) → Mul(x, ·) → /6 ⇒ HardSwish.
  std::optional<Group> hard_sigmoid_or_swish(std::size_t clip) const {
    if (!is_relu6(clip)) return std::nullopt;
    const std::size_t add = producer_of(nodes_[clip].inputs[0], "Add");
    const std::size_t x = beside_constant(add, "Add");
    if (x == kNone) return std::nullopt;
    const std::size_t clipped = out(clip);
    Group g;
    g.inputs = {x};
    g.nodes = {add, clip};
    const std::size_t sixth = sixth_of(clipped);
    if (sixth != kNone) {
      g.nodes.push_back(sixth);
      const std::size_t mul = sole_reader(out(sixth), "Mul");
      if (beside(mul, "Mul", out(sixth)) == x) {
        g.nodes.push_back(mul);
        g.op_type = "HardSwish";
        g.output = out(mul);
        return g;
      }
      g.op_type = "HardSigmoid";
      g.output = out(sixth);
      g.attributes["alpha"] = 1.0 / 6.0;
      g.attributes["beta"] = 0.5;
      return g;
    }
    const std::size_t mul = sole_reader(clipped, "Mul");
    if (beside(mul, "Mul", clipped) != x) return std::nullopt;
    const std::size_t divide = sixth_of(out(mul));
    if (divide == kNone) return std::nullopt;
    g.nodes.insert(g.nodes.end(), {mul, divide});
    g.op_type = "HardSwish";
    g.output = out(divide);
    return g;
  }

  // Softmax as torch writes it when the input rank is unknown at export: ReduceMax → Sub →
  // Exp → ReduceSum → Div, over one axis. Eager torch.softmax is one kernel.
  std::optional<Group> softmax(std::size_t max_node) const {
    const auto axes = reduced_axes(max_node);
    if (!axes || axes->size() != 1) return std::nullopt;
    const std::size_t x = nodes_[max_node].inputs[0];
    const std::size_t sub = sole_reader(out(max_node), "Sub");
    if (sub == kNone || nodes_[sub].inputs != std::vector<std::size_t>{x, out(max_node)}) {
      return std::nullopt;
    }
    const std::size_t exp = sole_reader(out(sub), "Exp");
    const std::size_t e = out(exp);
    if (e == kNone || readers_[e].size() != 2) return std::nullopt;
    std::size_t sum = kNone;
    for (std::size_t r : readers_[e]) {
      if (nodes_[r].op_type == "ReduceSum" && nodes_[r].inputs[0] == e) sum = r;
    }
    if (sum == kNone || reduced_axes(sum) != axes) return std::nullopt;
    const std::size_t div = sole_reader(out(sum), "Div");
    if (div == kNone || nodes_[div].inputs != std::vector<std::size_t>{e, out(sum)}) {
      return std::nullopt;
    }
    Group g;
    g.op_type = "Softmax";
    g.nodes = {max_node, sub, exp, sum, div};
    g.inputs = {x};
    g.output = out(div);
    g.attributes["axis"] = axes->front();
    return g;
  }

  // Softmax over a non-last axis as torch exports it below opset 13, where ONNX's axis means
  // "coerce to 2-D": Transpose(swap axis, last) → Softmax(last) → the same Transpose. Eager
  // torch.softmax(x, dim) runs one kernel over any axis, with no copies.
  std::optional<Group> transposed_softmax(std::size_t soft) const {
    const Node& node = nodes_[soft];
    if (node.inputs.size() != 1) return std::nullopt;
    const std::size_t before = producer_of(node.inputs[0], "Transpose");
    const std::size_t after = sole_reader(out(soft), "Transpose");
    if (before == kNone || after == kNone) return std::nullopt;
    const std::vector<std::int64_t> perm = nodes_[before].ints_attribute("perm", {});
    if (perm.size() < 2 || nodes_[after].ints_attribute("perm", {}) != perm) return std::nullopt;
    const auto rank = static_cast<std::int64_t>(perm.size());
    const std::int64_t axis = node.int_attribute("axis", -1);
    if (axis != -1 && axis != rank - 1) return std::nullopt;
    // perm must swap one axis with the last and leave the others in place.
    const std::int64_t swapped = perm.back();
    for (std::int64_t i = 0; i < rank; ++i) {
      const std::int64_t expected = i == swapped ? rank - 1 : i == rank - 1 ? swapped : i;
      if (perm[i] != expected) return std::nullopt;
    }
    if (swapped == rank - 1) return std::nullopt;
    Group g;
    g.op_type = node.op_type;
    g.nodes = {before, soft, after};
    g.inputs = {nodes_[before].inputs.at(0)};
    g.output = out(after);
    g.attributes["axis"] = swapped;
    return g;
  }

  // The group can be replaced by one node: its nodes are free and distinct, each has one
  // output, every intermediate is read inside the group only (and by someone: a tensor no
  // node reads is a graph output), and every tensor it reads is produced inside, is one of its
  // inputs, or is fixed (a constant operand that the fused node absorbs).
  bool is_self_contained(const Group& g) const {
    if (g.output == kNone || g.nodes.empty()) return false;
    if (std::find(g.nodes.begin(), g.nodes.end(), kNone) != g.nodes.end()) return false;
    const std::set<std::size_t> members(g.nodes.begin(), g.nodes.end());
    if (members.size() != g.nodes.size()) return false;
    const std::size_t last = *members.rbegin();
    for (std::size_t n : members) {
      if (claimed_[n] || nodes_[n].outputs.size() != 1) return false;
      const std::size_t t = nodes_[n].outputs[0];
      if (n == last) {
        if (t != g.output) return false;
        continue;
      }
      if (readers_[t].empty()) return false;
      for (std::size_t r : readers_[t]) {
        if (members.count(r) == 0) return false;
      }
    }
    for (std::size_t n : members) {
      for (std::size_t t : nodes_[n].inputs) {
        const std::size_t p = producer_[t];
        const bool inside = p != kNone && members.count(p) > 0;
        const bool listed = std::find(g.inputs.begin(), g.inputs.end(), t) != g.inputs.end();
        if (inside && listed) return false;
        if (!inside && !listed && !is_fixed(t)) return false;
      }
    }
    return true;
  }

  const Network& network_;
  const std::vector<Node>& nodes_;
  std::vector<std::size_t> producer_;              // tensor → producing node, or kNone
  std::vector<std::vector<std::size_t>> readers_;  // tensor → distinct reading nodes, in order
  std::vector<bool> claimed_;                      // node → already in a group
};

std::vector<std::string_view> path_segments(std::string_view path) {
  std::vector<std::string_view> segments;
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    segments.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return segments;
}

// The longest module path that every node of the group lies in.
std::string common_module_path(const std::vector<Node>& nodes, const Group& g) {
  std::vector<std::string_view> common = path_segments(nodes[g.nodes.front()].module_path);
  for (std::size_t n : g.nodes) {
    const std::vector<std::string_view> segments = path_segments(nodes[n].module_path);
    std::size_t shared = 0;
    while (shared < common.size() && shared < segments.size() &&
           common[shared] == segments[shared]) {
      ++shared;
    }
    common.resize(shared);
  }
  std::string path;
  for (std::string_view segment : common) {
    if (!path.empty()) path += '/';
    path += segment;
  }
  return path;
}

// The last node's scope plus the fused type: "/a/b/Add_1" → "/a/b/LayerNormalization".
std::string fused_name(const std::string& last_name, const std::string& op_type) {
  const std::size_t slash = last_name.rfind('/');
  if (slash == std::string::npos) return op_type + "_" + last_name;
  return last_name.substr(0, slash + 1) + op_type;
}

}  // namespace

std::size_t FusionReport::total_groups() const {
  std::size_t total = 0;
  for (const auto& [op, count] : fused) total += count.groups;
  return total;
}

std::string FusionReport::summary() const {
  if (fused.empty()) return "no decomposed operators fused";
  std::string text = "fused";
  bool first = true;
  for (const auto& [op, count] : fused) {
    text += first ? " " : ", ";
    first = false;
    text +=
        std::to_string(count.groups) + " " + op + " (" + std::to_string(count.nodes) + " nodes)";
  }
  return text;
}

Network fuse_decomposed_ops(const Network& network, FusionReport* report) {
  Matcher matcher(network);
  const std::vector<Group> groups = matcher.find_groups();
  const std::vector<Node>& nodes = network.nodes();
  const std::size_t tensor_count = network.tensors().size();

  std::vector<std::size_t> group_of(nodes.size(), kNone);
  std::vector<std::size_t> last_of(groups.size(), 0);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (std::size_t n : groups[i].nodes) {
      group_of[n] = i;
      last_of[i] = std::max(last_of[i], n);
    }
  }

  // The nodes of the new network, in the old order; a group's node takes the place of its last
  // node, after which all its inputs exist and before every reader of its output.
  std::vector<Node> kept;
  std::set<std::string> names;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (group_of[n] == kNone) names.insert(nodes[n].name);
  }
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (group_of[n] == kNone) {
      kept.push_back(nodes[n]);
      continue;
    }
    const Group& g = groups[group_of[n]];
    if (n != last_of[group_of[n]]) continue;
    Node fused;
    fused.op_type = g.op_type;
    fused.module_path = common_module_path(nodes, g);
    fused.name = fused_name(nodes[n].name, g.op_type);
    for (int suffix = 1; names.count(fused.name) > 0; ++suffix) {
      fused.name = fused_name(nodes[n].name, g.op_type) + "_" + std::to_string(suffix);
    }
    names.insert(fused.name);
    fused.inputs = g.inputs;
    fused.outputs = {g.output};
    fused.attributes = g.attributes;
    kept.push_back(std::move(fused));
  }

  // Constant nodes whose every reader was fused away go too.
  std::vector<bool> read(tensor_count, false);
  for (const Node& node : kept) {
    for (std::size_t t : node.inputs) read[t] = true;
  }
  kept.erase(std::remove_if(kept.begin(), kept.end(),
                            [&](const Node& node) {
                              if (node.op_type != "Constant" || node.outputs.empty()) return false;
                              return std::all_of(node.outputs.begin(), node.outputs.end(),
                                                 [&](std::size_t t) {
                                                   return !read[t] && !matcher.readers(t).empty();
                                                 });
                            }),
             kept.end());

  // Tensors that a remaining node touches, plus graph inputs nobody read before either.
  std::vector<bool> used(tensor_count, false);
  for (const Node& node : kept) {
    for (std::size_t t : node.inputs) used[t] = true;
    for (std::size_t t : node.outputs) used[t] = true;
  }
  Network result;
  result.name = network.name;
  result.source = network.source;
  result.description = network.description;
  result.batch = network.batch;
  result.import_notes = network.import_notes;
  std::vector<std::size_t> new_index(tensor_count, kNone);
  for (std::size_t t = 0; t < tensor_count; ++t) {
    const bool unused_input = matcher.producer(t) == kNone && matcher.readers(t).empty();
    if (used[t] || unused_input) new_index[t] = result.add_tensor(network.tensor(t));
  }
  for (Node& node : kept) {
    for (std::size_t& t : node.inputs) t = new_index[t];
    for (std::size_t& t : node.outputs) t = new_index[t];
    result.add_node(std::move(node));
  }
  result.propagate_tensor_flags();

  if (report != nullptr) {
    report->fused.clear();
    for (const Group& g : groups) {
      FusionReport::Count& count = report->fused[g.op_type];
      count.groups += 1;
      count.nodes += g.nodes.size();
    }
  }
  return result;
}

}  // namespace nnergy::graph
