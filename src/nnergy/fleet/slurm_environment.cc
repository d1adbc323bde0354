#include "nnergy/fleet/slurm_environment.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "nnergy/core/error.h"
#include "nnergy/core/text.h"

namespace nnergy::fleet {

namespace {

// Slurm's array indices and GPU indices are bounded well below this.
constexpr std::int64_t kMaxIndex = 1'000'000'000;
// A node's GPUs in one IDX range, at most (a forged "0-999999999" is not expanded).
constexpr std::int64_t kMaxGpusPerNode = 4096;
// Step ids of the batch script and salloc's interactive step (slurm.h: SLURM_BATCH_SCRIPT,
// SLURM_INTERACTIVE_STEP).
constexpr std::uint32_t kBatchStepId = 0xFFFFFFFBu;
constexpr std::uint32_t kInteractiveStepId = 0xFFFFFFFAu;

std::optional<std::int64_t> parse_index(const std::string& text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0 ||
      value > kMaxIndex) {
    return std::nullopt;
  }
  return value;
}

// The value of `name` as an index; `fallback` when unset (nullopt: required).
std::int64_t index_variable(const Environment& env, const std::string& name,
                            std::optional<std::int64_t> fallback, const std::string& setting) {
  const std::optional<std::string> text = env(name);
  if (!text) {
    if (fallback) return *fallback;
    throw InvalidInput(fmt::format(
        "{}: {} is not set: this is not a task of a Slurm job array; submit with sbatch "
        "--array=0-N (nnergy profile --sbatch writes such a script) or give the shard as I/N",
        setting, name));
  }
  const std::optional<std::int64_t> value = parse_index(*text);
  if (!value) {
    throw InvalidInput(fmt::format("{}: {}='{}': expected a non-negative integer as Slurm sets it",
                                   setting, name, *text));
  }
  return *value;
}

// A comma-separated list of GPU indices from variable `name`.
std::vector<unsigned int> gpu_list(const std::string& text, const char* name,
                                   const std::string& setting) {
  std::vector<unsigned int> indices;
  for (const std::string& item : split_trimmed(text, ',')) {
    const std::optional<std::int64_t> index = parse_index(item);
    if (!index) {
      throw InvalidInput(fmt::format(
          "{}: {}='{}': expected comma-separated GPU indices as Slurm sets them, found '{}'",
          setting, name, text, item));
    }
    indices.push_back(static_cast<unsigned int>(*index));
  }
  return indices;
}

// Whether Slurm host list `list` ("n1", "n1,n2" or "node[01-04,07]") names `host`.
bool names_host(const std::string& list, std::string_view host) {
  std::size_t start = 0;
  while (start <= list.size()) {
    // The next entry: up to a comma outside brackets.
    std::size_t end = start;
    int depth = 0;
    while (end < list.size() && (list[end] != ',' || depth > 0)) {
      depth += list[end] == '[' ? 1 : list[end] == ']' ? -1 : 0;
      ++end;
    }
    const std::string entry = list.substr(start, end - start);
    const auto open = entry.find('[');
    const auto close = entry.find(']');
    if (open == std::string::npos || close == std::string::npos || close < open) {
      if (entry == host) return true;
    } else {
      const std::string prefix = entry.substr(0, open), suffix = entry.substr(close + 1);
      if (host.size() > prefix.size() + suffix.size() && host.substr(0, prefix.size()) == prefix &&
          host.substr(host.size() - suffix.size()) == suffix) {
        const std::string number(
            host.substr(prefix.size(), host.size() - prefix.size() - suffix.size()));
        const std::optional<std::int64_t> n = parse_index(number);
        for (const std::string& range :
             split_trimmed(entry.substr(open + 1, close - open - 1), ',')) {
          const auto dash = range.find('-');
          const std::string low = range.substr(0, dash);
          const std::string high = dash == std::string::npos ? low : range.substr(dash + 1);
          const std::optional<std::int64_t> a = parse_index(low), b = parse_index(high);
          // Zero-padded ranges ("01-04") name hosts of their width; others no padded ones.
          const bool padded = low.size() > 1 && low[0] == '0';
          const bool width_ok =
              padded ? number.size() == low.size() : number.size() == 1 || number[0] != '0';
          if (n && a && b && *a <= *n && *n <= *b && width_ok) return true;
        }
      }
    }
    start = end + 1;
  }
  return false;
}

}  // namespace

Environment process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

