// The one translation unit that includes LibTorch: it turns IR nodes into LibTorch calls.

#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/profile/op_runner.h"

namespace nnergy::profile {
namespace {

using graph::Network;
using graph::Node;
using graph::Shape;
using graph::TensorInfo;
using graph::TensorRole;
using graph::to_string;

/// Forward pass of one instance: the node's inputs in node order, and whether it runs in train
/// mode (only BatchNormalization behaves differently).
using Forward = std::function<torch::Tensor(const std::vector<torch::Tensor>&, bool training)>;

[[noreturn]] void reject(const Node& node, const std::string& why) {
  throw InvalidInput("cannot build a runner for node '" + node.name + "' (" + node.op_type +
                     "): " + why);
}

std::string attribute_string(const Node& node, const std::string& key, std::string fallback) {
  const auto it = node.attributes.find(key);
  if (it == node.attributes.end()) return fallback;
  if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  reject(node, "attribute '" + key + "' is not a string");
}

double attribute_float(const Node& node, const std::string& key, double fallback) {
  const auto it = node.attributes.find(key);
  if (it == node.attributes.end()) return fallback;
  if (const auto* d = std::get_if<double>(&it->second)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
  reject(node, "attribute '" + key + "' is not a number");
}

/// Spatial window of Conv, ConvTranspose and the pooling operators.
struct Window {
  std::vector<std::int64_t> kernel, strides, dilations, pads_begin, pads_end;
  bool symmetric() const { return pads_begin == pads_end; }
};

/// Reads kernel_shape, strides, dilations, pads and auto_pad for `spatial` dimensions; SAME_*
/// padding is resolved from the input sizes as ONNX defines it.
Window window(const Node& node, const Shape& input, std::vector<std::int64_t> kernel,
              std::size_t spatial) {
  Window w;
  w.kernel = node.ints_attribute("kernel_shape", std::move(kernel));
  w.strides = node.ints_attribute("strides", std::vector<std::int64_t>(spatial, 1));
  w.dilations = node.ints_attribute("dilations", std::vector<std::int64_t>(spatial, 1));
  const auto pads = node.ints_attribute("pads", std::vector<std::int64_t>(2 * spatial, 0));
  if (w.kernel.size() != spatial || w.strides.size() != spatial || w.dilations.size() != spatial ||
      pads.size() != 2 * spatial) {
    reject(node, "kernel_shape, strides, dilations or pads do not match " +
                     std::to_string(spatial) + " spatial dimensions");
  }
  w.pads_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(spatial));
  w.pads_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(spatial), pads.end());
  const std::string auto_pad = attribute_string(node, "auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    std::fill(w.pads_begin.begin(), w.pads_begin.end(), 0);
    std::fill(w.pads_end.begin(), w.pads_end.end(), 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (std::size_t i = 0; i < spatial; ++i) {
      const std::int64_t in = input[input.size() - spatial + i];
      const std::int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      const std::int64_t total = std::max<std::int64_t>(
          0, (out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - in);
      const std::int64_t small = total / 2;
      w.pads_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.pads_end[i] = total - w.pads_begin[i];
    }
  } else if (auto_pad != "NOTSET") {
    reject(node, "auto_pad '" + auto_pad + "' is not supported");
  }
  return w;
}

/// ONNX pads as the argument of torch::constant_pad_nd (last dimension first).
std::vector<std::int64_t> pad_argument(const Window& w) {
  std::vector<std::int64_t> pad;
  for (std::size_t i = w.pads_begin.size(); i-- > 0;) {
    pad.push_back(w.pads_begin[i]);
    pad.push_back(w.pads_end[i]);
  }
  return pad;
}

const TensorInfo& input_info(const Network& net, const Node& node, std::size_t i) {
  if (node.inputs.size() <= i) {
    reject(node, "expected at least " + std::to_string(i + 1) + " inputs, found " +
                     std::to_string(node.inputs.size()));
  }
  return net.tensor(node.inputs[i]);
}

Forward conv(const Network& net, const Node& node) {
  const Shape& x = input_info(net, node, 0).shape;
  const Shape& weight = input_info(net, node, 1).shape;
  if (x.size() < 3 || weight.size() != x.size()) reject(node, "input rank " + to_string(x));
  const std::size_t spatial = x.size() - 2;
  const Window w = window(node, x, Shape(weight.begin() + 2, weight.end()), spatial);
  const std::int64_t groups = node.int_attribute("group", 1);
  const bool symmetric = w.symmetric();
  const auto pad = pad_argument(w);
  // Asymmetric padding (possible in ONNX, not in torch's convolution) is an explicit pad first.
  const std::vector<std::int64_t> padding =
      symmetric ? w.pads_begin : std::vector<std::int64_t>(spatial, 0);
  return [w, groups, symmetric, pad, padding, spatial](const std::vector<torch::Tensor>& in, bool) {
    const torch::Tensor input = symmetric ? in[0] : torch::constant_pad_nd(in[0], pad, 0);
    const torch::Tensor bias = in.size() > 2 ? in[2] : torch::Tensor();
    return torch::convolution(input, in[1], bias, w.strides, padding, w.dilations, false,
                              std::vector<std::int64_t>(spatial, 0), groups);
  };
}

Forward conv_transpose(const Network& net, const Node& node) {
  const Shape& x = input_info(net, node, 0).shape;
  const Shape& weight = input_info(net, node, 1).shape;
  const Shape& y = net.tensor(node.outputs.at(0)).shape;
  if (x.size() < 3 || weight.size() != x.size() || y.size() != x.size()) {
    reject(node, "input rank " + to_string(x));
  }
  const std::size_t spatial = x.size() - 2;
  const Window w = window(node, x, Shape(weight.begin() + 2, weight.end()), spatial);
  const std::int64_t groups = node.int_attribute("group", 1);
  // torch pads both ends by the same amount and extends the end by output_padding; choosing
  // output_padding from the IR output size covers ONNX's output_padding, output_shape and end
  // pads smaller than begin pads.
  std::vector<std::int64_t> output_padding;
  for (std::size_t i = 0; i < spatial; ++i) {
    const std::int64_t full = (x[2 + i] - 1) * w.strides[i] - 2 * w.pads_begin[i] +
                              w.dilations[i] * (w.kernel[i] - 1) + 1;
    const std::int64_t extra = y[2 + i] - full;
    if (extra < 0 || extra >= std::max(w.strides[i], w.dilations[i])) {
      reject(node, "output size " + to_string(y) + " needs padding torch cannot express");
    }
    output_padding.push_back(extra);
  }
  return [w, groups, output_padding](const std::vector<torch::Tensor>& in, bool) {
    const torch::Tensor bias = in.size() > 2 ? in[2] : torch::Tensor();
    return torch::convolution(in[0], in[1], bias, w.strides, w.pads_begin, w.dilations, true,
                              output_padding, groups);
  };
}

Forward gemm(const Network& net, const Node& node) {
  input_info(net, node, 1);
  const bool trans_a = node.int_attribute("transA", 0) != 0;
  const bool trans_b = node.int_attribute("transB", 0) != 0;
  const double alpha = attribute_float(node, "alpha", 1.0);
  const double beta = attribute_float(node, "beta", 1.0);
  const bool has_c = node.inputs.size() > 2;
  // PyTorch's nn.Linear exports as Gemm(transB=1) with a 1-D bias: run it as torch::linear so
  // that the same kernels as in a PyTorch model are timed.
  if (!trans_a && trans_b && alpha == 1.0 && beta == 1.0 &&
      (!has_c || net.tensor(node.inputs[2]).shape.size() == 1)) {
    return [](const std::vector<torch::Tensor>& in, bool) {
      return torch::linear(in[0], in[1], in.size() > 2 ? in[2] : torch::Tensor());
    };
  }
  return [trans_a, trans_b, alpha, beta](const std::vector<torch::Tensor>& in, bool) {
    const torch::Tensor a = trans_a ? in[0].t() : in[0];
    const torch::Tensor b = trans_b ? in[1].t() : in[1];
    if (in.size() > 2) return torch::addmm(in[2], a, b, beta, alpha);
    const torch::Tensor product = torch::mm(a, b);
    return alpha == 1.0 ? product : product * alpha;
  };
}

Forward batch_norm(const Network& net, const Node& node) {
  if (node.inputs.size() != 5) reject(node, "expected 5 inputs");
  input_info(net, node, 0);
  const double epsilon = attribute_float(node, "epsilon", 1e-5);
  // ONNX's running-mean momentum weighs the old value; PyTorch's weighs the new one.
  const double momentum = 1.0 - attribute_float(node, "momentum", 0.9);
  return [epsilon, momentum](const std::vector<torch::Tensor>& in, bool training) {
    return torch::batch_norm(in[0], in[1], in[2], in[3], in[4], training, momentum, epsilon, true);
  };
}

Forward layer_norm(const Network& net, const Node& node) {
  const Shape& x = input_info(net, node, 0).shape;
  const auto rank = static_cast<std::int64_t>(x.size());
  std::int64_t axis = node.int_attribute("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) reject(node, "axis out of range for " + to_string(x));
  const std::vector<std::int64_t> normalized(x.begin() + axis, x.end());
  const double epsilon = attribute_float(node, "epsilon", 1e-5);
  return [normalized, epsilon](const std::vector<torch::Tensor>& in, bool) {
    return torch::layer_norm(in[0], normalized, in.size() > 1 ? in[1] : torch::Tensor(),
                             in.size() > 2 ? in[2] : torch::Tensor(), epsilon);
  };
}

Forward max_pool(const Network& net, const Node& node) {
  const Shape& x = input_info(net, node, 0).shape;
  if (x.size() < 3 || x.size() > 5) reject(node, "input rank " + to_string(x));
  const std::size_t spatial = x.size() - 2;
  const Window w = window(node, x, {}, spatial);
  const bool ceil_mode = node.int_attribute("ceil_mode", 0) != 0;
  const bool symmetric = w.symmetric();
  const auto pad = pad_argument(w);
  const std::vector<std::int64_t> padding =
      symmetric ? w.pads_begin : std::vector<std::int64_t>(spatial, 0);
  return [w, ceil_mode, symmetric, pad, padding, spatial](const std::vector<torch::Tensor>& in,
                                                          bool) {
    const torch::Tensor input =
        symmetric ? in[0]
                  : torch::constant_pad_nd(in[0], pad, -std::numeric_limits<double>::infinity());
    if (spatial == 1)
      return torch::max_pool1d(input, w.kernel, w.strides, padding, w.dilations, ceil_mode);
    if (spatial == 2)
      return torch::max_pool2d(input, w.kernel, w.strides, padding, w.dilations, ceil_mode);
    return torch::max_pool3d(input, w.kernel, w.strides, padding, w.dilations, ceil_mode);
  };
}

Forward average_pool(const Network& net, const Node& node) {
  const Shape& x = input_info(net, node, 0).shape;
  if (x.size() < 3 || x.size() > 5) reject(node, "input rank " + to_string(x));
  const std::size_t spatial = x.size() - 2;
  const Window w = window(node, x, {}, spatial);
  if (!w.symmetric()) reject(node, "asymmetric pads are not supported");
  const bool ceil_mode = node.int_attribute("ceil_mode", 0) != 0;
  const bool count_pad = node.int_attribute("count_include_pad", 0) != 0;
  return [w, ceil_mode, count_pad, spatial](const std::vector<torch::Tensor>& in, bool) {
    if (spatial == 1)
      return torch::avg_pool1d(in[0], w.kernel, w.strides, w.pads_begin, ceil_mode, count_pad);
    if (spatial == 2)
      return torch::avg_pool2d(in[0], w.kernel, w.strides, w.pads_begin, ceil_mode, count_pad);
    return torch::avg_pool3d(in[0], w.kernel, w.strides, w.pads_begin, ceil_mode, count_pad);
  };
}

Forward global_average_pool(const Network& net, const Node& node) {
  const Shape& x = input_info(net, node, 0).shape;
  if (x.size() < 3) reject(node, "input rank " + to_string(x));
  // nn.AdaptiveAvgPool2d((1, 1)) is what PyTorch models export as GlobalAveragePool.
  if (x.size() == 4) {
    return [](const std::vector<torch::Tensor>& in, bool) {
      return torch::adaptive_avg_pool2d(in[0], {1, 1});
    };
  }
  std::vector<std::int64_t> dims;
  for (std::size_t d = 2; d < x.size(); ++d) dims.push_back(static_cast<std::int64_t>(d));
  return
      [dims](const std::vector<torch::Tensor>& in, bool) { return torch::mean(in[0], dims, true); };
}

Forward gather(const Network& net, const Node& node) {
  const TensorInfo& data = input_info(net, node, 0);
  const TensorInfo& indices = input_info(net, node, 1);
  const auto rank = static_cast<std::int64_t>(data.shape.size());
  std::int64_t axis = node.int_attribute("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) reject(node, "axis out of range for " + to_string(data.shape));
  // A Gather on a parameter table along axis 0 is nn.Embedding's export: time embedding().
  if (axis == 0 && rank == 2 && data.role == TensorRole::kParameter) {
    return
        [](const std::vector<torch::Tensor>& in, bool) { return torch::embedding(in[0], in[1]); };
  }
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  return [axis, out](const std::vector<torch::Tensor>& in, bool) {
    return torch::index_select(in[0], axis, in[1].reshape({-1})).reshape(out);
  };
}

Forward unary(std::function<torch::Tensor(const torch::Tensor&)> f) {
  return [f = std::move(f)](const std::vector<torch::Tensor>& in, bool) { return f(in[0]); };
}

Forward binary(std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&)> f) {
  return [f = std::move(f)](const std::vector<torch::Tensor>& in, bool) { return f(in[0], in[1]); };
}

Forward forward_for(const Network& net, const Node& node) {
  const std::string& op = node.op_type;
  if (op == "Conv") return conv(net, node);
  if (op == "ConvTranspose") return conv_transpose(net, node);
  if (op == "Gemm") return gemm(net, node);
  if (op == "MatMul") {
    input_info(net, node, 1);
    return binary(
        [](const torch::Tensor& a, const torch::Tensor& b) { return torch::matmul(a, b); });
  }
  if (op == "BatchNormalization") return batch_norm(net, node);
  if (op == "LayerNormalization") return layer_norm(net, node);
  if (op == "MaxPool") return max_pool(net, node);
  if (op == "AveragePool") return average_pool(net, node);
  if (op == "GlobalAveragePool") return global_average_pool(net, node);
  if (op == "Gather") return gather(net, node);
  input_info(net, node, 0);
  if (op == "Relu") return unary([](const torch::Tensor& x) { return torch::relu(x); });
  if (op == "Sigmoid") return unary([](const torch::Tensor& x) { return torch::sigmoid(x); });
  if (op == "Tanh") return unary([](const torch::Tensor& x) { return torch::tanh(x); });
  if (op == "HardSwish") {
    return unary([](const torch::Tensor& x) { return torch::hardswish(x); });
  }
  if (op == "HardSigmoid") {
    // ONNX: max(0, min(1, alpha·x + beta)), alpha 0.2 by default; PyTorch's fused kernel is
    // alpha 1/6, beta 0.5, which is what torchvision exports. Other slopes run the formula.
    const double alpha = attribute_float(node, "alpha", 0.2);
    const double beta = attribute_float(node, "beta", 0.5);
    if (std::abs(alpha - 1.0 / 6.0) < 1e-6 && std::abs(beta - 0.5) < 1e-9) {
      return unary([](const torch::Tensor& x) { return torch::hardsigmoid(x); });
    }
    return unary(
        [alpha, beta](const torch::Tensor& x) { return torch::clamp(x * alpha + beta, 0.0, 1.0); });
  }
  if (op == "Gelu") {
    const std::string approximate = attribute_string(node, "approximate", "none");
    if (approximate != "none" && approximate != "tanh") {
      reject(node, "approximate '" + approximate + "' is not supported");
    }
    return unary([approximate](const torch::Tensor& x) { return torch::gelu(x, approximate); });
  }
  if (op == "Softmax") {
    const std::int64_t axis = node.int_attribute("axis", -1);
    return unary([axis](const torch::Tensor& x) { return torch::softmax(x, axis); });
  }
  input_info(net, node, 1);
  if (op == "Add") {
    return binary([](const torch::Tensor& a, const torch::Tensor& b) { return torch::add(a, b); });
  }
  if (op == "Sub") {
    return binary([](const torch::Tensor& a, const torch::Tensor& b) { return torch::sub(a, b); });
  }
  if (op == "Mul") {
    return binary([](const torch::Tensor& a, const torch::Tensor& b) { return torch::mul(a, b); });
  }
  if (op == "Div") {
    return binary([](const torch::Tensor& a, const torch::Tensor& b) { return torch::div(a, b); });
  }
  reject(node, "op type not supported; supported: " + join_with_commas(supported_ops()));
}

const std::vector<std::string>& supported_list() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v = {"Add",
                                  "AveragePool",
                                  "BatchNormalization",
                                  "Conv",
                                  "ConvTranspose",
                                  "Div",
                                  "Gather",
                                  "Gelu",
                                  "Gemm",
                                  "GlobalAveragePool",
                                  "HardSigmoid",
                                  "HardSwish",
                                  "LayerNormalization",
                                  "MatMul",
                                  "MaxPool",
                                  "Mul",
                                  "Relu",
                                  "Sigmoid",
                                  "Softmax",
                                  "Sub",
                                  "Tanh"};
    std::sort(v.begin(), v.end());
    return v;
  }();
  return ops;
}

torch::ScalarType scalar_type(graph::DataType dtype, bool cuda) {
  switch (dtype) {
    case graph::DataType::kFloat32:
      return torch::kFloat32;
    case graph::DataType::kBFloat16:
      return torch::kBFloat16;
    case graph::DataType::kFloat16:
      // CPU kernels for half precision are missing or slow reference code for most ops.
      if (cuda) return torch::kFloat16;
      break;
    default:
      break;
  }
  throw InvalidInput("op runner: dtype " + std::string(graph::to_string(dtype)) +
                     " is not supported " +
                     (cuda ? "on CUDA; use fp32, fp16 or bf16" : "on the CPU; use fp32 or bf16"));
}

// The device of `options`; throws DeviceError when LibTorch cannot reach it.
torch::Device runner_device(const RunnerOptions& options) {
  if (options.cuda_device < 0) return torch::Device(torch::kCPU);
  const int count = cuda_device_count();
  if (options.cuda_device >= count) {
    throw DeviceError("op runner: LibTorch sees " + std::to_string(count) +
                      " CUDA device(s), no cuda:" + std::to_string(options.cuda_device) +
                      (count == 0 ? " (this LibTorch was built without CUDA)" : ""));
  }
  return torch::Device(torch::kCUDA, static_cast<torch::DeviceIndex>(options.cuda_device));
}

std::string device_suffix(const RunnerOptions& options) {
  return options.cuda_device < 0 ? "" : ", cuda:" + std::to_string(options.cuda_device);
}

bool per_instance(const TensorInfo& t) {
  return t.role == TensorRole::kParameter || t.role == TensorRole::kBuffer;
}

}  // namespace

struct OpRunner::Impl {
  std::string description;
  Forward forward;
  /// args[i]: the node's inputs for instance i; shared inputs are the same tensor in every one.
  std::vector<std::vector<torch::Tensor>> args;
  /// Shared inputs that receive a gradient in training; their gradient is reset every iteration.
  std::vector<torch::Tensor> grad_inputs;
  torch::Tensor grad_output;
  bool backward = false;
  std::string node_name;
  std::string op_type;
  int cuda_device = -1;  ///< -1: CPU

