#pragma once

#include <string>
#include <string_view>

namespace nnergy::graph {

/// Module hierarchy path from an exporter's scoped node name: the last segment (the operator)
/// is dropped, a segment repeating its parent as a prefix keeps only the rest, and dots become
/// slashes. "/layer1/layer1.0/conv1/Conv" → "layer1/0/conv1"; "/encoder/layer.0/attention/MatMul"
/// → "encoder/layer/0/attention"; an unscoped name such as "Conv_12" → "".
std::string module_path_from_node_name(std::string_view node_name);

}  // namespace nnergy::graph
