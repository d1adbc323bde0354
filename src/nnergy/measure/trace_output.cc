#include "nnergy/measure/trace_output.h"

#include <system_error>
#include <utility>

#include "nnergy/core/atomic_file.h"
#include "nnergy/core/error.h"

namespace nnergy::measure {

TraceOutput::TraceOutput(std::filesystem::path path, RunContext context,
                         const std::vector<SourceInfo>& sources, std::string setting)
    : path_(std::move(path)), context_(std::move(context)), setting_(std::move(setting)) {
  if (path_.empty()) return;
  partial_ = path_;
  partial_ += ".partial";
  json_ = path_.extension() == ".json";
  if (json_) return;  // written at the end, from the samples kept in memory
  file_.open(partial_);
  if (!file_) {
    throw InvalidInput(setting_ + " " + path_.string() + ": cannot open " + partial_.string() +
                       " for writing");
  }
  writer_ = std::make_unique<TraceCsvWriter>(file_, context_.to_csv_comments(), sources);
  file_.flush();  // the header first, whole: a kill from now on leaves a readable file
}

void TraceOutput::write(std::size_t source, const PowerSample& sample) {
  if (!writer_) return;
  const std::lock_guard lock(mutex_);
  writer_->write(source, sample);
  // Each sample reaches the file as it is taken (one write per sample, a few hundred a second at
  // most): a SIGKILL loses no sample that was written, where a full stream buffer held seconds.
  file_.flush();
}

void TraceOutput::finish(const std::vector<PowerTrace>& traces) {
  if (path_.empty()) return;
  if (json_) {
    write_file_atomically(path_, trace_json(context_.to_json().dump(), traces), setting_);
    return;
  }
  const std::lock_guard lock(mutex_);
  const auto fail = [&](const std::string& reason) {
    throw InvalidInput(setting_ + " " + path_.string() + ": cannot write the file (" + reason +
                       ")");
  };
  file_.flush();
  if (!file_) fail("writing " + partial_.string() + " failed");
  file_.close();
  if (!file_) fail("closing " + partial_.string() + " failed");
  std::error_code ec;
  std::filesystem::rename(partial_, path_, ec);
  if (ec) fail(ec.message());
}

}  // namespace nnergy::measure
