#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/dataset/dataset_store.h"
#include "nnergy/dataset/measurement_key.h"
#include "nnergy/graph/data_type.h"
#include "nnergy/graph/network.h"
#include "nnergy/graph/whitelist.h"
#include "nnergy/profile/op_runner.h"
#include "nnergy/profile/op_timer.h"

/// A profiling campaign (seed 000 chapter 4): the unique whitelisted operations of a set of
/// networks, measured once per (op, mode) key into a DatasetStore, resumable by key and
/// splittable into shards. No LibTorch here: it drives OpRunner and time_op through their headers.
namespace nnergy::profile {

/// What a campaign measures and how.
struct CampaignOptions {
  std::vector<std::string> models;  ///< zoo names or .onnx paths
  std::vector<graph::Mode> modes = {graph::Mode::kInference};
  std::int64_t batch = 1;  ///< bound to each model's batch dimension; >= 1
  graph::DataType dtype = graph::DataType::kFloat32;  ///< fp16 only with a cuda_device
  /// fp32 with TF32 tensor-core math allowed (set_tf32); recorded as dtype "tf32". CUDA only.
  bool tf32 = false;
  /// CUDA device the runners use (LibTorch's cuda:N), or -1 for the CPU (power from RAPL).
  int cuda_device = -1;
  /// NVML index of that GPU, whose power is measured ("nvml:N"); -1: the same as cuda_device.
  /// The caller maps one to the other (CUDA_DEVICE_ORDER, CUDA_VISIBLE_DEVICES).
  int nvml_gpu = -1;
  double min_time_s = 0.2;  ///< minimum duration of one measurement, s; > 0
  int repeats = 3;          ///< measurements per op; >= 1
  dataset::Shard shard;
  graph::Whitelist whitelist = graph::Whitelist::standard();
  std::filesystem::path data_dir;  ///< where the zoo lives (core::data_directory())
  /// Core clocks to measure at, MHz, in this order; 0 = the device's default clock (not locked).
  /// A campaign measures every key at every clock, one clock after the other.
  std::vector<std::int64_t> clocks_mhz = {0};
  /// Check that loop time is proportional to the iteration count (seed 000 §4.2.3) once per op
  /// kind, on the first op of that kind measured (CampaignSummary::proportionality).
  bool check_proportionality = true;
  /// Also measure each whole network (OpRunner::build_network), after its operations, for the
  /// validation of seed 000 §6.1.
  bool measure_networks = false;
  /// How messages name these settings (flags for the CLI, keywords for Python).
  SettingNames names = SettingNames::kFlag;
};

/// One (op, mode) measurement a campaign will take.
struct PlannedMeasurement {
  std::size_t network = 0;  ///< index into CampaignPlan::networks of the first network with the op
  std::size_t node = 0;     ///< index into that network's nodes of the op's first occurrence
  std::string op_type;
  std::string shapes;  ///< input shapes, e.g. "[1, 64, 56, 56] [64, 64, 3, 3]"
  graph::Mode mode = graph::Mode::kInference;
  /// The op's key; for a whole network, the signature is empty and the mode, clock and dtype
  /// are those of the network measurement.
  dataset::MeasurementKey key;
  bool whole_network = false;  ///< measures network `network` instead of one op
};

/// Count of planned measurements of one network in one mode.
struct PlanCount {
  std::string network;
  graph::Mode mode = graph::Mode::kInference;
  std::int64_t clock_mhz = 0;         ///< 0 = default clock
  std::int64_t to_measure = 0;        ///< keys first met in this network, still to measure
  std::int64_t already_measured = 0;  ///< keys of this network with an ok row (skipped)
  /// The whole network in this mode: 1 to measure, 0 when measured or not asked for.
  std::int64_t network_to_measure = 0;
};

/// The work of a campaign, after resume and shard filtering.
struct CampaignPlan {
  std::vector<graph::Network> networks;
  /// clock order, then network order, then op order, then mode order
  std::vector<PlannedMeasurement> pending;
  std::vector<PlanCount> counts;  ///< per clock, then per network, then per mode
  std::int64_t skipped = 0;       ///< unique keys already measured
  std::int64_t other_shards = 0;  ///< unique keys left to the other shards
};

/// Parses "fp32", "bf16" or "fp16" (the dtypes the runners accept; check_options refuses fp16
/// on the CPU); throws InvalidInput naming `flag` otherwise.
graph::DataType parse_campaign_dtype(const std::string& text, const std::string& flag);

/// Parses a comma-separated list of "inference" and "training"; throws InvalidInput naming
/// `flag` for an empty list or another word.
std::vector<graph::Mode> parse_modes(const std::string& text, const std::string& flag);

/// Throws InvalidInput naming the flag for invalid options (no model, batch < 1, min time <= 0,
/// repeats < 1, no clock, a negative or repeated clock, fp16 or TF32 on the CPU, TF32 with
/// another dtype than fp32).
void check_options(const CampaignOptions& options);

/// Imports the models (throws InvalidInput for an unknown zoo name or a bad file) and lists the
/// unique whitelisted ops of each in each mode. With `store` (may be null, e.g. for a dry run of
/// a missing file), keys already measured on `device_id` are skipped.
CampaignPlan plan_campaign(const CampaignOptions& options, const dataset::DatasetStore* store,
                           std::int64_t device_id);

/// Imports the models of `options` (zoo names or paths) with its batch; throws InvalidInput for
/// an unknown zoo name or a bad file.
std::vector<graph::Network> import_networks(const CampaignOptions& options);

/// As above, over networks already imported with import_networks.
CampaignPlan plan_campaign(const CampaignOptions& options, std::vector<graph::Network> networks,
                           const dataset::DatasetStore* store, std::int64_t device_id);

/// Estimated duration of the plan, s: measurements × (repeats + 1) × min_time_s, since the
/// calibration probe, warm-up and setup take about one more window (the committed CPU campaign:
/// 1452 measurements at 0.2 s × 3 repeats took 1250 s, estimated 1162 s).
double estimated_duration_s(const CampaignPlan& plan, const CampaignOptions& options);

/// Where a campaign stands, for progress display.
struct CampaignProgress {
  std::int64_t done = 0;                        ///< measurements finished (ok or error)
  std::int64_t total = 0;                       ///< planned measurements
  const PlannedMeasurement* current = nullptr;  ///< the one starting now; null at the end
  double elapsed_s = 0;                         ///< wall time since the campaign started, s
  /// elapsed_s / done × (total − done), s; 0 before the first measurement finishes.
  double eta_s = 0;
};

/// The proportionality check of one op kind (seed 000 §4.2.3).
struct ProportionalityReport {
  std::string op_type;
  std::string shapes;  ///< input shapes of the op checked
  graph::Mode mode = graph::Mode::kInference;
  /// Fit of loop time against iteration count; empty `iterations` when the check failed.
  ProportionalityFit fit;
  std::string error;  ///< why the check could not run; empty when it ran
};

/// What a campaign did.
struct CampaignSummary {
  std::int64_t measured = 0;  ///< ok rows written (ops and networks)
  std::int64_t errors = 0;    ///< error rows written
  std::int64_t skipped = 0;   ///< keys already measured before the campaign
  bool interrupted = false;   ///< stopped by the stop flag; the measurement in flight discarded
  double wall_s = 0;          ///< wall time of run_campaign, s
  double measured_s = 0;      ///< time inside the measurement windows of ok rows, s
  /// 1 − measured_s / wall_s: setup, warm-up, calibration and bookkeeping (the issue's "profiling
  /// overhead"); 0 when nothing ran.
  double overhead() const { return wall_s > 0 ? 1.0 - measured_s / wall_s : 0.0; }
  /// One per op kind measured (when CampaignOptions::check_proportionality); its time is
  /// overhead, not measured op time.
  std::vector<ProportionalityReport> proportionality;
  std::vector<std::string> power_sources;  ///< names of the sources measured; empty: none
  std::vector<std::string> power_absent;   ///< "source: reason" for each source not present
};

/// Sets the device's core clock, MHz (0: back to its default). Throws DeviceError or
/// InvalidInput when the clock cannot be set. The caller owns the undo on exit (RAII, e.g.
/// measure::ClockLock), so that clocks are reset however the campaign ends.
using ClockSetter = std::function<void(std::int64_t clock_mhz)>;

/// Runs `plan` into `store` under session `session_id`. Call use_steady_allocator
/// (steady_allocator.h) once before, as `nnergy profile` does, so that every op and network runs
/// with memory recycled as in a long-running process. For each planned key, it builds the runner,
/// times it (time_op) inside a measure::Meter window over `power_sources` when there are any, and
/// writes an ok row, or an error row with the message when building or running throws (the
/// campaign goes on). `stop` is read between steps: once set, the measurement in flight is not
/// written and the function returns with `interrupted`. `progress` (may be empty) is called
/// before each measurement and once at the end. `set_clock` is called before the first
/// measurement at each clock of the plan (in plan order); a plan with a clock other than 0 and
/// no `set_clock` is InvalidInput, since the device cannot lock it. Single-threaded; the store
/// is used exclusively.
CampaignSummary run_campaign(const CampaignPlan& plan, const CampaignOptions& options,
                             dataset::DatasetStore& store, std::int64_t session_id,
                             const std::atomic<bool>& stop,
                             const std::function<void(const CampaignProgress&)>& progress,
                             const ClockSetter& set_clock = {});

/// The CPU as a dataset device: the model name of /proc/cpuinfo (or "cpu"), kind "cpu".
dataset::DeviceRecord cpu_device();

/// The dtype a campaign records in its keys: "tf32" for fp32 with TF32 allowed, else the
/// dtype's name ("fp32", "bf16", "fp16").
std::string key_dtype(const CampaignOptions& options);

}  // namespace nnergy::profile
