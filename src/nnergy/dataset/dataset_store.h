#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/dataset/measurement_key.h"
#include "nnergy/dataset/op_record.h"
#include "nnergy/graph/network.h"
#include "nnergy/graph/whitelist.h"
#include "nnergy/published/published_measurement.h"

struct sqlite3;

namespace nnergy::dataset {

/// A device measurements were taken on (table `devices`; key: name + uuid).
struct DeviceRecord {
  std::int64_t id = 0;         ///< row id in the file it was read from; 0 before it is stored
  std::string name;            ///< e.g. "NVIDIA H100 80GB HBM3" or the CPU model name
  std::string uuid;            ///< NVML UUID ("GPU-..."); "" for a CPU
  std::string kind;            ///< "cuda" or "cpu"
  std::string driver_version;  ///< e.g. "550.54.15"; "" when not applicable

  bool operator==(const DeviceRecord&) const = default;
};

/// One run of the profiler (table `sessions`; key: session_uuid).
struct SessionRecord {
  std::int64_t id = 0;
  std::string session_uuid;  ///< set by start_session when empty
  std::int64_t device_id = 0;
  std::string tool_version;  ///< nnergy::kToolVersion of the writer
  std::string host;          ///< host name
  std::string command_line;
  std::string settings_json = "{}";  ///< campaign settings as a JSON object (min time, shard, ...)
  std::string started_utc;           ///< ISO 8601; set by start_session when empty
  std::optional<std::string> ended_utc;  ///< absent while running or when interrupted

  bool operator==(const SessionRecord&) const = default;
};

/// Status of one measurement row.
enum class MeasurementStatus { kOk, kError };

/// Measured quantities shared by op and network measurements. Times, powers and energies are per
/// iteration, means over `repeats` windows with their standard deviations.
struct MeasuredValues {
  std::int64_t iterations = 0;   ///< iterations per measurement window
  std::int64_t repeats = 0;      ///< measurement windows
  std::optional<double> time_s;  ///< absent for an error row
  std::optional<double> time_std_s;
  std::optional<double> power_w;  ///< absent without a power source
  std::optional<double> power_std_w;
  std::optional<double> energy_j;  ///< absent without a power source
  std::optional<double> energy_std_j;
  std::int64_t samples_kept = 0;     ///< power samples used
  std::int64_t samples_dropped = 0;  ///< power samples dropped (other clock, 3σ outlier, ...)
  MeasurementStatus status = MeasurementStatus::kOk;
  std::string message;       ///< the error for status kError; may note warnings otherwise
  std::string measured_utc;  ///< ISO 8601 with ms; set by the store when empty

  bool operator==(const MeasuredValues&) const = default;
};

/// One op measurement (table `measurements`; key: device + op signature + mode + clock + dtype).
struct MeasurementRecord {
  std::int64_t id = 0;
  std::int64_t session_id = 0;  ///< the device is the session's
  std::int64_t device_id = 0;   ///< filled when read; ignored when written
  MeasurementKey key;
  MeasuredValues values;
};

/// A network and its unique operations with occurrence counts (tables `networks`, `network_ops`;
/// key: name + inputs_json).
struct NetworkRecord {
  std::int64_t id = 0;
  std::string name;
  /// Data inputs as JSON: [{"name": "input", "shape": [32, 3, 224, 224], "dtype": "fp32"}]; it
  /// tells apart the same network at two batch sizes.
  std::string inputs_json;
  std::string source;
  std::string description;
  /// (op signature, occurrences in the network), in network order of first occurrence.
  std::vector<std::pair<std::string, std::int64_t>> op_counts;

  bool operator==(const NetworkRecord&) const = default;
};

/// One whole-network measurement (table `network_measurements`; key: device + network + mode +
/// clock + dtype).
struct NetworkMeasurementRecord {
  std::int64_t id = 0;
  std::int64_t session_id = 0;
  std::int64_t device_id = 0;  ///< filled when read; ignored when written
  std::string network_name;
  std::string network_inputs_json;
  std::string mode;            ///< "inference" or "training"
  std::int64_t clock_mhz = 0;  ///< 0 = device default
  std::string dtype;
  MeasuredValues values;
};

/// A published measurement as stored (table `published_measurements`; key: record.id).
struct StoredPublishedMeasurement {
  published::PublishedMeasurement record;
  std::string imported_utc;  ///< ISO 8601 UTC with ms: when the import that added it ran

