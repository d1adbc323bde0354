#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/dataset/dataset_store.h"
#include "nnergy/dataset/measurement_key.h"
#include "nnergy/graph/whitelist.h"
#include "nnergy/profile/campaign.h"

namespace nnergy::profile {

/// `nnergy profile`: measure the unique operations of networks (and the networks) into a SQLite
/// dataset. Parsed by the front end except the modes and the dtype, which this library parses
/// (the `nnergy` executable does not link it: it lives in the LibTorch plugin).
struct ProfileRequest {
  std::vector<std::string> models;  ///< zoo names or .onnx paths; not empty
  bool measure_networks = false;    ///< also measure each whole network
  std::string modes = "inference";  ///< comma-separated: inference, training
  /// CUDA device ordinal; empty: the CPU.
  std::optional<int> cuda_device;
  std::filesystem::path db;  ///< SQLite dataset (created when missing); empty only for dry_run
  /// Minimum duration of one measurement, s; default: 1 s on CUDA, 0.2 s on the CPU.
  std::optional<double> min_time_s;
  int repeats = 3;
  std::string dtype = "fp32";  ///< fp32, bf16 or fp16 (CUDA only)
  bool tf32 = false;           ///< CUDA fp32: allow TF32 tensor-core math
  std::int64_t batch = 1;
  dataset::Shard shard;
  bool dry_run = false;  ///< list what would be measured; measure and write nothing
  std::optional<graph::Whitelist> whitelist;
  int threads = 0;  ///< LibTorch CPU threads; 0: the number of cores
  /// Core clocks to lock one after the other, MHz; 0 = the unlocked default. Empty: {0}.
  std::vector<std::int64_t> clocks_mhz;
  std::string command_line;  ///< recorded with the session
  SettingNames names = SettingNames::kKeyword;
};

/// What the caller may hook into a running campaign.
struct ProfileHooks {
  /// Called after each measurement with a one-line summary ("[3/40] inference Conv [..] |
  /// elapsed 12 s | ETA 2 min 40 s"), and once at the end with `finished` true; may be empty.
  std::function<void(const std::string& line, bool finished)> progress;
  /// Set (e.g. by a signal handler) to stop after the measurement in flight, which is
  /// discarded; may be null.
  const std::atomic<bool>* stop = nullptr;
};

/// What a campaign (or its dry run) did.
struct ProfileResult {
  std::filesystem::path db;
  dataset::DeviceRecord device;    ///< as recorded in the dataset
  std::optional<int> cuda_device;  ///< empty: the CPU
  unsigned int nvml_index = 0;     ///< the CUDA device's NVML index
  std::string key_dtype;           ///< fp32, tf32, bf16 or fp16: what the rows are keyed by
  bool tf32 = false;
  int cpu_threads = 0;  ///< LibTorch CPU threads used
  bool measure_networks = false;
  int repeats = 0;
  double min_time_s = 0;
  /// The dry run's plan (with its estimated duration); empty when the campaign ran.
  std::optional<CampaignPlan> plan;
  double estimated_duration_s = 0;
  CampaignSummary summary;     ///< what ran; empty for a dry run
  std::string host_allocator;  ///< empty: the C library's default malloc
};

/// Runs (or plans, with dry_run) the campaign: opens the GPU through NVML and checks the clocks
/// it supports and that it can lock them, imports the networks before the dataset is opened (a
/// bad model leaves no file), records a session, measures what is not measured yet (resumable,
/// sharded), and returns the summary. Throws InvalidInput naming the setting for a bad request,
/// DeviceError when the GPU, NVML or a CUDA LibTorch is missing.
ProfileResult run_profile(const ProfileRequest& request, const ProfileHooks& hooks);

/// The result as text: the dry run's plan, or the campaign's summary (database, device,
/// measured/skipped/errors, overhead, proportionality checks, host memory, power source).
std::string render_text(const ProfileResult& result);

}  // namespace nnergy::profile
