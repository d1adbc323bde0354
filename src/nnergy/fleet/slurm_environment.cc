#include "nnergy/fleet/slurm_environment.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "nnergy/core/error.h"
#include "nnergy/core/text.h"

namespace nnergy::fleet {

namespace {

// Slurm's array indices and GPU indices are bounded well below this.
constexpr std::int64_t kMaxIndex = 1'000'000'000;

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
    std::vector<unsigned int> indices;
    for (const std::string& item : split_trimmed(*text, ',')) {
      const std::optional<std::int64_t> index = parse_index(item);
      if (!index) {
        throw InvalidInput(fmt::format(
            "{}: {}='{}': expected comma-separated GPU indices as Slurm sets them, found '{}'",
            setting, name, *text, item));
      }
      indices.push_back(static_cast<unsigned int>(*index));
    }
    return indices;
  }
  return {};
}

}  // namespace nnergy::fleet
