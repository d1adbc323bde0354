#include "nnergy/measure/trace_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>

#include "nnergy/core/error.h"
#include "nnergy/core/text.h"
#include "nnergy/measure/power_trace_format.h"
#include "nnergy/measure/trace_reading.h"

namespace nnergy::measure {

namespace {

[[noreturn]] void bad_header(const std::string& file, const Line& line) {
  std::string columns;
  for (std::string_view c : kCsvColumns) columns += (columns.empty() ? "" : ",") + std::string(c);
  throw InvalidInput(fmt::format(
      "{}: line {}: expected a header: nnergy's '{}' or an nvidia-smi --query-gpu=... "
      "--format=csv header such as '{}' (logs written with 'noheader' cannot be read); found '{}'",
      file, line.number, columns, kNvidiaSmiExample, line.text));
}

}  // namespace

void PowerTraceFormats::add(std::unique_ptr<PowerTraceFormat> format, std::string summary) {
  std::string name = format->name();
  Registry::add(std::move(name), std::move(summary), std::move(format));
}

const PowerTraceFormats& standard_power_trace_formats() {
  static const PowerTraceFormats formats = [] {
    PowerTraceFormats f;
    f.add(make_nnergy_json_format(), "nnergy's JSON trace (monitor -o FILE.json)");
    f.add(make_nnergy_csv_format(), "nnergy's CSV trace (monitor -o FILE.csv)");
    f.add(make_nvidia_smi_format(), "nvidia-smi --query-gpu=... --format=csv logs");
    return f;
  }();
  return formats;
}

TraceText trace_text(const std::string& text, const std::string& file_label) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    throw InvalidInput(
        fmt::format("{}: empty file; expected an nnergy CSV or JSON trace or an "
                    "nvidia-smi --format=csv log starting with a header such as "
                    "'{}'",
                    file_label, kNvidiaSmiExample));
  }
  TraceText file{text, file_label, false, {}, 0};
  file.json = text[first] == '{';
  if (!file.json) {
    file.lines = split_lines(text);
    const std::vector<Line>& lines = file.lines.lines;
    while (file.header_index < lines.size() && (trim(lines[file.header_index].text).empty() ||
                                                lines[file.header_index].text.front() == '#')) {
      ++file.header_index;
    }
    if (file.header_index == lines.size()) {
      throw InvalidInput(fmt::format(
          "{}: no header after the comment lines; expected nnergy's CSV header or an nvidia-smi "
          "--format=csv header such as '{}'",
          file_label, kNvidiaSmiExample));
    }
  }
  return file;
}

std::vector<PowerTrace> read_trace_text(const std::string& text, const std::string& file_label,
                                        TraceWarnings* warnings) {
  const TraceText file = trace_text(text, file_label);
  for (const auto& entry : standard_power_trace_formats().entries()) {
    if (entry.value->recognizes(file)) return entry.value->read(file, warnings);
  }
  bad_header(file_label, file.header());  // a JSON file is always the JSON format's
}

std::vector<PowerTrace> read_trace_file(const std::filesystem::path& path,
                                        TraceWarnings* warnings) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error_number = errno;
    throw InvalidInput(fmt::format("{}: cannot open the trace file: {}", path.string(),
                                   std::generic_category().message(error_number)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InvalidInput(path.string() + ": cannot read the trace file");
  return read_trace_text(text.str(), path.string(), warnings);
}

}  // namespace nnergy::measure
