#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnergy/account/name_table.h"

namespace nnergy::account {

/// Which training pass an event belongs to.
enum class Pass { kForward, kBackward, kOther };

/// "forward", "backward" or "other".
const char* pass_name(Pass pass);

/// One durable event of a program trace (seed 001 Algorithm 1, `Event`): an operator, a kernel
/// or a module range, with its device and its own time span.
///
/// Its texts are views, not strings of its own, so that an event holds no heap memory (160 bytes
/// on x86-64, a million of them per large trace): they view the NameTable of the EventTrace the
/// event came from (`names`, which AccountRun keeps too), or text that outlives the event, such
/// as string literals. Whoever sets them from a temporary string interns it first.
struct TraceEvent {
  std::string_view name;      ///< as the trace names it: "aten::conv2d", "MatMul", a kernel name
  std::string_view category;  ///< "cpu_op", "kernel", ...; empty when the trace has none
  std::string_view device;    ///< "cpu" or "gpu:N"
  std::uint64_t thread = 0;   ///< thread (CPU) or stream (GPU) id, unique within the device
  double start_s = 0;         ///< start, seconds on the trace's own time base (ts / 1e6)
  double duration_s = 0;      ///< >= 0
  std::string_view module;    ///< args.module, or empty
  std::optional<std::int64_t> external_id;  ///< Kineto args["External id"]
  std::optional<std::int64_t> correlation;  ///< Kineto args.correlation (kernel ↔ launch)
  std::optional<std::int64_t> sequence_nr;  ///< autograd sequence number (forward ↔ backward)
  /// "Scope.path/op", the qualified tensor name (seed 001 Ex. 3.3): filled by resolve_hierarchy,
  /// or by the reader where the trace names every event in full (TF's args.name; then
  /// `named_by_trace`).
  std::string_view qualified_name;
  Pass pass = Pass::kOther;  ///< filled by resolve_hierarchy
  /// True for module ranges and annotations that only give scope: they take energy only for the
  /// time no operator inside them runs (their "self" time).
  bool is_scope = false;
  /// The reader set qualified_name from the trace's own scoped name (TF args.name), which
  /// resolve_hierarchy keeps.
  bool named_by_trace = false;
};

/// A program trace as read from one file.
struct EventTrace {
  std::string format;  ///< reader name: "chrome", "torch-legacy", "tf-timeline"
  /// The texts the events view (one copy of each); copies of the trace share it.
  std::shared_ptr<NameTable> names = std::make_shared<NameTable>();
  std::vector<TraceEvent> events;
  /// UNIX time of the trace's time zero, s: an event starts at epoch start_s + epoch_offset_s.
  /// Absent when the file does not tell (torch 1.13's bare traces); then the session's recorded
  /// offset or --offset-us supplies it.
  std::optional<double> epoch_offset_s;
  std::vector<std::string> warnings;  ///< counted, human-readable problems with the input
};

}  // namespace nnergy::account
