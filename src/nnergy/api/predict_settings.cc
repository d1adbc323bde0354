#include "nnergy/api/predict_settings.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>

#include "nnergy/core/error.h"
#include "nnergy/device/precision.h"
#include "nnergy/graph/mode.h"
#include "nnergy/graph/op_catalog.h"
#include "nnergy/graph/whitelist.h"
#include "nnergy/network/runtime.h"

namespace nnergy::api {

namespace {

using Table = SettingTable<PredictRequest>;
using T = SettingType;

const std::string& text(const SettingValue& v) { return std::get<std::string>(v); }
double number(const SettingValue& v) { return std::get<double>(v); }
bool on(const SettingValue& v) { return std::get<bool>(v); }

Table make_table() {
  Table t("keyword of predict");
  t.add("device",
        fmt::format("device id or alias (see `nnergy devices`); default: the model file's device "
                    "with a learned predictor, else {}",
                    kDefaultPredictDevice),
        {"--device", T::kText, "",
         [](PredictRequest& r, const SettingValue& v) { r.device = text(v); }});
  t.add("predictor_file", "analytical, or a model file written by `nnergy train` (.nnp)",
        {"--predictor", T::kText, "analytical", [](PredictRequest& r, const SettingValue& v) {
           r.predictor_file = text(v) == "analytical" ? std::string() : text(v);
         }});
  t.add("devices_file",
        "extra device catalog (JSON) whose devices replace or add to the built-in ones",
        {"--devices-file", T::kText, "",
         [](PredictRequest& r, const SettingValue& v) { r.devices_file = text(v); }});
  t.add("mode", "inference or training",
        {"--mode", T::kText, "inference", [](PredictRequest& r, const SettingValue& v) {
           r.mode = graph::parse_mode(text(v), setting_name(r.names, "mode"));
         }});
  t.add(
      "host",
      "calibrated host profile whose kernel launch time to use (default: the calibration's; "
      "an unknown name lists them)",
      {"--host", T::kText, "", [](PredictRequest& r, const SettingValue& v) { r.host = text(v); }});
  t.add("strict_fp32",
        "fp32: TF32 off in cuDNN too (default: convolutions in TF32 on GPUs that have it, as "
        "PyTorch runs them)",
        {"--strict-fp32", T::kSwitch, "",
         [](PredictRequest& r, const SettingValue& v) { r.strict_fp32 = on(v); }});
  t.add("runtime",
        "eager (PyTorch launching each kernel), cuda-graphs (no per-kernel launch) or compiled "
        "(torch.compile: pointwise chains fused)",
        {"--runtime", T::kText, "eager", [](PredictRequest& r, const SettingValue& v) {
           r.runtime = network::parse_runtime(text(v), setting_name(r.names, "runtime"));
         }});
  t.add("host_launch_us",
        "host CPU time per kernel launch of eager inference, us (training: the calibrated "
        "multiple; 0: never host-bound); default: the host profile's",
        {"--host-launch-us", T::kNumber, "",
         [](PredictRequest& r, const SettingValue& v) { r.host_launch_us = number(v); }});
  t.add("batch",
        "samples per iteration (binds the batch dimension; re-binds a batch fixed in the file); "
        "default: the file's fixed batch, else 1",
        {"--batch", T::kInteger, "",
         [](PredictRequest& r, const SettingValue& v) { r.batch = std::get<std::int64_t>(v); }});
  t.add("dims", "bind other symbolic dimensions: NAME=VALUE (repeatable)",
        {"--dim", T::kBindings, "", [](PredictRequest& r, const SettingValue& v) {
           r.dims = std::get<std::map<std::string, std::int64_t>>(v);
         }});
  t.add("clock_mhz", "core clock in MHz (default: boost clock)",
        {"--clock-mhz", T::kNumber, "",
         [](PredictRequest& r, const SettingValue& v) { r.clock_mhz = number(v); }});
  t.add("power_limit_w",
        "predict under a lowered board power limit, W (as set with nvidia-smi -pl): the clock is "
        "the highest at which the predicted average power stays within it",
        {"--power-limit-w", T::kNumber, "",
         [](PredictRequest& r, const SettingValue& v) { r.power_limit_w = number(v); }});
  t.add("sweep_clocks",
        "predict over the device's clocks and name the energy- and EDP-optimal ones",
        {"--sweep-clocks", T::kSwitch, "",
         [](PredictRequest& r, const SettingValue& v) { r.sweep_clocks = on(v); }});
  t.add("sweep_step_mhz",
        "clock step of the sweep in MHz (default: the device's, at most ~100 points)",
        {"--sweep-step-mhz", T::kNumber, "",
         [](PredictRequest& r, const SettingValue& v) { r.sweep_step_mhz = number(v); }});
  t.add("precision",
        "fp32, tf32, fp16, bf16, fp64, fp8 or int8; default: the type the file stores its "
        "tensors in (fp16 for an fp16 export), else fp32",
        {"--precision", T::kText, "", [](PredictRequest& r, const SettingValue& v) {
           r.precision = device::parse_precision(text(v), setting_name(r.names, "precision"));
         }});
  t.add("optimizer", "training: sgd, sgd-momentum (default), adam or adamw",
        {"--optimizer", T::kText, "", [](PredictRequest& r, const SettingValue& v) {
           r.optimizer = graph::parse_optimizer(text(v), setting_name(r.names, "optimizer"));
         }});
  t.add("whitelist",
        "comma-separated compute-relevant ONNX op types (default: the standard list); others "
        "are flagged, still predicted",
        {"--whitelist", T::kText, "", [](PredictRequest& r, const SettingValue& v) {
           r.whitelist = graph::Whitelist::parse(text(v), setting_name(r.names, "whitelist"));
         }});
  t.add("error",
        "classification error (fraction) for the energy-precision ratio M = error^alpha * EPI",
        {"--error", T::kNumber, "",
         [](PredictRequest& r, const SettingValue& v) { r.error = number(v); }});
  t.add("alpha", "exponent alpha of the energy-precision ratio",
        {"--alpha", T::kNumber, "",
         [](PredictRequest& r, const SettingValue& v) { r.alpha = number(v); }});
  t.add("ignore_memory", "predict even when the estimated peak device memory exceeds the device's",
        {"--ignore-memory", T::kSwitch, "",
         [](PredictRequest& r, const SettingValue& v) { r.ignore_memory = on(v); }});
  return t;
}

}  // namespace

const SettingTable<PredictRequest>& predict_settings() {
  static const Table table = make_table();
  return table;
}

void apply_predict_setting(PredictRequest& request, std::string_view keyword,
                           const SettingValue& value) {
  const RequestSetting<PredictRequest>& setting = predict_settings().get(keyword);
  check_setting_type(setting.type, value, request.names, keyword);
  setting.apply(request, value);
}

}  // namespace nnergy::api
