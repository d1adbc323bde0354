#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nnergy/account/account_run.h"
#include "nnergy/account/energy_sweep.h"
#include "nnergy/account/footprint.h"
#include "nnergy/core/run_context.h"

namespace nnergy::account {

/// The conservation block of each device: measured, attributed, idle energy (J), unmeasured busy
/// time (s), the window and the whole power trace's range and energy.
nlohmann::ordered_json devices_json(const AccountRun& run, const Accounting& accounting);

/// {"entries": [{"name", "energy_j", "time_s", "power_w", "unmeasured_time_s",
/// "forward_energy_j", "backward_energy_j", "other_energy_j", "cpu_energy_j", "gpu_energy_j",
/// "event_count"}, ...]} sorted by name. All energies attributed, J.
nlohmann::ordered_json footprint_json(const Footprint& footprint);

/// {"name", "energy_j", "time_s", "forward_energy_j", "backward_energy_j", "children": [...]}.
nlohmann::ordered_json edd_json(const EddNode& node);

/// CSV of a footprint: `context_comments` ("# key: value" lines), then the header
/// name,energy_j,time_s,power_w,unmeasured_time_s,forward_energy_j,backward_energy_j,
/// other_energy_j,cpu_energy_j,gpu_energy_j,event_count and one row per entry.
std::string footprint_csv(const Footprint& footprint, const std::string& context_comments);

/// Folded stacks for flamegraph.pl / speedscope: "a;b;c <integer µJ>" per entry with energy
/// (components as in name_path), plus "(idle) <µJ>" when `idle_energy_j` > 0.
std::string folded_stacks(const Footprint& footprint, double idle_energy_j);

/// Chrome/Perfetto trace JSON: the accounted events (ts, dur in µs on the accounting base, one
/// process per device) with energy_j, exclusive_time_s, qualified_name and pass in args, and
/// each device's power as a counter track {"ph":"C","name":"GPU0 power","args":{"W":...}}.
/// `context` (and base_epoch_s) goes to "otherData".
std::string perfetto_trace(const AccountRun& run, const Accounting& accounting,
                           const RunContext& context);

/// The accounting document (`nnergy account --json`), which read_footprint_json reads back:
/// {"context", "devices" (devices_json), "tef", "stef" (footprint_json), "summarize_rules" (the
/// rules' texts, in the order applied), "edd" (edd_json of the TEF), "warnings" (the run's)}.
/// `stef` is `tef` summarized with `rules`.
nlohmann::ordered_json accounting_json(const AccountRun& run, const Accounting& accounting,
                                       const Footprint& tef, const Footprint& stef,
                                       const std::vector<SummarizeRule>& rules,
                                       const RunContext& context);

/// What the HTML report draws beneath the accounting document, bounded so that the file stays
/// small whatever the trace's size: {"power_trace": [{"device", "source", "t_s", "power_w"}]
/// (each device's power timeline on the accounting base, s, thinned to at most `max_points`
/// samples by keeping every k-th), "timeline": [{"device", "name", "start_s", "end_s", "depth",
/// "energy_j"}] (events nested at most 2 deep on their thread, depth 0 outermost; the
/// `max_events` longest when there are more), "timeline_events_total" (how many there were)}.
nlohmann::ordered_json timeline_json(const AccountRun& run, const Accounting& accounting,
                                     std::size_t max_points, std::size_t max_events);

/// The footprint of an accounting document written by accounting_json: its "stef", or its "tef"
/// when it has no "stef"; entries with only "name" and "energy_j" (the rest 0). Throws
/// InvalidInput naming `path` for a file that cannot be read, is not JSON, or lacks the entries.
Footprint read_footprint_json(const std::filesystem::path& path);

}  // namespace nnergy::account
