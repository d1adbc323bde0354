#include "nnergy/report/progress_line.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <utility>

#include "nnergy/core/text.h"

namespace nnergy::report {

namespace {

// Terminal lines are redrawn at most this often, s.
constexpr double kRedrawInterval_s = 0.1;
// A log gets no line from work this young, s: a quick run stays silent.
constexpr double kQuietStart_s = 2.0;

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string progress_text(std::string_view what, std::string_view unit, std::size_t done,
                          std::size_t total, double elapsed_s) {
  std::string text = fmt::format("{}: {}/{} {}", what, done, total, unit);
  if (done > 0 && done < total) {
    const double remaining_s =
        elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
    text += ", ETA " + duration_text(remaining_s);
  }
  return text;
}

ProgressLine::ProgressLine(std::string what, std::string unit, bool terminal, Sink sink,
                           Clock clock)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      terminal_(terminal),
      sink_(std::move(sink)),
      clock_(clock ? std::move(clock) : Clock(steady_seconds)) {}

ProgressLine::~ProgressLine() {
  try {
    finish();
  } catch (...) {  // a sink that fails while an error unwinds must not end the process
  }
}

void ProgressLine::update(std::size_t done, std::size_t total) {
  const double now = clock_();
  if (!started_) {
    started_ = true;
    start_s_ = now;
  }
  const std::string text = progress_text(what_, unit_, done, total, now - start_s_);
  if (terminal_) {
    if (line_shown_ && done < total && now - last_shown_s_ < kRedrawInterval_s) return;
    sink_("\r" + text + "\x1b[K");
    line_shown_ = true;
    last_shown_s_ = now;
    return;
  }
  // No line for the end (the result follows) nor for a run that is quick anyway.
  if (total == 0 || done >= total || now - start_s_ < kQuietStart_s) return;
  std::size_t quarters = 0;  // whole quarters done, 0–3
  while (quarters < 3 && 4 * done >= (quarters + 1) * total) ++quarters;
  if (quarters > quarters_shown_) {
    quarters_shown_ = quarters;
    sink_(text + "\n");
  }
}

void ProgressLine::finish() {
  if (!line_shown_) return;
  sink_("\r\x1b[K");
  line_shown_ = false;
}

ProgressCallback ProgressLine::callback() {
  return [this](std::size_t done, std::size_t total) { update(done, total); };
}

}  // namespace nnergy::report
