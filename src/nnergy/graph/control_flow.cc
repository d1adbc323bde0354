#include "nnergy/graph/control_flow.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "nnergy/core/error.h"
#include "nnergy/graph/constant_tensor.h"
#include "nnergy/graph/shape_folding.h"

namespace nnergy::graph {

namespace {

using Names = std::vector<std::string>;
using Rename = std::unordered_map<std::string, std::string>;

// Loops with more iterations than this are left alone (an unrolled graph that large is not
// what an exporter meant by a loop over heads or classes).
constexpr std::int64_t kMaxIterations = 4096;
// Nodes the graph may hold once its control flow is unrolled, nested loops and every round
// included: exported networks have up to some tens of thousands; the budget is checked before
// a loop is written out, so that a small file cannot make nnergy allocate gigabytes.
constexpr std::int64_t kMaxUnrolledNodes = 100000;
// Copies of nodes with subgraphs (Loop, If, Scan) that unrolling may write: one left in place
// (a trip count not known) costs ONNX's shape inference a copy of the enclosing scope, so
// thousands of them take minutes.
constexpr std::int64_t kMaxSubgraphCopies = 256;

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::int64_t int_attribute(const onnx::NodeProto& node, const std::string& name,
                           std::int64_t fallback) {
  const onnx::AttributeProto* a = attribute(node, name);
  return a ? a->i() : fallback;
}

class Unroller {
 public:
  Unroller(onnx::ModelProto& model, const std::map<std::string, std::vector<std::int64_t>>& shapes)
      : model_(model), shapes_(shapes), opset_(default_opset(model)) {
    for (const auto& init : model.graph().initializer()) {
      if (auto v = read_constant(init)) constants_.emplace(init.name(), std::move(*v));
      used_.insert(init.name());
    }
    for (const auto& v : model.graph().input()) used_.insert(v.name());
    for (const auto& n : model.graph().node()) {
      used_.insert(n.name());
      for (const auto& o : n.output()) used_.insert(o);
    }
  }

  ControlFlowReport run() {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
    const Rename none;
    for (const onnx::NodeProto& node : model_.graph().node()) process(node, none, out);
    if (report_.loops + report_.branches + report_.sequences > 0) {
      model_.mutable_graph()->mutable_node()->Swap(&out);
    }
    return report_;
  }

 private:
  std::string fresh(const std::string& base) {
    std::string name = base;
    while (!used_.insert(name).second) name = fmt::format("{}/nnergy_{}", base, ++counter_);
    return name;
  }

  std::string mapped(const std::string& name, const Rename& rename) const {
    const auto it = rename.find(name);
    return it == rename.end() ? name : it->second;
  }

  std::optional<ConstantTensor> constant(const std::string& name) const {
    const auto it = constants_.find(name);
    if (it == constants_.end()) return std::nullopt;
    return it->second;
  }

  // A Constant node of `value` named `output` (its value remembered for later nodes).
  void emit_constant(const ConstantTensor& value, const std::string& output,
                     const std::string& node_name,
                     google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
    onnx::NodeProto* c = out.Add();
    c->set_op_type("Constant");
    c->set_name(node_name);
    c->add_output(output);
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
    *a->mutable_t() = to_tensor_proto(value, output);
    constants_[output] = value;
  }

  ConstantTensor int64_value(std::vector<std::int64_t> values, std::vector<std::int64_t> dims) {
    ConstantTensor v;
    v.elem_type = onnx::TensorProto_DataType_INT64;
    v.dims = std::move(dims);
    v.integers = std::move(values);
    return v;
  }

  void emit(const std::string& op, const std::string& name, const Names& inputs,
            const Names& outputs, google::protobuf::RepeatedPtrField<onnx::NodeProto>& out,
            const std::vector<onnx::AttributeProto>& attributes = {}) {
    onnx::NodeProto* n = out.Add();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    for (const auto& a : attributes) *n->add_attribute() = a;
  }

  static onnx::AttributeProto int_attr(const std::string& name, std::int64_t value) {
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto_AttributeType_INT);
    a.set_i(value);
    return a;
  }

  static onnx::AttributeProto ints_attr(const std::string& name,
                                        const std::vector<std::int64_t>& values) {
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto_AttributeType_INTS);
    for (auto v : values) a.add_ints(v);
    return a;
  }

