#pragma once

// Builds small ONNX models in memory for importer and op-catalog tests.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace nnergy::graph::testing {

/// A dimension: a value or a symbolic name.
using Dim = std::variant<std::int64_t, std::string>;

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int opset = 17) {
    model_.set_ir_version(8);
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  /// Adds a graph input with element type `type` (onnx::TensorProto_DataType) and shape.
  OnnxBuilder& input(const std::string& name, const std::vector<Dim>& dims,
                     int type = onnx::TensorProto_DataType_FLOAT) {
    fill(model_.mutable_graph()->add_input(), name, dims, type);
    return *this;
  }
  /// Adds a graph output without a shape (inference fills it in).
  OnnxBuilder& output(const std::string& name, int type = onnx::TensorProto_DataType_FLOAT) {
    auto* v = model_.mutable_graph()->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(type);
    return *this;
  }
  /// Adds a graph output with a declared shape (for operators whose output dimensions the
  /// installed ONNX shape inference leaves unknown).
  OnnxBuilder& shaped_output(const std::string& name, const std::vector<Dim>& dims,
                             int type = onnx::TensorProto_DataType_FLOAT) {
    fill(model_.mutable_graph()->add_output(), name, dims, type);
    return *this;
  }
  /// Adds a float initializer of `dims` (no data: only shapes matter here).
  OnnxBuilder& initializer(const std::string& name, const std::vector<std::int64_t>& dims,
                           int type = onnx::TensorProto_DataType_FLOAT) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    std::int64_t count = 1;
    for (std::int64_t d : dims) {
      t->add_dims(d);
      count *= d;
    }
    for (std::int64_t i = 0; i < count; ++i) {
      if (type == onnx::TensorProto_DataType_INT64) {
        t->add_int64_data(0);
      } else {
        t->add_float_data(0.f);
      }
    }
    return *this;
  }
  /// An int64 initializer with given values (e.g. a Reshape target shape).
  OnnxBuilder& int64_initializer(const std::string& name, const std::vector<std::int64_t>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_INT64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (std::int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  /// Adds a node; returns it so attributes can be set.
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? "/" + op + std::to_string(model_.graph().node_size()) : name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  OnnxBuilder& metadata(const std::string& key, const std::string& value) {
    auto* m = model_.add_metadata_props();
    m->set_key(key);
    m->set_value(value);
    return *this;
  }

  std::string bytes() const { return model_.SerializeAsString(); }

  static void set_int(onnx::NodeProto& n, const std::string& key, std::int64_t value) {
    auto* a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(value);
  }
  static void set_string(onnx::NodeProto& n, const std::string& key, const std::string& value) {
    auto* a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto_AttributeType_STRING);
    a->set_s(value);
  }
  static void set_ints(onnx::NodeProto& n, const std::string& key,
                       const std::vector<std::int64_t>& values) {
    auto* a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (std::int64_t v : values) a->add_ints(v);
  }

 private:
  static void fill(onnx::ValueInfoProto* v, const std::string& name, const std::vector<Dim>& dims,
                   int type) {
    v->set_name(name);
    auto* tensor = v->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(type);
    auto* shape = tensor->mutable_shape();
    for (const Dim& d : dims) {
      auto* dim = shape->add_dim();
      if (const auto* value = std::get_if<std::int64_t>(&d)) {
        dim->set_dim_value(*value);
      } else {
        dim->set_dim_param(std::get<std::string>(d));
      }
    }
  }

  onnx::ModelProto model_;
};

}  // namespace nnergy::graph::testing
