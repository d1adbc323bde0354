#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "nnergy/core/progress.h"

namespace nnergy::report {

/// "evaluate: 120/653 records, ETA 1 min 20 s": `done` of `total` `unit` after `elapsed_s`
/// seconds, the rest estimated at the same pace; without an ETA while nothing is done.
std::string progress_text(std::string_view what, std::string_view unit, std::size_t done,
                          std::size_t total, double elapsed_s);

/// Shows the steps a ProgressCallback reports. On a terminal: one line rewritten in place
/// (at most ten times a second) and erased when the work ends or the object is destroyed (an
/// error then starts on a clean line). Elsewhere (a log, CI): at most three plain lines, when a
/// quarter, half and three quarters of the steps are done, and none in the first two seconds
/// (a quick run writes nothing), so that logs stay short. Not thread-safe; use it from the
/// thread that runs the work.
class ProgressLine {
 public:
  using Sink = std::function<void(std::string_view)>;  ///< writes text (stderr for the CLI)
  using Clock = std::function<double()>;               ///< monotonic seconds

  /// `what` names the work ("evaluate"), `unit` its steps ("fits"); `terminal`: whether the
  /// sink is a terminal. The clock defaults to std::chrono::steady_clock.
  ProgressLine(std::string what, std::string unit, bool terminal, Sink sink, Clock clock = {});
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// Takes one report of the work: `done` of `total` steps.
  void update(std::size_t done, std::size_t total);
  /// Erases the terminal line (nothing to do in a log). Called by the destructor.
  void finish();
  /// A callback that forwards to update(); valid while this object lives.
  ProgressCallback callback();

 private:
  std::string what_;
  std::string unit_;
  bool terminal_ = false;
  Sink sink_;
  Clock clock_;
  bool started_ = false;
  double start_s_ = 0;
  double last_shown_s_ = 0;
  bool line_shown_ = false;         // terminal: a line is on screen
  std::size_t quarters_shown_ = 0;  // log: quarters already written (0–3)
};

}  // namespace nnergy::report
