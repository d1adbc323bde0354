// libFuzzer target: `.nnp` model files (learn::ModelFile::parse, the in-memory form of
// ModelFile::load) with the standard regressor registry (forest, boost, poly-lasso, hybrid,
// analytical; no LibTorch), then what `nnergy predict --model` does with a loaded model: a
// LearnedPredictor for the model's catalog device (else h100-sxm), check_applicable, the
// prediction of a small network (tests/fixtures/cli/folded_bn_convnet.onnx: every unique op in
// one batch, network::predict_network) and the caveats.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz_support.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/learn/learned_predictor.h"
#include "nnergy/learn/model_file.h"
#include "nnergy/network/network_prediction.h"
#include "nnergy/regress/regressor.h"

namespace {

struct Fixed {
  nnergy::regress::RegressorRegistry registry;
  nnergy::device::DeviceCatalog catalog;
  nnergy::graph::Network network;
};

const Fixed* fixed = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("NNERGY_USER_DEVICES", "/nonexistent/nnergy-fuzz-devices.json", 1);
  auto* f = new Fixed;
  nnergy::regress::register_standard_regressors(f->registry);
  f->catalog = nnergy::device::DeviceCatalog::load_default(NNERGY_FUZZ_DATA_DIR);
  f->network = nnergy::graph::import_onnx(NNERGY_FUZZ_FIXTURE_DIR "/cli/folded_bn_convnet.onnx",
                                          nnergy::graph::DimBindings{});
  fixed = f;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nnergy::fuzz::run_one("model_file", [&] {
    auto model = std::make_shared<const nnergy::learn::ModelFile>(nnergy::learn::ModelFile::parse(
        nnergy::fuzz::as_text(data, size), "fuzz.nnp", fixed->registry));
    volatile std::size_t sink = model->trained_modes().size() + model->trained_dtypes().size() +
                                model->trained_clocks_mhz().size() + model->to_json().size();
    (void)sink;
    const nnergy::device::DeviceSpec* device = nullptr;
    for (const nnergy::device::DeviceSpec& d : fixed->catalog.devices()) {
      if (d.id == model->device().catalog_id) device = &d;
    }
    if (device == nullptr) device = &fixed->catalog.find("h100-sxm");
    const nnergy::learn::LearnedPredictor predictor(model, *device, "fuzz.nnp");
    predictor.check_applicable(nnergy::graph::Mode::kInference, nnergy::device::Precision::kFp32);
    nnergy::network::PredictionSettings settings;
    settings.point = {nnergy::device::Precision::kFp32, device->clock.boost_mhz};
    const nnergy::network::CostedNetwork costed(fixed->network);
    sink = predictor.caveats(fixed->network, {device->clock.boost_mhz}).size() +
           nnergy::network::predict_network(costed, predictor, settings).layers.size();
  });
}