  bool operator==(const StoredPublishedMeasurement&) const = default;
};

/// Which published measurements DatasetStore::published_measurements returns: a field that is
/// set must match exactly; an unset one matches every row.
struct PublishedFilter {
  std::optional<std::string> gpu;
  std::optional<std::string> quantity;
  std::optional<std::string> grade;
};

/// A record whose id is already stored with other content; the stored row is kept.
struct PublishedConflict {
  std::string id;
  std::vector<std::string> fields;  ///< the fields that differ (published::differing_fields)
};

/// What DatasetStore::add_published_measurements did with each record, by id, in input order.
struct PublishedStoreResult {
  std::vector<std::string> imported;         ///< ids that were not stored before
  std::vector<std::string> already_present;  ///< ids stored with exactly the same content
  std::vector<PublishedConflict> conflicts;  ///< ids stored with other content (kept as stored)
};

/// How DatasetStore::open opens a file.
enum class OpenMode {
  kReadWrite,  ///< create the file and its tables when missing
  kReadOnly,   ///< the file must exist; every write throws InvalidInput
};

/// The measured dataset: one SQLite file (schema in docs/dataset.md). WAL journal, a busy
/// timeout, and one transaction per write call, so a crash loses at most the write in progress.
/// Not thread-safe: one store per thread; several processes may open the same file (writes are
/// serialized by SQLite's lock, and a lock held longer than the busy timeout is InvalidInput).
class DatasetStore {
 public:
  /// Opens or creates `path` (a file name, or a "file:...?mode=ro" URI). Throws InvalidInput
  /// naming the file for another schema version, a file that is not an nnergy dataset, a locked
  /// file and a file that cannot be opened. `busy_timeout_ms` is how long a write waits for
  /// another process's lock.
  static DatasetStore open(const std::string& path, OpenMode mode = OpenMode::kReadWrite,
                           int busy_timeout_ms = 5000);

  DatasetStore(DatasetStore&&) noexcept;
  DatasetStore& operator=(DatasetStore&&) noexcept;
  ~DatasetStore();

  const std::string& path() const { return path_; }
  /// Schema version of the file: kDatasetSchemaVersion, or an older readable version for a file
  /// opened read-only (opened for writing, an older file is migrated first).
  int schema_version() const { return schema_version_; }
  /// The `meta` table: schema_version, created_by, created_tool_version, created_utc.
  std::vector<std::pair<std::string, std::string>> meta() const;

  /// Adds the device, or finds it by name + uuid (then updates its driver version). Returns its id.
  std::int64_t add_device(const DeviceRecord& device);
  /// Starts a session on `session.device_id`; fills session_uuid and started_utc when empty.
  /// Returns its id; an existing session_uuid returns the existing id unchanged.
  std::int64_t start_session(const SessionRecord& session);
  /// Sets the session's end time (now when `ended_utc` is empty).
  void end_session(std::int64_t session_id, const std::string& ended_utc = {});
  /// Adds the op, or finds it by signature. Returns its id.
  std::int64_t add_op(const graph::OpDescriptor& op);
  /// Adds the network with its op counts and the ops themselves (first occurrence of each
  /// signature, graph::unique_operations), in one transaction. Returns its id.
  std::int64_t add_network(const graph::Network& network, const graph::Whitelist& whitelist);
  /// Adds a network whose ops are already stored (merge). Throws InternalError for an unknown op.
  std::int64_t add_network(const NetworkRecord& network);

  /// Writes one op measurement in one transaction, replacing an earlier row of the same key on
  /// the session's device (a re-measurement wins). The op must be stored (add_op).
  /// Returns the row id.
  std::int64_t record_measurement(const MeasurementRecord& measurement);
  /// The same for a whole network; the network must be stored (add_network).
  std::int64_t record_network_measurement(const NetworkMeasurementRecord& measurement);

  /// True when `key` has a row with status ok on `device_id`: the campaign skips it on resume.
  /// Error rows are not measured: they are retried.
  bool is_measured(std::int64_t device_id, const MeasurementKey& key) const;

  std::vector<DeviceRecord> devices() const;
  std::vector<SessionRecord> sessions() const;
  /// The stored ops, typed (OpRecord). Throws InvalidInput naming the file, row and column of a
  /// value that is not what nnergy writes (malformed JSON, an unknown op class or role, ...).
  std::vector<OpRecord> ops() const;
  std::optional<OpRecord> find_op(const std::string& signature) const;
  std::vector<MeasurementRecord> measurements() const;
  std::vector<NetworkRecord> networks() const;
  std::vector<NetworkMeasurementRecord> network_measurements() const;

  /// Stores published measurements in one transaction, all stamped with the same import time.
  /// Idempotent: a record whose id is stored with the same content is counted as already
  /// present; one stored with other content is a conflict, reported and not overwritten.
  PublishedStoreResult add_published_measurements(
      const std::vector<published::PublishedMeasurement>& records);
  /// The stored published measurements matching `filter`, ordered by id. Empty for a file of
  /// schema version 1 opened read-only (it has no such table).
  std::vector<StoredPublishedMeasurement> published_measurements(
      const PublishedFilter& filter = {}) const;

  /// The open connection, for merge and export inside this module.
  sqlite3* connection() const { return db_; }

 private:
  DatasetStore(sqlite3* db, std::string path);

  sqlite3* db_ = nullptr;
  std::string path_;
  int schema_version_ = 0;
};

/// "ok" or "error".
std::string_view to_string(MeasurementStatus status);
/// Parses "ok" / "error"; throws InvalidInput naming `what` otherwise.
MeasurementStatus parse_measurement_status(std::string_view text, std::string_view what);

/// The data inputs of `network` as stored in NetworkRecord::inputs_json.
std::string network_inputs_json(const graph::Network& network);

}  // namespace nnergy::dataset
