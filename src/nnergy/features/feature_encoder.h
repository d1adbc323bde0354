#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "nnergy/device/device_spec.h"
#include "nnergy/device/precision.h"
#include "nnergy/features/feature_matrix.h"
#include "nnergy/graph/mode.h"
#include "nnergy/graph/op_descriptor.h"

/// Encoding of (op, mode, device, clock, dtype) into a fixed-length vector of named features
/// (seed 000 §5.2 and Fig. 5.1; seed 004 Eq. 1 and §3.1; seed 000 §7.2 for device descriptors).
namespace nnergy::features {

/// Where and how the op runs: what one feature row describes besides the op itself.
struct FeatureContext {
  const device::DeviceSpec* device = nullptr;  ///< descriptors, roofline and analytical terms
  double clock_mhz = 0;                        ///< core clock, MHz; 0 = the device's boost clock
  device::Precision precision = device::Precision::kFp32;  ///< the precision of the run
  graph::Mode mode = graph::Mode::kInference;              ///< training: forward + backward passes
};

/// A feature schema and the function that fills it. The schema (which op kinds get a one-hot
/// column, how many attribute and shape slots there are) is fixed by fit() from the ops of a
/// dataset and saved with every model (to_json), so that a model and its features always agree.
///
/// Columns the regressors rely on by name (always present):
///   flop_count, byte_count, parameter_count, kernel_count   (of the mode's passes)
///   intensity_flop_per_byte, roofline_time_s                (the bound max(W/π(f), Q/β))
///   analytical_time_s, analytical_power_w                   (analytical::predict_pass)
///   log_flop_count, log_byte_count, log_roofline_time_s     (natural logs of 1 + value)
///   core_clock_mhz, training (0/1)
///   device_peak_flop_per_s, device_bandwidth_byte_per_s, device_sm_count, device_tdp_w
/// plus `op=<type>` one-hots, `attr:<name>[<i>]` with `attr:<name>[<i>]:present` flags, and
/// `input<k>_dim<d>` with `input<k>_dim<d>:present` flags (padded to the schema's maximum).
///
/// Details: the mode's passes are the inference pass, or training forward + backward (flops,
/// bytes and kernels summed). π(f) = datasheet peak · f/f_boost of the units that run the op
/// (the precision's for matrix ops, the vector units — fp64 for fp64, fp32 otherwise — for the
/// rest, analytical::units_of; fp32's when the device lists none), β the
/// datasheet bandwidth; intensity is 0 for an op that moves no bytes. analytical_time_s is the sum
/// of analytical::predict_pass over the mode's passes with default pass traits (the size
/// factor, not the reduction, kernel-family, gradient or statistics factors: the column
/// predates them, and trained models keep their values), analytical_power_w the mode's total
/// energy over its total time (0 for an op with no work). device_peak_flop_per_s
/// is the peak of the context's precision (fp32's when the device lists none). A padded or
/// absent entry is -1 with its flag 0 (seed 000 Fig. 5.1). Attributes are encoded when they are
/// numbers or lists of numbers; string attributes (Pad's mode, auto_pad) are skipped, in fit()
/// and encode() alike.
/// Thread-safe after construction.
class FeatureEncoder {
 public:
  /// Version of the schema JSON written by to_json and read by from_json.
  static constexpr int kSchemaVersion = 1;

  /// Builds the schema from the ops that will be encoded (op kinds sorted by name).
  static FeatureEncoder fit(std::span<const graph::OpDescriptor> ops);
  /// Restores a schema written by to_json; throws InvalidInput naming what is malformed.
  static FeatureEncoder from_json(const nlohmann::json& schema);
  nlohmann::json to_json() const;

  /// Column names, in order.
  const std::vector<std::string>& names() const { return names_; }
  /// An empty matrix with these columns.
  FeatureMatrix empty_matrix() const;
  /// The feature row of `op` in `context`. An op kind outside the schema gets all one-hots 0;
  /// attributes or dimensions beyond the schema's slots are dropped. Throws InvalidInput when
  /// an input has a negative dimension, `context.device` is null or lacks a boost clock, or the
  /// clock is negative or not finite.
  std::vector<double> encode(const graph::OpDescriptor& op, const FeatureContext& context) const;
  /// Appends encode(op, context) to `matrix` with the op type as family. Throws InvalidInput
  /// when `matrix` has other columns than names().
  void append(FeatureMatrix& matrix, const graph::OpDescriptor& op,
              const FeatureContext& context) const;

 private:
  std::vector<std::string> names_;
  std::vector<std::string> op_types_;                                 ///< one-hot columns
  std::vector<std::pair<std::string, std::size_t>> attribute_slots_;  ///< (name, slots)
  std::vector<std::size_t> input_rank_slots_;                         ///< dims per input k

  /// Fills names_ from the op types, attribute slots and input rank slots.
  void build_names();
};

}  // namespace nnergy::features
