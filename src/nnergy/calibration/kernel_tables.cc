#include "nnergy/calibration/kernel_tables.h"

#include <fmt/format.h>
#include <zlib.h>

#include <charconv>
#include <initializer_list>
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
      {"h100_sxm", "h100-sxm"},
      {"h200_sxm", "h200"},
      {"b200_sxm", "b200"},
      {"l40s", "l40s"},
      {"a100_sxm", "a100-80gb"},
      {"gb200", "gb200"},
      {"b300_sxm", "b300"},
      // NeuSight's PCIe boards.
      {"p4", "p4"},
      {"p100_pcie_16gb", "p100-pcie-16gb"},
      {"t4", "t4"},
      {"v100_pcie_32gb", "v100-pcie-32gb"},
      {"l4", "l4"},
      {"a100_pcie_40gb", "a100-pcie-40gb"},
      {"a100_pcie_80gb", "a100-pcie-80gb"},
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

namespace {

// A CSV table's rows as cells with their header's column positions.
class Table {
 public:
  Table(const std::filesystem::path& path, std::initializer_list<const char*> needed,
        const char* expected)
      : path_(path), lines_(read_text_lines(path)) {
    if (lines_.empty()) throw InvalidInput(path.string() + ": empty; expected a CSV header");
    header_ = csv::split_line(lines_[0]);
    for (std::size_t i = 0; i < header_.size(); ++i) column_[header_[i]] = i;
    for (const char* name : needed) {
      if (!column_.count(name)) {
        throw InvalidInput(fmt::format("{}: line 1: no column '{}'; expected the header of {}",
                                       path.string(), name, expected));
      }
    }
  }
  std::size_t lines() const { return lines_.size(); }
  // Splits line `line` (0-based; 0 is the header); false for an empty line.
  bool read(std::size_t line) {
    if (lines_[line].empty()) return false;
    cells_ = csv::split_line(lines_[line]);
    where_ = fmt::format("{}: line {}", path_.string(), line + 1);
    if (cells_.size() != header_.size()) {
      throw InvalidInput(
          fmt::format("{}: {} cells, the header has {}", where_, cells_.size(), header_.size()));
    }
    return true;
  }
  bool has(const char* name) const { return column_.count(name) > 0; }
  const std::string& cell(const char* name) const { return cells_[column_.at(name)]; }
  double number_of(const char* name) const { return number(cell(name), where_, name); }
  const std::string& where() const { return where_; }

 private:
  std::filesystem::path path_;
  std::vector<std::string> lines_;
  std::vector<std::string> header_;
  std::map<std::string, std::size_t> column_;
  std::vector<std::string> cells_;
  std::string where_;
};

}  // namespace

std::vector<MeasuredGemm> read_gemm_table(const std::filesystem::path& path,
                                          const device::DeviceCatalog& catalog, int* skipped) {
  Table table(path, {"gpu", "precision", "m", "n", "k", "latency_us", "software"},
              "aic_gemm.csv.gz (gpu,precision,op,m,n,k,latency_us,...)");
  std::vector<MeasuredGemm> rows;
  int skip = 0;
  for (std::size_t line = 1; line < table.lines(); ++line) {
    if (!table.read(line)) continue;
    const auto id = catalog_id_of_table_gpu(table.cell("gpu"));
    const auto format = kernel::parse_gemm_format(table.cell("precision"));
    const auto engine = engine_of(table.cell("software"));
    if (!id || !format || !engine || !in_catalog(catalog, *id)) {
      ++skip;
      continue;
    }
    MeasuredGemm g;
    g.device_id = *id;
    g.engine = *engine;
    g.software = table.cell("software");
    g.format = *format;
    g.shape = {table.number_of("m"), table.number_of("n"), table.number_of("k"), 1};
    g.latency_s = table.number_of("latency_us") * 1e-6;
    if (table.has("power_w") && !table.cell("power_w").empty())
      g.power_w = table.number_of("power_w");
    g.source = table.where();
    if (!(g.latency_s > 0) || !(g.shape.m >= 1 && g.shape.n >= 1 && g.shape.k >= 1)) {
      throw InvalidInput(table.where() + ": expected positive dimensions and latency");
    }
    rows.push_back(std::move(g));
  }
  if (skipped != nullptr) *skipped = skip;
  return rows;
}

