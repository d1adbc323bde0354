#include "nnergy/measure/nvml_source.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/measure/source_factories.h"

namespace nnergy::measure {

NvmlSource::NvmlSource(std::shared_ptr<NvmlLibrary> library, unsigned int index)
    : library_(std::move(library)), gpu_(library_->gpu(index)) {
  info_.id = fmt::format("nvml:{}", index);
  info_.kind = "gpu";
  info_.name = library_->name(gpu_);
  info_.uuid = library_->uuid(gpu_);
  info_.driver_version = library_->driver_version();
  info_.power_limit_w = library_->power_limit_w(gpu_);
  // Probing by calling: NVML has no "is this supported" query, only NOT_SUPPORTED answers.
  info_.has_energy_counter = library_->total_energy_j(gpu_).has_value();
  const bool has_instant_power = library_->instant_power_w(gpu_).has_value();
  info_.power_is_averaged = !has_instant_power && library_->average_power_w(gpu_).has_value();
  info_.has_power = has_instant_power || info_.power_is_averaged;
  has_sm_clock_ = library_->clock_mhz(gpu_, nvml::kClockSm).has_value();
  has_memory_clock_ = library_->clock_mhz(gpu_, nvml::kClockMemory).has_value();
  has_temperature_ = library_->temperature_c(gpu_).has_value();
  has_clock_event_reasons_ = library_->clock_event_reasons(gpu_).has_value();
}

PowerSample NvmlSource::read(double time_s) {
  PowerSample sample;
  sample.time_s = time_s;
  if (info_.has_power) {
    sample.power_w =
        info_.power_is_averaged ? library_->average_power_w(gpu_) : library_->instant_power_w(gpu_);
  }
  if (info_.has_energy_counter) {
    const std::optional<double> counter_j = library_->total_energy_j(gpu_);
    if (counter_j) {
      // The counter is 64-bit mJ and does not wrap in practice, but a driver reload restarts it;
      // the energy since then is added to what was counted before, keeping the sum monotonic.
      if (last_counter_j_ && *counter_j < *last_counter_j_) counter_offset_j_ += *last_counter_j_;
      last_counter_j_ = counter_j;
      sample.energy_j = counter_offset_j_ + *counter_j;
    }
  }
  if (has_sm_clock_) sample.sm_clock_mhz = library_->clock_mhz(gpu_, nvml::kClockSm);
  if (has_memory_clock_) sample.memory_clock_mhz = library_->clock_mhz(gpu_, nvml::kClockMemory);
  if (has_temperature_) sample.temperature_c = library_->temperature_c(gpu_);
  if (has_clock_event_reasons_)
    sample.throttle_reasons = library_->clock_event_reasons(gpu_).value_or(0);
  return sample;
}

namespace {

// "" → every GPU; "N" → GPU N. Anything else is a malformed source.
std::optional<unsigned int> parse_gpu_index(const std::string& argument) {
  if (argument.empty()) return std::nullopt;
  const bool digits_only =
      argument.size() <= 6 && argument.find_first_not_of("0123456789") == std::string::npos;
  if (!digits_only) {
    throw InvalidInput(fmt::format(
        "expected a GPU index such as nvml:0 (or nvml for every GPU), found '{}'", argument));
  }
  return static_cast<unsigned int>(std::stoul(argument));
}

}  // namespace

Detection open_nvml_sources(const std::string& argument) {
  const std::optional<unsigned int> index = parse_gpu_index(argument);
  Detection detection;
  NvmlLoadResult loaded = NvmlLibrary::load();
  if (!loaded.library) {
    detection.unavailable.push_back({"nvml", loaded.unavailable_reason});
    return detection;
  }
  const std::shared_ptr<NvmlLibrary>& library = loaded.library;
  if (index) {
    // The user named this GPU: failures are errors, not absence.
    const unsigned int count = library->device_count();
    if (count == 0) {
      detection.unavailable.push_back({"nvml", "NVML reports no GPU"});
      return detection;
    }
    if (*index >= count) {
      std::vector<std::string> valid;
      for (unsigned int i = 0; i < count; ++i) valid.push_back(std::to_string(i));
      throw InvalidInput(
          fmt::format("there is no GPU {}; accepted: {}", *index, join_with_commas(valid)));
    }
    detection.sources.push_back(std::make_unique<NvmlSource>(library, *index));
    return detection;
  }
  // Detecting every GPU: one that fails to open is reported and the others are still used.
  unsigned int count = 0;
  try {
    count = library->device_count();
  } catch (const DeviceError& e) {
    detection.unavailable.push_back({"nvml", e.what()});
    return detection;
  }
  if (count == 0) detection.unavailable.push_back({"nvml", "NVML reports no GPU"});
  for (unsigned int i = 0; i < count; ++i) {
    try {
      detection.sources.push_back(std::make_unique<NvmlSource>(library, i));
    } catch (const DeviceError& e) {
      detection.unavailable.push_back({fmt::format("nvml:{}", i), e.what()});
    }
  }
  return detection;
}

}  // namespace nnergy::measure
