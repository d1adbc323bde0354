#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace nnergy::graph {

/// Refuses, with InvalidInput naming `source`, the node and what was found, a model that Debian's
/// ONNX 1.12 shape inference would crash on instead of reporting (each case found by
/// fuzz/onnx_import): a node input that nothing defines (a null dereference in data propagation);
/// window attributes (strides, dilations, kernel_shape) or a group below 1 (a division by zero in
/// Conv/Pool inference); a convolution without its weight, or whose weight has fewer than 3
/// dimensions or another rank than its input (Conv inference then reads past its kernel shape).
/// Ranks are checked where the file states them (graph inputs, initializers, value_info).
void check_for_shape_inference(const onnx::ModelProto& model, const std::string& source);

}  // namespace nnergy::graph
