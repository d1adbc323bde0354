#include "nnergy/account/hierarchy.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nnergy::account {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool is_backward_marker(const TraceEvent& event) {
  return starts_with(event.name, "autograd::engine::evaluate_function") ||
         event.name.find("Backward") != std::string_view::npos;
}

// "scope/name" (or `name` at top level), interned in `names`; `buffer` is reused.
std::string_view join_scope(std::string_view scope, std::string_view name, NameTable& names,
                            std::string& buffer) {
  if (scope.empty()) return name;
  buffer.assign(scope).append("/").append(name);
  return names.intern(buffer);
}

struct Frame {
  std::size_t event;
  double end_s;
  std::string_view module;  ///< innermost module at this depth (this frame's or inherited)
  bool backward;
  std::optional<std::int64_t> backward_sequence_nr;  ///< innermost sequence nr in backward
};

}  // namespace

void resolve_hierarchy(EventTrace& trace) {
  std::vector<TraceEvent>& events = trace.events;
  // Small device numbers, so that the sort below compares integers rather than strings.
  std::unordered_map<std::string_view, std::uint32_t> device_numbers;
  std::vector<std::uint32_t> device_of(events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    // Runs of events share a device: look it up only where it changes.
    device_of[i] =
        i > 0 && events[i].device == events[i - 1].device
            ? device_of[i - 1]
            : device_numbers
                  .try_emplace(events[i].device, static_cast<std::uint32_t>(device_numbers.size()))
                  .first->second;
  }
  // Per thread, outer events first: by start, then longer first. Compact keys keep the sort
  // from chasing indices into the event list.
  struct OrderKey {
    std::uint32_t device;
    std::uint64_t thread;
    double start_s;
    double duration_s;
    std::size_t index;
  };
  std::vector<OrderKey> keys(events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    keys[i] = {device_of[i], events[i].thread, events[i].start_s, events[i].duration_s, i};
  }
  std::sort(keys.begin(), keys.end(), [](const OrderKey& x, const OrderKey& y) {
    if (x.device != y.device) return x.device < y.device;
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.start_s != y.start_s) return x.start_s < y.start_s;
    if (x.duration_s != y.duration_s) return x.duration_s > y.duration_s;
    return x.index < y.index;
  });
  std::vector<std::size_t> order(events.size());
  for (std::size_t k = 0; k < keys.size(); ++k) order[k] = keys[k].index;
  keys = {};

  // Each event's innermost module (its own or an enclosing event's `module`).
  std::vector<std::string_view> scope(events.size());
  std::vector<std::optional<std::int64_t>> backward_sequence(events.size());
  std::unordered_map<std::int64_t, std::string_view> module_of_sequence;
  std::vector<Frame> stack;
  std::size_t cut = 0;
  double cut_time_s = 0;
  std::uint32_t current_device = 0;
  std::uint64_t current_thread = 0;
  bool first = true;
  for (const std::size_t i : order) {
    TraceEvent& event = events[i];
    if (first || current_device != device_of[i] || current_thread != event.thread) {
      stack.clear();
      current_device = device_of[i];
      current_thread = event.thread;
      first = false;
    }
    // Intervals are half-open: an event ending where the next starts does not enclose it.
    while (!stack.empty() && stack.back().end_s <= event.start_s) stack.pop_back();
    double end_s = event.start_s + event.duration_s;
    if (!stack.empty() && end_s > stack.back().end_s) {
      ++cut;
      cut_time_s += end_s - stack.back().end_s;
      end_s = stack.back().end_s;
      event.duration_s = end_s - event.start_s;
    }
    Frame frame{i, end_s, {}, false, std::nullopt};
    if (!stack.empty())
      frame = Frame{i, end_s, stack.back().module, stack.back().backward,
                    stack.back().backward_sequence_nr};
    if (!event.module.empty() && !starts_with(event.module, "(")) frame.module = event.module;
    if (is_backward_marker(event)) frame.backward = true;
    if (frame.backward && event.sequence_nr) frame.backward_sequence_nr = event.sequence_nr;
    scope[i] = frame.module;
    backward_sequence[i] = frame.backward_sequence_nr;
    if (!frame.backward && event.sequence_nr && !frame.module.empty() && *event.sequence_nr >= 0) {
      module_of_sequence.try_emplace(*event.sequence_nr, frame.module);
    }
    event.pass =
        frame.backward ? Pass::kBackward : (frame.module.empty() ? Pass::kOther : Pass::kForward);
    stack.push_back(frame);
  }

  NameTable& names = *trace.names;
  std::string buffer;
  std::unordered_map<std::int64_t, std::size_t> launcher_of_external_id;
  std::unordered_map<std::int64_t, std::size_t> launcher_of_correlation;
  // The host's device number, compared per event instead of its name (none: no host events).
  const auto cpu_entry = device_numbers.find("cpu");
  const std::uint32_t cpu = cpu_entry == device_numbers.end()
                                ? std::numeric_limits<std::uint32_t>::max()
                                : cpu_entry->second;
  // Sized once: growing them rehashes every entry several times on a large trace.
  std::size_t with_external_id = 0;
  std::size_t with_correlation = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (device_of[i] != cpu) continue;
    with_external_id += events[i].external_id.has_value();
    with_correlation += events[i].correlation.has_value();
  }
  launcher_of_external_id.reserve(with_external_id);
  launcher_of_correlation.reserve(with_correlation);
  for (std::size_t i = 0; i < events.size(); ++i) {
    TraceEvent& event = events[i];
    if (event.pass == Pass::kBackward && scope[i].empty() && backward_sequence[i]) {
      const auto found = module_of_sequence.find(*backward_sequence[i]);
      if (found != module_of_sequence.end()) scope[i] = found->second;
    }
    if (event.named_by_trace) {
      event.pass =
          starts_with(event.qualified_name, "gradients/") ? Pass::kBackward : Pass::kForward;
    } else if (event.is_scope && !event.module.empty()) {
      event.qualified_name = join_scope(event.module, "(self)", names, buffer);
    } else {
      event.qualified_name = join_scope(scope[i], event.name, names, buffer);
    }
    if (device_of[i] == cpu) {
      // The innermost CPU op with an External id launched the kernel; cpu_op beats the
      // cuda_runtime call, which carries the same id.
      if (event.external_id && event.category != "cuda_runtime") {
        launcher_of_external_id[*event.external_id] = i;
      }
      if (event.correlation) launcher_of_correlation[*event.correlation] = i;
    }
  }
  std::size_t unlinked = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    TraceEvent& event = events[i];
    if (device_of[i] == cpu || event.named_by_trace) continue;
    const TraceEvent* launcher = nullptr;
    if (event.external_id) {
      const auto found = launcher_of_external_id.find(*event.external_id);
      if (found != launcher_of_external_id.end()) launcher = &events[found->second];
    }
    if (launcher == nullptr && event.correlation) {
      const auto found = launcher_of_correlation.find(*event.correlation);
      if (found != launcher_of_correlation.end()) launcher = &events[found->second];
    }
    if (launcher != nullptr) {
      event.qualified_name = launcher->qualified_name;
      event.pass = launcher->pass;
    } else {
      ++unlinked;
    }
  }
  if (cut > 0) {
    trace.warnings.push_back(std::to_string(cut) +
                             " events overlap an enclosing event on the same thread without "
                             "nesting; cut at its end (" +
                             std::to_string(cut_time_s * 1e3) + " ms removed)");
  }
  if (unlinked > 0) {
    trace.warnings.push_back(std::to_string(unlinked) +
                             " GPU events not linked to a CPU op (no matching External id or "
                             "correlation); listed under their own names");
  }
}

}  // namespace nnergy::account
