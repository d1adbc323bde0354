#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/graph/network.h"
#include "nnergy/graph/op_catalog.h"
#include "nnergy/graph/whitelist.h"
#include "nnergy/network/runtime.h"
#include "nnergy/predict/op_predictor.h"

namespace nnergy::network {

/// What to predict.
struct PredictionSettings {
  graph::Mode mode = graph::Mode::kInference;
  device::OperatingPoint point;  ///< precision and core clock
  std::int64_t batch = 1;        ///< samples per iteration (for per-sample figures)
  graph::Optimizer optimizer = graph::Optimizer::kSgdMomentum;  ///< training mode only
  graph::Whitelist whitelist = graph::Whitelist::standard();
  /// Host CPU time to dispatch and launch one kernel in an eager framework, s. The iteration
  /// time is then the critical path of the host issuing kernels in order and the GPU running
  /// them (a GPU that runs faster than the host launches waits: small batches are host-bound).
  /// 0: the host is never the bottleneck (T = Σ GPU time).
  double host_launch_s = 0;
  /// fp32 runs only: convolutions in TF32 (cuDNN's default in PyTorch on GPUs with TF32 tensor
  /// cores, torch.backends.cudnn.allow_tf32 = True) while matrix products stay in fp32
  /// (torch.backends.cuda.matmul.allow_tf32 = False). false: strict fp32 everywhere.
  bool tf32_convolutions = false;
};

/// Prediction for one node of the network (or the optimizer step), per iteration.
struct LayerPrediction {
  std::optional<std::size_t> node_index;  ///< empty for the optimizer step
  std::string name;                       ///< the node's name
  std::string module_path;                ///< module hierarchy, e.g. "layer1/0/conv1"
  std::string op_type;
  graph::OpClass op_class = graph::OpClass::kUnknown;
  graph::Shape output_shape;
  std::size_t unique_op = 0;  ///< index of its unique operation (seed 000 §4.1)
  double mac_count = 0;       ///< multiply-accumulates of the passes predicted
  double flop_count = 0;      ///< flops of the passes predicted
  double byte_count = 0;      ///< bytes moved (lower bound) of the passes predicted
  std::int64_t parameter_count = 0;
  double time_s = 0;
  double forward_time_s = 0;
  double forward_kernel_count = 0;   ///< kernel launches of the forward pass
  double backward_kernel_count = 0;  ///< kernel launches of the backward pass (training)
  double energy_j = 0;
  double power_w = 0;
  bool whitelisted = true;  ///< false: outside the compute whitelist (still predicted)
  bool known_op = true;     ///< false: memory-bound fallback
  bool compute_bound = false;
  bool power_capped = false;
  /// 1σ uncertainty of one occurrence's time, power and energy (analytical::OpEstimate); 0 =
  /// unknown.
  double time_std_s = 0;
  double power_std_w = 0;
  double energy_std_j = 0;
};

/// Network totals per iteration (seed 004 Eqs. 3–5).
///
/// Uncertainties (1σ, 0 = unknown) propagate the per-op uncertainties to first order under one
/// assumption: the error of an op's prediction is the same for every occurrence of that op
/// (fully correlated: the same model sees the same features), and the errors of different unique
/// ops are independent. Hence σ_T² = Σ_u (n_u·σ_t,u)² over unique ops u occurring n_u times, the
/// same for σ_E, and σ_EDP² = T²σ_E² + E²σ_T² + 2·E·T·Σ_u n_u²·P_u·σ_t,u² (E = t·P: an op's
/// energy error follows its time error). Ops whose predictor gives no uncertainty (the
/// analytical model, the optimizer step) add nothing. A predictor's network-level error
/// (OpPredictor::network_relative_time_std, r) adds (r·T)² to σ_T², (r·E)² to σ_E² and
/// (2r·EDP)² to σ_EDP²; its network-level power error (network_relative_power_std, q) adds
/// (q·E)² to σ_E² and (q·EDP)² to σ_EDP².
struct NetworkTotals {
  double time_s = 0;         ///< T = Σ count·t, or the host/GPU critical path when it is longer
  double gpu_time_s = 0;     ///< Σ count·t: the time the GPU is busy
  double host_launch_s = 0;  ///< host time issuing every kernel (launches × host_launch_s)
  double kernel_count = 0;   ///< kernels launched per iteration
  double energy_j = 0;       ///< E = Σ count·t·P
  double power_w = 0;        ///< P_avg = E/T
  double edp_j_s = 0;        ///< energy-delay product E·T
  double energy_per_sample_j = 0;
  double mac_count = 0;
  double flop_count = 0;
  double byte_count = 0;
  std::int64_t parameter_count = 0;
  double time_std_s = 0;    ///< σ_T
  double energy_std_j = 0;  ///< σ_E
  double edp_std_j_s = 0;   ///< σ_EDP
};

/// The whole prediction of a network at one operating point.
struct NetworkPrediction {
  std::string predictor_name;
  std::string predictor_description;
  PredictionSettings settings;
  std::vector<LayerPrediction> layers;  ///< network order; the optimizer step last
  NetworkTotals totals;
  std::size_t unique_operations = 0;
  std::size_t shape_nodes = 0;           ///< shape arithmetic nodes, zero cost, not in `layers`
  std::vector<std::string> unknown_ops;  ///< operator types predicted with the fallback
  bool optimizer_step_included = false;
};

/// Operator costs of a network, computed once and reused across operating points.
class CostedNetwork {
 public:
  /// The costs of every node as `runtime` runs them: Runtime::kCompiled fuses pointwise chains
  /// (fuse_compiled); eager and CUDA graphs run the nodes' own kernels.
  explicit CostedNetwork(const graph::Network& network, Runtime runtime = Runtime::kEager);

