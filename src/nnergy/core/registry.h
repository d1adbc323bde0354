#pragma once

// The one shape of nnergy's plug-in families (regressors, power sources, program-trace readers,
// power-trace formats): entries by name, in registration order, filled by explicit calls at
// start-up and never by static initialisers, each with a one-line summary for help texts.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/core/nearest_name.h"

namespace nnergy {

/// Entries of one family by name. `Value` is what the family registers: a factory, or the
/// reader itself. Not thread-safe to fill; safe to read concurrently once filled.
template <class Value>
class Registry {
 public:
  struct Entry {
    std::string name;
    std::string summary;  ///< one line for help texts
    Value value;
  };

  /// `what` names an entry in messages, e.g. "predictor", "source kind", "trace format".
  explicit Registry(std::string what) : what_(std::move(what)) {}

  /// Adds `value` under `name`; throws InternalError when the name is taken (a programming
  /// error: two registrations of one entry).
  void add(std::string name, std::string summary, Value value) {
    if (find(name) != nullptr) throw InternalError(what_ + " '" + name + "' registered twice");
    entries_.push_back({std::move(name), std::move(summary), std::move(value)});
  }

  /// The entry named `name`, or nullptr.
  const Value* find(std::string_view name) const {
    for (const Entry& e : entries_) {
      if (e.name == name) return &e.value;
    }
    return nullptr;
  }
  bool contains(std::string_view name) const { return find(name) != nullptr; }

  /// The entry named `name`; throws InvalidInput "unknown <what> '<name>'; accepted: a, b, c"
  /// (and "did you mean" for a near miss) otherwise. Callers prefix the setting as their users
  /// spell it.
  const Value& get(std::string_view name) const {
    if (const Value* value = find(name)) return *value;
    throw InvalidInput(unknown_message(name));
  }

  /// The message get() throws for `name`.
  std::string unknown_message(std::string_view name) const {
    const std::vector<std::string> known = names();
    const std::string hint = did_you_mean(name, known);
    return "unknown " + what_ + " '" + std::string(name) +
           "'; accepted: " + join_with_commas(known) + (hint.empty() ? "" : "; " + hint);
  }

  /// Names in registration order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(entries_.size());
    for (const Entry& e : entries_) out.push_back(e.name);
    return out;
  }
  /// Every entry, in registration order.
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::string what_;
  std::vector<Entry> entries_;
};

}  // namespace nnergy
