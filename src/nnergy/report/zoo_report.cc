#include "nnergy/report/zoo_report.h"

#include <fmt/format.h>

#include "nnergy/report/text_table.h"

namespace nnergy::report {

std::string render_text(const ZooReport& report) {
  TextTable table;
  using A = TextTable::Align;
  table.add_column("model", A::kLeft);
  table.add_column("inputs", A::kLeft);
  table.add_column("ops", A::kRight);
  table.add_column("unique", A::kRight);
  table.add_column("params M", A::kRight);
  table.add_column("GMACs", A::kRight);
  table.add_column("description", A::kLeft);
  for (const ZooEntry& r : report.models) {
    table.add_row({r.name, r.inputs, std::to_string(r.operations),
                   std::to_string(r.unique_operations),
                   fmt::format("{:.2f}", r.parameter_count / 1e6),
                   fmt::format("{:.2f}", r.mac_count_per_sample / 1e9), r.description});
  }
  return fmt::format(
             "{} models in {} (GMACs per sample: convolution, GEMM and MatMul "
             "multiply-accumulates; shape arithmetic not counted as ops)\n",
             report.models.size(), report.directory.string()) +
         table.render();
}

nlohmann::ordered_json to_json(const ZooReport& report) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const ZooEntry& r : report.models) {
    j.push_back({{"name", r.name},
                 {"description", r.description},
                 {"inputs", r.inputs},
                 {"operations", r.operations},
                 {"unique_operations", r.unique_operations},
                 {"parameter_count", r.parameter_count},
                 {"mac_count_per_sample", r.mac_count_per_sample}});
  }
  return j;
}

}  // namespace nnergy::report
