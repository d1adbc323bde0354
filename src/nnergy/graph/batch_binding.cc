#include "nnergy/graph/batch_binding.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <unordered_map>

#include "nnergy/core/error.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/core/text.h"
#include "nnergy/graph/batch_axis.h"
#include "nnergy/graph/constant_tensor.h"
#include "nnergy/graph/control_flow.h"
#include "nnergy/graph/shape_folding.h"
#include "nnergy/graph/tensor.h"

namespace nnergy::graph {

namespace {

// The leading dimension of one data input: a symbol, a fixed value, or neither (a scalar).
struct LeadingDim {
  std::string input;
  std::string symbol;
  std::optional<std::int64_t> fixed;
};

// Dimension names exporters and users give the batch: anything with "batch" in it, and the
// short names of PyTorch's documentation and code ("N", "B", "bs", "bsz").
bool names_the_batch(const std::string& symbol) {
  const std::string name = ascii_lower(symbol);
  return name.find("batch") != std::string::npos || name == "n" || name == "b" || name == "bs" ||
         name == "bsz";
}

// The batch axis of each data input: the symbolic dimension whose name says "batch", else the
// leading dimension (symbolic, or fixed in the file).
std::vector<LeadingDim> leading_dims(const onnx::ModelProto& model,
                                     const std::set<std::string>& data_inputs) {
  std::vector<LeadingDim> dims;
  for (const auto& input : model.graph().input()) {
    if (data_inputs.count(input.name()) == 0 || !input.type().has_tensor_type()) continue;
    const auto& shape = input.type().tensor_type().shape().dim();
    if (shape.empty()) continue;
    LeadingDim d;
    d.input = input.name();
    for (const auto& dim : shape) {
      if (dim.has_dim_param() && names_the_batch(dim.dim_param())) d.symbol = dim.dim_param();
    }
    if (d.symbol.empty()) {
      if (shape[0].has_dim_value()) {
        d.fixed = shape[0].dim_value();
      } else {
        d.symbol = shape[0].dim_param();
      }
    }
    dims.push_back(d);
  }
  return dims;
}

// Default values of symbolic dimensions the file declares in its `nnergy.default_dims`
// metadata entry ("seq=128,frames=16"), as the zoo's transformers do for their sequence length.
std::map<std::string, std::int64_t> default_dims(const onnx::ModelProto& model,
                                                 const std::string& source) {
  std::map<std::string, std::int64_t> dims;
  for (const auto& entry : model.metadata_props()) {
    if (entry.key() != "nnergy.default_dims") continue;
    std::size_t start = 0;
    const std::string& text = entry.value();
    while (start < text.size()) {
      std::size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      const std::string item = text.substr(start, comma - start);
      const std::size_t eq = item.find('=');
      try {
        std::size_t used = 0;
        const std::string number = eq == std::string::npos ? "" : item.substr(eq + 1);
        const std::int64_t value = std::stoll(number, &used);
        if (used != number.size() || value <= 0 || eq == 0) throw std::invalid_argument(item);
        dims[item.substr(0, eq)] = value;
      } catch (const std::exception&) {
        throw InvalidInput(source + ": metadata nnergy.default_dims entry '" + item +
                           "': expected NAME=POSITIVE_INTEGER");
      }
      start = comma + 1;
    }
  }
  return dims;
}

// Values of the symbolic dimensions: named bindings first, then the batch for the batch axis
// of each data input, then the file's defaults.
std::map<std::string, std::int64_t> resolve_symbols(
    const std::vector<LeadingDim>& leading, const DimBindings& bindings, std::int64_t batch,
    const std::map<std::string, std::int64_t>& defaults) {
  std::map<std::string, std::int64_t> resolved = bindings.named;
  for (const LeadingDim& d : leading) {
    if (!d.fixed && !d.symbol.empty()) resolved.emplace(d.symbol, batch);
  }
  for (const auto& [name, value] : defaults) resolved.emplace(name, value);
  return resolved;
}

std::set<std::string> data_dependent_nodes(const onnx::ModelProto& model);

// Notes for the file's default dimensions that no --dim overrode.
void add_default_dim_notes(const std::map<std::string, std::int64_t>& defaults,
                           const DimBindings& bindings, std::vector<std::string>& notes) {
  for (const auto& [name, value] : defaults) {
    if (bindings.named.count(name) == 0) {
      notes.push_back(
          fmt::format("symbolic dimension '{}' bound to the file's default {} ({} to change)", name,
                      value, setting_entry(bindings.names, "dims", "dim", name, "N")));
    }
  }
}

// Replaces the symbolic dimensions of inputs and outputs by their values.
void bind_symbols(onnx::ModelProto& model, const std::string& source,
                  const std::map<std::string, std::int64_t>& resolved,
                  const DimBindings& bindings) {
  onnx::GraphProto* graph = model.mutable_graph();
  std::set<std::string> seen;
  for (auto& input : *graph->mutable_input()) {
    if (!input.type().has_tensor_type()) continue;
    auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (auto& dim : *shape->mutable_dim()) {
      if (dim.has_dim_value()) continue;
      const std::string name = dim.dim_param();
      seen.insert(name);
      auto it = resolved.find(name);
      if (it == resolved.end()) {
        throw InvalidInput(
            source + ": symbolic dimension '" + name + "' of '" + input.name() +
            "' is not bound; pass " +
            setting_entry(bindings.names, "dims", "dim", name.empty() ? "NAME" : name, "VALUE"));
      }
      dim.set_dim_value(it->second);
    }
  }
  for (auto& output : *graph->mutable_output()) {
    // Outputs' symbolic dims are cleared, never bound: they may be expressions ("batch*128")
    // or an input's name reused for another length (a decode step's present_key declared
    // [batch, heads, past, d] although it holds past + 1 tokens, as dynamic_axes written for
    // both often say). Shape inference computes what they are.
    if (!output.type().has_tensor_type() || !output.type().tensor_type().has_shape()) continue;
    for (auto& dim :
         *output.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!dim.has_dim_value()) dim.clear_dim_param();
    }
  }
  const std::set<std::string> counted = data_dependent_nodes(model);
  for (const auto& [name, value] : bindings.named) {
    if (seen.count(name) == 0 && counted.count(name) == 0) {
      const std::vector<std::string> known(seen.begin(), seen.end());
      throw InvalidInput(setting_entry(bindings.names, "dims", "dim", name, std::to_string(value)) +
                         ": " + source + " has no symbolic dimension '" + name + "' (it has: " +
                         (known.empty() ? std::string("none") : join_with_commas(known)) + ")");
    }
  }
  graph->clear_value_info();
}

// Names of the nodes whose output count depends on the data (see DataDependentCounts).
std::set<std::string> data_dependent_nodes(const onnx::ModelProto& model) {
  std::set<std::string> names;
  std::function<void(const onnx::GraphProto&)> visit = [&](const onnx::GraphProto& g) {
    for (const auto& n : g.node()) {
      if (n.op_type() == "NonZero" || n.op_type() == "NonMaxSuppression" ||
          n.op_type() == "Compress")
        names.insert(n.name());
      for (const auto& a : n.attribute())
        if (a.type() == onnx::AttributeProto_AttributeType_GRAPH) visit(a.g());
    }
  };
  visit(model.graph());
  return names;
}

// The note on the data-dependent counts the import fixed, with the boxes each RoiAlign then
// pools (a detector's proposals per image, as its own limits set them).
std::string data_dependent_note(const onnx::ModelProto& model, const DataDependentCounts& counts) {
  std::map<std::string, int> by_op;
  std::vector<std::string> given;
  std::string example;
  for (const DataDependentCount& c : counts.fixed) {
    ++by_op[c.op_type];
    if (c.given) given.push_back(fmt::format("{}={}", c.node, c.count));
    if (example.empty() && !c.given) example = c.node;
  }
  std::string ops;
  for (const auto& [op, n] : by_op) ops += fmt::format("{}{} {}", ops.empty() ? "" : ", ", n, op);
  const StaticShapes shapes = static_shapes(model);
  std::vector<std::string> rois;
  for (const auto& n : model.graph().node()) {
    if (n.op_type() != "RoiAlign" || n.input_size() < 2) continue;
    if (auto it = shapes.find(n.input(1)); it != shapes.end() && !it->second.empty())
      rois.push_back(std::to_string(it->second[0]));
  }
  std::string text = fmt::format(
      "counts that depend on the data ({}) assumed, not known: each at its upper bound (every "
      "element kept; NonMaxSuppression keeps max_output_boxes_per_class per class) so that the "
      "model's own limits downstream (TopK's k, a slice to a fixed count) set the sizes",
      ops);
  if (!rois.empty()) text += "; RoiAlign pools " + join_with_commas(rois) + " boxes";
  if (!given.empty()) text += "; given: " + join_with_commas(given);
  if (!example.empty()) {
    text += fmt::format("; override one with --dim NODE=COUNT (e.g. --dim {}=100)", example);
  }
  return text;
}

// Folds the shape arithmetic, writes out the control flow that it makes constant (loops,
// branches, sequences: control_flow.h) and folds again until nothing changes, then runs strict
// shape inference. `notes`, when given, receives one line on the control flow written out.
void fold_and_infer(onnx::ModelProto& model, const std::string& source,
                    std::vector<std::string>* notes = nullptr,
                    const std::map<std::string, std::int64_t>& named = {}) {
  DataDependentCounts counts;
  for (const std::string& node : data_dependent_nodes(model)) {
    if (auto it = named.find(node); it != named.end()) counts.overrides[node] = it->second;
  }
  fold_shape_computations(model, &counts);
  ControlFlowReport unrolled;
  for (int round = 0; round < 8; ++round) {
    try {
      infer_shapes(model, /*strict=*/false);
    } catch (const std::exception&) {
      // Reported by the strict pass below.
    }
    ControlFlowReport r;
    try {
      r = unroll_control_flow(model, static_shapes(model));
    } catch (const InvalidInput& e) {
      throw InvalidInput(source + ": " + e.what());
    }
    if (r.loops + r.branches + r.sequences == 0) break;
    unrolled.loops += r.loops;
    unrolled.iterations += r.iterations;
    unrolled.branches += r.branches;
    unrolled.sequences += r.sequences;
    fold_shape_computations(model, &counts);
  }
  if (notes != nullptr && !counts.fixed.empty())
    notes->push_back(data_dependent_note(model, counts));
  if (notes != nullptr && unrolled.loops + unrolled.branches + unrolled.sequences > 0) {
    std::vector<std::string> parts;
    if (unrolled.loops > 0) {
      parts.push_back(fmt::format("{} Loop{} with a constant trip count unrolled ({} iterations)",
                                  unrolled.loops, unrolled.loops == 1 ? "" : "s",
                                  unrolled.iterations));
    }
    if (unrolled.branches > 0) {
      parts.push_back(fmt::format("{} If node{} replaced by the branch {} constant condition takes",
                                  unrolled.branches, unrolled.branches == 1 ? "" : "s",
                                  unrolled.branches == 1 ? "its" : "their"));
    }
    if (unrolled.sequences > 0) {
      parts.push_back(fmt::format("{} sequence operator{} written as tensors", unrolled.sequences,
                                  unrolled.sequences == 1 ? "" : "s"));
    }
    notes->push_back(
        "control flow fixed once every dimension is bound, written out as the "
        "operators it runs: " +
        join_with_commas(parts));
  }
  try {
    infer_shapes(model, /*strict=*/true);
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    // A Loop over sequences is how torch.onnx.export (torch 1.13, opsets 11-17) writes
    // repeat_interleave with a dynamic size; its body's Reshape target ignores the axis the body
    // unsqueezed, so the unrolled shapes contradict the rest of the graph.
    const std::string loop_hint =
        unrolled.loops > 0 && unrolled.sequences > 0
            ? "; the file's Loop over sequences (torch.onnx.export's form of repeat_interleave "
              "with a dynamic size) gives shapes that contradict the rest of the graph once "
              "unrolled (its body's Reshape target does not allow for the axis it unsqueezed): "
              "re-export with the repeat written as expand + reshape (Hugging Face's repeat_kv: "
              "x[:, :, None].expand(b, h, n, s, d).reshape(b, h * n, s, d)) or with static shapes"
            : "";
    throw InvalidInput(source + ": ONNX shape inference failed: " + what + loop_hint);
  }
}

// Integer values of Constant nodes and integer initializers of a (folded) model.
std::unordered_map<std::string, ConstantTensor> integer_constants(const onnx::ModelProto& model) {
  std::unordered_map<std::string, ConstantTensor> values;
  for (const auto& init : model.graph().initializer()) {
    if (auto v = read_constant(init); v && !v->is_real()) values.emplace(init.name(), *v);
  }
  for (const auto& node : model.graph().node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1) continue;
    if (auto v = constant_node_value(node); v && !v->is_real()) values.emplace(node.output(0), *v);
  }
  return values;
}

