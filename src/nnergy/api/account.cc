#include "nnergy/api/account.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "nnergy/account/footprint_writers.h"
#include "nnergy/account/trace_reader.h"
#include "nnergy/core/atomic_file.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_text.h"
#include "nnergy/report/html_report.h"

namespace nnergy::api {

namespace {

std::string name(const AccountRequest& r, std::string_view setting) {
  return setting_name(r.names, setting);
}

// A setting whose flag is not its field's name: "--output" for the CLI, "json_file" for Python.
std::string name(const AccountRequest& r, std::string_view field, std::string_view flag) {
  return setting_name(r.names, field, flag);
}

// The runs are the CLI's positional RUN arguments, which have no flag to spell.
std::string runs_name(const AccountRequest& r) {
  return r.names == SettingNames::kFlag ? "RUN" : "runs";
}

void check_request(const AccountRequest& r) {
  for (const auto& [source, device] : r.power_devices) {
    if (!account::is_power_device(device)) {
      throw InvalidInput(
          setting_entry(r.names, "power_devices", "power_device", source, device, true) +
          ": expected a device cpu, gpu:N or none, found '" + device + "'");
    }
  }
  if (r.max_factor < 2) {
    throw InvalidInput(
        fmt::format("{}: expected >= 2, found {}", name(r, "max_factor"), r.max_factor));
  }
  // The files asked for, named as the front end names them: each is one run's.
  struct File {
    const std::filesystem::path* path;
    const char* field;
    const char* flag;
  };
  std::string files;
  for (const File& f :
       {File{&r.json_file, "json_file", "output"}, File{&r.csv_file, "csv_file", "csv"},
        File{&r.folded_file, "folded_file", "folded"},
        File{&r.perfetto_file, "perfetto_file", "perfetto"},
        File{&r.html_file, "html_file", "html"}}) {
    if (!f.path->empty()) files += (files.empty() ? "" : "/") + name(r, f.field, f.flag);
  }
  if (!files.empty() && r.runs.size() > 1) {
    throw InvalidInput(
        fmt::format("{}: expected one {}, found {}", files, runs_name(r), r.runs.size()));
  }
}

// One run's inputs per session directory, or one of the trace and power files alone.
std::vector<account::AccountInputs> inputs_of(const AccountRequest& r) {
  std::vector<account::AccountInputs> all;
  for (const std::filesystem::path& run : r.runs) {
    if (!std::filesystem::is_directory(run)) {
      throw InvalidInput(runs_name(r) + " '" + run.string() +
                         "': expected a session directory (with session.json), found " +
                         (std::filesystem::exists(run) ? "a file" : "nothing") +
                         (run.extension() == ".json"
                              ? "; to write the accounting document to a file, use " +
                                    name(r, "json_file", "output")
                              : std::string()));
    }
    account::AccountInputs inputs = account::read_session_directory(run, r.names);
    for (const auto& t : r.trace_files) inputs.trace_files.push_back(t);
    for (const auto& p : r.power_files) inputs.power_files.push_back(p);
    all.push_back(std::move(inputs));
  }
  if (all.empty()) {
    if (r.trace_files.empty() || r.power_files.empty()) {
      throw InvalidInput(fmt::format(
          "nnergy account: expected a {} directory, or {} FILE and {} FILE, found {}", runs_name(r),
          name(r, "trace_files", "trace"), name(r, "power_files", "power"),
          r.trace_files.empty() ? "no trace" : "no power trace"));
    }
    account::AccountInputs inputs;
    inputs.trace_files = r.trace_files;
    inputs.power_files = r.power_files;
    inputs.label = r.trace_files.front().filename().string();
    all.push_back(std::move(inputs));
  }
  for (account::AccountInputs& inputs : all) {
    if (r.offset_us) inputs.explicit_offset_s = *r.offset_us * 1e-6;
    for (const auto& [source, device] : r.power_devices) inputs.source_devices[source] = device;
  }
  return all;
}

report::AccountedRun account_one(const account::AccountInputs& inputs, const AccountRequest& r,
                                 const account::TraceReaderRegistry& readers,
                                 const std::vector<account::SummarizeRule>& rules) {
  report::AccountedRun a;
  a.run = account::load_account_run(inputs, readers, r.interpolate, r.names);
  a.accounting = account::account_energy(a.run.events, a.run.power, {r.interpolate});
  a.tef = account::tensor_energy_footprint(a.run.events, a.accounting);
  a.stef = account::summarize(a.tef, rules);
  // Said here, not only as the device's 0 J: a source never assigned is the usual cause.
  for (const account::DeviceAccount& d : a.accounting.devices) {
    if (d.has_power) continue;
    a.run.warnings.push_back(fmt::format(
        "{}: no power samples for this device (no power source is assigned to it), so the "
        "energy of its {} events is unmeasured, not 0 J; assign one with {}",
        d.device, d.event_count,
        setting_with_value(r.names, "power_device", "SOURCE=" + d.device)));
  }
  // A device with a power trace but no event: its energy goes nowhere. For a GPU this is a
  // profile of the CPU side only (torch 2.x's autograd profiler without use_device="cuda"
  // records the launches but no kernel).
  for (const account::AccountRun::PowerRange& p : a.run.power_ranges) {
    const bool has_events =
        std::any_of(a.run.events.begin(), a.run.events.end(),
                    [&](const account::TraceEvent& e) { return e.device == p.device; });
    if (has_events) continue;
    a.run.warnings.push_back(fmt::format(
        "{}: its power trace holds {:.4g} J but the program trace has no event on this device, "
        "so none of that energy can be attributed{}",
        p.device, p.energy_j,
        p.device.rfind("gpu", 0) == 0
            ? "; the profiler recorded no GPU kernels: record CUDA activity "
              "(torch.profiler with ProfilerActivity.CUDA, or the autograd profiler with "
              "use_device=\"cuda\"; nnergy_torch.session does so when CUDA is available)"
            : ""));
  }
  if (r.assess) {
    a.sparsing = account::sparsing_similarity(a.run, {r.interpolate}, rules, r.max_factor);
  }
  return a;
}

// The HTML report's bounds: a few thousand points draw in well under a second and keep the file
// small whatever the trace's size.
constexpr std::size_t kHtmlPowerPoints = 4000;
constexpr std::size_t kHtmlEvents = 2000;

void write_files(const AccountRequest& r, const report::AccountingReport& report) {
  const report::AccountedRun& a = report.runs.front();
  std::vector<std::string> texts;
  std::vector<FileToWrite> files;
  // FileToWrite only views its text: the views are taken once `texts` no longer grows.
  const auto add = [&](const std::filesystem::path& path, std::string text, std::string what) {
    texts.push_back(std::move(text));
    files.push_back({path, {}, std::move(what)});
  };
  if (!r.json_file.empty()) {
    add(r.json_file, core::json_text(report::to_json(report)), name(r, "json_file", "output"));
  }
  if (!r.html_file.empty()) {
    nlohmann::ordered_json data =
        account::accounting_json(a.run, a.accounting, a.tef, a.stef, report.rules, report.context);
    const nlohmann::ordered_json timeline =
        account::timeline_json(a.run, a.accounting, kHtmlPowerPoints, kHtmlEvents);
    for (const auto& [key, value] : timeline.items()) data[key] = value;
    add(r.html_file,
        report::render_html(report::HtmlKind::kAccount, "nnergy account: " + a.run.label, data,
                            name(r, "html_file", "html")),
        name(r, "html_file", "html"));
  }
  if (!r.csv_file.empty()) {
    add(r.csv_file, account::footprint_csv(a.tef, report.context.to_csv_comments()),
        name(r, "csv_file", "csv"));
  }
  if (!r.folded_file.empty()) {
    double idle_j = 0;
    for (const account::DeviceAccount& d : a.accounting.devices) idle_j += d.idle_energy_j;
    add(r.folded_file, account::folded_stacks(a.tef, idle_j), name(r, "folded_file", "folded"));
  }
  if (!r.perfetto_file.empty()) {
    add(r.perfetto_file, account::perfetto_trace(a.run, a.accounting, report.context),
        name(r, "perfetto_file", "perfetto"));
  }
  for (std::size_t i = 0; i < files.size(); ++i) files[i].text = texts[i];
  write_files_atomically(files);
}

}  // namespace

report::AccountingReport account(const AccountRequest& r) {
  check_request(r);
  account::TraceReaderRegistry readers;
  account::register_standard_trace_readers(readers);
  report::AccountingReport report;
  report.interpolate = r.interpolate;
  // The request's rules run first, so that they see the names before the defaults rewrite them.
  report.rules = r.rules;
  if (r.default_rules) {
    for (auto& rule : account::default_summarize_rules()) report.rules.push_back(std::move(rule));
  }
  for (const account::AccountInputs& inputs : inputs_of(r)) {
    report.runs.push_back(account_one(inputs, r, readers, report.rules));
  }
  if (r.assess && report.runs.size() >= 2) {
    std::vector<account::Footprint> stefs;
    for (const report::AccountedRun& a : report.runs) stefs.push_back(a.stef);
    report.assessment = report::AccountingAssessment{account::widening_similarity(stefs),
                                                     account::pairwise_similarity(stefs)};
  } else if (r.assess) {
    report.assessment = report::AccountingAssessment{};
  }

  report.context = RunContext::now(r.command_line);
  const char* alignment = r.interpolate ? "interpolate" : "recency";
  if (report.runs.size() == 1) {
    const account::AccountRun& run = report.runs.front().run;
    report.context.add("run", run.label).add("alignment", alignment);
    report.context.add("base_epoch_s", run.base_epoch_s);
  } else {
    nlohmann::ordered_json labels = nlohmann::ordered_json::array();
    for (const report::AccountedRun& a : report.runs) labels.push_back(a.run.label);
    report.context.add("runs", std::move(labels)).add("alignment", alignment);
  }
  write_files(r, report);
  return report;
}

report::FootprintComparison compare_footprints(const std::filesystem::path& first,
                                               const std::filesystem::path& second) {
  const account::Footprint a = account::read_footprint_json(first);
  const account::Footprint b = account::read_footprint_json(second);
  return {a.size(), b.size(), account::accounting_similarity(a, b)};
}

}  // namespace nnergy::api
