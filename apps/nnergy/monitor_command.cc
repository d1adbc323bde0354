// `nnergy monitor -- COMMAND`: runs a command while sampling every power source, then reports
// time, energy, power, clocks and throttling per source, like `perf stat`.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/monitor.h"
#include "nnergy/core/carbon.h"
#include "nnergy/core/error.h"
#include "nnergy/report/monitor_report.h"
#include "nnergy/report/output_format.h"

namespace nnergy::cli {

namespace {

struct MonitorOptions {
  double interval_ms = 20;
  std::string output;
  std::vector<std::string> sources;
  bool json = false;
  bool exclude_off_clock = false;
  bool exclude_throttled = false;
  std::string prometheus;
  std::vector<std::string> command;
  std::optional<double> grid_gco2e_per_kwh;
};

CommandResult run_monitor(const MonitorOptions& o, const std::string& command_line) {
  if (o.command.empty()) {
    throw InvalidInput(
        "monitor: expected a command after `--`, e.g. nnergy monitor -- python3 train.py");
  }
  api::MonitorRequest request;
  request.names = SettingNames::kFlag;
  request.command_line = command_line;
  request.command = o.command;
  request.interval_ms = o.interval_ms;
  request.output = o.output;
  request.sources = o.sources;
  request.exclude_off_clock = o.exclude_off_clock;
  request.exclude_throttled = o.exclude_throttled;
  request.prometheus_listen = o.prometheus;
  request.grid_gco2e_per_kwh = o.grid_gco2e_per_kwh;
  const report::MonitorReport report = api::monitor(request);
  // Like perf stat, the report goes to stderr so the command's own stdout stays clean.
  const std::string text = report::render(report, report::choose_format(o.json));
  std::fwrite(text.data(), 1, text.size(), stderr);
  return CommandResult{"", report.exit_code};
}

}  // namespace

void add_monitor_command(CLI::App& app, CommandRun* selected, const std::string& command_line,
                         const std::vector<std::string>& trailing) {
  auto options = std::make_shared<MonitorOptions>();
  CLI::App* cmd = app.add_subcommand(
      "monitor",
      "Run a command while sampling GPU (NVML) and CPU (RAPL) power, then report time, energy, "
      "power, clocks and throttling per source (to stderr, like perf stat)");
  cmd->add_option("--interval-ms", options->interval_ms, "sampling period in ms")
      ->capture_default_str();
  cmd->add_option(
      "--output,-o", options->output,
      "write the raw trace (monotonic and epoch timestamps per sample): .csv, or .json");
  cmd->add_option("--source", options->sources,
                  "power source instead of detection (repeatable): nvml[:INDEX], rapl[:ZONE], "
                  "synthetic:SPEC, replay:PATH");
  cmd->add_flag("--json", options->json, "write the summary as JSON (to stderr)");
  cmd->add_flag("--exclude-off-clock", options->exclude_off_clock,
                "drop samples at another SM clock than the run's dominant one from the statistics");
  cmd->add_flag("--exclude-throttled", options->exclude_throttled,
                "drop samples taken under a throttle reason from the statistics");
  cmd->add_option("--grid-gco2e-per-kwh", options->grid_gco2e_per_kwh,
                  fmt::format("carbon intensity of your electricity, g CO2e per kWh, for the CO2e "
                              "of the total energy (default: {}, {:g})",
                              kWorldGridSource, kWorldGridGco2ePerKwh));
  cmd->add_option("--prometheus", options->prometheus,
                  "while the command runs, serve the live metrics of `nnergy exporter` at "
                  "HOST:PORT (e.g. 127.0.0.1:9464) for Prometheus to scrape");
  // Without `--` the command starts at the first word that is not an option of ours.
  cmd->prefix_command();
  cmd->footer("The command follows `--`: nnergy monitor -o run.csv -- python3 train.py --epochs 1");
  cmd->callback([options, selected, command_line, cmd, trailing] {
    options->command = trailing.empty() ? cmd->remaining() : trailing;
    *selected = [options, command_line] { return run_monitor(*options, command_line); };
  });
}

}  // namespace nnergy::cli
