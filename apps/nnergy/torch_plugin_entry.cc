// The LibTorch plugin's entry point (see torch_plugin.h): built into libnnergy_torch_plugin.so,
// never into the executable.
#include "nnergy/regress/resnet_regressor.h"
#include "torch_plugin.h"

namespace nnergy::cli {

namespace {

std::unique_ptr<regress::Regressor> make_resnet() {
  return std::make_unique<regress::ResnetRegressor>();
}

std::string render_profile(const profile::ProfileResult& result) {
  return profile::render_text(result);
}

}  // namespace

extern "C" const TorchPluginApi* nnergy_torch_plugin_api() {
  static const TorchPluginApi api{kTorchPluginApiVersion, &profile::run_profile, &render_profile,
                                  &make_resnet};
  return &api;
}

}  // namespace nnergy::cli
