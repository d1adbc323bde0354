#include "nnergy/report/serve_comparison_report.h"

#include <fmt/format.h>

#include "nnergy/core/csv.h"
#include "nnergy/report/quantity_format.h"
#include "nnergy/report/serve_report.h"
#include "nnergy/report/text_table.h"

namespace nnergy::report {

namespace {

using json = nlohmann::ordered_json;

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(); }

std::string money(const std::optional<double>& usd) {
  return usd ? fmt::format("{:.3g}", *usd) : std::string();
}

}  // namespace

std::string render_text(const ServeComparison& c) {
  std::string out =
      fmt::format("nnergy compare --serve: {}, {:g} prompt + {:g} output tokens per request",
                  c.model, c.input_tokens, c.output_tokens);
  std::string target;
  if (c.max_itl_s) target = fmt::format("ITL ≤ {:g} ms", *c.max_itl_s * 1e3);
  if (c.max_ttft_s)
    target += fmt::format("{}TTFT ≤ {:g} ms", target.empty() ? "" : ", ", *c.max_ttft_s * 1e3);
  out += target.empty() ? "\n\n" : ", target " + target + "\n\n";

  bool price = false;
  bool carbon = false;
  for (const ServeCandidate& s : c.candidates) {
    price = price || s.usd_per_million_tokens.has_value();
    carbon = carbon || s.gco2e_per_million_tokens.has_value();
  }
  TextTable t;
  t.add_column("rank", TextTable::Align::kRight);
  t.add_column("device", TextTable::Align::kLeft);
  for (const char* h :
       {"GPUs", "batch", "J/token", "tokens/s", "per GPU", "ITL", "TTFT", "power W"})
    t.add_column(h, TextTable::Align::kRight);
  if (price) t.add_column("$/M tokens", TextTable::Align::kRight);
  if (carbon) t.add_column("gCO2e/M tok", TextTable::Align::kRight);
  t.add_column("precision", TextTable::Align::kLeft);
  std::string not_running;
  for (const ServeCandidate& s : c.candidates) {
    if (!s.runs || !s.meets_target) {
      not_running += fmt::format("  - {} × {}: {}\n", s.gpus, s.device, s.reason);
      continue;
    }
    const serve::ServeResult& r = s.result;
    std::vector<std::string> row = {std::to_string(s.rank),
                                    s.device,
                                    std::to_string(s.gpus),
                                    fmt::format("{:g}", s.batch),
                                    format_quantity(r.energy_per_output_token_j, "J"),
                                    fmt::format("{:.0f}", r.output_tokens_per_s),
                                    fmt::format("{:.0f}", r.output_tokens_per_s_per_gpu),
                                    format_quantity(r.time_per_output_token_s, "s"),
                                    format_quantity(r.ttft_s, "s"),
                                    fmt::format("{:.0f}", r.avg_power_w)};
    if (price) row.push_back(money(s.usd_per_million_tokens));
    if (carbon) {
      row.push_back(s.gco2e_per_million_tokens ? fmt::format("{:.3g}", *s.gco2e_per_million_tokens)
                                               : std::string());
    }
    row.push_back(s.precision);
    t.add_row(row);
  }
  out += fmt::format(
      "Ranked by energy per output token (predicted, {} scope; all GPUs of a "
      "deployment):\n",
      c.power_scope);
  out += t.render();
  if (!not_running.empty()) {
    out += target.empty() ? "\nNot running:\n" : "\nNot running or missing the target:\n";
    out += not_running;
  }
  out += "\nNotes:\n  - " + c.method + "\n";
  for (const std::string& n : c.notes) out += "  - " + n + "\n";
  return out;
}

json to_json(const ServeComparison& c) {
  json j;
  j["context"] = c.context.to_json();
  j["model"] = c.model;
  j["workload"] = {{"input_tokens", c.input_tokens}, {"output_tokens", c.output_tokens}};
  j["targets"] = {{"max_itl_s", optional_number(c.max_itl_s)},
                  {"max_ttft_s", optional_number(c.max_ttft_s)}};
  j["power_scope"] = c.power_scope;
  json rows = json::array();
  for (const ServeCandidate& s : c.candidates) {
    json row = {{"rank", s.rank ? json(s.rank) : json()},
                {"device", s.device},
                {"device_name", s.device_name},
                {"gpus", s.gpus},
                {"runs", s.runs},
                {"meets_target", s.meets_target},
                {"reason", s.reason}};
    if (s.runs) {
      row["tp"] = s.tp;
      row["precision"] = s.precision;
      row.update(totals_json(s.result));
      row["usd_per_million_tokens"] = optional_number(s.usd_per_million_tokens);
      row["gco2e_per_million_tokens"] = optional_number(s.gco2e_per_million_tokens);
    }
    rows.push_back(row);
  }
  j["rows"] = rows;
  j["method"] = c.method;
  j["notes"] = c.notes;
  return j;
}

std::string render_csv(const ServeComparison& c) {
  std::string out = c.context.to_csv_comments();
  const json totals_keys = totals_json(serve::ServeResult{});
  out += "rank,device,gpus,tp,runs,meets_target,precision";
  for (const auto& [key, value] : totals_keys.items()) out += "," + key;
  out += ",usd_per_million_tokens,gco2e_per_million_tokens,reason\n";
  for (const ServeCandidate& s : c.candidates) {
    out += fmt::format("{},{},{},{},{},{},{}", s.rank ? std::to_string(s.rank) : "",
                       csv::field(s.device), s.gpus, s.runs ? std::to_string(s.tp) : "", s.runs,
                       s.meets_target, csv::field(s.precision));
    const json totals = totals_json(s.result);
    for (const auto& [key, value] : totals.items())
      out += "," + (s.runs ? value.dump() : std::string());
    const auto number = [&](const std::optional<double>& v) {
      return v && s.runs ? fmt::format("{}", *v) : std::string();
    };
    out += fmt::format(",{},{},{}\n", number(s.usd_per_million_tokens),
                       number(s.gco2e_per_million_tokens), csv::field(s.reason));
  }
  return out;
}

}  // namespace nnergy::report
