#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace nnergy::cli {

/// The flags of `nnergy profile`, parsed by the executable and run by the LibTorch plugin
/// (torch_plugin.h).
struct ProfileOptions {
  std::string models;
  std::string networks;
  std::string modes = "inference";
  std::string device = "cpu";
  std::string db;
  /// NaN: the device's default (1 s on CUDA, 0.2 s on the CPU).
  double min_time_s = std::numeric_limits<double>::quiet_NaN();
  int repeats = 3;
  std::string dtype = "fp32";
  bool tf32 = false;
  std::int64_t batch = 1;
  std::string shard = "1/1";
  bool dry_run = false;
  std::string whitelist;
  int threads = 0;
  std::string clocks_mhz;
};

}  // namespace nnergy::cli