dataset::Shard shard_from_slurm(const Environment& env, const std::string& setting) {
  const std::int64_t id = index_variable(env, "SLURM_ARRAY_TASK_ID", std::nullopt, setting);
  const std::int64_t count = index_variable(env, "SLURM_ARRAY_TASK_COUNT", std::nullopt, setting);
  const std::int64_t min = index_variable(env, "SLURM_ARRAY_TASK_MIN", 0, setting);
  const std::int64_t step = index_variable(env, "SLURM_ARRAY_TASK_STEP", 1, setting);
  if (count < 1 || step < 1) {
    throw InvalidInput(fmt::format(
        "{}: SLURM_ARRAY_TASK_COUNT={} and SLURM_ARRAY_TASK_STEP={}: expected both >= 1", setting,
        count, step));
  }
  if (id < min || (id - min) % step != 0 || (id - min) / step >= count) {
    throw InvalidInput(fmt::format(
        "{}: SLURM_ARRAY_TASK_ID={} is not task k of the range MIN={} + k*STEP={} for k < "
        "COUNT={}; submit the array as one range (e.g. --array=0-{}), not a list",
        setting, id, min, step, count, count - 1));
  }
  dataset::Shard shard;
  shard.index = (id - min) / step + 1;
  shard.count = count;
  return shard;
}

std::vector<unsigned int> slurm_gpu_indices(const Environment& env, const std::string& setting) {
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}) {
    const std::optional<std::string> text = env(name);
    if (!text || trim(*text).empty()) continue;
    return gpu_list(*text, name, setting);
  }
  return {};
}

SlurmStepKind slurm_step_kind(std::uint32_t step_id) {
  if (step_id == kBatchStepId) return SlurmStepKind::kBatch;
  if (step_id == kInteractiveStepId) return SlurmStepKind::kInteractive;
  return SlurmStepKind::kOther;
}

std::vector<unsigned int> step_gpu_indices(const Environment& env, SlurmStepKind kind,
                                           const std::string& setting) {
  const char* name = kind == SlurmStepKind::kOther ? "SLURM_STEP_GPUS" : "SLURM_JOB_GPUS";
  const std::optional<std::string> text = env(name);
  if (!text || trim(*text).empty()) return {};
  std::vector<unsigned int> indices = gpu_list(*text, name, setting);
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  return indices;
}

std::optional<std::vector<unsigned int>> allocated_gpu_indices(std::string_view output,
                                                               std::string_view host) {
  // scontrol's detail lines ("   Nodes=n1 CPU_IDs=0-3 Mem=0 GRES=gpu:2(IDX:0-1)") come after
  // the job's first line (which holds JobName) and before MinCPUsNode= and the free-text
  // fields (Command, WorkDir, Comment, StdOut).
  static const std::regex detail(R"(^\s+Nodes=(\S+) CPU_IDs=\S+ Mem=\d+ GRES=(\S*)$)");
  static const std::regex gpu_entry(R"((?:^|,)gpu(?::[^,(]*)*\(IDX:([0-9,\-]+)\))");
  std::istringstream lines{std::string(output)};
  std::string line;
  std::getline(lines, line);  // JobId=… JobName=…
  while (std::getline(lines, line)) {
    if (line.find("MinCPUsNode=") != std::string::npos) break;
    std::smatch m;
    if (!std::regex_match(line, m, detail) || !names_host(m[1].str(), host)) continue;
    std::vector<unsigned int> gpus;
    const std::string gres = m[2].str();
    for (auto it = std::sregex_iterator(gres.begin(), gres.end(), gpu_entry);
         it != std::sregex_iterator(); ++it) {
      for (const std::string& part : split_trimmed((*it)[1].str(), ',')) {
        const auto dash = part.find('-');
        const std::optional<std::int64_t> first = parse_index(part.substr(0, dash));
        const std::optional<std::int64_t> last =
            dash == std::string::npos ? first : parse_index(part.substr(dash + 1));
        if (!first || !last || *last < *first || *last - *first > kMaxGpusPerNode) {
          return std::nullopt;
        }
        for (std::int64_t i = *first; i <= *last; ++i) gpus.push_back(static_cast<unsigned>(i));
      }
    }
    std::sort(gpus.begin(), gpus.end());
    gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
    return gpus;
  }
  return std::nullopt;
}

CheckedGpus check_step_gpus(const std::vector<unsigned int>& claimed,
                            const std::optional<std::vector<unsigned int>>& allocated,
                            SlurmStepKind kind) {
  CheckedGpus checked;
  if (!allocated) {
    checked.gpus = claimed;
    return checked;
  }
  const bool subset =
      std::includes(allocated->begin(), allocated->end(), claimed.begin(), claimed.end());
  const bool agrees = kind == SlurmStepKind::kOther ? subset : claimed == *allocated;
  if (agrees) {
    checked.gpus = claimed;
    return checked;
  }
  checked.gpus = *allocated;
  const auto list = [](const std::vector<unsigned int>& v) {
    std::string out;
    for (const unsigned int i : v) out += (out.empty() ? "" : ",") + std::to_string(i);
    return out.empty() ? std::string("none") : out;
  };
  checked.tampering = fmt::format(
      "{}='{}' in the job's environment does not match the GPUs Slurm allocated on this node "
      "({}): possible tampering; the allocation's GPUs are recorded",
      kind == SlurmStepKind::kOther ? "SLURM_STEP_GPUS" : "SLURM_JOB_GPUS", list(claimed),
      list(*allocated));
  return checked;
}

}  // namespace nnergy::fleet
