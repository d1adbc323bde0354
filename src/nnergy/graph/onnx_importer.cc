#include "nnergy/graph/onnx_importer.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "nnergy/core/error.h"
#include "nnergy/graph/batch_binding.h"
#include "nnergy/graph/constant_tensor.h"
#include "nnergy/graph/inference_guards.h"
#include "nnergy/graph/module_path.h"
#include "nnergy/graph/op_fusion.h"
#include "nnergy/graph/shape_folding.h"
#include "nnergy/graph/strided_views.h"

namespace nnergy::graph {

namespace {

DataType to_data_type(std::int32_t onnx_type) {
  switch (onnx_type) {
    case onnx::TensorProto_DataType_FLOAT:
      return DataType::kFloat32;
    case onnx::TensorProto_DataType_FLOAT16:
      return DataType::kFloat16;
    case onnx::TensorProto_DataType_BFLOAT16:
      return DataType::kBFloat16;
    case onnx::TensorProto_DataType_DOUBLE:
      return DataType::kFloat64;
    case onnx::TensorProto_DataType_INT64:
      return DataType::kInt64;
    case onnx::TensorProto_DataType_INT32:
      return DataType::kInt32;
    case onnx::TensorProto_DataType_INT8:
      return DataType::kInt8;
    case onnx::TensorProto_DataType_UINT8:
      return DataType::kUInt8;
    case onnx::TensorProto_DataType_BOOL:
      return DataType::kBool;
    default:
      return DataType::kOther;
  }
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    auto first = item.find_first_not_of(" \t");
    auto last = item.find_last_not_of(" \t");
    if (first != std::string::npos) items.push_back(item.substr(first, last - first + 1));
  }
  return items;
}

std::string metadata(const onnx::ModelProto& model, const std::string& key) {
  for (const auto& entry : model.metadata_props()) {
    if (entry.key() == key) return entry.value();
  }
  return "";
}

bool has_symbolic_dim(const onnx::ValueInfoProto& value) {
  if (!value.type().has_tensor_type()) return false;
  for (const auto& dim : value.type().tensor_type().shape().dim()) {
    if (!dim.has_dim_value()) return true;
  }
  return false;
}

// Decides which graph inputs carry data; the rest are parameters (see the header).
std::set<std::string> find_data_inputs(const onnx::ModelProto& model,
                                       const std::set<std::string>& initializers) {
  const onnx::GraphProto& graph = model.graph();
  std::set<std::string> data;
  if (std::string listed = metadata(model, "nnergy.data_inputs"); !listed.empty()) {
    for (const std::string& name : split_commas(listed)) data.insert(name);
    return data;
  }
  if (!initializers.empty()) {
    for (const auto& input : graph.input()) {
      if (initializers.count(input.name()) == 0) data.insert(input.name());
    }
    return data;
  }
  for (const auto& input : graph.input()) {
    if (has_symbolic_dim(input)) data.insert(input.name());
  }
  if (data.empty() && graph.input_size() > 0) data.insert(graph.input(0).name());
  return data;
}

AttributeValue to_attribute_value(const onnx::AttributeProto& attribute, bool* supported) {
  *supported = true;
  switch (attribute.type()) {
    case onnx::AttributeProto_AttributeType_INT:
      return attribute.i();
    case onnx::AttributeProto_AttributeType_FLOAT:
      return static_cast<double>(attribute.f());
    case onnx::AttributeProto_AttributeType_STRING:
      return attribute.s();
    case onnx::AttributeProto_AttributeType_INTS:
      return std::vector<std::int64_t>(attribute.ints().begin(), attribute.ints().end());
    case onnx::AttributeProto_AttributeType_FLOATS:
      return std::vector<double>(attribute.floats().begin(), attribute.floats().end());
    default:
      *supported = false;  // tensors (Constant values) and subgraphs are not needed for costs
      return std::int64_t{0};
  }
}

struct ValueShape {
  Shape shape;
  DataType dtype = DataType::kOther;
  bool complete = false;
};

ValueShape read_value(const onnx::TypeProto& type) {
  ValueShape value;
  if (!type.has_tensor_type()) return value;
  value.dtype = to_data_type(type.tensor_type().elem_type());
  if (!type.tensor_type().has_shape()) return value;
  value.complete = true;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) {
      value.complete = false;
      value.shape.push_back(-1);
    } else {
      value.shape.push_back(dim.dim_value());
    }
  }
  return value;
}

std::string stem_of(const std::string& source) {
  return std::filesystem::path(source).stem().string();
}

