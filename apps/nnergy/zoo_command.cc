// `nnergy zoo`: the bundled architecture-only models with their inputs, op counts and GMACs.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "command.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/zoo.h"
#include "nnergy/network/network_prediction.h"
#include "nnergy/report/text_table.h"

namespace nnergy::cli {

namespace {

struct ZooRow {
  std::string name;
  std::string description;
  std::string inputs;
  std::size_t operations = 0;
  std::size_t unique = 0;
  double parameters = 0;
  double macs = 0;
};

ZooRow describe(const graph::ZooModel& model) {
  const graph::Network net = graph::import_onnx(model.path, graph::DimBindings{});
  const network::CostedNetwork costed(net);
  ZooRow row;
  row.name = model.name;
  row.description = net.description;
  for (std::size_t i : net.data_inputs()) {
    const graph::TensorInfo& t = net.tensor(i);
    std::string dims;
    for (std::size_t d = 0; d < t.shape.size(); ++d) {
      const bool symbolic = d < t.dim_params.size() && !t.dim_params[d].empty();
      dims += (d == 0 ? "" : ", ") + (symbolic ? t.dim_params[d] : std::to_string(t.shape[d]));
    }
    if (!row.inputs.empty()) row.inputs += ", ";
    row.inputs += fmt::format("{} [{}] {}", t.name, dims, graph::to_string(t.dtype));
  }
  // Unique operations as `unique_operations` counts them (shape arithmetic left out), from the
  // signatures CostedNetwork already grouped.
  std::set<std::size_t> unique;
  for (std::size_t n = 0; n < net.nodes().size(); ++n) {
    const graph::OpCost& cost = costed.costs()[n];
    if (cost.op_class == graph::OpClass::kShape) continue;
    ++row.operations;
    row.macs += cost.inference.macs;
    unique.insert(costed.unique_of_node()[n]);
  }
  row.unique = unique.size();
  row.parameters = static_cast<double>(net.parameter_count());
  return row;
}

std::string run_zoo(bool json) {
  const std::filesystem::path data_dir = data_directory();
  const auto models = graph::list_zoo(data_dir);
  std::vector<ZooRow> rows;
  for (const auto& model : models) rows.push_back(describe(model));
  if (json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const ZooRow& r : rows) {
      j.push_back({{"name", r.name},
                   {"description", r.description},
                   {"inputs", r.inputs},
                   {"operations", r.operations},
                   {"unique_operations", r.unique},
                   {"parameters", r.parameters},
                   {"macs_per_sample", r.macs}});
    }
    return j.dump(2) + "\n";
  }
  report::TextTable table;
  using A = report::TextTable::Align;
  table.add_column("model", A::kLeft);
  table.add_column("inputs", A::kLeft);
  table.add_column("ops", A::kRight);
  table.add_column("unique", A::kRight);
  table.add_column("params M", A::kRight);
  table.add_column("GMACs", A::kRight);
  table.add_column("description", A::kLeft);
  for (const ZooRow& r : rows) {
    table.add_row({r.name, r.inputs, std::to_string(r.operations), std::to_string(r.unique),
                   fmt::format("{:.2f}", r.parameters / 1e6), fmt::format("{:.2f}", r.macs / 1e9),
                   r.description});
  }
  return fmt::format(
             "{} models in {} (GMACs per sample: convolution, GEMM and MatMul "
             "multiply-accumulates; shape arithmetic not counted as ops)\n",
             rows.size(), (data_dir / "zoo").string()) +
         table.render();
}

}  // namespace

void add_zoo_command(CLI::App& app, CommandRun* selected) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd =
      app.add_subcommand("zoo", "List the bundled models with input shapes, op counts and GMACs");
  cmd->add_flag("--json", *json, "write JSON instead of text");
  cmd->callback([json, selected] {
    *selected = [json] { return CommandResult{run_zoo(*json), 0}; };
  });
}

}  // namespace nnergy::cli
