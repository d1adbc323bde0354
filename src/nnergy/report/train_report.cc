#include "nnergy/report/train_report.h"

#include <fmt/format.h>

#include "nnergy/report/quantity_format.h"

namespace nnergy::report {

namespace {

std::string in_sample_text(const nlohmann::json& metrics) {
  const nlohmann::json& by_mode = metrics.value("training_set", nlohmann::json::object());
  std::string out;
  for (const auto& [mode, m] : by_mode.items()) {
    if (!out.empty()) out += ", ";
    const nlohmann::json& r2 = m.at("r_squared");
    out += fmt::format("{} R² {} MAPE {:.1f} %", mode,
                       r2.is_number() ? fmt::format("{:.3f}", r2.get<double>()) : "-",
                       m.value("mape_percent", 0.0));
  }
  return out;
}

}  // namespace

std::string render_text(const TrainReport& r) {
  std::string out = fmt::format("nnergy train: {} on {} (FNV-1a 64 {})\n", r.predictor,
                                r.db.string(), r.dataset_digest);
  out +=
      fmt::format("  device: '{}' ({}) encoded as catalog device {} — {}\n", r.device.dataset_name,
                  r.device.dataset_kind, r.device.catalog_id, r.device.how);
  out += fmt::format(
      "  rows: {} op measurements of {} ops used; {} dropped (time missing, NaN, infinite or "
      "not positive); {} error rows skipped\n",
      r.rows, r.ops, r.dropped_rows, r.error_rows);
  out += fmt::format("  features: {} columns\n", r.feature_columns);
  out += fmt::format("  time_s: fitted ({} rows); in-sample {}\n", r.time.rows,
                     in_sample_text(r.time.metrics));
  if (r.power) {
    out += fmt::format("  power_w: fitted ({} rows, {} power values dropped); in-sample {}\n",
                       r.power->rows, r.dropped_power, in_sample_text(r.power->metrics));
  } else {
    out += fmt::format(
        "  power_w: not trained — {} has no power measurements; `nnergy predict --predictor "
        "{}` takes power from the analytical model and says so\n",
        r.db.string(), r.model_file.string());
  }
  out += fmt::format(
      "  training time {:.2f} s; in-sample figures are optimistic: `nnergy evaluate` gives "
      "cross-validated ones\n",
      r.train_s);
  out += fmt::format("wrote {} ({})\n", r.model_file.string(),
                     format_quantity(static_cast<double>(r.model_file_bytes), "B"));
  return out;
}

}  // namespace nnergy::report
