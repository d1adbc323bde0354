#pragma once

#include <memory>
#include <string>

#include "nnergy/profile/profile_session.h"
#include "nnergy/regress/regressor.h"

namespace nnergy::cli {

/// What the LibTorch plugin (libnnergy_torch_plugin.so, built next to the `nnergy` executable
/// where LibTorch is found) offers. LibTorch lives in a plugin rather than in the executable
/// because loading it costs ~0.4 s of CPU at every start, which every command paid although only
/// `nnergy profile` and the resnet regressor use it; now only they load it.
struct TorchPluginApi {
  int version = 0;  ///< kTorchPluginApiVersion of the plugin's build
  /// profile::run_profile and its text reporter (profile/profile_session.h).
  profile::ProfileResult (*run_profile)(const profile::ProfileRequest& request,
                                        const profile::ProfileHooks& hooks) = nullptr;
  std::string (*render_profile)(const profile::ProfileResult& result) = nullptr;
  /// A fresh ResnetRegressor (regress/resnet_regressor.h).
  std::unique_ptr<regress::Regressor> (*make_resnet)() = nullptr;
};

/// Bumped whenever TorchPluginApi or a type it passes changes: executable and plugin must agree.
inline constexpr int kTorchPluginApiVersion = 2;

/// The plugin's entry point, exported with C linkage so that dlsym finds it by this name.
extern "C" const TorchPluginApi* nnergy_torch_plugin_api();

/// Where the plugin is looked for: next to the running executable (/proc/self/exe).
std::string torch_plugin_path();

/// Loads the plugin on first use (thread-safe) and returns its functions. Throws
/// std::runtime_error naming the path when it is missing, cannot be loaded, or was built for
/// another API version.
const TorchPluginApi& torch_plugin();

}  // namespace nnergy::cli
