// `nnergy monitor -- COMMAND`: runs a command while sampling every power source, then reports
// time, energy, power, clocks and throttling per source, like `perf stat`.
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/core/error.h"
#include "nnergy/core/run_context.h"
#include "nnergy/measure/measurement_window.h"
#include "nnergy/measure/sampler.h"
#include "nnergy/measure/trace_file.h"
#include "nnergy/report/quantity_format.h"
#include "nnergy/report/text_table.h"

extern char** environ;

namespace nnergy::cli {

namespace {

using measure::SourceMeasurement;
using nlohmann::ordered_json;

struct MonitorOptions {
  double interval_ms = 20;
  std::string output;
  std::vector<std::string> sources;
  bool json = false;
  bool exclude_off_clock = false;
  bool exclude_throttled = false;
  std::vector<std::string> command;
};

// The child's pid for the forwarding signal handler; 0 when no child runs.
volatile sig_atomic_t g_child_pid = 0;

// SIGTERM and SIGHUP sent to the monitor are passed on to the command; the monitor keeps running
// until the command ends, so it never kills the command itself.
void forward_signal(int signal_number) {
  if (g_child_pid > 0) kill(static_cast<pid_t>(g_child_pid), signal_number);
}

// Runs `argv` with the monitor's stdio and environment, returns its exit status as a shell
// would: the exit code, or 128 + the signal that ended it.
class ChildProcess {
 public:
  explicit ChildProcess(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    // The child gets default dispositions even though the monitor ignores SIGINT and SIGQUIT.
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP}) sigaddset(&defaults, s);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
    const int rc = posix_spawnp(&pid_, args[0], nullptr, &attributes, args.data(), environ);
    posix_spawnattr_destroy(&attributes);
    if (rc != 0) {
      throw InvalidInput(fmt::format("cannot run '{}': {}", argv[0], std::strerror(rc)));
    }
    g_child_pid = pid_;
  }

  int wait() {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0) {
      if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    g_child_pid = 0;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
  }

 private:
  pid_t pid_ = 0;
};

