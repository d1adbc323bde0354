#include "nnergy/graph/module_path.h"

#include <vector>

namespace nnergy::graph {

std::string module_path_from_node_name(std::string_view node_name) {
  std::vector<std::string_view> segments;
  std::size_t start = 0;
  while (start <= node_name.size()) {
    std::size_t end = node_name.find('/', start);
    if (end == std::string_view::npos) end = node_name.size();
    if (end > start) segments.push_back(node_name.substr(start, end - start));
    start = end + 1;
  }
  if (node_name.find('/') == std::string_view::npos || segments.empty()) return "";
  segments.pop_back();  // the operator's own name, e.g. "Conv" or "Relu_1"

  std::string path;
  std::string_view previous;
  for (std::string_view segment : segments) {
    std::string_view local = segment;
    // The exporter writes each scope with its full qualified name ("layer1" then "layer1.0").
    if (!previous.empty() && segment.size() > previous.size() + 1 &&
        segment.substr(0, previous.size()) == previous && segment[previous.size()] == '.') {
      local = segment.substr(previous.size() + 1);
    }
    previous = segment;
    if (!path.empty()) path += '/';
    for (char c : local) path += (c == '.') ? '/' : c;
  }
  return path;
}

}  // namespace nnergy::graph
