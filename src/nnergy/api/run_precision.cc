#include "nnergy/api/run_precision.h"

#include <fmt/format.h>

namespace nnergy::api::detail {

RunPrecision run_precision(const std::optional<device::Precision>& requested,
                           const graph::Network& network, SettingNames names) {
  const std::optional<graph::DataType> stored = network.stored_floating_type();
  // The file's precision, fp32 when it stores no floating type (a plain value, not an optional:
  // GCC 12 warns that an optional copied out of the switch may be uninitialized).
  const device::Precision file =
      stored ? device::precision_of_storage(*stored).value_or(device::Precision::kFp32)
             : device::Precision::kFp32;
  const std::string what = network.parameter_count() > 0 ? "parameters" : "data inputs";
  RunPrecision out;
  if (!requested) {
    out.precision = file;
    if (file != device::Precision::kFp32) {
      out.note = fmt::format(
          "precision {} taken from the file: its {} are stored as {} ({} to predict another)",
          device::to_string(out.precision), what, graph::to_string(*stored),
          setting_name(names, "precision"));
    }
    return out;
  }
  out.precision = *requested;
  if (stored && device::storage_type(*requested) != *stored) {
    out.note = fmt::format(
        "the file stores its {} as {}; predicted at {} as {} asks (every floating-point tensor "
        "taken as {}, as if the model were cast before running)",
        what, graph::to_string(*stored), device::to_string(*requested),
        setting_with_value(names, "precision", device::to_string(*requested)),
        graph::to_string(device::storage_type(*requested)));
  }
  return out;
}

}  // namespace nnergy::api::detail
