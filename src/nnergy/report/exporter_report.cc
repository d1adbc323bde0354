#include "nnergy/report/exporter_report.h"

#include <fmt/format.h>

#include "nnergy/report/text_table.h"

namespace nnergy::report {

namespace {

std::string optional_number(const std::optional<double>& value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : std::string("-");
}

nlohmann::ordered_json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

}  // namespace

std::string render_ready(const ExporterReport& report) {
  std::string ids;
  for (const fleet::SourceReading& s : report.sources) ids += (ids.empty() ? "" : ", ") + s.info.id;
  std::string text =
      fmt::format("nnergy exporter: serving {}: {} (every {} ms); stop with Ctrl-C or SIGTERM\n",
                  report.url, ids.empty() ? "no power source" : ids, report.interval_ms);
  for (const measure::Unavailable& u : report.unavailable) {
    text += fmt::format("nnergy exporter: {} not available: {}\n", u.source, u.reason);
  }
  return text;
}

std::string render_text(const ExporterReport& report) {
  std::string text = fmt::format("Exporter  {}\nUptime    {:.1f} s\nScrapes   {}\n\n", report.url,
                                 report.uptime_s, report.scrapes);
  TextTable table;
  table.add_column("source", TextTable::Align::kLeft);
  table.add_column("kind", TextTable::Align::kLeft);
  table.add_column("name", TextTable::Align::kLeft);
  table.add_column("energy total J", TextTable::Align::kRight);
  table.add_column("power W", TextTable::Align::kRight);
  table.add_column("state", TextTable::Align::kLeft);
  for (const fleet::SourceReading& s : report.sources) {
    table.add_row({s.info.id, s.info.kind, s.info.name, optional_number(s.energy_total_j, "{:.1f}"),
                   optional_number(s.latest ? s.latest->power_w : std::nullopt, "{:.1f}"),
                   s.failed ? "failed: " + s.error : "up"});
  }
  text += table.render();
  for (const measure::Unavailable& u : report.unavailable) {
    text += fmt::format("not available: {}: {}\n", u.source, u.reason);
  }
  return text;
}

nlohmann::ordered_json to_json(const ExporterReport& report) {
  nlohmann::ordered_json j;
  j["context"] = report.context.to_json();
  j["url"] = report.url;
  j["interval_ms"] = report.interval_ms;
  j["uptime_s"] = report.uptime_s;
  j["scrapes"] = report.scrapes;
  j["sources"] = nlohmann::ordered_json::array();
  for (const fleet::SourceReading& s : report.sources) {
    nlohmann::ordered_json source;
    source["id"] = s.info.id;
    source["kind"] = s.info.kind;
    source["name"] = s.info.name;
    source["uuid"] = s.info.uuid;
    source["energy_total_j"] = optional_json(s.energy_total_j);
    source["power_w"] = optional_json(s.latest ? s.latest->power_w : std::nullopt);
    source["up"] = !s.failed;
    source["error"] = s.error;
    source["slurm_job"] = s.slurm_job;
    j["sources"].push_back(std::move(source));
  }
  j["unavailable"] = nlohmann::ordered_json::array();
  for (const measure::Unavailable& u : report.unavailable) {
    j["unavailable"].push_back({{"source", u.source}, {"reason", u.reason}});
  }
  return j;
}

}  // namespace nnergy::report
