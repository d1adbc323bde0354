// libFuzzer target: a user device catalog (DeviceCatalog::load of a file such as
// $NNERGY_USER_DEVICES or `--devices-file`), merged over the built-in catalog as
// DeviceCatalog::load_with_user does, then every device of the file looked up by id, alias and
// name (DeviceCatalog::find, normalize_device_name).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fuzz_support.h"
#include "nnergy/device/device_catalog.h"

namespace {
const nnergy::device::DeviceCatalog* builtin = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("NNERGY_USER_DEVICES", "/nonexistent/nnergy-fuzz-devices.json", 1);
  builtin = new nnergy::device::DeviceCatalog(
      nnergy::device::DeviceCatalog::load_default(NNERGY_FUZZ_DATA_DIR));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nnergy::fuzz::ScratchFile file("device_catalog", ".json", data, size);
  return nnergy::fuzz::run_one("device_catalog", [&] {
    const nnergy::device::DeviceCatalog user = nnergy::device::DeviceCatalog::load(file.path());
    nnergy::device::DeviceCatalog merged = *builtin;
    merged.merge(user);
    std::size_t found = 0;
    for (const nnergy::device::DeviceSpec& device : user.devices()) {
      // Ambiguous or unknown names are InvalidInput by contract; each lookup is tried on its own.
      auto lookup = [&](const std::string& name) {
        try {
          found += merged.find(name, "fuzz").id.size();
        } catch (const nnergy::InvalidInput&) {
        }
        found += nnergy::device::normalize_device_name(name).size();
      };
      lookup(device.id);
      lookup(device.name);
      for (const std::string& alias : device.aliases) lookup(alias);
    }
    volatile std::size_t sink = found + merged.devices().size();
    (void)sink;
  });
}
