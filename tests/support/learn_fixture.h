#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nnergy/dataset/dataset_store.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/graph/network.h"
#include "nnergy/graph/whitelist.h"
#include "nnergy/regress/regressor.h"
#include "temp_dir_test.h"

namespace nnergy::learn::testing {

/// A fresh directory per test, removed afterwards.
class LearnTest : public test_support::TempDirTest {};

/// The built-in device catalog of the source tree.
inline device::DeviceCatalog test_catalog() {
  return device::DeviceCatalog::load(std::filesystem::path(NNERGY_TEST_DATA_DIR) / "devices.json");
}

/// The standard regressors (no LibTorch in this test binary).
inline regress::RegressorRegistry standard_registry() {
  regress::RegressorRegistry registry;
  regress::register_standard_regressors(registry);
  return registry;
}

/// x[1, c0, 8, 8] → (1×1 Conv c_{i−1} → c_i, Relu) for each further channel count: every Conv
/// and every Relu has its own shape, so each is a unique op of its own (two per step).
inline graph::Network conv_chain(const std::string& name,
                                 const std::vector<std::int64_t>& channels) {
  using graph::TensorInfo;
  using graph::TensorRole;
  graph::Network net;
  net.name = name;
  net.source = "tests/learn";
  net.description = "synthetic chain of 1x1 convolutions";
  const auto tensor = [&net](std::string tensor_name, graph::Shape shape, TensorRole role) {
    TensorInfo t;
    t.name = std::move(tensor_name);
    t.shape = std::move(shape);
    t.role = role;
    return net.add_tensor(std::move(t));
  };
  std::size_t current = tensor("x", {1, channels.front(), 8, 8}, TensorRole::kDataInput);
  for (std::size_t i = 1; i < channels.size(); ++i) {
    const std::string s = std::to_string(i);
    const std::size_t w =
        tensor("w" + s, {channels[i], channels[i - 1], 1, 1}, TensorRole::kParameter);
    const std::size_t c = tensor("c" + s, {1, channels[i], 8, 8}, TensorRole::kActivation);
    const std::size_t r = tensor("r" + s, {1, channels[i], 8, 8}, TensorRole::kActivation);
    graph::Node conv;
    conv.name = "conv" + s;
    conv.op_type = "Conv";
    conv.inputs = {current, w};
    conv.outputs = {c};
    net.add_node(std::move(conv));
    graph::Node relu;
    relu.name = "relu" + s;
    relu.op_type = "Relu";
    relu.inputs = {c};
    relu.outputs = {r};
    net.add_node(std::move(relu));
    current = r;
  }
  net.propagate_tensor_flags();
  return net;
}

/// Synthetic (not measured) time of an op: 1 µs plus 1 ns per flop of the mode's passes.
inline double synthetic_time_s(const graph::OpDescriptor& op, const std::string& mode) {
  const double flops = mode == "training" ? op.training_forward.flop_count + op.backward.flop_count
                                          : op.inference.flop_count;
  return 1e-6 + 1e-9 * flops;
}

/// How to make one synthetic dataset.
struct SyntheticDataset {
  std::string device_name = "Synthetic CPU";
  std::string device_kind = "cpu";
  std::vector<graph::Network> networks;
  /// Per (op, mode): the time to store; default synthetic_time_s.
  std::function<std::optional<double>(const graph::OpDescriptor&, const std::string&)> time_s =
      [](const graph::OpDescriptor& op, const std::string& mode) {
        return std::optional<double>(synthetic_time_s(op, mode));
      };
  /// Per (op, mode): the power to store, absent by default (a CPU dataset has none).
  std::function<std::optional<double>(const graph::OpDescriptor&, const std::string&)> power_w =
      [](const graph::OpDescriptor&, const std::string&) { return std::optional<double>(); };
  /// Whole-network time = this factor × Σ count × stored op time.
  double network_factor = 1.1;
};

/// Writes `spec` into a new dataset at `path` through DatasetStore: every unique op of every
/// network in both modes at the default clock, fp32, and one measurement per network and mode.
inline void write_dataset(const std::string& path, const SyntheticDataset& spec) {
  dataset::DatasetStore store = dataset::DatasetStore::open(path);
  const std::int64_t device_id = store.add_device({0, spec.device_name, "", spec.device_kind, ""});
  dataset::SessionRecord session;
  session.device_id = device_id;
  session.tool_version = "test";
  session.command_line = "tests/learn synthetic dataset";
  const std::int64_t session_id = store.start_session(session);
  for (const graph::Network& net : spec.networks) {
    store.add_network(net, graph::Whitelist::standard());
  }
  std::map<std::pair<std::string, std::string>, double> stored;
  for (const dataset::OpRecord& record : store.ops()) {
    const graph::OpDescriptor& op = record.op;
    for (const std::string mode : {"inference", "training"}) {
      dataset::MeasurementRecord m;
      m.session_id = session_id;
      m.key = {op.signature, mode, 0, "fp32"};
      m.values.iterations = 10;
      m.values.repeats = 3;
      m.values.time_s = spec.time_s(op, mode);
      m.values.power_w = spec.power_w(op, m.key.mode);
      store.record_measurement(m);
      if (m.values.time_s && std::isfinite(*m.values.time_s)) {
        stored[{op.signature, mode}] = *m.values.time_s;
      }
    }
  }
  for (const dataset::NetworkRecord& n : store.networks()) {
    for (const std::string mode : {"inference", "training"}) {
      double sum = 0;
      for (const auto& [signature, count] : n.op_counts) {
        const auto it = stored.find({signature, mode});
        if (it != stored.end()) sum += static_cast<double>(count) * it->second;
      }
      dataset::NetworkMeasurementRecord m;
      m.session_id = session_id;
      m.network_name = n.name;
      m.network_inputs_json = n.inputs_json;
      m.mode = mode;
      m.dtype = "fp32";
      m.values.iterations = 1;
      m.values.repeats = 3;
      m.values.time_s = spec.network_factor * sum;
      store.record_network_measurement(m);
    }
  }
  store.end_session(session_id);
}

/// Two chains of 1×1 convolutions: chain_a has 32 unique ops, chain_b 30; they share the first
/// Conv (3 → 4 channels) and the Relus of 4, 12, 24, 36, 48 and 60 channels: 55 unique ops.
inline std::vector<graph::Network> two_chains() {
  std::vector<std::int64_t> a = {3};
  std::vector<std::int64_t> b = {3, 4};
  for (std::int64_t c = 4; c <= 64; c += 4) a.push_back(c);
  for (std::int64_t c = 6; c <= 84; c += 6) b.push_back(c);
  return {conv_chain("chain_a", a), conv_chain("chain_b", b)};
}

/// Writes, at `path`, the dataset of two_chains() with the default synthetic times and no power.
/// The file is made once per test binary and copied, because writing it takes one transaction
/// per measurement.
inline void copy_two_chains_dataset(const std::string& path) {
  struct Master {
    std::filesystem::path file =
        std::filesystem::temp_directory_path() /
        ("nnergy_learn_two_chains_" + std::to_string(::getpid()) + ".sqlite");
    Master() {
      SyntheticDataset spec;
      spec.networks = two_chains();
      write_dataset(file.string(), spec);
    }
    ~Master() { std::filesystem::remove(file); }
  };
  static const Master master;
  std::filesystem::copy_file(master.file, path);
}

/// Small forests keep the tests fast.
inline nlohmann::json small_forest() { return {{"num_parallel_tree", 30}, {"max_depth", 6}}; }

}  // namespace nnergy::learn::testing