  // Unsqueeze or Squeeze of `input` on `axis` (attribute before opset 13, input from 13).
  std::string reshape_axis(const std::string& op, const std::string& input, std::int64_t axis,
                           const std::string& base,
                           google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
    const std::string output = fresh(base + "/" + op + "_output");
    if (opset_ >= 13) {
      const std::string axes = fresh(base + "/" + op + "_axes");
      emit_constant(int64_value({axis}, {1}), axes, axes, out);
      emit(op, fresh(base + "/" + op), {input, axes}, {output}, out);
    } else {
      emit(op, fresh(base + "/" + op), {input}, {output}, out, {ints_attr("axes", {axis})});
    }
    return output;
  }

  // Copies `node` with its inputs renamed (and the names inside its subgraphs).
  onnx::NodeProto renamed(const onnx::NodeProto& node, const Rename& rename) const {
    onnx::NodeProto copy = node;
    for (int i = 0; i < copy.input_size(); ++i)
      if (!copy.input(i).empty()) copy.set_input(i, mapped(copy.input(i), rename));
    for (auto& a : *copy.mutable_attribute()) {
      if (a.type() == onnx::AttributeProto_AttributeType_GRAPH)
        rename_graph(*a.mutable_g(), rename);
    }
    return copy;
  }

  void rename_graph(onnx::GraphProto& g, const Rename& rename) const {
    for (auto& n : *g.mutable_node()) {
      for (int i = 0; i < n.input_size(); ++i)
        if (!n.input(i).empty()) n.set_input(i, mapped(n.input(i), rename));
      for (auto& a : *n.mutable_attribute())
        if (a.type() == onnx::AttributeProto_AttributeType_GRAPH)
          rename_graph(*a.mutable_g(), rename);
    }
    for (auto& o : *g.mutable_output()) o.set_name(mapped(o.name(), rename));
  }

  // Processes one node (inputs named as in its scope, `rename` mapping them to the graph's).
  void process(const onnx::NodeProto& original, const Rename& rename,
               google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
    const onnx::NodeProto node = renamed(original, rename);
    const std::string& op = node.op_type();
    const auto sequence_of = [&](int k) -> const Names* {
      if (k >= node.input_size()) return nullptr;
      const auto it = sequences_.find(node.input(k));
      return it == sequences_.end() ? nullptr : &it->second;
    };
    if (op == "Constant" && node.output_size() == 1) {
      if (auto v = constant_node_value(node)) constants_[node.output(0)] = *v;
    }
    if (op == "SequenceEmpty") {
      sequences_[node.output(0)] = {};
      ++report_.sequences;
      return;
    }
    if (op == "SequenceConstruct") {
      sequences_[node.output(0)] = Names(node.input().begin(), node.input().end());
      ++report_.sequences;
      return;
    }
    if (op == "SplitToSequence" && split_to_sequence(node, out)) return;
    if (op == "SequenceInsert") {
      if (const Names* seq = sequence_of(0)) {
        Names items = *seq;
        std::int64_t at = static_cast<std::int64_t>(items.size());
        if (node.input_size() > 2 && !node.input(2).empty()) {
          const auto p = constant(node.input(2));
          if (!p || p->size() != 1) return keep(node, out);
          at = p->integer_at(0);
          if (at < 0) at += static_cast<std::int64_t>(items.size());
        }
        if (at < 0 || at > static_cast<std::int64_t>(items.size())) return keep(node, out);
        items.insert(items.begin() + at, node.input(1));
        sequences_[node.output(0)] = std::move(items);
        ++report_.sequences;
        return;
      }
    }
    if (op == "SequenceAt") {
      const Names* seq = sequence_of(0);
      const auto p = node.input_size() > 1 ? constant(node.input(1)) : std::nullopt;
      if (seq && p && p->size() == 1) {
        std::int64_t at = p->integer_at(0);
        if (at < 0) at += static_cast<std::int64_t>(seq->size());
        if (at >= 0 && at < static_cast<std::int64_t>(seq->size())) {
          emit("Identity", node.name(), {(*seq)[static_cast<std::size_t>(at)]}, {node.output(0)},
               out);
          ++report_.sequences;
          return;
        }
      }
    }
    if (op == "SequenceLength") {
      if (const Names* seq = sequence_of(0)) {
        emit_constant(int64_value({static_cast<std::int64_t>(seq->size())}, {}), node.output(0),
                      node.name(), out);
        ++report_.sequences;
        return;
      }
    }
    if (op == "ConcatFromSequence") {
      if (const Names* seq = sequence_of(0); seq && !seq->empty()) {
        const std::int64_t axis = int_attribute(node, "axis", 0);
        const bool new_axis = int_attribute(node, "new_axis", 0) != 0;
        Names parts = *seq;
        if (new_axis) {
          for (std::string& p : parts) p = reshape_axis("Unsqueeze", p, axis, node.name(), out);
        }
        emit("Concat", node.name(), parts, {node.output(0)}, out, {int_attr("axis", axis)});
        ++report_.sequences;
        return;
      }
    }
    if (op == "Loop" && loop(node, out)) return;
    if (op == "If" && branch(node, out)) return;
    keep(node, out);
  }