  const graph::Network& network() const { return network_; }
  const std::vector<graph::OpCost>& costs() const { return costs_; }
  /// Unique operation index of each node (shape nodes included, each their own group).
  const std::vector<std::size_t>& unique_of_node() const { return unique_of_node_; }
  std::size_t unique_count() const { return unique_count_; }
  /// What compiled fusion did (all zero for the other runtimes).
  const CompiledFusion& fusion() const { return fusion_; }

 private:
  const graph::Network& network_;
  CompiledFusion fusion_;
  std::vector<graph::OpCost> costs_;
  std::vector<std::size_t> unique_of_node_;
  std::size_t unique_count_ = 0;
};

/// Kernels issued back to back, and the GPU time they take together.
struct KernelRun {
  double kernel_count = 0;  ///< kernel launches (a fraction counts as one)
  double time_s = 0;        ///< GPU time of all of them, s
};

/// Iteration time of a host issuing `runs` in order, `launch_s` seconds per kernel, and a GPU
/// running each kernel once it is issued and the previous one is done (a run's time spread
/// evenly over its kernels): the critical path of host and GPU, s. `launch_s` 0: Σ time.
double critical_path_s(const std::vector<KernelRun>& runs, double launch_s);

/// Work of one optimizer step over the network's parameters (their element type as stored).
graph::PassCost optimizer_step(const graph::Network& network, graph::Optimizer optimizer);

/// Operator type of the pseudo-layer that holds the GPU's idle wait for the host (see
/// PredictionSettings::host_launch_s).
inline constexpr const char* kHostWaitOp = "HostLaunchWait";

/// Appends to `result` the time the GPU waits for the host to launch kernels (the critical path
/// of host and GPU minus the GPU's busy time), at `idle_w` watts, as a pseudo-layer named
/// "host.launch_wait"; nothing when the host keeps ahead or settings.host_launch_s is 0.
void add_host_wait(NetworkPrediction& result, double idle_w);

/// Predicts every unique operation once with `predictor` (one batch: OpPredictor::predict of
/// the first occurrence of each) and aggregates by occurrence; the optimizer step (training) is
/// an elementwise pass of the analytical model on the predictor's device. Layer energies sum to
/// the total.
NetworkPrediction predict_network(const CostedNetwork& network,
                                  const predict::OpPredictor& predictor,
                                  const PredictionSettings& settings);

}  // namespace nnergy::network