// Ignores SIGINT/SIGQUIT (the terminal sends them to the command too) and forwards SIGTERM/SIGHUP
// while alive; restores the previous dispositions afterwards.
class SignalGuard {
 public:
  SignalGuard() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction forward {};
    forward.sa_handler = forward_signal;
    sigaction(SIGINT, &ignore, &previous_[0]);
    sigaction(SIGQUIT, &ignore, &previous_[1]);
    sigaction(SIGTERM, &forward, &previous_[2]);
    sigaction(SIGHUP, &forward, &previous_[3]);
  }
  ~SignalGuard() {
    const int signals[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
    for (int i = 0; i < 4; ++i) sigaction(signals[i], &previous_[i], nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction previous_[4]{};
};

std::string join_command(const std::vector<std::string>& command) {
  std::string text;
  for (const std::string& word : command) text += (text.empty() ? "" : " ") + word;
  return text;
}

std::string optional_quantity(const std::optional<double>& value, const char* unit) {
  return value ? report::format_quantity(*value, unit) : "-";
}

std::string energy_text(const SourceMeasurement& m) {
  if (!m.energy_j) return "-";
  if (!m.energy_sigma_j) return report::format_quantity(*m.energy_j, "J");
  return report::format_quantity(*m.energy_j, "J") + " ± " +
         report::format_quantity(*m.energy_sigma_j, "J");
}

std::string clocks_text(const SourceMeasurement& m) {
  if (m.sm_clocks_seen.empty()) return "-";
  const double low = m.sm_clocks_seen.begin()->first;
  const double high = m.sm_clocks_seen.rbegin()->first;
  if (low == high) return fmt::format("{:g}", low);
  return fmt::format("{:g}–{:g} (mostly {:g})", low, high, m.dominant_sm_clock_mhz.value_or(0));
}

std::string throttling_text(const SourceMeasurement& m) {
  if (m.throttled_samples == 0) return "none";
  std::string names;
  for (const std::string& n : measure::throttle_reason_names(m.throttle_reasons_seen)) {
    names += (names.empty() ? "" : ",") + n;
  }
  return fmt::format("{} samples: {}", m.throttled_samples, names);
}

ordered_json measurement_json(const SourceMeasurement& m) {
  auto opt = [](const std::optional<double>& v) {
    return v ? ordered_json(*v) : ordered_json(nullptr);
  };
  ordered_json j;
  j["id"] = m.info.id;
  j["kind"] = m.info.kind;
  j["name"] = m.info.name;
  j["uuid"] = m.info.uuid;
  j["time_s"] = m.time_s;
  j["energy_j"] = opt(m.energy_j);
  j["energy_sigma_j"] = opt(m.energy_sigma_j);
  j["energy_method"] = m.energy_method;
  j["energy_from_counter_j"] = opt(m.energy_from_counter_j);
  j["energy_from_power_j"] = opt(m.energy_from_power_j);
  j["energy_from_power_sigma_j"] = opt(m.energy_from_power_sigma_j);
  j["power_mean_w"] = opt(m.power_mean_w);
  j["power_sigma_w"] = opt(m.power_sigma_w);
  j["power_peak_w"] = opt(m.power_peak_w);
  j["power_is_averaged"] = m.info.power_is_averaged;
  ordered_json clocks = ordered_json::object();
  for (const auto& [clock, count] : m.sm_clocks_seen) clocks[fmt::format("{:g}", clock)] = count;
  j["sm_clocks_mhz_seen"] = clocks;
  j["dominant_sm_clock_mhz"] = opt(m.dominant_sm_clock_mhz);
  j["throttle_reasons"] = measure::throttle_reason_names(m.throttle_reasons_seen);
  j["throttled_samples"] = m.throttled_samples;
  j["temperature_max_c"] = opt(m.temperature_max_c);
  j["samples_total"] = m.samples_total;
  j["samples_used"] = m.samples_used;
  j["dropped_sigma"] = m.dropped_sigma;
  j["dropped_off_clock"] = m.dropped_off_clock;
  j["dropped_throttled"] = m.dropped_throttled;
  j["source_failed"] = m.source_failed;
  j["source_error"] = m.source_error;
  return j;
}

// The trace file is written to "<path>.partial" while the command runs and renamed at the end, so
// an interrupted monitor never leaves a half-written file under the requested name.
class TraceOutput {
 public:
  TraceOutput(const std::string& path, const std::string& context_comments,
              const std::vector<measure::SourceInfo>& sources)
      : path_(path), partial_(path + ".partial") {
    if (path_.empty()) return;
    json_ = std::filesystem::path(path_).extension() == ".json";
    if (json_) return;  // JSON is written at the end, from the samples kept in memory
    file_.open(partial_);
    if (!file_)
      throw InvalidInput("--output " + path_ + ": cannot open " + partial_ + " for writing");
    writer_ = std::make_unique<measure::TraceCsvWriter>(file_, context_comments, sources);
  }

  void write(std::size_t source, const measure::PowerSample& sample) {
    if (!writer_) return;
    std::lock_guard lock(mutex_);
    writer_->write(source, sample);
  }

  bool is_json() const { return json_; }

  void finish(const std::string& json_text) {
    if (path_.empty()) return;
    if (json_) {
      std::ofstream out(partial_);
      out << json_text;
      if (!out) throw std::runtime_error("cannot write " + partial_);
    } else {
      file_.flush();
      if (!file_) throw std::runtime_error("cannot write " + partial_);
      file_.close();
    }
    std::filesystem::rename(partial_, path_);
  }

 private:
  std::string path_;
  std::string partial_;
  bool json_ = false;
  std::ofstream file_;
  std::unique_ptr<measure::TraceCsvWriter> writer_;
  std::mutex mutex_;
};

CommandResult run_monitor(const MonitorOptions& o, const std::string& command_line) {
  if (o.command.empty()) {
    throw InvalidInput(
        "monitor: expected a command after `--`, e.g. nnergy monitor -- python3 train.py");
  }
  if (!(o.interval_ms >= 1 && o.interval_ms <= 60000)) {
    throw InvalidInput(fmt::format("--interval-ms {:g}: expected 1 to 60000", o.interval_ms));
  }
  const measure::SourceRegistry registry = measure::SourceRegistry::standard();
  measure::Detection detection;
  if (o.sources.empty()) {
    detection = registry.detect();
  } else {
    for (const std::string& spec : o.sources) {
      measure::Detection found = registry.open(spec);
      for (auto& s : found.sources) detection.sources.push_back(std::move(s));
      for (auto& u : found.unavailable) detection.unavailable.push_back(std::move(u));
      for (auto& w : found.warnings) detection.warnings.push_back(std::move(w));
    }
  }
  std::vector<measure::SourceInfo> infos;
  for (const auto& s : detection.sources) infos.push_back(s->info());

  RunContext context = RunContext::now(command_line);
  context.add("command", join_command(o.command)).add("interval_ms", o.interval_ms);
  TraceOutput trace(o.output, context.to_csv_comments(), infos);

  measure::SamplerOptions sampler_options;
  sampler_options.period_s = o.interval_ms / 1000.0;
  sampler_options.on_sample = [&trace](std::size_t source, const measure::PowerSample& sample) {
    trace.write(source, sample);
  };
  measure::Sampler sampler(std::move(detection.sources), sampler_options);
  measure::Meter meter(sampler);

  int exit_code = 0;
  measure::Measurement measurement;
  {
    SignalGuard signals;
    sampler.start();
    const std::size_t window = meter.begin();
    ChildProcess child(o.command);
    exit_code = child.wait();
    measure::WindowOptions window_options;
    window_options.exclude_off_clock = o.exclude_off_clock;
    window_options.exclude_throttled = o.exclude_throttled;
    measurement = meter.end(window, window_options);
    sampler.stop();
  }
  const double wall_s = measurement.end_s - measurement.begin_s;
  const double cpu_fraction = wall_s > 0 ? sampler.cpu_time_s() / wall_s : 0;

  ordered_json summary;
  summary["context"] = context.to_json();
  summary["exit_code"] = exit_code;
  summary["wall_time_s"] = wall_s;
  summary["sampler_cpu_fraction_of_one_core"] = cpu_fraction;
  summary["sources"] = ordered_json::array();
  for (const SourceMeasurement& m : measurement.sources)
    summary["sources"].push_back(measurement_json(m));
  summary["warnings"] = detection.warnings;
  summary["unavailable"] = ordered_json::array();
  for (const auto& u : detection.unavailable) {
    summary["unavailable"].push_back({{"source", u.source}, {"reason", u.reason}});
  }
  if (trace.is_json()) {
    std::vector<measure::PowerTrace> traces;
    for (std::size_t i = 0; i < sampler.source_count(); ++i) {
      traces.push_back({sampler.info(i), sampler.samples(i)});
    }
    trace.finish(measure::trace_json(context.to_json().dump(), traces));
  } else {
    trace.finish("");
  }

  // Like perf stat, the report goes to stderr so the command's own stdout stays clean.
  std::string text;
  if (o.json) {
    text = summary.dump(2) + "\n";
  } else {
    text = fmt::format("\n nnergy monitor: '{}' exited with code {} after {} (wall)\n",
                       join_command(o.command), exit_code, report::format_quantity(wall_s, "s"));
    text += fmt::format(" sampling every {:g} ms; sampler CPU {:.2f} % of one core{}\n\n",
                        o.interval_ms, 100 * cpu_fraction,
                        o.output.empty() ? "" : "; trace in " + o.output);
    report::TextTable table;
    using A = report::TextTable::Align;
    table.add_column("source", A::kLeft);
    table.add_column("energy", A::kRight);
    table.add_column("how", A::kLeft);
    table.add_column("avg power", A::kRight);
    table.add_column("peak power", A::kRight);
    table.add_column("SM clock MHz", A::kLeft);
    table.add_column("throttling", A::kLeft);
    table.add_column("samples", A::kRight);
    for (const SourceMeasurement& m : measurement.sources) {
      std::string how = m.energy_method == "counter" ? "energy counter" : "mean power × time";
      if (m.energy_method.empty()) how = "-";
      if (m.source_failed) how += " (source failed: " + m.source_error + ")";
      const bool named =
          !m.info.name.empty() && m.info.name != m.info.id && m.info.name != m.info.kind;
      table.add_row({named ? m.info.id + " (" + m.info.name + ")" : m.info.id, energy_text(m), how,
                     optional_quantity(m.power_mean_w, "W"), optional_quantity(m.power_peak_w, "W"),
                     clocks_text(m), throttling_text(m), std::to_string(m.samples_total)});
    }
    if (!measurement.sources.empty()) text += table.render();
    for (const auto& u : detection.unavailable) {
      text += fmt::format(" {}: unavailable — {}\n", u.source, u.reason);
    }
    for (const std::string& w : detection.warnings) text += " warning: " + w + "\n";
    if (measurement.sources.empty())
      text += " no power source available: only the wall time is measured\n";
  }
  std::fwrite(text.data(), 1, text.size(), stderr);
  return CommandResult{"", exit_code};
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
  // Without `--` the command starts at the first word that is not an option of ours.
  cmd->prefix_command();
  cmd->footer("The command follows `--`: nnergy monitor -o run.csv -- python3 train.py --epochs 1");
  cmd->callback([options, selected, command_line, cmd, trailing] {
    options->command = trailing.empty() ? cmd->remaining() : trailing;
    *selected = [options, command_line] { return run_monitor(*options, command_line); };
  });
}

}  // namespace nnergy::cli
