#include "nnergy/calibration/kernel_tables.h"

#include <fmt/format.h>
#include <zlib.h>

#include <charconv>
#include <map>

#include "nnergy/core/csv.h"
#include "nnergy/core/error.h"

namespace nnergy::calibration {

namespace {

double number(const std::string& text, const std::string& where, const char* column) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw InvalidInput(
        fmt::format("{}: column '{}': expected a number, found '{}'", where, column, text));
  }
  return value;
}

std::optional<std::string> engine_of(const std::string& software) {
  if (software.rfind("trtllm", 0) == 0) return "tensorrt-llm";
  if (software.rfind("vllm", 0) == 0) return "vllm";
  if (software.rfind("sglang", 0) == 0) return "sglang";
  return std::nullopt;
}

bool in_catalog(const device::DeviceCatalog& catalog, const std::string& id) {
  for (const device::DeviceSpec& d : catalog.devices())
    if (d.id == id) return true;
  return false;
}

}  // namespace

std::optional<std::string> catalog_id_of_table_gpu(const std::string& gpu) {
  // AIConfigurator's systems: its a100_sxm is the 80 GB SXM4 board of DGX A100 (2.0 TB/s).
  static const std::map<std::string, std::string> kIds = {
      {"h100_sxm", "h100-sxm"},  {"h200_sxm", "h200"}, {"b200_sxm", "b200"}, {"l40s", "l40s"},
      {"a100_sxm", "a100-80gb"}, {"gb200", "gb200"},   {"b300_sxm", "b300"},
  };
  const auto it = kIds.find(gpu);
  if (it == kIds.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> read_text_lines(const std::filesystem::path& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw InvalidInput(path.string() + ": cannot be opened for reading");
  std::vector<std::string> lines;
  std::string current;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) {
    for (int i = 0; i < n; ++i) {
      if (buffer[i] == '\n') {
        if (!current.empty() && current.back() == '\r') current.pop_back();
        lines.push_back(std::move(current));
        current.clear();
      } else {
        current += buffer[i];
      }
    }
  }
  int error = Z_OK;
  const char* message = n < 0 ? gzerror(file, &error) : nullptr;
  gzclose(file);
  if (n < 0) throw InvalidInput(fmt::format("{}: cannot be read ({})", path.string(), message));
  if (!current.empty()) lines.push_back(std::move(current));
  return lines;
}

std::vector<MeasuredGemm> read_gemm_table(const std::filesystem::path& path,
                                          const device::DeviceCatalog& catalog, int* skipped) {
  const std::vector<std::string> lines = read_text_lines(path);
  if (lines.empty()) throw InvalidInput(path.string() + ": empty; expected a CSV header");
  const std::vector<std::string> header = csv::split_line(lines[0]);
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  for (const char* needed : {"gpu", "precision", "m", "n", "k", "latency_us", "software"}) {
    if (!column.count(needed)) {
      throw InvalidInput(
          fmt::format("{}: line 1: no column '{}'; expected the header of "
                      "aic_gemm.csv.gz (gpu,precision,op,m,n,k,latency_us,...)",
                      path.string(), needed));
    }
  }
  std::vector<MeasuredGemm> rows;
  int skip = 0;
  for (std::size_t line = 1; line < lines.size(); ++line) {
    if (lines[line].empty()) continue;
    const std::vector<std::string> cells = csv::split_line(lines[line]);
    const std::string where = fmt::format("{}: line {}", path.string(), line + 1);
    if (cells.size() != header.size()) {
      throw InvalidInput(
          fmt::format("{}: {} cells, the header has {}", where, cells.size(), header.size()));
    }
    const auto cell = [&](const char* name) -> const std::string& { return cells[column[name]]; };
    const auto id = catalog_id_of_table_gpu(cell("gpu"));
    const auto format = kernel::parse_gemm_format(cell("precision"));
    const auto engine = engine_of(cell("software"));
    if (!id || !format || !engine || !in_catalog(catalog, *id)) {
      ++skip;
      continue;
    }
    MeasuredGemm g;
    g.device_id = *id;
    g.engine = *engine;
    g.software = cell("software");
    g.format = *format;
    g.shape = {number(cell("m"), where, "m"), number(cell("n"), where, "n"),
               number(cell("k"), where, "k"), 1};
    g.latency_s = number(cell("latency_us"), where, "latency_us") * 1e-6;
    if (column.count("power_w") && !cell("power_w").empty())
      g.power_w = number(cell("power_w"), where, "power_w");
    g.source = where;
    if (!(g.latency_s > 0) || !(g.shape.m >= 1 && g.shape.n >= 1 && g.shape.k >= 1)) {
      throw InvalidInput(where + ": expected positive dimensions and latency");
    }
    rows.push_back(std::move(g));
  }
  if (skipped != nullptr) *skipped = skip;
  return rows;
}

}  // namespace nnergy::calibration
