#include "nnergy/measure/cuda_device_mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "nnergy/core/error.h"

namespace nnergy::measure {
namespace {

bool all_digits(std::string_view text) {
  return !text.empty() && text.size() <= 4 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> visible_entries(const std::string& text) {
  std::vector<std::string> entries;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string entry = text.substr(start, comma - start);
    if (!entry.empty()) entries.push_back(entry);
    start = comma + 1;
  }
  return entries;
}

}  // namespace

std::optional<int> parse_cuda_ordinal(std::string_view text) {
  if (text.rfind("cuda:", 0) == 0) text.remove_prefix(5);
  if (!all_digits(text)) return std::nullopt;
  return std::stoi(std::string(text));
}

void use_pci_bus_order_for_cuda() { setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0); }

unsigned int nvml_index_of_cuda_device(const NvmlLibrary& nvml, int cuda_device,
                                       const std::string& flag) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) return static_cast<unsigned int>(cuda_device);
  const std::vector<std::string> entries = visible_entries(visible);
  if (static_cast<std::size_t>(cuda_device) >= entries.size()) {
    throw InvalidInput(fmt::format("{} cuda:{}: CUDA_VISIBLE_DEVICES={} makes {} device(s) visible",
                                   flag, cuda_device, visible, entries.size()));
  }
  const std::string& entry = entries[static_cast<std::size_t>(cuda_device)];
  if (const std::optional<int> index = parse_cuda_ordinal(entry)) {
    return static_cast<unsigned int>(*index);
  }
  if (entry.rfind("GPU-", 0) == 0) {
    for (unsigned int i = 0; i < nvml.device_count(); ++i) {
      if (nvml.uuid(nvml.gpu(i)).rfind(entry, 0) == 0) return i;
    }
    throw InvalidInput(fmt::format(
        "{} cuda:{}: CUDA_VISIBLE_DEVICES={}: NVML has no GPU whose UUID starts with {}", flag,
        cuda_device, visible, entry));
  }
  throw InvalidInput(fmt::format(
      "{} cuda:{}: CUDA_VISIBLE_DEVICES={}: entry '{}' is neither a GPU index nor a GPU UUID (a "
      "MIG instance has no power reading of its own); use a whole GPU",
      flag, cuda_device, visible, entry));
}

}  // namespace nnergy::measure
