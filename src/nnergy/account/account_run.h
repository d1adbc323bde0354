#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/account/energy_sweep.h"
#include "nnergy/account/trace_event.h"
#include "nnergy/account/trace_reader.h"
#include "nnergy/core/setting_name.h"

namespace nnergy::account {

/// What to account: program trace files, power trace files and how their clocks relate.
struct AccountInputs {
  std::vector<std::filesystem::path> trace_files;
  std::vector<std::filesystem::path> power_files;
  /// UNIX time of the program trace's time zero, s, from --offset-us: overrides everything.
  std::optional<double> explicit_offset_s;
  /// UNIX time of the trace's time zero as the session measured it (session.json); used for
  /// traces that carry no base time of their own.
  std::optional<double> session_offset_s;
  /// Power source id → device ("cpu", "gpu:N", or "none" to leave it out); overrides the kinds.
  std::map<std::string, std::string> source_devices;
  std::string label;  ///< name of the run in reports (the directory, or the trace file)
};

/// Reads RUN/session.json (written by nnergy_torch.session): format_version 1, trace_file,
/// power_file (relative to RUN), trace_epoch_offset_s, power_devices {source id: device}.
/// Throws InvalidInput naming the file and key for a missing directory, file or key (and the
/// trace and power settings, as `names` spells them, to give instead of a session).
AccountInputs read_session_directory(const std::filesystem::path& directory,
                                     SettingNames names = SettingNames::kFlag);

/// The device a power source measures: `source_devices` first; then kind "gpu" → "gpu:N" (N from
/// the id's last ':' field), kinds "cpu-package" and "dram" → "cpu"; anything else (synthetic,
/// replay, cpu-core, which is inside a package) → empty: not assigned.
std::string device_of_source(const measure::SourceInfo& info,
                             const std::map<std::string, std::string>& source_devices);

/// True for a device a power source can be assigned to: "cpu", "gpu:N", or "none" (leave the
/// source out).
bool is_power_device(const std::string& device);

/// Parses "SOURCE=DEVICE" (split at the last '=') into {source, device}, DEVICE as
/// is_power_device accepts it. Throws InvalidInput naming `setting` and the item otherwise.
std::pair<std::string, std::string> parse_power_device(const std::string& item,
                                                       const std::string& setting);

/// The aligned inputs of one accounting.
struct AccountRun {
  std::string label;
  std::vector<std::string> trace_formats;
  std::vector<TraceEvent> events;  ///< start_s on the accounting base (UNIX time − base_epoch_s)
  /// The name tables of the traces read, which the events' texts view: they live as long as the
  /// run (and its copies).
  std::vector<std::shared_ptr<const NameTable>> names;
  double base_epoch_s = 0;           ///< UNIX time of accounting time 0, s
  std::vector<PowerTimeline> power;  ///< one per device with power
  /// Energy of each device's whole power trace, J, and its time range on the base, s.
  struct PowerRange {
    std::string device;
    double start_s = 0;
    double end_s = 0;
    double energy_j = 0;
  };
  std::vector<PowerRange> power_ranges;
  std::vector<std::string> warnings;  ///< counted problems (dropped events, unassigned sources)
};

/// Reads, names and aligns: every trace through `readers` and resolve_hierarchy, every power file
/// through measure::read_trace_file, sources assigned to devices, power summed per device. Each
/// trace's time zero is `explicit_offset_s`, else its own base time, else `session_offset_s`.
/// Throws InvalidInput for unreadable files, a trace whose time base nothing gives, and power
/// traces without samples. Messages and warnings name the settings as `names` spells them.
AccountRun load_account_run(const AccountInputs& inputs, const TraceReaderRegistry& readers,
                            bool interpolate, SettingNames names = SettingNames::kFlag);

}  // namespace nnergy::account
