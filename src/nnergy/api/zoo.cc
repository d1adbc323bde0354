#include "nnergy/api/zoo.h"

#include <fmt/format.h>

#include "nnergy/core/data_directory.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/op_catalog.h"
#include "nnergy/graph/op_signature.h"
#include "nnergy/graph/whitelist.h"
#include "nnergy/graph/zoo.h"

namespace nnergy::api {

namespace {

// "input [batch, 3, 224, 224] fp32", comma-separated over the data inputs.
std::string describe_inputs(const graph::Network& net) {
  std::string inputs;
  for (std::size_t i : net.data_inputs()) {
    const graph::TensorInfo& t = net.tensor(i);
    std::string dims;
    for (std::size_t d = 0; d < t.shape.size(); ++d) {
      const bool symbolic = d < t.dim_params.size() && !t.dim_params[d].empty();
      dims += (d == 0 ? "" : ", ") + (symbolic ? t.dim_params[d] : std::to_string(t.shape[d]));
    }
    if (!inputs.empty()) inputs += ", ";
    inputs += fmt::format("{} [{}] {}", t.name, dims, graph::to_string(t.dtype));
  }
  return inputs;
}

report::ZooEntry describe(const graph::ZooModel& model, const graph::Whitelist& whitelist) {
  const graph::Network net = graph::import_onnx(model.path, graph::DimBindings{});
  report::ZooEntry entry;
  entry.name = model.name;
  entry.description = net.description;
  entry.inputs = describe_inputs(net);
  const std::vector<graph::UniqueOperation> unique = graph::unique_operations(net, whitelist);
  entry.unique_operations = unique.size();
  for (const graph::UniqueOperation& op : unique) {
    entry.operations += op.count();
    for (const std::size_t n : op.nodes) {
      entry.mac_count_per_sample += graph::op_cost(net, net.nodes()[n]).inference.mac_count;
    }
  }
  entry.parameter_count = static_cast<double>(net.parameter_count());
  return entry;
}

}  // namespace

report::ZooReport zoo(const ZooRequest& request) {
  const std::filesystem::path data_dir =
      request.data_dir.empty() ? data_directory() : request.data_dir;
  const graph::Whitelist whitelist = graph::Whitelist::standard();
  report::ZooReport report;
  report.directory = data_dir / "zoo";
  for (const graph::ZooModel& model : graph::list_zoo(data_dir)) {
    report.models.push_back(describe(model, whitelist));
  }
  return report;
}

}  // namespace nnergy::api
