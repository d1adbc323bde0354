#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nnergy::published {

/// One measured figure from a published source (a paper's table, a benchmark repository's
/// README or raw CSV), as recorded in data/calibration/measured_public.json. Field names are
/// those of the file; `value` is in `unit` exactly as published and `value_si` is the same
/// figure in `unit_si` (s, W, J, samples/s, J/flop, fraction, ...).
struct PublishedMeasurement {
  std::string id;        ///< unique within the file, e.g. "ref0000"; the key in the dataset
  std::string source;    ///< seed file, or repository + path + commit
  std::string location;  ///< table, column, row or file the figure was read from
  std::string gpu;       ///< GPU as the source names it, e.g. "NVIDIA A100-SXM4-40GB"
  std::string network;   ///< network, benchmark or layer trace measured
  std::string mode;      ///< as published: "inference", "training_forward", "microbenchmark", ...
  std::optional<std::int64_t> batch;       ///< samples per iteration; absent when not stated
  std::optional<std::string> input_shape;  ///< free text, e.g. "16x3x224x224", "seq_len 128"
  std::optional<std::string> precision;    ///< e.g. "fp32", "amp (fp16 mixed)"; absent if unknown
  std::string framework;                   ///< software stack and timing method
  std::optional<std::int64_t> clock_mhz;   ///< core clock, MHz; absent when not stated
  std::string quantity;            ///< e.g. "time_per_iteration", "throughput", "energy_per_flop"
  double value = 0;                ///< the published number, in `unit`
  std::string unit;                ///< as published: "ms", "img/s", "pJ/B", "%", ...
  std::optional<double> value_si;  ///< `value` in `unit_si`
  std::string unit_si;             ///< SI unit of value_si: "s", "W", "J", "samples/s", ...
  bool measured = true;            ///< always true in an accepted record (no predictions)
  std::string derivation;  ///< "direct", "mean_of_raw_samples_computed_here", "sum_of_...", ...
  std::string grade;       ///< "A", "B" or "C": how fair a comparison with eager PyTorch is
  std::string notes;       ///< caveats of this figure
  std::optional<std::int64_t> n_samples;  ///< raw samples averaged, when computed from them
  std::optional<double> median_ms;        ///< median of those samples, ms
  std::optional<double> stdev_ms;         ///< their standard deviation, ms
  std::optional<std::string> layer;       ///< the operator, for per-layer rows

  bool operator==(const PublishedMeasurement&) const = default;
};

/// The grades a record may carry, in order: "A", "B", "C".
const std::vector<std::string>& published_grades();

/// A record of a published-measurements file that was not accepted, and why.
struct RejectedRecord {
  std::size_t index = 0;          ///< 0-based position in the file's JSON list
  std::optional<std::string> id;  ///< the record's id when it has a text one
  std::string reason;             ///< every problem found, joined with "; "

  /// The id, or "record [index]" for a record without one: how messages name the record.
  std::string name() const;
};

/// What read_published_measurements found in a file.
struct PublishedReadResult {
  std::size_t records_read = 0;               ///< elements of the JSON list
  std::vector<PublishedMeasurement> records;  ///< the accepted records, in file order
  std::vector<RejectedRecord> rejected;       ///< the others, in file order
};

/// Reads a JSON list of published-measurement records (data/calibration/README.md). A record is
/// rejected, never dropped silently, when it is not an object, lacks a text `id`, lacks `value`
/// or `unit` or `unit_si`, has a non-numeric `value` or `value_si`, a grade other than A/B/C,
/// `measured` other than true, a field of the wrong type or an unknown field, or repeats the id
/// of an earlier record (the first one is kept). Throws InvalidInput naming `path` for a file
/// that cannot be read, is not JSON (with the line, column and byte offset of the error) or
/// is not a list. Thread-safe.
PublishedReadResult read_published_measurements(const std::string& path);

/// The same for JSON text already in memory; `source_name` names it in messages.
PublishedReadResult parse_published_measurements(std::string_view json_text,
                                                 const std::string& source_name);

/// Names of the fields in which `a` and `b` differ ("value", "notes", ...), in field order.
std::vector<std::string> differing_fields(const PublishedMeasurement& a,
                                          const PublishedMeasurement& b);

}  // namespace nnergy::published
