#include "nnergy/graph/shape_folding.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "nnergy/graph/constant_tensor.h"

namespace nnergy::graph {

namespace {

// Marks value_info entries that nnergy inferred itself, so that they survive re-inference.
constexpr const char* kPinnedDocString = "nnergy: inferred by nnergy";

// Enough for the deepest chains seen in exports (each round resolves at least one Reshape or
// Expand whose output shape feeds a later Shape node).
constexpr int kMaxFoldingRounds = 400;

bool is_floating_type(std::int32_t t) {
  return t == onnx::TensorProto_DataType_FLOAT || t == onnx::TensorProto_DataType_DOUBLE ||
         t == onnx::TensorProto_DataType_FLOAT16 || t == onnx::TensorProto_DataType_BFLOAT16;
}

void add_shapes(const onnx::ValueInfoProto& value, StaticShapes& shapes) {
  if (!value.type().has_tensor_type() || !value.type().tensor_type().has_shape()) return;
  std::vector<std::int64_t> dims;
  for (const auto& d : value.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return;
    dims.push_back(d.dim_value());
  }
  shapes[value.name()] = std::move(dims);
}

onnx::NodeProto constant_node(const onnx::NodeProto& original, const ConstantTensor& value) {
  onnx::NodeProto node;
  node.set_name(original.name());
  node.set_op_type("Constant");
  node.add_output(original.output(0));
  auto* attr = node.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  *attr->mutable_t() = to_tensor_proto(value, original.output(0));
  return node;
}

// Static output shapes of the Einsum nodes whose inputs are known but whose output is not.
// Returns true when one was added.
bool pin_einsum_shapes(onnx::ModelProto& model, const StaticShapes& shapes) {
  bool added = false;
  auto* graph = model.mutable_graph();
  for (const auto& node : graph->node()) {
    if (node.op_type() != "Einsum" || node.output_size() != 1) continue;
    if (shapes.count(node.output(0)) > 0) continue;
    std::vector<std::vector<std::int64_t>> inputs;
    for (const auto& in : node.input()) {
      auto it = shapes.find(in);
      if (it == shapes.end()) break;
      inputs.push_back(it->second);
    }
    if (inputs.size() != static_cast<std::size_t>(node.input_size())) continue;
    std::string equation;
    for (const auto& a : node.attribute()) {
      if (a.name() == "equation") equation = a.s();
    }
    const auto out = einsum_output_shape(equation, inputs);
    if (!out) continue;
    std::int32_t elem_type = onnx::TensorProto_DataType_FLOAT;
    for (const auto& v : graph->value_info()) {
      if (v.name() == node.input(0) && v.type().has_tensor_type())
        elem_type = v.type().tensor_type().elem_type();
    }
    for (const auto& v : graph->input()) {
      if (v.name() == node.input(0) && v.type().has_tensor_type())
        elem_type = v.type().tensor_type().elem_type();
    }
    onnx::ValueInfoProto* v = graph->add_value_info();
    v->set_name(node.output(0));
    v->set_doc_string(kPinnedDocString);
    auto* tensor = v->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elem_type);
    for (std::int64_t d : *out) tensor->mutable_shape()->add_dim()->set_dim_value(d);
    added = true;
  }
  return added;
}

// Adds a pinned value_info of `dims` for `name`, of element type `elem_type`.
void pin_shape(onnx::GraphProto* graph, const std::string& name, std::int32_t elem_type,
               const std::vector<std::int64_t>& dims) {
  onnx::ValueInfoProto* v = graph->add_value_info();
  v->set_name(name);
  v->set_doc_string(kPinnedDocString);
  auto* tensor = v->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  for (std::int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

std::int64_t element_product(const std::vector<std::int64_t>& dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  return n;
}

// Static output shapes of the data-dependent operators whose inputs' shapes are known (see
// fold_shape_computations). Returns true when one was added.
bool pin_data_dependent_shapes(onnx::ModelProto& model, StaticShapes& shapes,
                               const std::unordered_map<std::string, ConstantTensor>& values,
                               DataDependentCounts* counts) {
  bool added = false;
  auto* graph = model.mutable_graph();
  for (int i = 0; i < graph->node_size(); ++i) {
    const onnx::NodeProto node = graph->node(i);
    const std::string& op = node.op_type();
    if (op != "NonZero" && op != "NonMaxSuppression" && op != "Compress") continue;
    if (node.output_size() < 1 || shapes.count(node.output(0)) > 0) continue;
    std::vector<std::int64_t> in;
    if (auto it = shapes.find(node.input(0)); it != shapes.end()) {
      in = it->second;
    } else {
      continue;
    }
    std::int64_t bound = 0;
    std::vector<std::int64_t> dims;
    std::size_t count_at = 0;  // the dimension of `dims` that holds the count
    std::int32_t type = onnx::TensorProto_DataType_INT64;
    if (op == "NonZero") {
      bound = element_product(in);
      dims = {static_cast<std::int64_t>(in.size()), bound};
      count_at = 1;
    } else if (op == "NonMaxSuppression") {
      const auto scores = shapes.find(node.input_size() > 1 ? node.input(1) : "");
      if (in.size() != 3 || scores == shapes.end() || scores->second.size() != 3) continue;
      std::int64_t per_class = 0;  // ONNX's default max_output_boxes_per_class
      if (node.input_size() > 2 && !node.input(2).empty()) {
        const auto m = values.find(node.input(2));
        if (m == values.end() || m->second.size() != 1) continue;
        per_class = std::min(in[1], m->second.integer_at(0));
      }
      bound = in[0] * scores->second[1] * std::max<std::int64_t>(per_class, 0);
      dims = {bound, 3};
    } else {
      std::optional<std::int64_t> axis;
      for (const auto& a : node.attribute())
        if (a.name() == "axis")
          axis = a.i() < 0 ? a.i() + static_cast<std::int64_t>(in.size()) : a.i();
      const auto cond = shapes.find(node.input_size() > 1 ? node.input(1) : "");
      if (cond == shapes.end() || cond->second.size() != 1) continue;
      if (axis && (*axis < 0 || *axis >= static_cast<std::int64_t>(in.size()))) continue;
      if (axis) {
        count_at = static_cast<std::size_t>(*axis);
        bound = std::min(in[count_at], cond->second[0]);
        dims = in;
        dims[count_at] = bound;
      } else {
        bound = std::min(element_product(in), cond->second[0]);
        dims = {bound};
      }
      type = onnx::TensorProto_DataType_FLOAT;
      for (const auto& v : graph->value_info())
        if (v.name() == node.input(0) && v.type().has_tensor_type())
          type = v.type().tensor_type().elem_type();
      for (const auto& v : graph->input())
        if (v.name() == node.input(0) && v.type().has_tensor_type())
          type = v.type().tensor_type().elem_type();
    }
    DataDependentCount fixed{node.name(), op, bound, false};
    if (counts != nullptr) {
      if (auto o = counts->overrides.find(node.name()); o != counts->overrides.end()) {
        fixed.count = std::min(o->second, bound);
        fixed.given = true;
      }
      counts->fixed.push_back(fixed);
    }
    dims[count_at] = fixed.count;
    pin_shape(graph, node.output(0), type, dims);
    shapes[node.output(0)] = dims;
    added = true;
  }
  return added;
}

// Types of the tensors one folding pass has seen, and the values it has folded, in the form
// ONNX's per-operator inference functions read them.
class LocalInference {
 public:
  LocalInference(const onnx::ModelProto& model,
                 const std::unordered_map<std::string, ConstantTensor>& values) {
    const auto& graph = model.graph();
    for (const auto& v : graph.input()) learn_type(v.name(), v.type());
    for (const auto& v : graph.value_info()) learn_type(v.name(), v.type());
    for (const auto& v : graph.output()) {
      if (types_.count(v.name()) == 0) learn_type(v.name(), v.type());
    }
    for (const auto& init : graph.initializer()) {
      onnx::TypeProto type;
      type.mutable_tensor_type()->set_elem_type(init.data_type());
      for (std::int64_t d : init.dims())
        type.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
      learn_type(init.name(), type);
    }
    for (const auto& [name, value] : values) learn_value(name, value);
  }

  void learn_value(const std::string& name, const ConstantTensor& value) {
    data_[name] = to_tensor_proto(value, name);
    data_ptrs_[name] = &data_[name];
    onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(value.elem_type);
    auto* shape = type.mutable_tensor_type()->mutable_shape();
    for (std::int64_t d : value.dims) shape->add_dim()->set_dim_value(d);
    learn_type(name, type);
  }

  // Runs `node`'s operator inference when an output has no static shape yet, and records the
  // static output shapes it gives in `shapes`.
  void infer(onnx::NodeProto& node, int opset, StaticShapes& shapes) {
    bool needed = false;
    for (const auto& out : node.output()) needed |= !out.empty() && shapes.count(out) == 0;
    if (!needed) return;
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), opset, node.domain());
    if (schema == nullptr || !schema->has_type_and_shape_inference_function()) return;
    try {
      onnx::shape_inference::InferenceContextImpl context(node, type_ptrs_, data_ptrs_, {});
      schema->GetTypeAndShapeInferenceFunction()(context);
      for (int k = 0; k < node.output_size(); ++k) {
        const onnx::TypeProto* type = context.getOutputType(static_cast<std::size_t>(k));
        if (type == nullptr || node.output(k).empty()) continue;
        if (types_.count(node.output(k)) == 0 || !complete(types_[node.output(k)]))
          learn_type(node.output(k), *type);
        if (auto dims = static_dims(*type)) shapes[node.output(k)] = *dims;
      }
    } catch (const std::exception&) {
      // Left to the next round of whole-graph inference, which reports errors properly.
    }
  }

 private:
  static std::optional<std::vector<std::int64_t>> static_dims(const onnx::TypeProto& type) {
    if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::nullopt;
    std::vector<std::int64_t> dims;
    for (const auto& d : type.tensor_type().shape().dim()) {
      if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
      dims.push_back(d.dim_value());
    }
    return dims;
  }
  static bool complete(const onnx::TypeProto& type) { return static_dims(type).has_value(); }

  void learn_type(const std::string& name, const onnx::TypeProto& type) {
    types_[name] = type;
    type_ptrs_[name] = &types_[name];  // unordered_map keeps element addresses on rehash
  }

  std::unordered_map<std::string, onnx::TypeProto> types_;
  std::unordered_map<std::string, onnx::TypeProto*> type_ptrs_;
  std::unordered_map<std::string, onnx::TensorProto> data_;
  std::unordered_map<std::string, const onnx::TensorProto*> data_ptrs_;
};

}  // namespace

