#pragma once

// Internal to nnergy::graph: costs of the ONNX recurrent layers LSTM, GRU and RNN.

#include "nnergy/graph/cost_input.h"

namespace nnergy::graph {

/// The sizes of one recurrent node (one layer, one or two directions).
struct RecurrentShape {
  double gates = 1;        ///< LSTM 4, GRU 3, RNN 1
  double directions = 1;   ///< 2 for direction "bidirectional"
  double sequence = 0;     ///< time steps
  double batch = 0;        ///< sequences per batch
  double input_size = 0;   ///< features of X
  double hidden_size = 0;  ///< features of the hidden state
};

/// Reads the sizes of an LSTM, GRU or RNN node from X [seq, batch, input] (layout 0) or
/// [batch, seq, input] (layout 1), W [dirs, gates·hidden, input] and R [dirs, gates·hidden,
/// hidden]; throws InvalidInput naming the node when they disagree with its attributes.
RecurrentShape recurrent_shape(const CostInput& c, double gates);

/// Cost of an LSTM (gates 4), GRU (gates 3) or RNN (gates 1) node. Forward MACs =
/// dirs·seq·batch·gates·hidden·(input + hidden); backward ≈ 2× (data and weight gradients).
OpCost recurrent_cost(const CostInput& c, double gates);

}  // namespace nnergy::graph
