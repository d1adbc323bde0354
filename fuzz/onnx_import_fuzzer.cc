// libFuzzer target: ONNX import (graph::import_onnx_bytes, the in-memory form of
// graph::import_onnx that `nnergy predict MODEL.onnx` calls), then what predict does with the
// imported network before any device is involved: the cost of every node, the unique operations
// with their signatures and the parameter count.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/op_catalog.h"
#include "nnergy/graph/op_signature.h"
#include "nnergy/graph/whitelist.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nnergy::fuzz::run_one("onnx_import", [&] {
    const nnergy::graph::Network network = nnergy::graph::import_onnx_bytes(
        nnergy::fuzz::as_text(data, size), "fuzz.onnx", nnergy::graph::DimBindings{});
    double macs = 0;
    for (const nnergy::graph::Node& node : network.nodes()) {
      macs += nnergy::graph::op_cost(network, node).inference.mac_count;
    }
    static const nnergy::graph::Whitelist whitelist = nnergy::graph::Whitelist::standard();
    const auto unique = nnergy::graph::unique_operations(network, whitelist);
    volatile double sink =
        macs + static_cast<double>(network.parameter_count()) + static_cast<double>(unique.size());
    (void)sink;
  });
}