// Tensors of the file computed from literals alone (Constant nodes and initializers through
// evaluable operators, Shape and Size of such tensors included): their value cannot follow a
// re-bound batch.
std::set<std::string> literal_derived(const onnx::ModelProto& model) {
  std::set<std::string> derived;
  for (const auto& init : model.graph().initializer()) derived.insert(init.name());
  for (const auto& node : model.graph().node()) {
    const std::string& op = node.op_type();
    // The shape of a literal is a literal too (Split of repeat counts is one as well); the shape
    // of anything else may follow the batch.
    if (!is_evaluable_op(op) && op != "Split") continue;
    bool all = true;
    for (const auto& in : node.input()) all = all && (in.empty() || derived.count(in) > 0);
    if (all) derived.insert(node.output().begin(), node.output().end());
  }
  return derived;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out;
}

// "axis 1 of 'src' and 'tgt'".
std::string axis_of_inputs(const BatchAxisTrace& axis) {
  std::vector<std::string> quoted;
  for (const auto& n : axis.inputs) quoted.push_back("'" + n + "'");
  std::string list;
  for (std::size_t i = 0; i < quoted.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == quoted.size() ? " and " : ", ") + quoted[i];
  }
  return fmt::format("axis {} of {}", axis.axis, list);
}

// The torch.onnx.export call that makes the batch axis dynamic.
std::string export_fix(const onnx::ModelProto& model, const std::string& source,
                       const BatchAxisTrace& axis) {
  std::vector<std::string> outputs;
  for (const auto& o : model.graph().output()) outputs.push_back(o.name());
  std::string axes;
  for (const auto& n : axis.inputs)
    axes += (axes.empty() ? "" : ", ") + fmt::format("\"{}\": {{{}: \"batch\"}}", n, axis.axis);
  // Outputs the analysis followed say where their batch is; others are taken to hold it where
  // the inputs do.
  for (const auto& name : outputs) {
    const auto traced = axis.output_axes.find(name);
    axes += fmt::format(", \"{}\": {{{}: \"batch\"}}", name,
                        traced != axis.output_axes.end() ? traced->second : axis.axis);
  }
  return fmt::format(
      "torch.onnx.export(model, x, \"{}\", input_names=[{}], output_names=[{}], "
      "dynamic_axes={{{}}})",
      std::filesystem::path(source).filename().string(), quoted_list(axis.inputs),
      quoted_list(outputs), axes);
}