// Why the output of node `node_name` has no static shape: the closest node that one of its
// shape operands depends on whose value nnergy cannot compute before the network runs.
std::string explain_unknown_shape(const onnx::ModelProto& model, const std::string& node_name) {
  const auto& graph = model.graph();
  std::unordered_map<std::string, int> producer;
  int target = -1;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const auto& out : graph.node(i).output()) producer[out] = i;
    if (!node_name.empty() && graph.node(i).name() == node_name) target = i;
  }
  if (target < 0) return "";
  const onnx::NodeProto& node = graph.node(target);
  std::vector<int> stack;
  std::set<int> visited;
  for (int k = 1; k < node.input_size(); ++k) {
    if (auto it = producer.find(node.input(k)); it != producer.end()) stack.push_back(it->second);
  }
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (!visited.insert(i).second) continue;
    const onnx::NodeProto& p = graph.node(i);
    if (p.op_type() == "Constant") continue;
    if (!is_evaluable_op(p.op_type())) {
      return "; its shape operands depend on node '" + p.name() + "' (op " + p.op_type() +
             "), whose value nnergy cannot compute before the network runs";
    }
    for (const auto& in : p.input()) {
      if (auto it = producer.find(in); it != producer.end()) stack.push_back(it->second);
    }
  }
  return "; ONNX shape inference (onnx 1.12) has no rule that gives it for op " + node.op_type() +
         " at opset " + std::to_string(default_opset(model));
}

}  // namespace

int newest_importable_opset() { return highest_known_opset(); }

Network import_onnx(const std::filesystem::path& path, const DimBindings& bindings) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw InvalidInput(path.string() +
                       ": no such file (expected an .onnx model or a zoo name; "
                       "`nnergy zoo` lists the zoo)");
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw InvalidInput(path.string() + ": is a directory, expected an .onnx file");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InvalidInput(path.string() + ": cannot be opened for reading");
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return import_onnx_bytes(bytes.str(), path.string(), bindings);
}

