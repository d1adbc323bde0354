#include "torch_plugin.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

namespace nnergy::cli {

std::string torch_plugin_path() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::filesystem::path dir = error ? std::filesystem::current_path() : exe.parent_path();
  const std::filesystem::path beside = dir / "libnnergy_torch_plugin.so";
  // Installed (cmake --install, pip install .): <prefix>/bin/nnergy, <prefix>/lib/nnergy/.
  const std::filesystem::path installed =
      dir.parent_path() / "lib" / "nnergy" / "libnnergy_torch_plugin.so";
  if (!std::filesystem::exists(beside, error) && std::filesystem::exists(installed, error)) {
    return installed.string();
  }
  return beside.string();
}

namespace {

const TorchPluginApi& load_torch_plugin() {
  const std::string path = torch_plugin_path();
  // Never closed: the regressors it makes and the functions it runs live in its code.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    throw std::runtime_error(fmt::format(
        "cannot load the LibTorch plugin {}: {} (it is built next to `nnergy` where LibTorch is "
        "found; rebuild, or run the `nnergy` of that build)",
        path, dlerror()));
  }
  using Entry = const TorchPluginApi* (*)();
  const auto entry = reinterpret_cast<Entry>(dlsym(handle, "nnergy_torch_plugin_api"));
  const TorchPluginApi* api = entry != nullptr ? entry() : nullptr;
  if (api == nullptr || api->version != kTorchPluginApiVersion) {
    throw std::runtime_error(fmt::format(
        "the LibTorch plugin {} does not match this nnergy (API version {}, expected {}); rebuild",
        path, api != nullptr ? api->version : 0, kTorchPluginApiVersion));
  }
  return *api;
}

}  // namespace

const TorchPluginApi& torch_plugin() {
  static const TorchPluginApi& api = load_torch_plugin();
  return api;
}

}  // namespace nnergy::cli
