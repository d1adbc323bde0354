#include "nnergy/graph/batch_axis.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>

#include "nnergy/graph/constant_tensor.h"
#include "nnergy/graph/shape_folding.h"

namespace nnergy::graph {

namespace {

using Dims = std::vector<std::int64_t>;

// One factor of an axis; an axis is the product of its factors, outer to inner.
struct Factor {
  std::int64_t size = 1;
  bool batch = false;
};
using Axis = std::vector<Factor>;
using Factored = std::vector<Axis>;

std::int64_t product(const Axis& axis) {
  std::int64_t p = 1;
  for (const Factor& f : axis) p *= f.size;
  return p;
}

std::optional<std::size_t> batch_position(const Factored& t) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    for (const Factor& f : t[i]) {
      if (f.batch) return i;
    }
  }
  return std::nullopt;
}

Factored plain(const Dims& shape) {
  Factored out;
  for (std::int64_t d : shape) out.push_back(Axis{Factor{d, false}});
  return out;
}

// An axis of another size that keeps no factor structure (a sliced or concatenated axis).
Axis resized(std::int64_t size) { return Axis{Factor{size, false}}; }

std::int64_t normalize_axis(std::int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

// The outcome of one node: its outputs' factored shapes (empty entry: output not carried), or
// why the axis is mixed, or that no rule applies.
struct Step {
  enum class Kind { kCarried, kMixed, kUnknown } kind = Kind::kCarried;
  std::vector<std::optional<Factored>> outputs;
  std::string reason;
  std::optional<std::vector<TargetDim>> target;  // for Reshape and Expand
};

Step mixed(std::string reason) {
  Step s;
  s.kind = Step::Kind::kMixed;
  s.reason = std::move(reason);
  return s;
}

Step unknown(std::string reason) {
  Step s;
  s.kind = Step::Kind::kUnknown;
  s.reason = std::move(reason);
  return s;
}

Step carried_all(std::size_t outputs, const Factored& t) {
  Step s;
  s.outputs.assign(outputs, t);
  return s;
}

// Regroups the factors of `in` into the dimensions of `out_shape` (a reshape): takes factors in
// order while they divide the dimension, splitting a non-batch factor where a boundary falls
// inside it. nullopt when a boundary falls inside the batch factor or the sizes do not match.
std::optional<Factored> regroup(const Factored& in, const Dims& out_shape) {
  std::vector<Factor> factors;
  for (const Axis& a : in) {
    for (const Factor& f : a) {
      if (f.size != 1 || f.batch) factors.push_back(f);
    }
  }
  Factored out;
  std::size_t next = 0;
  for (const std::int64_t dim : out_shape) {
    Axis axis;
    std::int64_t p = 1;
    // A batch of 1 joins the dimension that follows it (x.view(S, N·H, D) puts N in front of
    // H), unless it is a dimension of 1 of its own (x.view(1, -1)).
    if (dim == 1 && next < factors.size() && factors[next].size == 1) {
      axis.push_back(factors[next++]);
    }
    while (next < factors.size() && p < dim) {
      const Factor& f = factors[next];
      if (dim % (p * f.size) == 0 && p * f.size <= dim) {
        axis.push_back(f);
        p *= f.size;
        ++next;
        continue;
      }
      if (p < dim && !f.batch && (dim / p) > 0 && f.size % (dim / p) == 0 && dim % p == 0) {
        const std::int64_t need = dim / p;
        axis.push_back(Factor{need, false});
        factors[next].size = f.size / need;
        p *= need;
      }
      break;
    }
    if (p != dim) return std::nullopt;
    out.push_back(std::move(axis));
  }
  if (next != factors.size()) return std::nullopt;  // a factor left over: not a reshape of it
  return out;
}

class Tracer {
 public:
  Tracer(const onnx::ModelProto& model, const std::set<std::string>& data_inputs, std::size_t axis)
      : model_(model), shapes_(static_shapes(model)), opset_(default_opset(model)) {
    trace_.axis = axis;
    for (const auto& init : model.graph().initializer()) {
      if (auto v = read_constant(init)) constants_.emplace(init.name(), std::move(*v));
    }
    for (const auto& node : model.graph().node()) {
      if (node.op_type() != "Constant" || node.output_size() != 1) continue;
      if (auto v = constant_node_value(node)) constants_.emplace(node.output(0), std::move(*v));
    }
    for (const auto& input : model.graph().input()) {
      if (data_inputs.count(input.name()) == 0) continue;
      const auto it = shapes_.find(input.name());
      if (it == shapes_.end() || it->second.size() <= axis) continue;
      const std::int64_t size = it->second[axis];
      if (trace_.inputs.empty()) trace_.size = size;
      if (size != trace_.size) continue;
      Factored t = plain(it->second);
      t[axis] = Axis{Factor{size, true}};
      carried_[input.name()] = std::move(t);
      trace_.inputs.push_back(input.name());
    }
  }

  BatchAxisTrace run() {
    if (trace_.inputs.empty()) {
      trace_.known = false;
      trace_.reason = "no data input has this axis";
      return trace_;
    }
    const auto& nodes = model_.graph().node();
    for (int i = 0; i < nodes.size(); ++i) {
      const onnx::NodeProto& node = nodes[i];
      bool reads = false;
      for (const auto& in : node.input()) reads = reads || carried_.count(in) > 0;
      if (!reads) continue;
      Step step = apply(node);
      if (step.kind != Step::Kind::kCarried) {
        trace_.known = step.kind == Step::Kind::kMixed;
        trace_.independent = false;
        trace_.reason = fmt::format("node '{}' ({}) {}", node.name(), node.op_type(), step.reason);
        return trace_;
      }
      if (step.target) trace_.targets[i] = *step.target;
      for (int k = 0; k < node.output_size() && k < static_cast<int>(step.outputs.size()); ++k) {
        if (node.output(k).empty() || !step.outputs[k]) continue;
        // A factored shape must still describe the tensor: its sizes are the inferred ones.
        const auto shape = shapes_.find(node.output(k));
        if (shape != shapes_.end() && !matches(*step.outputs[k], shape->second)) {
          trace_.known = false;
          trace_.reason = fmt::format("node '{}' ({}): output {} does not match its inferred shape",
                                      node.name(), node.op_type(), k);
          return trace_;
        }
        if (!batch_position(*step.outputs[k])) {
          trace_.known = true;
          trace_.reason = fmt::format("node '{}' ({}) drops the axis", node.name(), node.op_type());
          return trace_;
        }
        carried_[node.output(k)] = std::move(*step.outputs[k]);
      }
    }
    trace_.independent = true;
    for (const auto& output : model_.graph().output()) {
      const auto it = carried_.find(output.name());
      if (it != carried_.end()) trace_.output_axes[output.name()] = *batch_position(it->second);
    }
    return trace_;
  }

 private:
  static bool matches(const Factored& t, const Dims& shape) {
    if (t.size() != shape.size()) return false;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (product(t[i]) != shape[i]) return false;
    }
    return true;
  }

  std::optional<Dims> shape_of(const std::string& name) const {
    if (name.empty()) return std::nullopt;
    const auto it = shapes_.find(name);
    if (it == shapes_.end()) return std::nullopt;
    return it->second;
  }

  std::optional<Dims> constant_ints(const onnx::NodeProto& node, int input) const {
    if (input >= node.input_size() || node.input(input).empty()) return std::nullopt;
    const auto it = constants_.find(node.input(input));
    if (it == constants_.end()) return std::nullopt;
    return it->second.as_integers();
  }

  static std::optional<Dims> ints_attribute(const onnx::NodeProto& node, const std::string& name) {
    for (const auto& a : node.attribute()) {
      if (a.name() == name) return Dims(a.ints().begin(), a.ints().end());
    }
    return std::nullopt;
  }

  static std::int64_t int_attribute(const onnx::NodeProto& node, const std::string& name,
                                    std::int64_t fallback) {
    for (const auto& a : node.attribute()) {
      if (a.name() == name) return a.i();
    }
    return fallback;
  }

  // Where the batch of input `k` of `node` is, if it carries it.
  std::optional<std::size_t> batch_of(const onnx::NodeProto& node, int k) const {
    if (k >= node.input_size()) return std::nullopt;
    const auto it = carried_.find(node.input(k));
    if (it == carried_.end()) return std::nullopt;
    return batch_position(it->second);
  }

  const Factored& factored(const onnx::NodeProto& node, int k) const {
    return carried_.at(node.input(k));
  }

  // The carried inputs of a broadcasting operator, right-aligned to `out_shape`; all must put
  // the batch on the same output axis, which must not be broadcast.
  Step broadcast(const onnx::NodeProto& node, const Dims& out_shape, int inputs) {
    const std::size_t rank = out_shape.size();
    std::optional<Factored> result;
    for (int k = 0; k < inputs && k < node.input_size(); ++k) {
      const auto it = carried_.find(node.input(k));
      if (it == carried_.end()) continue;
      const Factored& in = it->second;
      if (in.size() > rank) return unknown("has an input of higher rank than its output");
      Factored out = plain(out_shape);
      const std::size_t shift = rank - in.size();
      for (std::size_t a = 0; a < in.size(); ++a) {
        if (product(in[a]) == out_shape[a + shift]) out[a + shift] = in[a];
      }
      const auto at = batch_position(out);
      if (!at) return mixed("broadcasts the axis to another size");
      if (result && batch_position(*result) != at) {
        return mixed("combines inputs that hold the axis at different positions");
      }
      if (!result) result = std::move(out);
    }
    if (!result) return unknown("reads the axis through an input it does not broadcast");
    return carried_all(static_cast<std::size_t>(node.output_size()), *result);
  }

  Step apply(const onnx::NodeProto& node) {
    const std::string& op = node.op_type();
    const std::optional<Dims> out0 =
        node.output_size() > 0 ? shape_of(node.output(0)) : std::nullopt;
    if (!out0) return unknown("has an output without a static shape");
    static const std::set<std::string> kElementwise = {"Add",
                                                       "Sub",
                                                       "Mul",
                                                       "Div",
                                                       "Pow",
                                                       "Mod",
                                                       "Max",
                                                       "Min",
                                                       "Sum",
                                                       "Mean",
                                                       "Where",
                                                       "Equal",
                                                       "Less",
                                                       "Greater",
                                                       "LessOrEqual",
                                                       "GreaterOrEqual",
                                                       "And",
                                                       "Or",
                                                       "Xor",
                                                       "Not",
                                                       "Relu",
                                                       "LeakyRelu",
                                                       "PRelu",
                                                       "Elu",
                                                       "Selu",
                                                       "Celu",
                                                       "Sigmoid",
                                                       "HardSigmoid",
                                                       "HardSwish",
                                                       "Tanh",
                                                       "Softplus",
                                                       "Softsign",
                                                       "Erf",
                                                       "Exp",
                                                       "Log",
                                                       "Sqrt",
                                                       "Reciprocal",
                                                       "Neg",
                                                       "Abs",
                                                       "Sign",
                                                       "Floor",
                                                       "Ceil",
                                                       "Round",
                                                       "Sin",
                                                       "Cos",
                                                       "Tan",
                                                       "Asin",
                                                       "Acos",
                                                       "Atan",
                                                       "Sinh",
                                                       "Cosh",
                                                       "Clip",
                                                       "Cast",
                                                       "CastLike",
                                                       "Identity",
                                                       "Dropout",
                                                       "Gelu",
                                                       "Swish",
                                                       "IsNaN",
                                                       "IsInf",
                                                       "BitShift",
                                                       "QuantizeLinear",
                                                       "DequantizeLinear",
                                                       "Mish",
                                                       "ThresholdedRelu",
                                                       "Shrink",
                                                       "Expand"};
    if (kElementwise.count(op) > 0) {
      // Expand's second input and Clip's bounds are not broadcast operands.
      const int inputs = op == "Expand" ? 1 : op == "Clip" ? 1 : node.input_size();
      Step s = broadcast(node, *out0, inputs);
      if (op == "Expand" && s.kind == Step::Kind::kCarried && s.outputs[0]) {
        s.target = targets_of(*s.outputs[0]);
      }
      return s;
    }
    if (op == "Transpose") {
      const Factored& in = factored(node, 0);
      Dims perm = ints_attribute(node, "perm").value_or(Dims{});
      if (perm.empty()) {
        for (std::size_t i = in.size(); i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
      }
      if (perm.size() != in.size()) return unknown("has a perm of another rank");
      Factored out;
      for (std::int64_t p : perm) {
        if (p < 0 || static_cast<std::size_t>(p) >= in.size()) return unknown("has a bad perm");
        out.push_back(in[static_cast<std::size_t>(p)]);
      }
      return carried_all(1, out);
    }
    if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") {
      if (!batch_of(node, 0)) return unknown("reads the axis as its shape operand");
      const std::optional<Factored> out = regroup(factored(node, 0), *out0);
      if (!out) return mixed("splits the axis into several (a reshape through it)");
      Step s = carried_all(1, *out);
      if (op == "Reshape") s.target = targets_of(*out);
      return s;
    }
    if (op == "MatMul") return matmul(node, *out0);
    if (op == "Gemm") {
      const bool trans_a = int_attribute(node, "transA", 0) != 0;
      if (batch_of(node, 1)) return mixed("multiplies by it as a weight operand");
      const auto a = batch_of(node, 0);
      if (!a) return broadcast(node, *out0, node.input_size());
      if (*a != (trans_a ? 1u : 0u)) return mixed("contracts over it");
      Factored out = plain(*out0);
      out[0] = factored(node, 0)[*a];
      return carried_all(1, out);
    }
    static const std::set<std::string> kBatchFirst = {"Conv",
                                                      "ConvTranspose",
                                                      "MaxPool",
                                                      "AveragePool",
                                                      "LpPool",
                                                      "GlobalAveragePool",
                                                      "GlobalMaxPool",
                                                      "GlobalLpPool",
                                                      "BatchNormalization",
                                                      "InstanceNormalization",
                                                      "LRN",
                                                      "Resize",
                                                      "Upsample",
                                                      "DepthToSpace",
                                                      "SpaceToDepth",
                                                      "GroupNormalization",
                                                      "MaxRoiPool",
                                                      "ConvInteger",
                                                      "QLinearConv",
                                                      "GridSample",
                                                      "Col2Im"};
    if (kBatchFirst.count(op) > 0) {
      const auto at = batch_of(node, 0);
      if (!at) return mixed("reads it through a parameter or auxiliary operand");
      if (*at == 1) return mixed("takes it as its channel axis");
      if (*at > 1) return mixed("takes it as a spatial axis");
      Factored out = plain(*out0);
      out[0] = factored(node, 0)[0];
      Step s;
      s.outputs.assign(static_cast<std::size_t>(node.output_size()), std::nullopt);
      s.outputs[0] = out;
      return s;
    }
    if (op == "LSTM" || op == "GRU" || op == "RNN") return recurrent(node);
    if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
      const auto at = batch_of(node, 0);
      const std::size_t rank = factored(node, 0).size();
      const std::int64_t axis =
          normalize_axis(int_attribute(node, "axis", opset_ < 13 ? 1 : -1), rank);
      if (!at) return unknown("reads it through another operand");
      const bool reduced = opset_ < 13 ? static_cast<std::int64_t>(*at) >= axis
                                       : static_cast<std::int64_t>(*at) == axis;
      if (reduced) return mixed("normalises over it (attention weights across a sequence)");
      return carried_all(1, factored(node, 0));
    }
    if (op == "LayerNormalization" || op == "SimplifiedLayerNormalization") {
      const auto at = batch_of(node, 0);
      const std::size_t rank = factored(node, 0).size();
      const std::int64_t axis = normalize_axis(int_attribute(node, "axis", -1), rank);
      if (!at) return mixed("reads it through its scale or bias");
      if (static_cast<std::int64_t>(*at) >= axis) return mixed("normalises over it");
      return carried_all(static_cast<std::size_t>(node.output_size()), factored(node, 0));
    }
    if (op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin") return reduce(node, *out0);
    if (op == "CumSum" || op == "TopK" || op == "Trilu") {
      const auto at = batch_of(node, 0);
      if (!at) return mixed("reads it through an auxiliary operand");
      const std::size_t rank = factored(node, 0).size();
      std::vector<std::int64_t> axes;
      if (op == "CumSum") {
        const auto a = constant_ints(node, 1);
        if (!a || a->empty()) return unknown("has an axis that is not a constant");
        axes = {normalize_axis((*a)[0], rank)};
      } else if (op == "TopK") {
        axes = {normalize_axis(int_attribute(node, "axis", -1), rank)};
      } else {
        axes = {static_cast<std::int64_t>(rank) - 2, static_cast<std::int64_t>(rank) - 1};
      }
      if (std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(*at)) != axes.end()) {
        return mixed("runs along it");
      }
      Factored out = factored(node, 0);
      for (std::int64_t a : axes)
        out[static_cast<std::size_t>(a)] = resized((*out0)[static_cast<std::size_t>(a)]);
      return carried_all(static_cast<std::size_t>(node.output_size()), out);
    }
    if (op == "Concat") {
      const std::int64_t axis = normalize_axis(int_attribute(node, "axis", 0), out0->size());
      std::optional<std::size_t> at;
      for (int k = 0; k < node.input_size(); ++k) {
        const auto b = batch_of(node, k);
        if (!b) continue;
        if (static_cast<std::int64_t>(*b) == axis) return mixed("concatenates along it");
        if (at && *at != *b) return mixed("concatenates inputs that hold it at different axes");
        at = b;
      }
      for (int k = 0; k < node.input_size(); ++k) {
        if (batch_of(node, k)) {
          Factored out = factored(node, k);
          out[static_cast<std::size_t>(axis)] = resized((*out0)[static_cast<std::size_t>(axis)]);
          return carried_all(1, out);
        }
      }
      return unknown("reads it in no operand");
    }
    if (op == "Split" || op == "Slice" || op == "Pad" || op == "Tile") return select(node);
    if (op == "Gather" || op == "GatherElements") return gather(node, *out0);
    if (op == "Einsum") return einsum(node);
    if (op == "Shape" || op == "Size") {
      Step s;
      s.outputs.assign(1, std::nullopt);
      return s;
    }
    if (op == "NonMaxSuppression" || op == "NonZero" || op == "Compress" || op == "RoiAlign") {
      return mixed("selects elements by their values (a data-dependent count)");
    }
    return unknown("has no rule in nnergy's batch-axis analysis");
  }

  std::vector<TargetDim> targets_of(const Factored& out) const {
    std::vector<TargetDim> dims;
    for (const Axis& a : out) {
      TargetDim d;
      d.size = product(a);
      d.has_batch = std::any_of(a.begin(), a.end(), [](const Factor& f) { return f.batch; });
      dims.push_back(d);
    }
    return dims;
  }

  Step matmul(const onnx::NodeProto& node, const Dims& out_shape) {
    const auto a_at = batch_of(node, 0);
    const auto b_at = batch_of(node, 1);
    const auto a_shape = shape_of(node.input(0));
    const auto b_shape = shape_of(node.input(1));
    if (!a_shape || !b_shape) return unknown("has an operand without a static shape");
    const std::size_t ra = a_shape->size();
    const std::size_t rb = b_shape->size();
    const std::size_t rank = out_shape.size();
    if (ra < 2 || rb < 2) {
      return (a_at && ra == 1) || (b_at && rb == 1) ? mixed("contracts over it")
                                                    : unknown("multiplies by a vector");
    }
    Factored out = plain(out_shape);
    std::optional<std::size_t> at;
    const auto place = [&](const Factored& in, std::size_t from, std::size_t to) {
      out[to] = in[from];
      at = to;
    };
    if (a_at) {
      const Factored& a = factored(node, 0);
      if (*a_at == ra - 1) return mixed("contracts over it (MatMul's reduction axis)");
      if (*a_at == ra - 2) {
        place(a, *a_at, rank - 2);
      } else {
        place(a, *a_at, *a_at + (rank - ra));
      }
    }
    if (b_at) {
      const Factored& b = factored(node, 1);
      if (*b_at == rb - 2) return mixed("contracts over it (MatMul's reduction axis)");
      std::size_t to = *b_at == rb - 1 ? rank - 1 : *b_at + (rank - rb);
      if (at && *at != to) return mixed("multiplies samples by other samples (an outer product)");
      place(b, *b_at, to);
    }
    return carried_all(1, out);
  }

  Step recurrent(const onnx::NodeProto& node) {
    const auto x = batch_of(node, 0);
    if (!x) return mixed("reads it through a weight or state operand");
    const bool batch_first = int_attribute(node, "layout", 0) != 0;
    const std::size_t expected = batch_first ? 0 : 1;
    if (*x != expected) return mixed("runs its recurrence along it (its sequence axis)");
    const Axis batch = factored(node, 0)[*x];
    Step s;
    for (int k = 0; k < node.output_size(); ++k) {
      const auto shape = shape_of(node.output(k));
      if (!shape) {
        s.outputs.emplace_back(std::nullopt);
        continue;
      }
      Factored out = plain(*shape);
      // Y: (S, D, N, H) or (N, S, D, H); Y_h, Y_c: (D, N, H) or (N, D, H).
      const std::size_t at = batch_first ? 0 : (k == 0 ? 2 : 1);
      if (at < out.size()) out[at] = batch;
      s.outputs.emplace_back(out);
    }
    return s;
  }

  Step reduce(const onnx::NodeProto& node, const Dims& out_shape) {
    const auto at = batch_of(node, 0);
    if (!at) return mixed("reads it through its axes operand");
    const Factored& in = factored(node, 0);
    const std::size_t rank = in.size();
    std::vector<std::int64_t> axes;
    const bool arg = node.op_type() == "ArgMax" || node.op_type() == "ArgMin";
    if (arg) {
      axes = {normalize_axis(int_attribute(node, "axis", 0), rank)};
    } else if (auto a = ints_attribute(node, "axes")) {
      axes = *a;
    } else if (auto c = constant_ints(node, 1)) {
      axes = *c;
    } else if (node.input_size() > 1 && !node.input(1).empty()) {
      return unknown("has axes that are not constants");
    }
    if (axes.empty() && int_attribute(node, "noop_with_empty_axes", 0) == 0) {
      return mixed("reduces over every axis");
    }
    for (std::int64_t& a : axes) a = normalize_axis(a, rank);
    if (std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(*at)) != axes.end()) {
      return mixed("reduces over it");
    }
    const bool keep = int_attribute(node, "keepdims", 1) != 0;
    Factored out;
    for (std::size_t i = 0; i < rank; ++i) {
      const bool reduced =
          std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(i)) != axes.end();
      if (!reduced) {
        out.push_back(in[i]);
      } else if (keep) {
        out.push_back(resized(1));
      }
    }
    if (out.size() != out_shape.size()) return unknown("has an output of unexpected rank");
    return carried_all(1, out);
  }

  // Split, Slice, Pad and Tile: the batch axis must come through whole.
  Step select(const onnx::NodeProto& node) {
    const auto at = batch_of(node, 0);
    if (!at) return mixed("reads it through an index or size operand");
    const Factored& in = factored(node, 0);
    Step s;
    for (int k = 0; k < node.output_size(); ++k) {
      const auto shape = shape_of(node.output(k));
      if (!shape || shape->size() != in.size()) return unknown("has an output of another rank");
      if ((*shape)[*at] != product(in[*at])) {
        return mixed(node.op_type() == "Tile" || node.op_type() == "Pad"
                         ? "grows it (repeats or pads samples)"
                         : "selects part of it (some samples only)");
      }
      Factored out = plain(*shape);
      out[*at] = in[*at];
      for (std::size_t i = 0; i < in.size(); ++i) {
        if ((*shape)[i] == product(in[i])) out[i] = in[i];
      }
      s.outputs.emplace_back(out);
    }
    return s;
  }

  Step gather(const onnx::NodeProto& node, const Dims& out_shape) {
    const auto data_at = batch_of(node, 0);
    const auto index_at = batch_of(node, 1);
    const auto data_shape = shape_of(node.input(0));
    if (!data_shape) return unknown("has data without a static shape");
    const std::int64_t axis = normalize_axis(int_attribute(node, "axis", 0), data_shape->size());
    if (node.op_type() == "GatherElements") {
      if (data_at && static_cast<std::int64_t>(*data_at) == axis) return mixed("gathers along it");
      return broadcast(node, out_shape, 2);
    }
    const auto index_shape = shape_of(node.input(1));
    if (!index_shape) return unknown("has indices without a static shape");
    Factored out = plain(out_shape);
    if (data_at && index_at) return mixed("indexes samples by other samples' values");
    if (data_at) {
      if (static_cast<std::int64_t>(*data_at) == axis) return mixed("selects along it");
      const std::size_t to = static_cast<std::int64_t>(*data_at) < axis
                                 ? *data_at
                                 : *data_at - 1 + index_shape->size();
      out[to] = factored(node, 0)[*data_at];
      return carried_all(1, out);
    }
    // An embedding lookup: the indices' axes come out at `axis`.
    out[static_cast<std::size_t>(axis) + *index_at] = factored(node, 1)[*index_at];
    return carried_all(1, out);
  }

  Step einsum(const onnx::NodeProto& node) {
    std::string equation;
    for (const auto& a : node.attribute()) {
      if (a.name() == "equation") equation = a.s();
    }
    equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
    const std::size_t arrow = equation.find("->");
    if (arrow == std::string::npos || equation.find("...") != std::string::npos) {
      return unknown("has an implicit or broadcast equation");
    }
    const std::string lhs = equation.substr(0, arrow);
    const std::string rhs = equation.substr(arrow + 2);
    std::vector<std::string> terms;
    for (std::size_t start = 0;;) {
      const std::size_t comma = lhs.find(',', start);
      terms.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    std::optional<char> letter;
    Axis axis;
    for (int k = 0; k < node.input_size() && k < static_cast<int>(terms.size()); ++k) {
      const auto at = batch_of(node, k);
      if (!at) continue;
      if (*at >= terms[static_cast<std::size_t>(k)].size()) return unknown("has a bad equation");
      const char c = terms[static_cast<std::size_t>(k)][*at];
      if (letter && *letter != c) return mixed("combines inputs that hold it at different axes");
      letter = c;
      axis = factored(node, k)[*at];
    }
    if (!letter) return unknown("reads it in no operand");
    const std::size_t to = rhs.find(*letter);
    if (to == std::string::npos) return mixed("sums over it");
    const auto shape = shape_of(node.output(0));
    if (!shape) return unknown("has an output without a static shape");
    Factored out = plain(*shape);
    out[to] = axis;
    return carried_all(1, out);
  }

  const onnx::ModelProto& model_;
  StaticShapes shapes_;
  int opset_;
  std::unordered_map<std::string, ConstantTensor> constants_;
  std::unordered_map<std::string, Factored> carried_;
  BatchAxisTrace trace_;
};

}  // namespace

BatchAxisTrace trace_batch_axis(const onnx::ModelProto& model,
                                const std::set<std::string>& data_inputs, std::size_t axis) {
  try {
    return Tracer(model, data_inputs, axis).run();
  } catch (const std::exception& e) {  // a malformed model: nothing is known
    BatchAxisTrace trace;
    trace.axis = axis;
    trace.known = false;
    trace.reason = e.what();
    return trace;
  }
}

}  // namespace nnergy::graph
