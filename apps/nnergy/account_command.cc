// `nnergy account`: attribute a real run's measured energy to operators, layers and modules
// (seed 001 Smaragdine), from a program trace and power traces.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/account/account_run.h"
#include "nnergy/account/footprint.h"
#include "nnergy/api/account.h"
#include "nnergy/core/error.h"
#include "nnergy/report/accounting_report.h"
#include "nnergy/report/output_format.h"

namespace nnergy::cli {
namespace {

struct AccountOptions {
  std::vector<std::string> runs;
  std::vector<std::string> traces;
  std::vector<std::string> powers;
  std::vector<std::string> power_devices;
  std::optional<double> offset_us;
  bool interpolate = false;
  int level = 2;
  std::size_t top = 25;
  std::vector<std::string> summarize;
  bool no_default_rules = false;
  bool json = false;
  std::string output_file;
  std::string csv_file;
  std::string folded_file;
  std::string perfetto_file;
  std::string html_file;
  bool assess = false;
  std::size_t max_factor = 8;
};

struct CompareOptions {
  std::string first;
  std::string second;
};

api::AccountRequest to_request(const AccountOptions& o, const std::string& command_line) {
  api::AccountRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.runs.assign(o.runs.begin(), o.runs.end());
  r.trace_files.assign(o.traces.begin(), o.traces.end());
  r.power_files.assign(o.powers.begin(), o.powers.end());
  r.offset_us = o.offset_us;
  for (const std::string& item : o.power_devices) {
    const auto [source, device] = account::parse_power_device(item, "--power-device");
    r.power_devices[source] = device;  // the last assignment of a source wins
  }
  r.interpolate = o.interpolate;
  for (const std::string& rule : o.summarize) {
    r.rules.push_back(account::parse_summarize_rule(rule, "--summarize"));
  }
  r.default_rules = !o.no_default_rules;
  r.assess = o.assess;
  r.max_factor = o.max_factor;
  r.json_file = o.output_file;
  r.csv_file = o.csv_file;
  r.folded_file = o.folded_file;
  r.perfetto_file = o.perfetto_file;
  r.html_file = o.html_file;
  return r;
}

CommandResult run_account(const AccountOptions& o, const std::string& command_line) {
  if (o.level < 0) throw InvalidInput("--level: expected >= 0, found " + std::to_string(o.level));
  const report::AccountingReport report = api::account(to_request(o, command_line));
  return {report::render(report, report::choose_format(o.json),
                         report::AccountingTextOptions{static_cast<std::size_t>(o.level), o.top}),
          0};
}

}  // namespace

void add_account_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto options = std::make_shared<AccountOptions>();
  CLI::App* command = app.add_subcommand(
      "account", "Attribute a run's measured energy to operators, layers and modules (Smaragdine)");
  command->add_option("runs", options->runs,
                      "session directories written by nnergy_torch.session (session.json)");
  command
      ->add_option("--trace", options->traces,
                   "program trace: Chrome/Kineto JSON, torch 1.13 trace, TF1 timeline")
      ->allow_extra_args(false);
  command
      ->add_option("--power", options->powers,
                   "power trace: `nnergy monitor -o` CSV/JSON or nvidia-smi log")
      ->allow_extra_args(false);
  command->add_option("--offset-us", options->offset_us,
                      "UNIX time of the trace's ts 0, µs (overrides the trace's own base)");
  command
      ->add_option("--power-device", options->power_devices,
                   "assign a power source to a device: SOURCE=cpu|gpu:N|none")
      ->allow_extra_args(false);
  command->add_flag("--interpolate", options->interpolate,
                    "interpolate power linearly between samples (default: most recent sample)");
  command->add_option("--level", options->level, "EDD levels to print (default 2)");
  command
      ->add_option("--top", options->top,
                   "rows of each text table: the EDD's largest units and the hotspots (0: all)")
      ->capture_default_str();
  command
      ->add_option("--summarize", options->summarize,
                   "summarization rule REGEX=REPLACEMENT for self-similar layers (repeatable)")
      ->allow_extra_args(false);
  command->add_flag("--no-default-rules", options->no_default_rules,
                    "do not apply the default rules (layer_N, layers.N, blocks.N, h.N, layerN.M, "
                    "ProfilerStep#N)");
  command->add_flag("--json", options->json,
                    "write the accounting document (TEF, STEF, EDD, conservation) as JSON to "
                    "stdout instead of text");
  command->add_option("-o,--output", options->output_file,
                      "write the accounting document (as --json prints it) to FILE");
  command->add_option("--csv", options->csv_file, "write the TEF as CSV");
  command->add_option("--folded", options->folded_file,
                      "write folded stacks (integer µJ) for flamegraph.pl / speedscope");
  command->add_option("--perfetto", options->perfetto_file,
                      "write a Chrome/Perfetto trace with energy_j per event and power tracks");
  command->add_option("--html", options->html_file,
                      "write a self-contained HTML report: the energy distribution as an icicle "
                      "chart, the power trace with the events beneath it, the hotspots");
  command->add_flag("--assess", options->assess,
                    "accounting similarity: ASSS (power decimated), ASSW and pairwise (runs)");
  command->add_option("--max-factor", options->max_factor,
                      "largest decimation factor for --assess (default 8)");
  auto compare = std::make_shared<CompareOptions>();
  CLI::App* compare_command = command->add_subcommand(
      "compare", "Accounting similarity (PCC) of two footprints written by --json or -o");
  compare_command->add_option("first", compare->first, "footprint JSON")->required();
  compare_command->add_option("second", compare->second, "footprint JSON")->required();
  // The parent's callback runs after the subcommand's, so it decides which one runs.
  command->callback([selected, options, compare, compare_command, command_line] {
    if (!compare_command->parsed()) {
      *selected = [options, command_line] { return run_account(*options, command_line); };
      return;
    }
    *selected = [compare] {
      return CommandResult{
          report::render_text(api::compare_footprints(compare->first, compare->second)), 0};
    };
  });
}

}  // namespace nnergy::cli
