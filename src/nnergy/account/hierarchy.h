#pragma once

#include "nnergy/account/trace_event.h"

namespace nnergy::account {

/// Gives every event of `trace` its qualified tensor name (seed 001 Def. 3.1, Ex. 3.3) and pass,
/// and makes the events of each thread nest:
///
/// - a TF timeline event's own scoped name (args.name) is its qualified name; names under
///   "gradients/" are backward;
/// - other events take the innermost enclosing module range on the same thread (the
///   record_function ranges "module::NAME" nnergy_torch's hooks emit, or Kineto's
///   "nn.Module: NAME"), or args.module: "NAME/op";
/// - an event inside "autograd::engine::evaluate_function: ..." (or named "...Backward...") is
///   backward; it takes the module of the forward op with the same autograd sequence number where
///   the trace records one (args["Sequence number"]); otherwise it stays at top level;
/// - GPU kernels take the qualified name and pass of the CPU op that launched them (same
///   args["External id"], or the launch call with the same args.correlation);
/// - a module range's own time is "NAME/(self)".
///
/// An event on one thread that starts inside another and ends after it (overlap that does not
/// nest) is cut at the enclosing event's end, with a counted warning in `trace.warnings`.
/// O(n log n) time, O(n) memory.
void resolve_hierarchy(EventTrace& trace);

}  // namespace nnergy::account