  void keep(const onnx::NodeProto& node, google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
    for (const auto& o : node.output()) used_.insert(o);
    *out.Add() = node;
  }

  bool split_to_sequence(const onnx::NodeProto& node,
                         google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
    const auto shape = shapes_.find(node.input(0));
    if (shape == shapes_.end()) return false;
    const std::int64_t rank = static_cast<std::int64_t>(shape->second.size());
    std::int64_t axis = int_attribute(node, "axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return false;
    const std::int64_t length = shape->second[static_cast<std::size_t>(axis)];
    std::vector<std::int64_t> sizes;
    bool squeeze = false;
    if (node.input_size() > 1 && !node.input(1).empty()) {
      const auto split = constant(node.input(1));
      if (!split) return false;
      if (split->dims.empty()) {  // a scalar: chunks of that size
        const std::int64_t chunk = split->integer_at(0);
        // The item count is checked before anything is allocated (a declared length can be
        // anything up to 2^63).
        if (chunk <= 0 || length <= 0 || (length - 1) / chunk + 1 > kMaxIterations) return false;
        for (std::int64_t at = 0; at < length; at += chunk)
          sizes.push_back(std::min(chunk, length - at));
      } else {
        if (split->size() > static_cast<std::size_t>(kMaxIterations)) return false;
        sizes = split->as_integers();
      }
    } else {
      if (length <= 0 || length > kMaxIterations) return false;
      sizes.assign(static_cast<std::size_t>(length), 1);
      squeeze = int_attribute(node, "keepdims", 1) == 0;
    }
    if (sizes.empty() || sizes.size() > static_cast<std::size_t>(kMaxIterations)) return false;
    Names parts;
    for (std::size_t k = 0; k < sizes.size(); ++k)
      parts.push_back(fresh(node.output(0) + "/item_" + std::to_string(k)));
    if (opset_ >= 13) {
      const std::string split_name = fresh(node.name() + "/split");
      emit_constant(int64_value(sizes, {static_cast<std::int64_t>(sizes.size())}), split_name,
                    split_name, out);
      emit("Split", node.name(), {node.input(0), split_name}, parts, out, {int_attr("axis", axis)});
    } else {
      emit("Split", node.name(), {node.input(0)}, parts, out,
           {int_attr("axis", axis), ints_attr("split", sizes)});
    }
    if (squeeze) {
      for (std::string& p : parts) p = reshape_axis("Squeeze", p, axis, node.name(), out);
    }
    sequences_[node.output(0)] = parts;
    ++report_.sequences;
    return true;
  }

  // Writes a subgraph's nodes with local names made unique; returns the names of its outputs.
  Names inline_graph(const onnx::GraphProto& g, Rename rename, const std::string& scope,
                     google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
    for (const auto& n : g.node()) {
      onnx::NodeProto local = n;
      local.set_name(fresh(scope + n.name()));
      for (int k = 0; k < local.output_size(); ++k) {
        if (local.output(k).empty()) continue;
        const std::string name = fresh(scope + local.output(k));
        rename[local.output(k)] = name;
        local.set_output(k, name);
      }
      // Inputs are renamed by process(); the outputs already carry their new names.
      Rename inputs_only = rename;
      process(local, inputs_only, out);
    }
    Names outputs;
    for (const auto& o : g.output()) outputs.push_back(mapped(o.name(), rename));
    return outputs;
  }

  // The value a sequence or tensor name has at the end: sequences stay sequences.
  void bind_output(const std::string& from, const std::string& to, const std::string& node_name,
                   google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
    if (const auto it = sequences_.find(from); it != sequences_.end()) {
      sequences_[to] = it->second;
      return;
    }
    emit("Identity", fresh(node_name + "/Identity"), {from}, {to}, out);
  }

  // True when a constant is true (nonzero).
  bool is_true(const std::string& name) const {
    const auto v = constant(name);
    return v && v->size() == 1 && v->integer_at(0) != 0;
  }

  // Whether the loop's continuation condition stays true: the body passes its condition input
  // through (and the loop starts true), or computes it from a constant true (a Constant node,
  // or a Cast/Identity of a constant of the body or of the outer graph).
  bool condition_stays_true(const onnx::NodeProto& node, const onnx::GraphProto& body) const {
    const bool starts_true = node.input(1).empty() || is_true(node.input(1));
    const std::string& cond_out = body.output(0).name();
    if (body.input_size() > 1 && cond_out == body.input(1).name()) return starts_true;
    std::unordered_map<std::string, const onnx::NodeProto*> producer;
    for (const auto& n : body.node())
      for (const auto& o : n.output()) producer[o] = &n;
    std::string name = cond_out;
    for (int depth = 0; depth < 4; ++depth) {
      const auto it = producer.find(name);
      if (it == producer.end())
        return is_true(name) ||
               (body.input_size() > 1 && name == body.input(1).name() && starts_true);
      const onnx::NodeProto& n = *it->second;
      if (n.op_type() == "Constant") {
        const auto v = constant_node_value(n);
        return v && v->size() == 1 && v->integer_at(0) != 0;
      }
      if ((n.op_type() != "Cast" && n.op_type() != "Identity") || n.input_size() < 1) return false;
      name = n.input(0);
    }
    return false;
  }

  bool loop(const onnx::NodeProto& node, google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
    const onnx::AttributeProto* body_attr = attribute(node, "body");
    if (body_attr == nullptr || node.input_size() < 2 || node.input(0).empty()) return false;
    const auto trip = constant(node.input(0));
    if (!trip || trip->size() != 1) return false;
    const std::int64_t iterations = trip->integer_at(0);
    if (iterations < 0 || iterations > kMaxIterations) return false;
    const onnx::GraphProto& body = body_attr->g();
    // The body's continuation condition must stay a constant true (a Cast of a Constant, or the
    // condition passed in unchanged); otherwise the loop may stop early.
    if (body.output_size() < 1) return false;
    if (!condition_stays_true(node, body)) return false;
    const int carried = node.input_size() - 2;
    if (body.input_size() != 2 + carried) return false;
    // The nodes written so far, those still to come and this loop's copies of its body (with
    // the loops nested in it unrolled too), checked before anything is written.
    const std::int64_t per_iteration = unrolled_size(body) + 1;
    const std::int64_t would_hold = static_cast<std::int64_t>(out.size()) +
                                    model_.graph().node_size() +
                                    iterations * std::min(per_iteration, kMaxUnrolledNodes + 1);
    std::int64_t with_subgraphs = 0;
    for (const auto& n : body.node()) {
      bool control_flow = n.op_type() == "Loop" || n.op_type() == "If" || n.op_type() == "Scan";
      for (const auto& a : n.attribute()) control_flow |= a.has_g() || a.graphs_size() > 0;
      with_subgraphs += control_flow ? 1 : 0;
    }
    if (with_subgraphs * iterations > kMaxSubgraphCopies) {
      throw InvalidInput(fmt::format(
          "Loop '{}': unrolling its {} iterations would copy {} control-flow nodes (Loop, If or "
          "Scan) {} times, over the {} nnergy writes out; export the network with the inner "
          "control flow resolved (constant trip counts and conditions) or without the loop",
          node.name(), iterations, with_subgraphs, iterations, kMaxSubgraphCopies));
    }
    if (would_hold > kMaxUnrolledNodes) {
      throw InvalidInput(fmt::format(
          "Loop '{}': unrolling its {} iterations of {} nodes would make the graph over {} nodes "
          "(nested loops multiply); nnergy costs a loop by writing out its iterations: export "
          "the network with fewer iterations, or without the loop",
          node.name(), iterations, per_iteration, kMaxUnrolledNodes));
    }
    const int scans = body.output_size() - 1 - carried;
    Names state(node.input().begin() + 2, node.input().end());
    std::vector<Names> scan_values(static_cast<std::size_t>(std::max(0, scans)));
    for (std::int64_t i = 0; i < iterations; ++i) {
      const std::string scope = fmt::format("{}/iteration_{}/", node.name(), i);
      Rename rename;
      const std::string counter = fresh(scope + "iteration_number");
      emit_constant(int64_value({i}, {}), counter, counter, out);
      rename[body.input(0).name()] = counter;
      if (!node.input(1).empty()) rename[body.input(1).name()] = node.input(1);
      for (int k = 0; k < carried; ++k) {
        const std::string& local = body.input(2 + k).name();
        const std::string& value = state[static_cast<std::size_t>(k)];
        rename[local] = value;
      }
      const Names outputs = inline_graph(body, rename, scope, out);
      for (int k = 0; k < carried; ++k)
        state[static_cast<std::size_t>(k)] = outputs[static_cast<std::size_t>(1 + k)];
      for (int k = 0; k < scans; ++k)
        scan_values[static_cast<std::size_t>(k)].push_back(
            outputs[static_cast<std::size_t>(1 + carried + k)]);
    }
    for (int k = 0; k < carried && k < node.output_size(); ++k) {
      if (!node.output(k).empty())
        bind_output(state[static_cast<std::size_t>(k)], node.output(k), node.name(), out);
    }
    for (int k = 0; k < scans; ++k) {
      const int index = carried + k;
      if (index >= node.output_size() || node.output(index).empty()) continue;
      Names parts = scan_values[static_cast<std::size_t>(k)];
      if (parts.empty()) return false;  // an empty scan output: its shape is unknown
      for (std::string& p : parts) p = reshape_axis("Unsqueeze", p, 0, node.name() + "/scan", out);
      emit("Concat", fresh(node.name() + "/scan_concat"), parts, {node.output(index)}, out,
           {int_attr("axis", 0)});
    }
    ++report_.loops;
    report_.iterations += static_cast<int>(iterations);
    return true;
  }

  // Nodes `g` holds once its constant-trip loops (nested ones included: their trip counts from
  // the Constant nodes of their graph or the model's constants) are written out; saturates just
  // above the budget.
  std::int64_t unrolled_size(const onnx::GraphProto& g, int depth = 0) const {
    std::unordered_map<std::string, std::int64_t> local;
    for (const auto& n : g.node()) {
      if (n.op_type() != "Constant" || n.output_size() != 1) continue;
      const onnx::AttributeProto* value = attribute(n, "value");
      if (value == nullptr || !value->has_t()) continue;
      if (auto c = read_constant(value->t()); c && c->size() == 1) {
        local[n.output(0)] = c->integer_at(0);
      }
    }
    std::int64_t total = 0;
    for (const auto& n : g.node()) {
      std::int64_t size = 1;
      const onnx::AttributeProto* body = attribute(n, "body");
      if (n.op_type() == "Loop" && body != nullptr && n.input_size() > 0 && depth < 16) {
        std::int64_t trip = 1;
        if (const auto it = local.find(n.input(0)); it != local.end()) {
          trip = it->second;
        } else if (const auto c = constants_.find(n.input(0));
                   c != constants_.end() && c->second.size() == 1) {
          trip = c->second.integer_at(0);
        }
        trip = std::clamp<std::int64_t>(trip, 1, kMaxIterations);
        size += trip * std::min(unrolled_size(body->g(), depth + 1), kMaxUnrolledNodes + 1);
      }
      total = std::min(total + size, kMaxUnrolledNodes + 1);
    }
    return total;
  }

  bool branch(const onnx::NodeProto& node,
              google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
    if (node.input_size() < 1) return false;
    const auto cond = constant(node.input(0));
    if (!cond || cond->size() != 1) return false;
    const onnx::AttributeProto* taken =
        attribute(node, cond->integer_at(0) != 0 ? "then_branch" : "else_branch");
    if (taken == nullptr) return false;
    const Names outputs = inline_graph(taken->g(), {}, node.name() + "/branch/", out);
    if (static_cast<int>(outputs.size()) != node.output_size()) return false;
    for (int k = 0; k < node.output_size(); ++k) {
      if (!node.output(k).empty())
        bind_output(outputs[static_cast<std::size_t>(k)], node.output(k), node.name(), out);
    }
    ++report_.branches;
    return true;
  }

  onnx::ModelProto& model_;
  const std::map<std::string, std::vector<std::int64_t>>& shapes_;
  int opset_;
  std::unordered_map<std::string, ConstantTensor> constants_;
  std::unordered_map<std::string, Names> sequences_;
  std::set<std::string> used_;
  int counter_ = 0;
  ControlFlowReport report_;
};

}  // namespace

ControlFlowReport unroll_control_flow(
    onnx::ModelProto& model, const std::map<std::string, std::vector<std::int64_t>>& shapes) {
  bool any = false;
  for (const auto& n : model.graph().node()) {
    const std::string& op = n.op_type();
    any = any || op == "Loop" || op == "If" || op.rfind("Sequence", 0) == 0 ||
          op == "SplitToSequence" || op == "ConcatFromSequence";
  }
  if (!any) return {};
  return Unroller(model, shapes).run();
}

}  // namespace nnergy::graph