// The refusal for a fixed batch that cannot be re-bound, with the exact export fix.
[[noreturn]] void refuse_rebinding(const onnx::ModelProto& model, const std::string& source,
                                   const BatchAxisTrace& axis, std::int64_t batch,
                                   SettingNames names, const std::string& reason) {
  const std::string where =
      axis.axis == 0
          ? ""
          : fmt::format(" at axis {} (its batch axis: a sequence-first layout)", axis.axis);
  throw InvalidInput(fmt::format(
      "{}: input '{}' has a fixed batch of {}{} in the file (exported without dynamic_axes) and "
      "{} cannot be applied soundly: {}; re-export with a dynamic batch axis: {}, or predict "
      "with {}",
      source, axis.inputs.empty() ? "" : axis.inputs[0], axis.size, where,
      setting_with_value(names, "batch", std::to_string(batch)), reason,
      export_fix(model, source, axis),
      setting_with_value(names, "batch", std::to_string(axis.size))));
}

// The batch axis of a file whose data inputs name none: the first axis along which samples are
// independent (batch_axis.h), axis 0 first, as exporters lay batches out unless a layout says
// otherwise; or none. Each axis of the first data input is tried.
struct BatchAxisChoice {
  std::optional<BatchAxisTrace> axis;  ///< nullopt: the file has no batch axis
  std::vector<BatchAxisTrace> tried;
};

