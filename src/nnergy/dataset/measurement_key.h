#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nnergy::dataset {

/// What a measurement measured; with the device, the key a campaign resumes by.
struct MeasurementKey {
  std::string signature;       ///< graph::op_signature of the op
  std::string mode;            ///< "inference" or "training"
  std::int64_t clock_mhz = 0;  ///< locked core clock in MHz; 0 = device default (not locked)
  std::string dtype;           ///< measured precision, e.g. "fp32", "tf32", "fp16", "bf16"

  bool operator==(const MeasurementKey&) const = default;
  auto operator<=>(const MeasurementKey&) const = default;
};

/// Throws InvalidInput naming `what` unless `mode` is "inference" or "training".
void check_mode(std::string_view mode, std::string_view what);

/// One part of a campaign split across machines: shard `index` of `count` (1-based, as in
/// `--shard 2/4`). Every key belongs to exactly one shard of a given count, and the assignment
/// is the same on every machine and build (FNV-1a of the key text, not std::hash).
struct Shard {
  std::int64_t index = 1;
  std::int64_t count = 1;

  /// Parses "I/N" with 1 <= I <= N; throws InvalidInput naming `flag` otherwise.
  static Shard parse(std::string_view text, std::string_view flag);
  /// True when `key` belongs to this shard.
  bool contains(const MeasurementKey& key) const;
};

}  // namespace nnergy::dataset
