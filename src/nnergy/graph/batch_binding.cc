#include "nnergy/graph/batch_binding.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <unordered_map>

#include "nnergy/core/error.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/core/text.h"
#include "nnergy/graph/constant_tensor.h"
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

bool names_the_batch(const std::string& symbol) {
  return ascii_lower(symbol).find("batch") != std::string::npos;
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
    // Outputs may use expressions ("batch*128") that only inference can resolve: clear them.
    if (!output.type().has_tensor_type() || !output.type().tensor_type().has_shape()) continue;
    for (auto& dim :
         *output.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (dim.has_dim_value()) continue;
      auto it = resolved.find(dim.dim_param());
      if (it != resolved.end()) {
        dim.set_dim_value(it->second);
      } else {
        dim.clear_dim_param();
      }
    }
  }
  for (const auto& [name, value] : bindings.named) {
    if (seen.count(name) == 0) {
      const std::vector<std::string> known(seen.begin(), seen.end());
      throw InvalidInput(setting_entry(bindings.names, "dims", "dim", name, std::to_string(value)) +
                         ": " + source + " has no symbolic dimension '" + name + "' (it has: " +
                         (known.empty() ? std::string("none") : join_with_commas(known)) + ")");
    }
  }
  graph->clear_value_info();
}

void fold_and_infer(onnx::ModelProto& model, const std::string& source) {
  fold_shape_computations(model);
  try {
    infer_shapes(model, /*strict=*/true);
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    throw InvalidInput(source + ": ONNX shape inference failed: " + what);
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
// evaluable operators, never Shape or Size): their value cannot follow a re-bound batch.
std::set<std::string> literal_derived(const onnx::ModelProto& model) {
  std::set<std::string> derived;
  for (const auto& init : model.graph().initializer()) derived.insert(init.name());
  for (const auto& node : model.graph().node()) {
    const std::string& op = node.op_type();
    if (op == "Shape" || op == "Size" || !is_evaluable_op(op)) continue;
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

// The refusal for a fixed batch that cannot be re-bound, with the exact export fix.
[[noreturn]] void refuse_rebinding(const onnx::ModelProto& model, const std::string& source,
                                   const std::vector<LeadingDim>& leading, std::int64_t file_batch,
                                   std::int64_t batch, SettingNames names,
                                   const std::string& reason) {
  std::vector<std::string> inputs;
  for (const LeadingDim& d : leading) inputs.push_back(d.input);
  std::vector<std::string> outputs;
  for (const auto& o : model.graph().output()) outputs.push_back(o.name());
  std::string axes;
  for (const auto& n : inputs)
    axes += (axes.empty() ? "" : ", ") + fmt::format("\"{}\": {{0: \"batch\"}}", n);
  for (const auto& n : outputs) axes += fmt::format(", \"{}\": {{0: \"batch\"}}", n);
  throw InvalidInput(fmt::format(
      "{}: input '{}' has a fixed batch of {} in the file (exported without dynamic_axes) and "
      "{} cannot be applied soundly: {}; re-export with a dynamic batch axis: "
      "torch.onnx.export(model, x, \"{}\", input_names=[{}], output_names=[{}], "
      "dynamic_axes={{{}}}), or predict with {}",
      source, inputs.empty() ? "" : inputs[0], file_batch,
      setting_with_value(names, "batch", std::to_string(batch)), reason,
      std::filesystem::path(source).filename().string(), quoted_list(inputs), quoted_list(outputs),
      axes, setting_with_value(names, "batch", std::to_string(file_batch))));
}

PreparedModel rebind_fixed_batch(const onnx::ModelProto& original, const std::string& source,
                                 const std::vector<LeadingDim>& leading,
                                 const DimBindings& bindings, std::int64_t file_batch,
                                 std::int64_t batch) {
  const auto defaults = default_dims(original, source);
  // The file as exported, for reference shapes.
  onnx::ModelProto reference = original;
  bind_symbols(reference, source, resolve_symbols(leading, bindings, file_batch, defaults),
               bindings);
  fold_and_infer(reference, source);
  const StaticShapes shapes0 = static_shapes(reference);

  PreparedModel prepared;
  prepared.model = original;
  onnx::GraphProto* graph = prepared.model.mutable_graph();
  for (auto& input : *graph->mutable_input()) {
    for (const LeadingDim& d : leading) {
      if (d.input == input.name() && d.fixed) {
        input.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(
            batch);
      }
    }
  }
  bind_symbols(prepared.model, source, resolve_symbols(leading, bindings, batch, defaults),
               bindings);

  // Outputs keep the shapes of the exported batch in the file: let inference give them anew.
  for (auto& output : *graph->mutable_output()) {
    if (output.type().has_tensor_type())
      output.mutable_type()->mutable_tensor_type()->clear_shape();
  }

  // Reshape targets computed from literals alone that copy the exported batch into their first
  // entry become 0 ("copy the input's dimension"), which is what x.view(x.size(0), ...) meant;
  // Expand targets that create the batch dimension take the new batch.
  const auto derived = literal_derived(original);
  const auto values0 = integer_constants(reference);
  int adjusted = 0;
  for (int i = 0; i < graph->node_size(); ++i) {
    onnx::NodeProto* node = graph->mutable_node(i);
    const bool is_reshape = node->op_type() == "Reshape";
    if ((!is_reshape && node->op_type() != "Expand") || node->input_size() < 2) continue;
    if (derived.count(node->input(1)) == 0) continue;
    auto value0 = values0.find(node->input(1));
    if (value0 == values0.end() || value0->second.size() == 0) continue;
    std::vector<std::int64_t> target = value0->second.as_integers();
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
    ConstantTensor value = value0->second;
    value.integers = target;
    const std::string name = node->input(1) + "/nnergy_batch_" + std::to_string(i);
    *graph->add_initializer() = to_tensor_proto(value, name);
    node->set_input(1, name);
    ++adjusted;
  }

  try {
    fold_and_infer(prepared.model, source);
  } catch (const InvalidInput& e) {
    std::string what = e.what();
    if (what.rfind(source + ": ", 0) == 0) what = what.substr(source.size() + 2);
    refuse_rebinding(original, source, leading, file_batch, batch, bindings.names, what);
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
      refuse_rebinding(original, source, leading, file_batch, batch, bindings.names,
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
          original, source, leading, file_batch, batch, bindings.names,
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
          original, source, leading, file_batch, batch, bindings.names,
          fmt::format("tensor '{}' would be {} (it is {} at batch {}): it neither "
                      "scales with the batch nor stays fixed",
                      value.name(), to_string(b->second), to_string(a->second), file_batch));
    }
  }
  prepared.batch = batch;
  prepared.notes.push_back(fmt::format(
      "the file fixes the batch at {} (exported without dynamic_axes); nnergy re-bound the "
      "leading dimension of its data inputs to {} and re-inferred every shape ({} Reshape/Expand "
      "target{} that hard-coded the batch adjusted; every activation checked to scale with the "
      "batch or not depend on it). If that dimension is not the batch, re-export with dynamic_axes",
      file_batch, batch, adjusted, adjusted == 1 ? "" : "s"));
  return prepared;
}

}  // namespace

PreparedModel prepare_model(const onnx::ModelProto& model, const std::string& source,
                            const std::set<std::string>& data_inputs, const DimBindings& bindings) {
  const std::vector<LeadingDim> leading = leading_dims(model, data_inputs);
  std::optional<std::int64_t> file_batch;
  for (const LeadingDim& d : leading) {
    if (!d.fixed) continue;
    if (file_batch && *file_batch != *d.fixed && bindings.batch && *bindings.batch != *d.fixed) {
      throw InvalidInput(fmt::format(
          "{}: {}: the data inputs have different fixed leading dimensions ({} and {}), "
          "so nnergy cannot tell which is the batch; re-export with dynamic_axes naming the batch "
          "axis of each input",
          source, setting_with_value(bindings.names, "batch", std::to_string(*bindings.batch)),
          *file_batch, *d.fixed));
    }
    if (!file_batch) file_batch = d.fixed;
  }

  if (file_batch && bindings.batch && *bindings.batch != *file_batch) {
    return rebind_fixed_batch(model, source, leading, bindings, *file_batch, *bindings.batch);
  }

  // The batch computed: the requested one, else the file's fixed batch, else 1; a --dim that
  // names the leading symbol overrides it.
  std::int64_t batch = bindings.batch.value_or(file_batch.value_or(1));
  const auto defaults = default_dims(model, source);
  const auto resolved = resolve_symbols(leading, bindings, batch, defaults);
  if (!leading.empty() && !leading[0].fixed && resolved.count(leading[0].symbol) > 0) {
    batch = resolved.at(leading[0].symbol);
  }
  PreparedModel prepared;
  prepared.model = model;
  bind_symbols(prepared.model, source, resolved, bindings);
  fold_and_infer(prepared.model, source);
  prepared.batch = batch;
  for (const auto& [name, value] : defaults) {
    if (bindings.named.count(name) == 0) {
      prepared.notes.push_back(
          fmt::format("symbolic dimension '{}' bound to the file's default {} ({} to change)", name,
                      value, setting_entry(bindings.names, "dims", "dim", name, "N")));
    }
  }
  return prepared;
}

}  // namespace nnergy::graph