BatchAxisChoice choose_batch_axis(const onnx::ModelProto& reference,
                                  const std::set<std::string>& data_inputs) {
  BatchAxisChoice choice;
  std::size_t rank = 0;
  for (const auto& input : reference.graph().input()) {
    if (data_inputs.count(input.name()) == 0 || !input.type().has_tensor_type()) continue;
    rank = static_cast<std::size_t>(input.type().tensor_type().shape().dim_size());
    break;
  }
  for (std::size_t axis = 0; axis < rank; ++axis) {
    choice.tried.push_back(trace_batch_axis(reference, data_inputs, axis));
    BatchAxisTrace& t = choice.tried.back();
    // A leading axis of 1 is the batch of a batch-1 export: a singleton cannot be told apart
    // from any other size-1 dimension a reshape moves it into, so the analysis' verdict on it
    // is not evidence; re-binding it is checked shape by shape instead.
    if (axis == 0 && t.size == 1) {
      t.independent = true;
      t.known = true;
    }
    if (t.independent) {
      choice.axis = t;
      return choice;
    }
  }
  // No axis is known to be independent. The first axis the analysis could not follow (a node
  // without a rule) is taken, checked when it is re-bound: axis 0 when it knew nothing of it
  // (the convention). Where it knew every axis to be mixed, the file computes one sample.
  for (const BatchAxisTrace& t : choice.tried) {
    if (!t.known) {
      choice.axis = t;
      break;
    }
  }
  return choice;
}

