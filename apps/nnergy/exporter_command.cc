// `nnergy exporter --listen ADDR`: GPU and CPU energy, power, clocks and throttling as Prometheus
// metrics at http://ADDR/metrics, until Ctrl-C or SIGTERM.
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/exporter.h"
#include "nnergy/core/signals.h"
#include "nnergy/report/exporter_report.h"
#include "nnergy/report/output_format.h"

namespace nnergy::cli {

namespace {

struct ExporterOptions {
  std::string listen = "127.0.0.1:9464";
  std::string allow;
  std::vector<std::string> sources;
  double interval_ms = 1000;
  std::string job_mapping_dir;
  std::optional<double> duration_s;
  bool json = false;
};

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void request_stop(int) { g_stop.store(true); }

CommandResult run_exporter(const ExporterOptions& o, const std::string& command_line) {
  api::ExporterRequest request;
  request.names = SettingNames::kFlag;
  request.command_line = command_line;
  request.listen = o.listen;
  request.allow = o.allow;
  request.sources = o.sources;
  request.interval_ms = o.interval_ms;
  request.job_mapping_dir = o.job_mapping_dir;
  request.duration_s = o.duration_s;
  g_stop.store(false);
  const SignalScope stop_on_signal({SIGINT, SIGTERM}, request_stop);
  const report::ExporterReport report =
      api::run_exporter(request, g_stop, [](const report::ExporterReport& ready) {
        const std::string line = report::render_ready(ready);
        std::fwrite(line.data(), 1, line.size(), stderr);
        std::fflush(stderr);
      });
  return {report::render(report, report::choose_format(o.json)), 0};
}

}  // namespace

void add_exporter_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto o = std::make_shared<ExporterOptions>();
  CLI::App* cmd = app.add_subcommand(
      "exporter",
      "Serve GPU (NVML) and CPU (RAPL) energy, power, clocks and throttling as Prometheus "
      "metrics, labelled with the Slurm job on each GPU");
  cmd->add_option("--listen", o->listen,
                  "HOST:PORT, [IPV6]:PORT or :PORT (every interface) to serve /metrics at")
      ->capture_default_str();
  cmd->add_option("--allow", o->allow,
                  "only these clients may connect: comma-separated addresses or CIDR ranges "
                  "(e.g. 127.0.0.1,10.0.0.0/8); default: anyone who can reach --listen");
  cmd->add_option("--source", o->sources,
                  "power source instead of detection (repeatable): nvml[:INDEX], rapl[:ZONE], "
                  "synthetic:SPEC, replay:PATH");
  cmd->add_option("--interval-ms", o->interval_ms, "sampling period in ms")->capture_default_str();
  cmd->add_option("--job-mapping-dir", o->job_mapping_dir,
                  "directory with a file per GPU index listing Slurm job ids (dcgm-exporter's "
                  "--hpc-job-mapping-dir layout, written by a Slurm prolog/epilog)");
  cmd->add_option("--duration-s", o->duration_s, "stop after this many seconds (default: never)");
  cmd->add_flag("--json", o->json, "write the summary at exit as JSON");
  cmd->footer(
      "Metrics and labels: docs/fleet.md. Example: nnergy exporter --listen :9464 & "
      "curl -s localhost:9464/metrics");
  cmd->callback([o, selected, command_line] {
    *selected = [o, command_line] { return run_exporter(*o, command_line); };
  });
}

}  // namespace nnergy::cli
