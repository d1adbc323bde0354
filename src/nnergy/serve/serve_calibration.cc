#include "nnergy/serve/serve_calibration.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/core/read_file.h"

namespace nnergy::serve {

namespace {

using json = nlohmann::ordered_json;

// Where a generation without a fit of its own takes one from, nearest first.
const std::map<std::string, std::vector<std::string>>& transfers() {
  static const std::map<std::string, std::vector<std::string>> kTransfers = {
      {"Ada", {"Hopper", "Ampere"}},   {"Blackwell", {"Hopper", "Ampere"}},
      {"Hopper", {"Ampere"}},          {"Ampere", {"Hopper"}},
      {"Turing", {"Ampere", "Volta"}}, {"Volta", {"Ampere"}},
      {"CDNA2", {"Ampere", "Hopper"}}, {"CDNA3", {"Hopper", "Ampere"}},
      {"CDNA4", {"Hopper", "Ampere"}}, {"Pascal", {"Volta", "Ampere"}},
      {"Grace", {"Hopper"}},
  };
  return kTransfers;
}

double number(const json& o, const char* key, double fallback, const std::string& where) {
  if (!o.contains(key)) return fallback;
  if (!o[key].is_number() || o[key].get<double>() < 0) {
    throw InvalidInput(fmt::format("{}: field '{}': expected a non-negative number, found {}",
                                   where, key, core::describe_json_value(o[key])));
  }
  return o[key].get<double>();
}

}  // namespace

ServeCalibration ServeCalibration::load(const std::filesystem::path& data_dir) {
  const std::filesystem::path path = data_dir / "llm" / "calibrated.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  return parse(read_whole_file(path), path.string());
}

ServeCalibration ServeCalibration::parse(const std::string& text, const std::string& source) {
  json root;
  try {
    root = core::parse_json_document(text, source);
  } catch (const json::exception& e) {
    throw InvalidInput(source + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!root.is_object()) throw InvalidInput(source + ": expected a JSON object");
  ServeCalibration c;
  c.provenance = root.value("provenance", "");
  c.accuracy = root.value("accuracy", "");
  if (root.contains("generations")) {
    for (auto it = root["generations"].begin(); it != root["generations"].end(); ++it) {
      const std::string where = source + ": generations." + it.key();
      GenerationFit g;
      g.gemm_efficiency = number(it.value(), "gemm_efficiency", g.gemm_efficiency, where);
      g.memory_efficiency = number(it.value(), "memory_efficiency", g.memory_efficiency, where);
      g.tensor_energy_scale = number(it.value(), "tensor_energy_scale", 1, where);
      g.kernel_power_scale = number(it.value(), "kernel_power_scale", 1, where);
      if (it.value().contains("gemm_efficiency_8bit") &&
          !it.value()["gemm_efficiency_8bit"].is_null()) {
        g.gemm_efficiency_8bit = number(it.value(), "gemm_efficiency_8bit", 0.6, where);
      }
      g.measurements = static_cast<int>(number(it.value(), "measurements", 0, where));
      if (!(g.gemm_efficiency > 0 && g.gemm_efficiency <= 1 && g.memory_efficiency > 0 &&
            g.memory_efficiency <= 1 && g.tensor_energy_scale > 0 && g.kernel_power_scale > 0)) {
        throw InvalidInput(where + ": expected efficiencies in (0, 1] and a positive energy scale");
      }
      c.generations[it.key()] = g;
    }
  }
  if (root.contains("memory_energy_scale")) {
    for (auto it = root["memory_energy_scale"].begin(); it != root["memory_energy_scale"].end();
         ++it) {
      c.memory_energy_scale[it.key()] = number(root["memory_energy_scale"], it.key().c_str(), 1,
                                               source + ": memory_energy_scale");
    }
  }
  if (root.contains("pcie_efficiency") && !root["pcie_efficiency"].is_null()) {
    c.pcie_efficiency = number(root, "pcie_efficiency", 0.5, source);
  }
  if (root.contains("engines")) {
    for (auto it = root["engines"].begin(); it != root["engines"].end(); ++it) {
      const std::string where = source + ": engines." + it.key();
      EngineFit e;
      e.host_per_step_s = number(it.value(), "host_per_step_s", 0, where);
      e.host_per_sequence_s = number(it.value(), "host_per_sequence_s", 0, where);
      e.host_per_kernel_s = number(it.value(), "host_per_kernel_s", 0, where);
      e.measurements = static_cast<int>(number(it.value(), "measurements", 0, where));
      c.engines[it.key()] = e;
    }
  }
  return c;
}

std::string ServeCalibration::to_json_text() const {
  json root;
  root["description"] =
      "Parameters of nnergy serve fitted by `nnergy calibrate --serve` on published LLM-serving "
      "measurements (data/calibration/llm_measured_public.json): per GPU generation the share of "
      "the tensor-core peak LLM GEMMs reach, the share of the DRAM bandwidth streaming reaches "
      "and the energy of a tensor-core flop relative to the archline default (and of the kernel "
      "model's tensor power; kernel_power_scale: its other power above idle); per engine its "
      "host time per step and per kernel launched outside CUDA graphs.";
  root["provenance"] = provenance;
  root["accuracy"] = accuracy;
  json g = json::object();
  for (const auto& [name, fit] : generations) {
    g[name] = {{"gemm_efficiency", fit.gemm_efficiency}};
    if (fit.gemm_efficiency_8bit) g[name]["gemm_efficiency_8bit"] = *fit.gemm_efficiency_8bit;
    g[name].update({{"memory_efficiency", fit.memory_efficiency},
                    {"tensor_energy_scale", fit.tensor_energy_scale},
                    {"kernel_power_scale", fit.kernel_power_scale},
                    {"measurements", fit.measurements}});
  }
  root["generations"] = g;
  root["memory_energy_scale"] = memory_energy_scale;
  root["pcie_efficiency"] = pcie_efficiency ? json(*pcie_efficiency) : json();
  json e = json::object();
  for (const auto& [name, fit] : engines) {
    e[name] = {{"host_per_step_s", fit.host_per_step_s},
               {"host_per_sequence_s", fit.host_per_sequence_s},
               {"host_per_kernel_s", fit.host_per_kernel_s},
               {"measurements", fit.measurements}};
  }
  root["engines"] = e;
  return root.dump(2) + "\n";
}

KernelPowerScales ServeCalibration::kernel_power(const device::DeviceSpec& device) const {
  std::string from;
  const std::optional<GenerationFit> fit = for_device(device, &from);
  if (!fit) return {};
  return {fit->tensor_energy_scale, fit->kernel_power_scale};
}

std::optional<GenerationFit> ServeCalibration::for_device(const device::DeviceSpec& device,
                                                          std::string* from) const {
  const std::string generation = device.generation();
  if (auto it = generations.find(generation); it != generations.end()) {
    if (from != nullptr) *from = generation;
    return it->second;
  }
  if (auto t = transfers().find(generation); t != transfers().end()) {
    for (const std::string& other : t->second) {
      if (auto it = generations.find(other); it != generations.end()) {
        if (from != nullptr) *from = other;
        return it->second;
      }
    }
  }
  if (!generations.empty()) {
    if (from != nullptr) *from = generations.begin()->first;
    return generations.begin()->second;
  }
  return std::nullopt;
}

device::DeviceSpec ServeCalibration::apply(const device::DeviceSpec& device,
                                           std::string* note) const {
  std::string from;
  const std::optional<GenerationFit> fit = for_device(device, &from);
  if (!fit) return device;
  device::DeviceSpec d = device;
  d.efficiency.tensor = fit->gemm_efficiency;
  d.efficiency.memory = fit->memory_efficiency;
  const double eight_bit = fit->gemm_efficiency_8bit.value_or(fit->gemm_efficiency);
  for (const device::Precision p :
       {device::Precision::kFp8, device::Precision::kInt8, device::Precision::kFp4}) {
    d.efficiency.tensor_by_precision[p] = eight_bit;
  }
  const auto fp32 = device.archline.find(device::Precision::kFp32);
  const bool memory_measured = fp32 != device.archline.end() && !fp32->second.estimated;
  double memory_scale = 1;
  if (auto m = memory_energy_scale.find(memory_family(device)); m != memory_energy_scale.end())
    memory_scale = m->second;
  for (const device::Precision p :
       {device::Precision::kTf32, device::Precision::kFp16, device::Precision::kBf16,
        device::Precision::kFp8, device::Precision::kFp4, device::Precision::kInt8}) {
    if (!d.has_matrix_units(p)) continue;
    if (auto it = device.archline.find(p); it != device.archline.end() && !it->second.estimated) {
      continue;  // measured values stay
    }
    device::ArchlineParameters a = device.archline_for(p);
    a.eps_flop_j *= fit->tensor_energy_scale;
    if (!memory_measured) a.eps_mem_j_per_byte *= memory_scale;
    a.source = fmt::format("{} x{:.2f} (fitted on published LLM-serving power of {} GPUs)",
                           a.source, fit->tensor_energy_scale, from);
    d.archline[p] = a;
  }
  // Measured DRAM energies (archline runs) stay; estimated ones take the family's scale.
  for (auto& [p, a] : d.archline) {
    if ((p == device::Precision::kFp32 || p == device::Precision::kFp64) && a.estimated)
      a.eps_mem_j_per_byte *= memory_scale;
  }
  if (note != nullptr) {
    *note = fmt::format(
        "LLM efficiencies of {} GPUs{}: fused attention at {:.0f} % of the tensor peak, "
        "streaming at {:.0f} % of the bandwidth, tensor-core energy x{:.2f} of the archline's "
        "and the kernel model's, the kernel model's other power above idle x{:.2f}{}",
        from,
        from == device.generation()
            ? ""
            : fmt::format(" (transferred to the {}'s {})", device.id, device.generation()),
        fit->gemm_efficiency * 100, fit->memory_efficiency * 100, fit->tensor_energy_scale,
        fit->kernel_power_scale, provenance.empty() ? "" : " (" + provenance + ")");
  }
  return d;
}

std::string ServeCalibration::memory_family(const device::DeviceSpec& device) {
  if (device.memory_type.empty()) return "";
  return device.memory_type.rfind("HBM", 0) == 0 ? "HBM" : "GDDR";
}

EngineProfile ServeCalibration::apply(const EngineProfile& engine) const {
  EngineProfile e = engine;
  if (pcie_efficiency) e.pcie_efficiency = *pcie_efficiency;
  const auto it = engines.find(engine.id);
  if (it == engines.end() || it->second.measurements == 0) return e;
  e.host_per_step_s = it->second.host_per_step_s;
  e.host_per_sequence_s = it->second.host_per_sequence_s;
  if (it->second.host_per_kernel_s > 0) e.host_per_kernel_s = it->second.host_per_kernel_s;
  e.calibration = fmt::format("host times fitted on {} published measurements of this release",
                              it->second.measurements);
  return e;
}

}  // namespace nnergy::serve