// "axis 0 (3): node '/backbone/conv1/Conv' (Conv) takes it as its channel axis; axis 1 ..."
std::string why_no_axis(const BatchAxisChoice& choice) {
  std::string out;
  for (const BatchAxisTrace& t : choice.tried) {
    out += fmt::format("{}axis {} ({}): {}", out.empty() ? "" : "; ", t.axis, t.size, t.reason);
  }
  return out;
}

PreparedModel rebind_fixed_batch(const onnx::ModelProto& original, const std::string& source,
                                 const std::vector<LeadingDim>& leading,
                                 const DimBindings& bindings, const BatchAxisTrace& axis,
                                 const onnx::ModelProto& reference, std::int64_t batch) {
  const std::int64_t file_batch = axis.size;
  const auto defaults = default_dims(original, source);
  const StaticShapes shapes0 = static_shapes(reference);

  PreparedModel prepared;
  prepared.model = original;
  onnx::GraphProto* graph = prepared.model.mutable_graph();
  for (auto& input : *graph->mutable_input()) {
    if (std::find(axis.inputs.begin(), axis.inputs.end(), input.name()) == axis.inputs.end()) {
      continue;
    }
    auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() > static_cast<int>(axis.axis)) {
      shape->mutable_dim(static_cast<int>(axis.axis))->set_dim_value(batch);
    }
  }
  bind_symbols(prepared.model, source, resolve_symbols(leading, bindings, batch, defaults),
               bindings);

  // Outputs keep the shapes of the exported batch in the file: let inference give them anew.
  for (auto& output : *graph->mutable_output()) {
    if (output.type().has_tensor_type())
      output.mutable_type()->mutable_tensor_type()->clear_shape();
  }

  // Reshape and Expand targets computed from literals alone that hold the exported batch: the
  // batch-axis analysis says which dimension holds it (as a factor: nn.MultiheadAttention's
  // (S, N·H, D)); elsewhere, on axis 0, a Reshape target that copies the exported batch into
  // its first entry becomes 0 ("copy the input's dimension"), which is what x.view(x.size(0),
  // ...) meant, and an Expand target that creates the batch dimension takes the new batch.
  const auto derived = literal_derived(original);
  const auto values0 = integer_constants(reference);
  // Integer tensors, and nodes the reference folded into constants, are shape arithmetic (repeat
  // counts, indices), never the batch's data, even when an entry equals the exported batch.
  std::set<std::string> integer_valued;
  for (const auto& v : reference.graph().value_info()) {
    const auto t = v.type().tensor_type().elem_type();
    if (t == onnx::TensorProto_DataType_INT64 || t == onnx::TensorProto_DataType_INT32)
      integer_valued.insert(v.name());
  }
  int adjusted = 0;
  for (int i = 0; i < graph->node_size(); ++i) {
    onnx::NodeProto* node = graph->mutable_node(i);
    const bool is_reshape = node->op_type() == "Reshape";
    if ((!is_reshape && node->op_type() != "Expand") || node->input_size() < 2) continue;
    if (derived.count(node->input(1)) == 0) continue;
    auto value0 = values0.find(node->input(1));
    if (value0 == values0.end() || value0->second.size() == 0) continue;
    std::vector<std::int64_t> target = value0->second.as_integers();
    bool changed = false;
    if (const auto traced = axis.targets.find(i); traced != axis.targets.end()) {
      if (traced->second.size() != target.size()) continue;
      for (std::size_t k = 0; k < target.size(); ++k) {
        const TargetDim& d = traced->second[k];
        if (!d.has_batch || target[k] != d.size || d.size % file_batch != 0) continue;
        target[k] = d.size / file_batch * batch;
        changed = true;
      }
    } else if (axis.axis == 0 && !integer_valued.count(node->output(0)) &&
               values0.count(node->output(0)) == 0) {
      const std::string& probe = is_reshape ? node->input(0) : node->output(0);
      auto shape0 = shapes0.find(probe);
      if (shape0 == shapes0.end() || shape0->second.empty()) continue;
      if (target[0] != file_batch || shape0->second[0] != file_batch) continue;
      if (is_reshape) {
        bool allow_zero = false;
        for (const auto& a : node->attribute()) allow_zero |= a.name() == "allowzero" && a.i() != 0;
        if (allow_zero) continue;
        target[0] = 0;
      } else {
        if (target.size() != shape0->second.size()) continue;
        target[0] = batch;
      }
      changed = true;
    }
    if (!changed) continue;
    ConstantTensor value = value0->second;
    value.integers = target;
    const std::string name = node->input(1) + "/nnergy_batch_" + std::to_string(i);
    *graph->add_initializer() = to_tensor_proto(value, name);
    node->set_input(1, name);
    ++adjusted;
  }

  try {
    fold_and_infer(prepared.model, source, &prepared.notes, bindings.named);
  } catch (const InvalidInput& e) {
    std::string what = e.what();
    if (what.rfind(source + ": ", 0) == 0) what = what.substr(source.size() + 2);
    refuse_rebinding(original, source, axis, batch, bindings.names, what);
  }

  // Every activation must scale with the batch or not depend on it; every output must scale;
  // and a Reshape must keep its element count (ONNX inference does not check that).
  const StaticShapes shapes1 = static_shapes(prepared.model);
  for (const auto& node : prepared.model.graph().node()) {
    if (node.op_type() != "Reshape" || node.input_size() < 1 || node.output_size() < 1) continue;
    auto in = shapes1.find(node.input(0));
    auto out = shapes1.find(node.output(0));
    if (in == shapes1.end() || out == shapes1.end()) continue;
    if (element_count(in->second) != element_count(out->second)) {
      refuse_rebinding(original, source, axis, batch, bindings.names,
                       fmt::format("node '{}' (Reshape) hard-codes a target shape {} that cannot "
                                   "hold its input {} (the exported batch is folded into it)",
                                   node.name(), to_string(out->second), to_string(in->second)));
    }
  }
  auto scales = [&](std::int64_t e0, std::int64_t e1) { return e1 * file_batch == e0 * batch; };
  for (const auto& output : original.graph().output()) {
    auto a = shapes0.find(output.name());
    auto b = shapes1.find(output.name());
    if (a == shapes0.end() || b == shapes1.end()) continue;
    if (!scales(element_count(a->second), element_count(b->second))) {
      refuse_rebinding(
          original, source, axis, batch, bindings.names,
          fmt::format("output '{}' would be {} instead of scaling with the batch "
                      "(it is {} at batch {})",
                      output.name(), to_string(b->second), to_string(a->second), file_batch));
    }
  }
  for (const auto& value : prepared.model.graph().value_info()) {
    auto a = shapes0.find(value.name());
    auto b = shapes1.find(value.name());
    if (a == shapes0.end() || b == shapes1.end()) continue;
    const std::int64_t e0 = element_count(a->second);
    const std::int64_t e1 = element_count(b->second);
    if (e0 != e1 && !scales(e0, e1)) {
      refuse_rebinding(
          original, source, axis, batch, bindings.names,
          fmt::format("tensor '{}' would be {} (it is {} at batch {}): it neither "
                      "scales with the batch nor stays fixed",
                      value.name(), to_string(b->second), to_string(a->second), file_batch));
    }
  }
  prepared.batch = batch;
  prepared.notes.push_back(fmt::format(
      "the file fixes the batch at {} (exported without dynamic_axes); nnergy re-bound {} to "
      "{} and re-inferred every shape ({} Reshape/Expand target{} that hard-coded the batch "
      "adjusted; every activation checked to scale with the batch or not depend on it). If that "
      "dimension is not the batch, re-export with dynamic_axes",
      file_batch, axis_of_inputs(axis), batch, adjusted, adjusted == 1 ? "" : "s"));
  return prepared;
}