std::vector<MeasuredGemm> read_pytorch_fp32_gemm_table(const std::filesystem::path& path,
                                                       const device::DeviceCatalog& catalog) {
  Table table(path, {"gpu", "precision", "op", "batch", "m", "n", "k", "latency_us", "software"},
              "neusight_ops.csv.gz (gpu,precision,op,batch,m,n,k,latency_us,...)");
  std::vector<MeasuredGemm> rows;
  for (std::size_t line = 1; line < table.lines(); ++line) {
    if (!table.read(line)) continue;
    const std::string& op = table.cell("op");
    if ((op != "linear" && op != "bmm") || table.cell("precision") != "fp32") continue;
    const auto id = catalog_id_of_table_gpu(table.cell("gpu"));
    if (!id || !in_catalog(catalog, *id)) continue;
    MeasuredGemm g;
    g.device_id = *id;
    g.engine = kPytorchEngine;
    g.software = table.cell("software");
    g.format = kernel::GemmFormat::kFp32;
    // (B, M, N)·(N, K): the table's n is the reduction, its k the output columns.
    g.shape = {table.number_of("m"), table.number_of("k"), table.number_of("n"),
               table.number_of("batch")};
    g.latency_s = table.number_of("latency_us") * 1e-6;
    g.source = table.where();
    if (!(g.latency_s > 0) ||
        !(g.shape.m >= 1 && g.shape.n >= 1 && g.shape.k >= 1 && g.shape.batch >= 1)) {
      throw InvalidInput(table.where() + ": expected positive dimensions and latency");
    }
    rows.push_back(std::move(g));
  }
  return rows;
}

std::vector<MeasuredMoe> read_moe_table(const std::filesystem::path& path,
                                        const device::DeviceCatalog& catalog) {
  Table table(path,
              {"gpu", "precision", "num_tokens", "hidden", "inter", "topk", "num_experts", "moe_tp",
               "moe_ep", "distribution", "latency_us", "software", "kernel_source"},
              "aic_moe.csv.gz (gpu,precision,op,num_tokens,hidden,inter,topk,...)");
  std::vector<MeasuredMoe> rows;
  for (std::size_t line = 1; line < table.lines(); ++line) {
    if (!table.read(line)) continue;
    if (table.cell("kernel_source") == "moe_torch_flow_min_latency") continue;
    const auto id = catalog_id_of_table_gpu(table.cell("gpu"));
    const auto format = kernel::parse_gemm_format(table.cell("precision"));
    const auto engine = engine_of(table.cell("software"));
    if (!id || !format || !engine || !in_catalog(catalog, *id)) continue;
    MeasuredMoe m;
    m.device_id = *id;
    m.engine = *engine;
    m.software = table.cell("software");
    m.format = *format;
    m.shape.tokens = table.number_of("num_tokens");
    m.shape.hidden = table.number_of("hidden");
    m.shape.inter = table.number_of("inter");
    m.shape.topk = table.number_of("topk");
    m.shape.experts = table.number_of("num_experts");
    m.shape.tp = table.number_of("moe_tp");
    m.shape.ep = table.number_of("moe_ep");
    const std::string& distribution = table.cell("distribution");
    constexpr std::string_view kPowerLaw = "power_law_";
    if (distribution.rfind(kPowerLaw, 0) == 0) {
      m.shape.power_law_alpha =
          number(distribution.substr(kPowerLaw.size()), table.where(), "distribution");
    } else if (distribution != "balanced") {
      throw InvalidInput(fmt::format(
          "{}: column 'distribution': expected balanced or power_law_<exponent>, found '{}'",
          table.where(), distribution));
    }
    m.latency_s = table.number_of("latency_us") * 1e-6;
    if (table.has("power_w") && !table.cell("power_w").empty())
      m.power_w = table.number_of("power_w");
    m.source = table.where();
    if (!(m.latency_s > 0)) throw InvalidInput(table.where() + ": expected a positive latency");
    rows.push_back(std::move(m));
  }
  return rows;
}

