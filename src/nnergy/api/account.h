#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/account/footprint.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/report/accounting_report.h"

namespace nnergy::api {

/// Everything `nnergy account` needs: which runs, how to align and summarize them, what to write.
struct AccountRequest {
  /// Session directories written by nnergy_torch.session (with session.json), one accounting
  /// each. Empty: one run of `trace_files` and `power_files` alone.
  std::vector<std::filesystem::path> runs;
  /// Program traces (Chrome/Kineto JSON, torch 1.13 trace, TF1 timeline) and power traces
  /// (`nnergy monitor` CSV/JSON, nvidia-smi log), added to every run.
  std::vector<std::filesystem::path> trace_files;
  std::vector<std::filesystem::path> power_files;
  /// UNIX time of the program traces' time 0, µs; overrides the traces' own base and the
  /// session's.
  std::optional<double> offset_us;
  /// Power source id → device it measures: "cpu", "gpu:N", or "none" to leave it out
  /// (account::is_power_device); overrides the sessions' assignments and the kinds.
  std::map<std::string, std::string> power_devices;
  /// Power between samples: linear interpolation (else the most recent sample's, recency).
  bool interpolate = false;
  /// Summarization rules applied before the default ones (account::parse_summarize_rule).
  std::vector<account::SummarizeRule> rules;
  /// Also apply account::default_summarize_rules (layer_N, layers.N, blocks.N, ...).
  bool default_rules = true;
  /// Accounting precision: ASSS of every run, ASSW and pairwise similarity across runs.
  bool assess = false;
  std::size_t max_factor = 8;  ///< largest power decimation factor of ASSS; >= 2
  /// Output files, written all or none (one run only); empty: not written. The accounting
  /// document (report::to_json, read back by compare_footprints; setting name "output"),
  /// the TEF as CSV,
  /// folded stacks (integer µJ) and a Chrome/Perfetto trace with energy per event.
  std::filesystem::path json_file;
  std::filesystem::path csv_file;
  std::filesystem::path folded_file;
  std::filesystem::path perfetto_file;
  /// A self-contained HTML report (report/html_report.h): the accounting document with the power
  /// trace and the events beneath it.
  std::filesystem::path html_file;
  /// The invocation, for the context block.
  std::string command_line;
  /// How messages name the settings above (flags for the CLI, keywords for Python).
  SettingNames names = SettingNames::kKeyword;
};

/// Attributes each run's measured energy to its operators, layers and modules (seed 001
/// Smaragdine): reads and aligns the traces, sweeps the power over the events, builds the TEF and
/// STEF, assesses when asked, and writes the requested files. A device with events but no power
/// samples (no source assigned to it) is named in the run's warnings. Throws InvalidInput naming
/// the setting for an inconsistent request (no run and no trace, a device that is not one,
/// max_factor below 2, files asked for more than one run), and whatever the readers throw for
/// unreadable or inconsistent files; nothing is written then. Thread-safe (no shared state).
report::AccountingReport account(const AccountRequest& request);

/// Accounting similarity (seed 001 §5.4.1) of the footprints of two accounting documents
/// (account::read_footprint_json). Throws InvalidInput for unreadable files and footprints whose
/// similarity is undefined.
report::FootprintComparison compare_footprints(const std::filesystem::path& first,
                                               const std::filesystem::path& second);

}  // namespace nnergy::api
