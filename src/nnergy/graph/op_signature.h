#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "nnergy/graph/network.h"
#include "nnergy/graph/whitelist.h"

namespace nnergy::graph {

/// Canonical signature of an operation (seed 000 §4.1): operator type, element type, input
/// shapes (with their roles), sorted attributes and which inputs need a gradient. Two nodes with
/// equal signatures do the same work. E.g.
/// "Conv fp32 x[32, 64, 56, 56] w[64, 64, 3, 3] {dilations=[1, 1], group=1, ...} grad=01".
std::string op_signature(const Network& network, const Node& node);

/// A unique operation of a network and where it occurs.
struct UniqueOperation {
  std::string signature;
  std::string op_type;
  std::vector<std::size_t> nodes;  ///< indices into Network::nodes(), in network order
  bool whitelisted = false;

  std::size_t count() const { return nodes.size(); }
};

/// The unique operations of `network` with their occurrence counts (seed 000 §5.3), in order of
/// first occurrence. Shape arithmetic (Shape, Constant, ...) is left out; views are kept.
std::vector<UniqueOperation> unique_operations(const Network& network, const Whitelist& whitelist);

}  // namespace nnergy::graph