std::vector<MeasuredAttention> read_attention_table(const std::filesystem::path& path,
                                                    const device::DeviceCatalog& catalog) {
  Table table(path,
              {"gpu", "precision", "kv_dtype", "op", "batch", "seq", "kv_len", "heads", "kv_heads",
               "head_dim", "window", "latency_us", "software", "qa"},
              "aic_attention.csv.gz (gpu,precision,kv_dtype,op,batch,seq,kv_len,...)");
  std::vector<MeasuredAttention> rows;
  for (std::size_t line = 1; line < table.lines(); ++line) {
    if (!table.read(line)) continue;
    const std::string& op = table.cell("op");
    if ((op != "context_attention" && op != "generation_attention") || !table.cell("qa").empty())
      continue;
    const auto id = catalog_id_of_table_gpu(table.cell("gpu"));
    const auto engine = engine_of(table.cell("software"));
    if (!id || !engine || !in_catalog(catalog, *id)) continue;
    MeasuredAttention a;
    a.device_id = *id;
    a.engine = *engine;
    a.software = table.cell("software");
    const bool decode = op == "generation_attention";
    kernel::AttentionShape& s = a.shape;
    s.phase = decode ? kernel::AttentionPhase::kDecode : kernel::AttentionPhase::kPrefill;
    s.batch = table.number_of("batch");
    s.queries = decode ? 1 : table.number_of("seq");
    s.keys = decode ? table.number_of("kv_len") + 1 : table.number_of("kv_len");
    s.heads = table.number_of("heads");
    s.kv_heads = table.number_of("kv_heads");
    s.head_dim = table.number_of("head_dim");
    s.window = table.number_of("window");
    a.format.fp8_math = table.cell("precision") == "fp8";
    a.format.fp8_cache = table.cell("kv_dtype") == "fp8";
    a.latency_s = table.number_of("latency_us") * 1e-6;
    if (table.has("power_w") && !table.cell("power_w").empty())
      a.power_w = table.number_of("power_w");
    if (table.has("kv_gbps") && !table.cell("kv_gbps").empty())
      a.kv_byte_count = table.number_of("kv_gbps") * 1e9 * a.latency_s;
    a.source = table.where();
    if (!(a.latency_s > 0) || !(s.batch >= 1 && s.keys >= s.queries && s.heads >= s.kv_heads &&
                                s.kv_heads >= 1 && s.head_dim >= 1))
      throw InvalidInput(table.where() + ": expected positive dimensions and latency");
    rows.push_back(std::move(a));
  }
  return rows;
}

std::vector<MeasuredCollective> read_collective_table(const std::filesystem::path& path,
                                                      const device::DeviceCatalog& catalog) {
  Table table(path,
              {"gpu", "op", "num_gpus", "message_bytes", "latency_us", "software", "kernel_source"},
              "aic_comm.csv.gz (gpu,precision,op,num_gpus,message_elems,message_bytes,...)");
  std::vector<MeasuredCollective> rows;
  for (std::size_t line = 1; line < table.lines(); ++line) {
    if (!table.read(line)) continue;
    const std::string& source = table.cell("kernel_source");
    if (source.find("eager") != std::string::npos) continue;
    const auto id = catalog_id_of_table_gpu(table.cell("gpu"));
    const auto op = kernel::parse_collective(table.cell("op"));
    const auto engine = engine_of(table.cell("software"));
    if (!id || !op || !in_catalog(catalog, *id)) continue;
    MeasuredCollective c;
    c.device_id = *id;
    if (source == "NCCL") {
      c.library = "nccl";
    } else if (engine) {
      c.library = *engine;
    } else {
      continue;
    }
    c.software = table.cell("software");
    c.shape.op = *op;
    c.shape.bytes = table.number_of("message_bytes");
    c.shape.gpus = static_cast<int>(table.number_of("num_gpus"));
    c.latency_s = table.number_of("latency_us") * 1e-6;
    c.source = table.where();
    if (!(c.latency_s > 0) || !(c.shape.bytes >= 1) || c.shape.gpus < 2)
      throw InvalidInput(table.where() +
                         ": expected a positive size and latency and 2 or more GPUs");
    rows.push_back(std::move(c));
  }
  return rows;
}

std::vector<MeasuredStream> decode_attention_streams(const std::vector<MeasuredAttention>& rows) {
  std::vector<MeasuredStream> streams;
  for (const MeasuredAttention& a : rows) {
    if (a.shape.phase != kernel::AttentionPhase::kDecode || !a.power_w || !a.kv_byte_count)
      continue;
    MeasuredStream s;
    s.device_id = a.device_id;
    s.engine = a.engine;
    s.latency_s = a.latency_s;
    s.byte_count = *a.kv_byte_count;
    // The cache before the new token (the table's kv_len).
    s.flop_count =
        4 * a.shape.batch * a.shape.heads * (a.shape.keys - a.shape.queries) * a.shape.head_dim;
    s.power_w = *a.power_w;
    s.source = a.source;
    if (!(s.power_w > 0)) throw InvalidInput(a.source + ": expected a positive power");
    streams.push_back(std::move(s));
  }
  return streams;
}

std::vector<MeasuredStream> read_decode_attention_power(const std::filesystem::path& path,
                                                        const device::DeviceCatalog& catalog) {
  return decode_attention_streams(read_attention_table(path, catalog));
}

}  // namespace nnergy::calibration
