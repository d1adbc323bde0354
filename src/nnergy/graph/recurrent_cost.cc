#include "nnergy/graph/recurrent_cost.h"

#include <string>

#include "nnergy/core/error.h"
#include "nnergy/graph/data_type.h"

namespace nnergy::graph {

namespace {

[[noreturn]] void fail(const CostInput& c, const std::string& what) {
  throw InvalidInput("node '" + c.node.name + "' (" + c.node.op_type + "): " + what);
}

double dim(const TensorInfo& t, std::size_t axis) { return static_cast<double>(t.shape[axis]); }

// Pointwise flops per hidden unit, time step and direction, besides the sums of the two
// projections and the biases (counted per gate element by the caller).
//   LSTM: sigmoid for i, f, o (4 flops each, as the Sigmoid entry), tanh for g (1),
//         c' = f·c + i·g (3), h' = o·tanh(c') (2): 18.
//   GRU:  sigmoid for z, r (8), r ⊙ (recurrent term) (1), tanh (1), h' = (1−z)·n + z·h (4): 14.
//   RNN:  the activation (tanh, 1).
double activation_flops(double gates) {
  if (gates == 4) return 18;
  if (gates == 3) return 14;
  return 1;
}

// Backward pointwise flops per hidden unit, time step and direction (the fused gate-gradient
// kernel). LSTM: tanh'(c) and dc (7), four gate derivatives times their incoming gradient
// (4·3), the products with the saved gate values (4), dc_prev = dc·f (1): 24. GRU: two sigmoid
// and one tanh derivative (9), the products for dz, dr, dn and dh_prev (11): 20. RNN: (1−h²)·dh: 3.
double activation_backward_flops(double gates) {
  if (gates == 4) return 24;
  if (gates == 3) return 20;
  return 3;
}

// Slot 3 holds B [dirs, 2·gates·hidden] when present; an absent B shifts sequence_lens or the
// initial state into slot 3, which never has that shape.
bool has_bias(const CostInput& c, const RecurrentShape& s) {
  if (c.in.size() < 4) return false;
  const Shape& b = c.in[3]->shape;
  return b.size() == 2 && static_cast<double>(b[1]) == 2 * s.gates * s.hidden_size;
}

}  // namespace

RecurrentShape recurrent_shape(const CostInput& c, double gates) {
  if (c.in.size() < 3) fail(c, "expected inputs X, W and R");
  const TensorInfo& x = *c.in[0];
  const TensorInfo& w = *c.in[1];
  const TensorInfo& r = *c.in[2];
  if (x.shape.size() != 3 || w.shape.size() != 3 || r.shape.size() != 3) {
    fail(c, "expected X, W and R of rank 3, found " + to_string(x.shape) + ", " +
                to_string(w.shape) + ", " + to_string(r.shape));
  }
  RecurrentShape s;
  s.gates = gates;
  const std::string direction = c.node.string_attribute("direction", "forward");
  if (direction == "bidirectional") {
    s.directions = 2;
  } else if (direction != "forward" && direction != "reverse") {
    fail(c, "direction '" + direction + "'; expected forward, reverse or bidirectional");
  }
  const std::int64_t layout = c.node.int_attribute("layout", 0);
  if (layout != 0 && layout != 1) fail(c, "layout " + std::to_string(layout) + "; expected 0 or 1");
  s.sequence = dim(x, layout == 0 ? 0 : 1);
  s.batch = dim(x, layout == 0 ? 1 : 0);
  s.input_size = dim(x, 2);
  s.hidden_size = dim(r, 2);
  const std::int64_t declared = c.node.int_attribute("hidden_size", r.shape[2]);
  if (static_cast<double>(declared) != s.hidden_size) {
    fail(c, "hidden_size " + std::to_string(declared) + " but R is " + to_string(r.shape));
  }
  if (dim(w, 0) != s.directions || dim(r, 0) != s.directions) {
    fail(c, "direction '" + direction + "' needs " +
                std::to_string(static_cast<int>(s.directions)) +
                " direction(s) in W and R, found " + to_string(w.shape) + " and " +
                to_string(r.shape));
  }
  if (dim(w, 1) != gates * s.hidden_size || dim(r, 1) != gates * s.hidden_size ||
      dim(w, 2) != s.input_size) {
    fail(c, "expected W [dirs, " + std::to_string(static_cast<int>(gates)) +
                "·hidden, input] and R [dirs, " + std::to_string(static_cast<int>(gates)) +
                "·hidden, hidden] for X " + to_string(x.shape) + ", found " + to_string(w.shape) +
                " and " + to_string(r.shape));
  }
  return s;
}

// Kernels as eager PyTorch launches them through cuDNN (cudnnRNNForward): per direction one
// GEMM projects the input of the whole sequence onto the gates, then every time step runs one
// recurrent GEMM and one fused pointwise kernel. A GRU with linear_before_reset = 0 (the ONNX
// default; PyTorch's GRU is linear_before_reset = 1) must apply the reset gate before its
// recurrent product, which splits each step into two GEMMs and two pointwise kernels; the MACs
// are the same. The backward pass (cudnnRNNBackwardData + BackwardWeights, as PALEO counts it)
// walks the steps in reverse with one gate-gradient kernel and one recurrent GEMM each, then
// one GEMM each for dX, dW and dR and a reduction for dB, per direction; dX, dW, dR and dB are
// skipped when their input needs no gradient.
OpCost recurrent_cost(const CostInput& c, double gates) {
  const RecurrentShape s = recurrent_shape(c, gates);
  const bool bias = has_bias(c, s);
  const double steps = s.directions * s.sequence;  // time steps of all directions
  const double gate_elements = steps * s.batch * gates * s.hidden_size;
  const double hidden_elements = steps * s.batch * s.hidden_size;
  const double input_macs = gate_elements * s.input_size;       // X·Wᵀ for every step
  const double recurrent_macs = gate_elements * s.hidden_size;  // h·Rᵀ for every step
  const bool split_steps = gates == 3 && c.node.int_attribute("linear_before_reset", 0) == 0;
  const double kernels_per_step = split_steps ? 4 : 2;
  const double element_bytes = static_cast<double>(bytes_per_element(c.in[0]->dtype));
  // Gate pre-activations: the projection's and each step's recurrent GEMM output, written once
  // and read once by the pointwise kernel.
  const double workspace_bytes = 4 * gate_elements * element_bytes;

  const double sums_per_gate_element = bias ? 3 : 1;  // x-projection + h-projection (+ 2 biases)
  const double pointwise_flops =
      gate_elements * sums_per_gate_element + hidden_elements * activation_flops(gates);
  const double macs = input_macs + recurrent_macs;
  OpCost cost;
  cost.op_class = OpClass::kMatrix;
  cost.known = true;
  cost.inference =
      pass(macs, 2 * macs + pointwise_flops, c.all_in_bytes() + c.out_bytes() + workspace_bytes,
           s.directions + steps * kernels_per_step);
  // Training saves the gate activations (cuDNN's reserve space) for the backward pass.
  cost.training_forward = cost.inference;
  cost.training_forward.byte_count += gate_elements * element_bytes;

  if (!c.any_grad()) return cost;
  PassCost backward = pass(
      recurrent_macs, 2 * recurrent_macs + hidden_elements * activation_backward_flops(gates),
      2 * c.out_bytes() + 3 * gate_elements * element_bytes + c.all_in_bytes() + c.grad_in_bytes(),
      steps * kernels_per_step);
  if (c.needs_grad(0)) backward += pass(input_macs, 2 * input_macs, 0, s.directions);  // dX
  if (c.needs_grad(1)) backward += pass(input_macs, 2 * input_macs, 0, s.directions);  // dW
  if (c.needs_grad(2)) backward += pass(recurrent_macs, 2 * recurrent_macs, 0, s.directions);
  if (bias && c.needs_grad(3)) backward += pass(0, gate_elements, 0, s.directions);  // dB
  cost.backward = backward;
  return cost;
}

}  // namespace nnergy::graph