std::optional<std::vector<std::int64_t>> einsum_output_shape(
    const std::string& equation, const std::vector<std::vector<std::int64_t>>& inputs) {
  std::string text;
  for (char ch : equation) {
    if (ch != ' ') text += ch;
  }
  const std::size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  std::vector<std::string> terms;
  for (std::size_t start = 0;;) {
    const std::size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != inputs.size()) return std::nullopt;
  std::map<char, std::int64_t> size;
  std::map<char, int> uses;
  std::vector<std::int64_t> ellipsis;  // broadcast dimensions, right-aligned
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const std::string& term = terms[i];
    const std::size_t dots = term.find("...");
    const std::size_t letters = term.size() - (dots == std::string::npos ? 0 : 3);
    const auto& shape = inputs[i];
    if (dots == std::string::npos ? letters != shape.size() : letters > shape.size())
      return std::nullopt;
    const std::size_t covered = shape.size() - letters;
    std::vector<std::int64_t> mine(
        shape.begin() + static_cast<std::ptrdiff_t>(dots == std::string::npos ? 0 : dots),
        shape.begin() +
            static_cast<std::ptrdiff_t>((dots == std::string::npos ? 0 : dots) + covered));
    if (mine.size() > ellipsis.size())
      ellipsis.insert(ellipsis.begin(), mine.size() - ellipsis.size(), 1);
    for (std::size_t k = 0; k < mine.size(); ++k) {
      std::int64_t& e = ellipsis[ellipsis.size() - mine.size() + k];
      if (e == 1) e = mine[k];
    }
    std::size_t axis = 0;
    for (std::size_t k = 0; k < term.size(); ++k) {
      if (k == dots) {
        k += 2;
        axis += covered;
        continue;
      }
      const char ch = term[k];
      auto [it, inserted] = size.emplace(ch, shape[axis]);
      if (!inserted && it->second == 1) it->second = shape[axis];
      ++uses[ch];
      ++axis;
    }
  }
  std::vector<std::int64_t> out;
  if (arrow == std::string::npos) {
    out = ellipsis;
    for (const auto& [ch, n] : uses) {
      if (n == 1) out.push_back(size[ch]);
    }
    return out;
  }
  const std::string rhs = text.substr(arrow + 2);
  for (std::size_t k = 0; k < rhs.size(); ++k) {
    if (rhs.compare(k, 3, "...") == 0) {
      out.insert(out.end(), ellipsis.begin(), ellipsis.end());
      k += 2;
      continue;
    }
    auto it = size.find(rhs[k]);
    if (it == size.end()) return std::nullopt;
    out.push_back(it->second);
  }
  return out;
}