Network import_onnx_bytes(const std::string& bytes, const std::string& source,
                          const DimBindings& bindings, Fusion fusion_mode) {
  if (bindings.batch && *bindings.batch <= 0) {
    throw InvalidInput(
        setting_with_value(bindings.names, "batch", std::to_string(*bindings.batch)) +
        ": expected a positive integer");
  }
  for (const auto& [name, value] : bindings.named) {
    if (value <= 0) {
      throw InvalidInput(setting_entry(bindings.names, "dims", "dim", name, std::to_string(value)) +
                         ": expected a positive integer");
    }
  }
  onnx::ModelProto parsed;
  if (bytes.empty() || !parsed.ParseFromString(bytes)) {
    throw InvalidInput(source + ": not a readable ONNX model (protobuf parse failed on " +
                       std::to_string(bytes.size()) + " bytes; truncated or not ONNX?)");
  }
  if (!parsed.has_graph() || parsed.graph().node_size() == 0) {
    throw InvalidInput(source + ": ONNX model has no graph nodes (truncated or not ONNX?)");
  }
  check_for_shape_inference(parsed, source);

  std::set<std::string> initializer_names;
  for (const auto& init : parsed.graph().initializer()) initializer_names.insert(init.name());
  const std::set<std::string> data_inputs = find_data_inputs(parsed, initializer_names);
  const auto original_inputs = parsed.graph().input();  // keeps the symbolic dimension names
  PreparedModel prepared = prepare_model(parsed, source, data_inputs, bindings);
  remove_unused_constants(prepared.model);
  const onnx::ModelProto& model = prepared.model;

  const onnx::GraphProto& graph = model.graph();
  std::unordered_map<std::string, ValueShape> shapes;
  for (const auto& v : graph.input()) shapes[v.name()] = read_value(v.type());
  for (const auto& v : graph.value_info()) shapes[v.name()] = read_value(v.type());
  for (const auto& v : graph.output()) {
    ValueShape value = read_value(v.type());
    if (value.complete || shapes.count(v.name()) == 0) shapes[v.name()] = value;
  }
  for (const auto& init : graph.initializer()) {
    ValueShape value;
    value.dtype = to_data_type(init.data_type());
    value.shape.assign(init.dims().begin(), init.dims().end());
    value.complete = true;
    shapes[init.name()] = value;
  }

  Network network;
  network.source = source;
  network.name = stem_of(source);
  network.description = metadata(model, "nnergy.description");
  network.batch = prepared.batch;
  network.import_notes = prepared.notes;
  std::unordered_map<std::string, std::size_t> index_of;

  auto add_tensor = [&](const std::string& name, TensorRole role, const std::string& producer,
                        const std::string& op_type) -> std::size_t {
    auto it = shapes.find(name);
    if (it == shapes.end() || !it->second.complete) {
      std::string what = producer.empty() ? "input '" + name + "'"
                                          : "tensor '" + name + "' (output of node '" + producer +
                                                "', op " + op_type + ")";
      throw InvalidInput(source + ": the shape of " + what +
                         " could not be inferred although every input dimension is bound" +
                         explain_unknown_shape(model, producer));
    }
    // Every later count (elements, bytes, MACs) multiplies these dimensions: a negative one or
    // a product beyond int64 is a broken file, not a shape to cost.
    std::int64_t elements = 1;
    for (std::int64_t dim : it->second.shape) {
      if (dim < 0 || __builtin_mul_overflow(elements, dim, &elements)) {
        throw InvalidInput(
            source + ": tensor '" + name + "' has the shape " + to_string(it->second.shape) +
            (dim < 0 ? ", with a negative dimension" : ", whose element count is beyond 2^63"));
      }
    }
    TensorInfo tensor;
    tensor.name = name;
    tensor.shape = it->second.shape;
    tensor.dtype = it->second.dtype;
    tensor.role = role;
    std::size_t index = network.add_tensor(std::move(tensor));
    index_of[name] = index;
    return index;
  };

  for (const auto& init : graph.initializer()) {
    const bool floating = is_floating(to_data_type(init.data_type()));
    add_tensor(init.name(), floating ? TensorRole::kParameter : TensorRole::kConstant, "", "");
  }
  for (const auto& input : original_inputs) {
    if (index_of.count(input.name()) > 0) continue;  // an initializer listed as input
    TensorRole role = TensorRole::kDataInput;
    if (data_inputs.count(input.name()) == 0) {
      const bool floating = is_floating(to_data_type(input.type().tensor_type().elem_type()));
      role = floating ? TensorRole::kParameter : TensorRole::kConstant;
    }
    const std::size_t index = add_tensor(input.name(), role, "", "");
    std::vector<std::string> dim_params;
    for (const auto& dim : input.type().tensor_type().shape().dim())
      dim_params.push_back(dim.dim_param());
    network.set_dim_params(index, std::move(dim_params));
  }

  std::set<std::string> consumed;
  for (const auto& node : graph.node()) {
    for (const auto& in : node.input()) consumed.insert(in);
  }
  for (const auto& out : graph.output()) consumed.insert(out.name());

  for (const auto& proto : graph.node()) {
    Node node;
    node.name = proto.name();
    node.op_type = proto.domain().empty() || proto.domain() == "ai.onnx"
                       ? proto.op_type()
                       : proto.domain() + "." + proto.op_type();
    node.module_path = module_path_from_node_name(node.name);
    if (node.name.empty()) node.name = node.op_type + "_" + std::to_string(network.nodes().size());
    for (const auto& attribute : proto.attribute()) {
      bool supported = false;
      AttributeValue value = to_attribute_value(attribute, &supported);
      if (supported) node.attributes.emplace(attribute.name(), std::move(value));
    }
    for (const auto& in : proto.input()) {
      if (in.empty()) continue;  // an omitted optional input
      auto it = index_of.find(in);
      if (it == index_of.end()) {
        throw InvalidInput(source + ": node '" + node.name + "' reads '" + in +
                           "', which no node, input or initializer produces");
      }
      node.inputs.push_back(it->second);
    }
    TensorRole out_role =
        proto.op_type() == "Constant" ? TensorRole::kConstant : TensorRole::kActivation;
    // torch.onnx.export writes a parameter whose values equal another's (untrained weights) as
    // an Identity of it: it is a parameter of its own in the model.
    if (proto.op_type() == "Identity" && node.inputs.size() == 1 &&
        network.tensor(node.inputs[0]).role == TensorRole::kParameter) {
      out_role = TensorRole::kParameter;
    }
    for (const auto& out : proto.output()) {
      // Unused optional outputs (e.g. a training BatchNorm's running statistics) may stay
      // shapeless; they carry no cost.
      if (out.empty()) continue;
      if (consumed.count(out) == 0 && (shapes.count(out) == 0 || !shapes[out].complete)) continue;
      node.outputs.push_back(add_tensor(out, out_role, node.name, node.op_type));
    }
    // BatchNormalization inputs 3 and 4 are the running statistics: state, not parameters.
    if (node.op_type == "BatchNormalization") {
      for (std::size_t slot = 3; slot < node.inputs.size() && slot < 5; ++slot) {
        if (network.tensor(node.inputs[slot]).role == TensorRole::kParameter) {
          network.set_role(node.inputs[slot], TensorRole::kBuffer);
        }
      }
    }
    // Resize's roi and scales (Upsample's scales) are floats that describe the output shape,
    // not weights.
    if (node.op_type == "Resize" || node.op_type == "Upsample") {
      for (std::size_t slot = 1; slot < node.inputs.size(); ++slot) {
        if (network.tensor(node.inputs[slot]).role == TensorRole::kParameter) {
          network.set_role(node.inputs[slot], TensorRole::kConstant);
        }
      }
    }
    network.add_node(std::move(node));
  }
  network.propagate_tensor_flags();
  if (fusion_mode == Fusion::kKeepDecomposedOps) return network;
  FusionReport fusion;
  Network fused = fuse_decomposed_ops(network, &fusion);
  if (fusion.total_groups() > 0) {
    fused.import_notes.push_back(fusion.summary() +
                                 ": decomposed operators costed as the one kernel eager PyTorch "
                                 "runs for each");
  }
  if (const std::size_t views = mark_strided_views(fused); views > 0) {
    fused.import_notes.push_back(fmt::format(
        "{} Transpose{} read only by MatMul costed as {} (eager PyTorch's batched GEMM reads the "
        "transposed operand in place, as in attention's q·kᵀ), not as {}",
        views, views == 1 ? "" : "s", views == 1 ? "a view" : "views",
        views == 1 ? "a copy" : "copies"));
  }
  return fused;
}

}  // namespace nnergy::graph