// A static file: its batch axis found by analysis, then kept or re-bound.
PreparedModel prepare_static_batch(const onnx::ModelProto& model, const std::string& source,
                                   const std::set<std::string>& data_inputs,
                                   const std::vector<LeadingDim>& leading,
                                   const DimBindings& bindings) {
  const auto defaults = default_dims(model, source);
  PreparedModel prepared;
  prepared.model = model;
  bind_symbols(prepared.model, source, resolve_symbols(leading, bindings, 1, defaults), bindings);
  fold_and_infer(prepared.model, source, &prepared.notes, bindings.named);
  const BatchAxisChoice choice = choose_batch_axis(prepared.model, data_inputs);
  if (!choice.axis) {
    std::vector<std::string> inputs;
    for (const LeadingDim& d : leading) inputs.push_back("'" + d.input + "'");
    const std::string what = fmt::format(
        "{}: {} {} no batch axis: no axis is independent per sample ({})", source,
        join_with_commas(inputs), inputs.size() == 1 ? "has" : "have", why_no_axis(choice));
    if (bindings.batch && *bindings.batch != 1) {
      // One image (C, H, W) whose first axis reaches a convolution as channels: the layout of
      // torchvision's detection and segmentation exports, which take a list of images.
      const BatchAxisTrace& first = choice.tried.front();
      const bool one_image =
          first.reason.find("channel axis") != std::string::npos && choice.tried.size() == 3;
      throw InvalidInput(fmt::format(
          "{}; {} cannot be applied: the file computes one {} per run{}. Predict the file as "
          "exported ({} or no {}) and multiply the figures, or export the model with a batch "
          "axis (dynamic_axes)",
          what, setting_with_value(bindings.names, "batch", std::to_string(*bindings.batch)),
          one_image ? "image" : "sample",
          one_image ? " (a single (C, H, W) image: torchvision's detection models take a list of "
                      "images, one input each)"
                    : "",
          setting_with_value(bindings.names, "batch", "1"), setting_name(bindings.names, "batch")));
    }
    prepared.batch = 1;
    prepared.notes.push_back(what.substr(source.size() + 2) +
                             "; the file computes one sample per run, so the batch is 1");
    return prepared;
  }
  const BatchAxisTrace& axis = *choice.axis;
  if (bindings.batch && *bindings.batch != axis.size) {
    return rebind_fixed_batch(model, source, leading, bindings, axis, prepared.model,
                              *bindings.batch);
  }
  prepared.batch = axis.size;
  if (axis.axis != 0) {
    prepared.notes.push_back(fmt::format(
        "the batch is {} ({} fixed in the file, a sequence-first layout){}: axis 0 is not the "
        "batch ({})",
        axis.size, axis_of_inputs(axis),
        axis.known ? "" : fmt::format(", assumed: nnergy could not follow it ({})", axis.reason),
        choice.tried.front().reason));
  }
  add_default_dim_notes(defaults, bindings, prepared.notes);
  return prepared;
}

}  // namespace