  torch::Tensor forward_once(std::size_t instance, bool training) const {
    return forward(args[instance], training);
  }

  /// Returns when the device has finished the work queued so far (CUDA runs asynchronously).
  void wait() const {
    if (cuda_device >= 0) torch::cuda::synchronize(cuda_device);
  }

  [[noreturn]] void fail(const c10::Error& e) const {
    throw InvalidInput("node '" + node_name + "' (" + op_type +
                       "): LibTorch rejected the operator: " + e.what_without_backtrace());
  }
};

OpRunner::OpRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OpRunner::~OpRunner() = default;

std::unique_ptr<OpRunner> OpRunner::build(const graph::Network& network, const graph::Node& node,
                                          const RunnerOptions& options) {
  if (!is_supported_op(node.op_type)) {
    throw InvalidInput("cannot build a runner for node '" + node.name + "': op type '" +
                       node.op_type +
                       "' is not supported; supported: " + join_with_commas(supported_ops()));
  }
  if (options.instances < 1) {
    throw InvalidInput("op runner: instances must be >= 1, got " +
                       std::to_string(options.instances));
  }
  if (node.outputs.empty()) reject(node, "the node has no output");
  const torch::ScalarType dtype = scalar_type(options.dtype, options.cuda_device >= 0);
  const torch::Device device = runner_device(options);
  auto impl = std::make_unique<Impl>();
  impl->node_name = node.name;
  impl->op_type = node.op_type;
  impl->cuda_device = options.cuda_device;
  impl->forward = forward_for(network, node);

  const auto element_bytes = static_cast<std::int64_t>(torch::elementSize(dtype));
  std::int64_t instance_bytes = 0;
  bool any_parameter = false;
  for (std::size_t in : node.inputs) {
    const TensorInfo& t = network.tensor(in);
    if (per_instance(t)) {
      any_parameter = true;
      instance_bytes += t.elements() * element_bytes;
    }
  }
  int instances = any_parameter ? options.instances : 1;
  if (instance_bytes > 0) {
    const std::int64_t fit = options.max_parameter_block_bytes / instance_bytes;
    instances = static_cast<int>(std::clamp<std::int64_t>(fit, 1, instances));
  }

  // Gather's indices must lie in the gathered axis; no other supported op reads integers.
  std::int64_t index_bound = 1;
  if (node.op_type == "Gather") {
    const Shape& data = network.tensor(node.inputs.at(0)).shape;
    std::int64_t axis = node.int_attribute("axis", 0);
    if (axis < 0) axis += static_cast<std::int64_t>(data.size());
    index_bound = data.at(static_cast<std::size_t>(axis));
  }

  try {
    torch::manual_seed(options.seed);
    const auto random = [&](const TensorInfo& t, bool grad) {
      if (!graph::is_floating(t.dtype)) {
        return torch::randint(0, std::max<std::int64_t>(index_bound, 1), t.shape,
                              torch::TensorOptions().dtype(torch::kInt64))
            .to(device);
      }
      // Buffers are BatchNorm running statistics: keep the variance positive.
      torch::Tensor v =
          t.role == TensorRole::kBuffer
              ? torch::rand(t.shape, torch::TensorOptions().dtype(torch::kFloat32)) + 0.5
              : torch::randn(t.shape, torch::TensorOptions().dtype(torch::kFloat32));
      // Drawn on the CPU in fp32 and converted, so that a seed gives the same values everywhere.
      v = v.to(device, dtype);
      if (grad) v.set_requires_grad(true);
      return v;
    };
    std::vector<torch::Tensor> shared(node.inputs.size());
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      const TensorInfo& t = network.tensor(node.inputs[i]);
      if (per_instance(t)) continue;
      // An activation input needs its gradient as inside a trained network (seed 000 §4.2.2);
      // data inputs and constants only when the IR says so.
      const bool grad =
          graph::is_floating(t.dtype) && (t.role == TensorRole::kActivation || t.requires_grad);
      shared[i] = random(t, grad);
      if (grad) impl->grad_inputs.push_back(shared[i]);
      impl->backward = impl->backward || grad;
    }
    for (int k = 0; k < instances; ++k) {
      std::vector<torch::Tensor> args(node.inputs.size());
      for (std::size_t i = 0; i < node.inputs.size(); ++i) {
        const TensorInfo& t = network.tensor(node.inputs[i]);
        if (!per_instance(t)) {
          args[i] = shared[i];
          continue;
        }
        const bool grad = t.role == TensorRole::kParameter && graph::is_floating(t.dtype);
        args[i] = random(t, grad);
        impl->backward = impl->backward || grad;
      }
      impl->args.push_back(std::move(args));
    }
    const TensorInfo& out = network.tensor(node.outputs[0]);
    impl->grad_output =
        torch::randn(out.shape, torch::TensorOptions().dtype(torch::kFloat32)).to(device, dtype);

    std::string in_shapes;
    for (std::size_t in : node.inputs) {
      if (!in_shapes.empty()) in_shapes += " ";
      in_shapes += to_string(network.tensor(in).shape);
    }
    impl->description = node.op_type + " " + node.name + " " + in_shapes + " -> " +
                        to_string(out.shape) + " " + std::string(graph::to_string(options.dtype)) +
                        ", " + std::to_string(instances) +
                        (instances == 1 ? " instance" : " instances") + device_suffix(options);
  } catch (const c10::Error& e) {
    impl->fail(e);
  }
  return std::unique_ptr<OpRunner>(new OpRunner(std::move(impl)));
}

