#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "nnergy/dataset/dataset_store.h"
#include "nnergy/graph/network.h"
#include "temp_dir_test.h"

namespace nnergy::dataset::testing {

/// A fresh directory per test, removed afterwards.
class DatasetTest : public test_support::TempDirTest {};

/// x[1, 4, 8, 8] → 1×1 Conv (4 → 4 channels) → Relu → 1×1 Conv → Relu → Flatten: two unique
/// convolutions (the first needs no data gradient), one Relu occurring twice, one Flatten.
inline graph::Network tiny_network() {
  using graph::TensorInfo;
  using graph::TensorRole;
  graph::Network net;
  net.name = "tiny";
  net.source = "tests/dataset";
  net.description = "two 1x1 convolutions";
  const auto tensor = [&net](std::string name, graph::Shape shape, TensorRole role) {
    TensorInfo t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.role = role;
    return net.add_tensor(std::move(t));
  };
  const std::size_t x = tensor("x", {1, 4, 8, 8}, TensorRole::kDataInput);
  const std::size_t w0 = tensor("w0", {4, 4, 1, 1}, TensorRole::kParameter);
  const std::size_t w1 = tensor("w1", {4, 4, 1, 1}, TensorRole::kParameter);
  const std::size_t c0 = tensor("c0", {1, 4, 8, 8}, TensorRole::kActivation);
  const std::size_t r0 = tensor("r0", {1, 4, 8, 8}, TensorRole::kActivation);
  const std::size_t c1 = tensor("c1", {1, 4, 8, 8}, TensorRole::kActivation);
  const std::size_t r1 = tensor("r1", {1, 4, 8, 8}, TensorRole::kActivation);
  const std::size_t y = tensor("y", {1, 256}, TensorRole::kActivation);
  const auto node = [&net](std::string op, std::vector<std::size_t> in, std::size_t out) {
    graph::Node n;
    n.name = op;
    n.op_type = std::move(op);
    n.inputs = std::move(in);
    n.outputs = {out};
    net.add_node(std::move(n));
  };
  node("Conv", {x, w0}, c0);
  node("Relu", {c0}, r0);
  node("Conv", {r0, w1}, c1);
  node("Relu", {c1}, r1);
  node("Flatten", {r1}, y);
  net.propagate_tensor_flags();
  return net;
}

}  // namespace nnergy::dataset::testing