PreparedModel prepare_model(const onnx::ModelProto& model, const std::string& source,
                            const std::set<std::string>& data_inputs, const DimBindings& bindings) {
  const std::vector<LeadingDim> leading = leading_dims(model, data_inputs);
  // A file whose data inputs all fix their leading dimension and name no batch: which axis is
  // the batch is for the analysis to say.
  const bool fixed = !leading.empty() && std::all_of(leading.begin(), leading.end(),
                                                     [](const LeadingDim& d) { return d.fixed; });
  if (fixed) return prepare_static_batch(model, source, data_inputs, leading, bindings);

  // The batch computed: the requested one, else 1; a --dim that names the leading symbol
  // overrides it.
  std::int64_t batch = bindings.batch.value_or(1);
  const auto defaults = default_dims(model, source);
  const auto resolved = resolve_symbols(leading, bindings, batch, defaults);
  if (!leading.empty() && !leading[0].fixed && resolved.count(leading[0].symbol) > 0) {
    batch = resolved.at(leading[0].symbol);
  }
  PreparedModel prepared;
  prepared.model = model;
  bind_symbols(prepared.model, source, resolved, bindings);
  fold_and_infer(prepared.model, source, &prepared.notes, bindings.named);
  prepared.batch = batch;
  add_default_dim_notes(defaults, bindings, prepared.notes);
  return prepared;
}

}  // namespace nnergy::graph