int default_opset(const onnx::ModelProto& model) {
  for (const auto& op : model.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") return static_cast<int>(op.version());
  }
  return 1;
}

int highest_known_opset() {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto it = ranges.find(onnx::ONNX_DOMAIN);
  return it == ranges.end() ? 1 : it->second.second;
}

void infer_shapes(onnx::ModelProto& model, bool strict) {
  auto* value_info = model.mutable_graph()->mutable_value_info();
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> pinned;
  for (auto& v : *value_info) {
    if (v.doc_string() == kPinnedDocString) *pinned.Add() = v;
  }
  value_info->Swap(&pinned);
  onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/strict ? 1 : 0,
                                      /*data_prop=*/true);
  onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
}

StaticShapes static_shapes(const onnx::ModelProto& model) {
  StaticShapes shapes;
  const auto& graph = model.graph();
  for (const auto& v : graph.input()) add_shapes(v, shapes);
  for (const auto& v : graph.value_info()) add_shapes(v, shapes);
  for (const auto& v : graph.output()) add_shapes(v, shapes);
  for (const auto& init : graph.initializer()) {
    shapes[init.name()] = std::vector<std::int64_t>(init.dims().begin(), init.dims().end());
  }
  return shapes;
}

void fold_shape_computations(onnx::ModelProto& model, DataDependentCounts* counts) {
  const int opset = default_opset(model);
  auto* graph = model.mutable_graph();

  // Values known before the network runs. Floating initializers are parameters (their value
  // is the model's, not the shape's) except scalars such as exported scale factors.
  std::unordered_map<std::string, ConstantTensor> values;
  for (const auto& init : graph->initializer()) {
    if (is_floating_type(init.data_type())) {
      std::int64_t n = 1;
      bool large = false;  // more elements than int64 holds: a file's dims are not to be trusted
      for (std::int64_t d : init.dims()) large = large || __builtin_mul_overflow(n, d, &n);
      if (large || n > 1) continue;
    }
    if (auto v = read_constant(init)) values.emplace(init.name(), std::move(*v));
  }
  std::vector<bool> done(static_cast<std::size_t>(graph->node_size()), false);

  // Each round runs ONNX inference over the graph, then one pass in node order that folds what
  // it can and, for the other nodes, runs their operator's own inference on what the pass has
  // learnt so far (folded values included), so one round usually resolves the whole chain.
  for (int round = 0; round < kMaxFoldingRounds; ++round) {
    try {
      infer_shapes(model, /*strict=*/false);
    } catch (const std::exception&) {
      // Non-strict inference still throws on malformed models; the strict pass that follows
      // folding reports the problem with its node.
    }
    StaticShapes shapes = static_shapes(model);
    bool changed = pin_einsum_shapes(model, shapes);
    changed = pin_data_dependent_shapes(model, shapes, values, counts) || changed;
    LocalInference local(model, values);
    for (int i = 0; i < graph->node_size(); ++i) {
      const onnx::NodeProto& node = graph->node(i);
      std::optional<ConstantTensor> value;
      if (!done[static_cast<std::size_t>(i)] && node.output_size() == 1 &&
          is_evaluable_op(node.op_type())) {
        EvaluationInputs inputs;
        inputs.value = [&](std::size_t k) -> std::optional<ConstantTensor> {
          auto it = values.find(node.input(static_cast<int>(k)));
          if (it == values.end()) return std::nullopt;
          return it->second;
        };
        inputs.shape = [&](std::size_t k) -> std::optional<std::vector<std::int64_t>> {
          if (static_cast<int>(k) >= node.input_size()) return std::nullopt;
          auto it = shapes.find(node.input(static_cast<int>(k)));
          if (it == shapes.end()) return std::nullopt;
          return it->second;
        };
        value = evaluate_node(node, opset, inputs);
      }
      if (!value && !done[static_cast<std::size_t>(i)] && node.op_type() == "Split") {
        // A Split of a constant (repeat_interleave's repeats): its outputs are constants too.
        EvaluationInputs inputs;
        inputs.value = [&](std::size_t k) -> std::optional<ConstantTensor> {
          auto it = values.find(node.input(static_cast<int>(k)));
          if (it == values.end()) return std::nullopt;
          return it->second;
        };
        inputs.shape = [&](std::size_t) -> std::optional<std::vector<std::int64_t>> {
          return std::nullopt;
        };
        if (auto parts = evaluate_split(node, opset, inputs)) {
          done[static_cast<std::size_t>(i)] = true;
          for (std::size_t k = 0; k < parts->size(); ++k) {
            const std::string& name = node.output(static_cast<int>(k));
            shapes[name] = (*parts)[k].dims;
            local.learn_value(name, (*parts)[k]);
            values[name] = std::move((*parts)[k]);
          }
          changed = true;
          continue;
        }
      }
      if (value) {
        done[static_cast<std::size_t>(i)] = true;
        if (node.op_type() != "Constant") {
          *graph->mutable_node(i) = constant_node(node, *value);
          changed = true;
        }
        shapes[node.output(0)] = value->dims;
        local.learn_value(node.output(0), *value);
        values[node.output(0)] = std::move(*value);
        continue;
      }
      local.infer(*graph->mutable_node(i), opset, shapes);
    }
    // The pass may have learnt the input shapes of a data-dependent operator: pin its output
    // now, or the next round would not come.
    changed = pin_data_dependent_shapes(model, shapes, values, counts) || changed;
    if (!changed) break;
  }
}

void remove_unused_constants(onnx::ModelProto& model) {
  auto* graph = model.mutable_graph();
  std::set<std::string> read;
  for (const auto& node : graph->node()) {
    for (const auto& in : node.input()) read.insert(in);
  }
  for (const auto& out : graph->output()) read.insert(out.name());
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (auto& node : *graph->mutable_node()) {
    if (node.op_type() == "Constant" && node.output_size() == 1 && read.count(node.output(0)) == 0)
      continue;
    *kept.Add() = std::move(node);
  }
  graph->mutable_node()->Swap(&kept);
}

}  // namespace nnergy::graph
