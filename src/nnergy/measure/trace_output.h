#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nnergy/core/run_context.h"
#include "nnergy/measure/power_sample.h"
#include "nnergy/measure/trace_file.h"

namespace nnergy::measure {

/// The raw power trace of a measured run (`nnergy monitor --output`), in the format its extension
/// names:
/// - ".json": nnergy JSON, written by finish() from the samples kept in memory, atomically
///   (core/atomic_file.h);
/// - anything else: nnergy CSV, streamed while sampling to "<path>.partial" and renamed to `path`
///   by finish(), so that an interrupted run never leaves a half-written file under the requested
///   name (the .partial file keeps the samples up to the interruption).
/// Both carry `context` as their context block.
class TraceOutput {
 public:
  /// `path` empty: writes nothing. `setting` names the output in messages (e.g. "--output").
  /// Throws InvalidInput naming the setting when "<path>.partial" cannot be opened.
  TraceOutput(std::filesystem::path path, RunContext context,
              const std::vector<SourceInfo>& sources, std::string setting);

  /// Appends a sample of source `source` (an index into the constructor's `sources`) to the CSV
  /// file; does nothing for JSON or no path. Thread-safe (the sampler calls it from its threads).
  void write(std::size_t source, const PowerSample& sample);

  /// True when the trace is JSON (finish needs the samples).
  bool is_json() const { return json_; }

  /// Completes the file: JSON writes `traces`; CSV ignores them (the rows were streamed), flushes
  /// and renames. Throws InvalidInput naming the setting and the path when the file cannot be
  /// written.
  void finish(const std::vector<PowerTrace>& traces);

 private:
  std::filesystem::path path_;
  std::filesystem::path partial_;
  RunContext context_;
  std::string setting_;
  bool json_ = false;
  std::ofstream file_;
  std::unique_ptr<TraceCsvWriter> writer_;
  std::mutex mutex_;
};

}  // namespace nnergy::measure
