#pragma once

// What `nnergy calibrate --serve` fits on published LLM-serving measurements and `nnergy serve`
// applies: per GPU generation, how close large LLM GEMMs and streaming reads come to the
// datasheet peaks and what a tensor-core flop costs in energy; per engine, its host time
// (data/llm/calibrated.json). The physics stays the analytical model's; these are its
// parameters that no datasheet gives.

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "nnergy/device/device_spec.h"
#include "nnergy/serve/deployment.h"
#include "nnergy/serve/engine.h"

namespace nnergy::serve {

/// Fitted parameters of one GPU generation ("Ampere", "Hopper", ...).
struct GenerationFit {
  /// Fraction of the tensor-core peak 16-bit LLM GEMMs and fused attention reach.
  double gemm_efficiency = 0.6;
  /// The same for 8-bit (fp8, int8) and 4-bit GEMMs; unset: gemm_efficiency.
  std::optional<double> gemm_efficiency_8bit;
  /// Fraction of the DRAM bandwidth weight and KV-cache streaming reach.
  double memory_efficiency = 0.8;
  /// Energy of a tensor-core flop relative to the archline's default for that precision (the
  /// fp32 flop power at the precision's peak), and of the tensor units' share of the kernel
  /// model's GEMM power relative to its kernel-level fit: 1 keeps the defaults.
  double tensor_energy_scale = 1;
  /// The kernel model's GEMM power above idle outside the tensor units' share (clocks up,
  /// DRAM) relative to its kernel-level fit: 1 keeps it.
  double kernel_power_scale = 1;
  /// Measurements it was fitted on (0: a transferred or default value).
  int measurements = 0;
};

/// Fitted host parameters of one engine.
struct EngineFit {
  double host_per_step_s = 0;
  double host_per_sequence_s = 0;
  double host_per_kernel_s = 0;
  int measurements = 0;
};

/// Out-of-sample accuracy of the fit, for the outputs' notes.
struct ServeAccuracy {
  std::string summary;  ///< e.g. "leave-one-GPU-out MAPE: J/token 14 %, tokens/s 17 %, ..."
};

class ServeCalibration {
 public:
  /// data/llm/calibrated.json; an empty calibration when the file does not exist.
  static ServeCalibration load(const std::filesystem::path& data_dir);
  static ServeCalibration parse(const std::string& json_text, const std::string& source);
  /// The document parse() reads.
  std::string to_json_text() const;

  std::map<std::string, GenerationFit> generations;  ///< by DeviceSpec::generation()
  std::map<std::string, EngineFit> engines;          ///< by engine id
  /// ε_mem relative to the archline's, by memory family ("HBM", "GDDR"): the DRAM energy per
  /// byte differs by technology more than by generation.
  std::map<std::string, double> memory_energy_scale;
  /// Achieved share of PCIe bandwidth by collectives among more GPUs than a scale-up domain
  /// holds; unset: the engine's.
  std::optional<double> pcie_efficiency;
  std::string provenance;  ///< "fitted on N published measurements (…)"
  std::string accuracy;    ///< out-of-sample figures, one line
  bool empty() const { return generations.empty() && engines.empty(); }

  /// The fit for `device`'s generation: its own, else the nearest fitted generation's (Ada and
  /// Blackwell from Hopper, Turing and Volta from Ampere, CDNA from Hopper), with `*from` naming
  /// where it came from; nullopt when nothing is fitted.
  std::optional<GenerationFit> for_device(const device::DeviceSpec& device,
                                          std::string* from) const;
  /// `device` with its generation's fit applied: LLM efficiencies in place of the catalog's (the
  /// tensor efficiency and memory efficiency), and the tensor precisions' archline ε_flop
  /// scaled. `note`, when given, says what was applied.
  device::DeviceSpec apply(const device::DeviceSpec& device, std::string* note = nullptr) const;
  /// "HBM" for HBM memory types, "GDDR" for the others (GDDR5-7, LPDDR), "" when unknown.
  static std::string memory_family(const device::DeviceSpec& device);
  /// The kernel model's GEMM power scales of `device`'s generation (its tensor energy scale and
  /// kernel power scale; 1 when nothing is fitted).
  KernelPowerScales kernel_power(const device::DeviceSpec& device) const;
  /// `engine` with its fitted host times.
  EngineProfile apply(const EngineProfile& engine) const;
};

}  // namespace nnergy::serve