namespace {

const std::vector<std::string>& glue_ops() {
  static const std::vector<std::string> ops = {"Clip",     "Concat", "Dropout", "Flatten",
                                               "Identity", "Pad",    "Reshape"};
  return ops;
}

// Layout and glue nodes a network needs between its compute ops. The IR keeps static shapes
// but not constant values, so Reshape and Flatten take their output shape from the IR, and Clip
// with bound inputs is ReLU6 (0, 6), the only Clip the zoo's CNNs use; bounds do not change its
// time. Constant-mode Pad takes its per-dimension padding from the output shape; the split
// between the start and the end of a dimension is not known, and does not change the time.
Forward glue_forward(const Network& net, const Node& node) {
  const std::string& op = node.op_type;
  if (op == "Dropout" || op == "Identity") {
    return [](const std::vector<torch::Tensor>& in, bool) { return in[0]; };
  }
  if (op == "Flatten" || op == "Reshape") {
    const Shape out = net.tensor(node.outputs.at(0)).shape;
    return [out](const std::vector<torch::Tensor>& in, bool) { return in[0].reshape(out); };
  }
  if (op == "Clip") {
    const double low = attribute_float(node, "min", 0.0);
    const double high = attribute_float(node, "max", 6.0);
    return [low, high](const std::vector<torch::Tensor>& in, bool) {
      return torch::clamp(in[0], low, high);
    };
  }
  if (op == "Pad") {
    const std::string mode = attribute_string(node, "mode", "constant");
    if (mode != "constant") reject(node, "Pad mode '" + mode + "' not supported (only constant)");
    const Shape from = net.tensor(node.inputs.at(0)).shape;
    const Shape to = net.tensor(node.outputs.at(0)).shape;
    if (from.size() != to.size()) reject(node, "Pad changes the rank");
    // torch's pad list runs from the last dimension to the first, (start, end) for each.
    std::vector<std::int64_t> pads;
    for (std::size_t d = from.size(); d-- > 0;) {
      const std::int64_t total = to[d] - from[d];
      if (total < 0) reject(node, "Pad with negative padding (cropping) not supported");
      pads.push_back(total / 2);
      pads.push_back(total - total / 2);
    }
    return [pads](const std::vector<torch::Tensor>& in, bool) {
      return torch::constant_pad_nd(in[0], pads, 0);
    };
  }
  if (op == "Concat") {
    const std::int64_t axis = node.int_attribute("axis", 0);
    return [axis](const std::vector<torch::Tensor>& in, bool) { return torch::cat(in, axis); };
  }
  reject(node, "op type not supported in a network");
}

bool skipped_in_network(const Network& net, const Node& node) {
  for (std::size_t out : node.outputs) {
    const TensorInfo& t = net.tensor(out);
    if (!t.shape_valued && t.role != TensorRole::kConstant) return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> network_ops() {
  std::vector<std::string> v = supported_list();
  v.insert(v.end(), glue_ops().begin(), glue_ops().end());
  std::sort(v.begin(), v.end());
  return v;
}

std::unique_ptr<OpRunner> OpRunner::build_network(const graph::Network& network,
                                                  const RunnerOptions& options) {
  const torch::ScalarType dtype = scalar_type(options.dtype, options.cuda_device >= 0);
  std::map<std::string, int> unsupported;
  std::vector<std::size_t> steps;
  for (std::size_t n = 0; n < network.nodes().size(); ++n) {
    const Node& node = network.nodes()[n];
    if (skipped_in_network(network, node)) continue;
    const std::string& op = node.op_type;
    if (!is_supported_op(op) &&
        std::find(glue_ops().begin(), glue_ops().end(), op) == glue_ops().end()) {
      ++unsupported[op];
      continue;
    }
    steps.push_back(n);
  }
  if (!unsupported.empty()) {
    std::string list;
    for (const auto& [op, count] : unsupported) {
      list += (list.empty() ? "" : ", ") + op + " (" + std::to_string(count) + ")";
    }
    throw InvalidInput("cannot run network '" + network.name + "': node types not supported: " +
                       list + "; supported: " + join_with_commas(network_ops()));
  }
  if (steps.empty()) throw InvalidInput("network '" + network.name + "' has no node to run");

  std::vector<Forward> forwards;
  for (std::size_t n : steps) {
    const Node& node = network.nodes()[n];
    forwards.push_back(is_supported_op(node.op_type) ? forward_for(network, node)
                                                     : glue_forward(network, node));
  }
  // The output: the first non-shape tensor a step produces that no step consumes.
  std::vector<bool> consumed(network.tensors().size(), false);
  for (std::size_t n : steps) {
    for (std::size_t in : network.nodes()[n].inputs) consumed[in] = true;
  }
  std::size_t output = network.nodes()[steps.back()].outputs.at(0);
  for (std::size_t n : steps) {
    const std::size_t out = network.nodes()[n].outputs.at(0);
    if (!consumed[out]) {
      output = out;
      break;
    }
  }

  const torch::Device device = runner_device(options);
  auto impl = std::make_unique<Impl>();
  impl->node_name = network.name;
  impl->op_type = "network";
  impl->cuda_device = options.cuda_device;
  try {
    torch::manual_seed(options.seed);
    // Slot i holds tensor i: parameters and inputs filled here, activations by the forward pass.
    std::vector<torch::Tensor> initial(network.tensors().size());
    std::vector<std::size_t> data_inputs;
    for (std::size_t t = 0; t < network.tensors().size(); ++t) {
      const TensorInfo& info = network.tensor(t);
      if (info.shape_valued || !graph::is_floating(info.dtype)) continue;
      if (info.role == TensorRole::kParameter) {
        initial[t] = torch::randn(info.shape).to(device, dtype).set_requires_grad(true);
        impl->backward = true;
      } else if (info.role == TensorRole::kBuffer) {
        initial[t] = (torch::rand(info.shape) + 0.5).to(device, dtype);
      } else if (info.role == TensorRole::kDataInput) {
        initial[t] = torch::randn(info.shape).to(device, dtype);
        data_inputs.push_back(t);
      }
    }
    std::vector<std::vector<std::size_t>> step_inputs;
    for (std::size_t n : steps) {
      std::vector<std::size_t> ins;
      for (std::size_t in : network.nodes()[n].inputs) {
        // Shape-valued inputs (Reshape targets) and constant bounds are folded into the IR.
        if (network.tensor(in).shape_valued || !initial[in].defined()) {
          const TensorInfo& info = network.tensor(in);
          if (info.shape_valued || info.role == TensorRole::kConstant ||
              !graph::is_floating(info.dtype)) {
            continue;
          }
        }
        ins.push_back(in);
      }
      step_inputs.push_back(std::move(ins));
    }
    std::vector<std::size_t> step_outputs;
    for (std::size_t n : steps) step_outputs.push_back(network.nodes()[n].outputs.at(0));
    impl->forward = [initial, forwards, step_inputs, step_outputs, output](
                        const std::vector<torch::Tensor>&, bool training) {
      std::vector<torch::Tensor> values = initial;
      std::vector<torch::Tensor> args;
      for (std::size_t s = 0; s < forwards.size(); ++s) {
        args.clear();
        for (std::size_t in : step_inputs[s]) args.push_back(values[in]);
        values[step_outputs[s]] = forwards[s](args, training);
      }
      return values[output];
    };
    impl->args.emplace_back();
    impl->grad_output = torch::randn(network.tensor(output).shape).to(device, dtype);
    std::int64_t parameters = 0;
    for (std::size_t t = 0; t < network.tensors().size(); ++t) {
      if (network.tensor(t).role == TensorRole::kParameter)
        parameters += network.tensor(t).elements();
    }
    std::string inputs;
    for (std::size_t t : data_inputs) inputs += " " + to_string(network.tensor(t).shape);
    impl->description =
        "network " + network.name + inputs + " -> " + to_string(network.tensor(output).shape) +
        " " + std::string(graph::to_string(options.dtype)) + ", " + std::to_string(steps.size()) +
        " nodes, " + std::to_string(parameters) + " parameters" + device_suffix(options);
  } catch (const c10::Error& e) {
    impl->fail(e);
  }
  return std::unique_ptr<OpRunner>(new OpRunner(std::move(impl)));
}

void OpRunner::run(graph::Mode mode, std::int64_t iterations) {
  Impl& impl = *impl_;
  const auto count = static_cast<std::int64_t>(impl.args.size());
  try {
    if (mode == graph::Mode::kInference) {
      // Seed 000 §4.2.1: eval mode inside torch.inference_mode, one forward per iteration.
      const c10::InferenceMode guard;
      for (std::int64_t i = 0; i < iterations; ++i) {
        impl.forward_once(static_cast<std::size_t>(i % count), false);
      }
      impl.wait();
      return;
    }
    // Seed 000 §4.2.2: train mode, forward, backward from the preallocated output gradient, input
    // gradients reset every iteration.
    for (std::int64_t i = 0; i < iterations; ++i) {
      for (torch::Tensor& x : impl.grad_inputs) x.mutable_grad() = torch::Tensor();
      torch::Tensor y = impl.forward_once(static_cast<std::size_t>(i % count), true);
      if (impl.backward) y.backward(impl.grad_output);
    }
    impl.wait();
  } catch (const c10::Error& e) {
    impl.fail(e);
  }
}

graph::Shape OpRunner::output_shape(graph::Mode mode) {
  try {
    torch::Tensor y;
    if (mode == graph::Mode::kInference) {
      const c10::InferenceMode guard;
      y = impl_->forward_once(0, false);
    } else {
      y = impl_->forward_once(0, true);
    }
    return graph::Shape(y.sizes().begin(), y.sizes().end());
  } catch (const c10::Error& e) {
    impl_->fail(e);
  }
}

std::string OpRunner::description() const { return impl_->description; }

int OpRunner::instances() const { return static_cast<int>(impl_->args.size()); }

bool OpRunner::has_backward() const { return impl_->backward; }

std::vector<std::string> supported_ops() { return supported_list(); }

bool is_supported_op(std::string_view op_type) {
  const auto& ops = supported_list();
  return std::binary_search(ops.begin(), ops.end(), op_type);
}

void set_cpu_threads(int threads) {
  if (threads < 1) {
    throw InvalidInput("LibTorch CPU threads must be >= 1, got " + std::to_string(threads));
  }
  torch::set_num_threads(threads);
}

int cpu_threads() { return torch::get_num_threads(); }

int cuda_device_count() { return static_cast<int>(torch::cuda::device_count()); }

void set_tf32(bool allowed) {
  at::globalContext().setAllowTF32CuBLAS(allowed);
  at::globalContext().setAllowTF32CuDNN(allowed);
}

}  // namespace nnergy::profile
