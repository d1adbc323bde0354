#include "nnergy/learn/published_times.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "nnergy/core/error.h"

namespace nnergy::learn {

namespace {

nlohmann::json read_mapping(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw InvalidInput(path.string() +
                       ": cannot be read (the mapping of published measurements "
                       "to devices and networks)");
  }
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(path.string() + ": not valid JSON: " + e.what());
  }
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::optional<device::Precision> precision_of(const std::string& text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (contains(lower, "tf32")) return device::Precision::kTf32;
  if (contains(lower, "fp16") || contains(lower, "amp")) return device::Precision::kFp16;
  if (contains(lower, "bf16")) return device::Precision::kBf16;
  if (contains(lower, "fp32")) return device::Precision::kFp32;
  return std::nullopt;
}

// The ONNX file and dimension bindings of `network` for a record of `input_shape`.
struct NetworkMapping {
  std::filesystem::path model;
  std::map<std::string, std::int64_t> dims;
};

std::optional<NetworkMapping> network_of(const nlohmann::json& networks,
                                         const std::filesystem::path& data_dir,
                                         const dataset::PublishedMeasurement& r, std::string* why) {
  if (!networks.contains(r.network)) {
    *why = "network not in data/calibration/networks.json";
    return std::nullopt;
  }
  const nlohmann::json& n = networks.at(r.network);
  if (!n.contains("file")) {
    *why = "network left unmapped: " + n.value("unmapped", std::string("no architecture"));
    return std::nullopt;
  }
  NetworkMapping m;
  m.model = data_dir / n.at("file").get<std::string>();
  const std::string shape = r.input_shape.value_or("None");
  if (!n.contains("runs") || !n.at("runs").is_array()) return m;
  for (const nlohmann::json& run : n.at("runs")) {
    bool matches = true;
    if (run.contains("records_input_shape") && !run.at("records_input_shape").empty()) {
      const auto& shapes = run.at("records_input_shape");
      matches = std::find(shapes.begin(), shapes.end(), shape) != shapes.end();
    }
    if (!matches) continue;
    if (run.contains("dims") && run.at("dims").is_object()) {
      const nlohmann::json& dims = run.at("dims");
      for (auto it = dims.begin(); it != dims.end(); ++it) {
        m.dims[it.key()] = it.value().get<std::int64_t>();
      }
    }
    break;
  }
  return m;
}

}  // namespace

PublishedTimes published_times(const std::vector<dataset::PublishedMeasurement>& records,
                               const std::filesystem::path& data_dir,
                               const std::vector<std::string>& grades) {
  const nlohmann::json gpus = read_mapping(data_dir / "calibration" / "gpus.json").at("gpus");
  const nlohmann::json networks =
      read_mapping(data_dir / "calibration" / "networks.json").at("networks");
  PublishedTimes out;
  for (const dataset::PublishedMeasurement& r : records) {
    auto skip = [&](const std::string& why) { out.skipped.emplace_back(r.id, why); };
    network::NetworkTimeMeasurement m;
    const std::string& q = r.quantity;
    if (q == "time_per_iteration" || q == "latency_avg_per_batch") {
      m.part = network::TimedPart::kIteration;
    } else if (q == "forward_time_per_iteration") {
      m.part = network::TimedPart::kForward;
    } else if (q == "backward_time_per_iteration") {
      m.part = network::TimedPart::kBackward;
    } else if (q == "throughput") {
      m.part = network::TimedPart::kIteration;
    } else {
      skip("quantity '" + q + "' is not a whole-network time");
      continue;
    }
    if (std::find(grades.begin(), grades.end(), r.grade) == grades.end()) {
      skip("grade " + r.grade + " not selected");
      continue;
    }
    if (!r.batch) {
      skip("batch not stated");
      continue;
    }
    if (r.framework.find("no cuDNN") != std::string::npos) {
      // Torch7's own convolutions are 2–3× slower than cuDNN's on the same GPU: a different
      // kernel library from the cuDNN/cuBLAS kernels every framework nnergy predicts uses.
      skip("framework '" + r.framework + "' runs convolutions without cuDNN (not modelled)");
      continue;
    }
    if (r.mode == "inference") {
      m.mode = predict::Mode::kInference;
    } else if (r.mode == "training (fwd+bwd, no optimizer)" || r.mode == "training_forward" ||
               r.mode == "training_backward") {
      m.mode = predict::Mode::kTraining;
    } else if (r.mode == "training") {
      m.mode = predict::Mode::kTraining;
      m.optimizer_step = true;
    } else {
      skip("mode '" + r.mode + "' is not one training or inference iteration");
      continue;
    }
    if (r.mode == "training_forward") m.part = network::TimedPart::kForward;
    if (r.mode == "training_backward") m.part = network::TimedPart::kBackward;
    if (!gpus.contains(r.gpu) || gpus.at(r.gpu).is_null()) {
      skip("GPU '" + r.gpu + "' is not in the device catalog");
      continue;
    }
    m.device_id = gpus.at(r.gpu).get<std::string>();
    const auto precision = precision_of(r.precision.value_or(""));
    if (!precision) {
      skip("precision '" + r.precision.value_or("") + "' not understood");
      continue;
    }
    m.precision = *precision;
    std::string why;
    const auto mapping = network_of(networks, data_dir, r, &why);
    if (!mapping) {
      skip(why);
      continue;
    }
    if (!r.value_si || !(*r.value_si > 0)) {
      skip("no positive SI value");
      continue;
    }
    m.measured_s = q == "throughput" ? static_cast<double>(*r.batch) / *r.value_si : *r.value_si;
    m.id = r.id;
    m.source = r.source;
    m.grade = r.grade;
    m.network = r.network;
    m.model = mapping->model;
    m.bindings.batch = *r.batch;
    m.bindings.named = mapping->dims;
    out.measurements.push_back(std::move(m));
  }
  return out;
}

}  // namespace nnergy::learn
