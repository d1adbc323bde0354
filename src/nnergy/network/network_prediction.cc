#include "nnergy/network/network_prediction.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "nnergy/analytical/pass_model.h"
#include "nnergy/graph/op_signature.h"

namespace nnergy::network {

CostedNetwork::CostedNetwork(const graph::Network& network, Runtime runtime) : network_(network) {
  const auto& nodes = network.nodes();
  costs_.reserve(nodes.size());
  unique_of_node_.reserve(nodes.size());
  for (const graph::Node& node : nodes) costs_.push_back(graph::op_cost(network, node));
  if (runtime == Runtime::kCompiled) fusion_ = fuse_compiled(network, costs_);
  std::unordered_map<std::string, std::size_t> unique;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    std::string key = graph::op_signature(network, nodes[n]);
    if (!fusion_.tags.empty() && !fusion_.tags[n].empty()) key += "|" + fusion_.tags[n];
    auto [it, inserted] = unique.emplace(std::move(key), unique.size());
    unique_of_node_.push_back(it->second);
  }
  unique_count_ = unique.size();
}

double critical_path_s(const std::vector<KernelRun>& runs, double launch_s) {
  double host = 0;
  double gpu = 0;
  for (const KernelRun& r : runs) {
    if (r.kernel_count <= 0 || launch_s <= 0) {
      gpu += r.time_s;
      continue;
    }
    const auto whole = static_cast<long>(std::ceil(r.kernel_count));
    for (long k = 0; k < whole; ++k) {
      host += launch_s;
      gpu = std::max(gpu, host) + r.time_s / static_cast<double>(whole);
    }
  }
  return std::max(host, gpu);
}

graph::PassCost optimizer_step(const graph::Network& network, graph::Optimizer optimizer) {
  double bytes_per_parameter = 4;
  for (const graph::TensorInfo& t : network.tensors()) {
    if (t.role == graph::TensorRole::kParameter) {
      bytes_per_parameter = static_cast<double>(graph::bytes_per_element(t.dtype));
      break;
    }
  }
  return graph::optimizer_step_cost(optimizer, static_cast<double>(network.parameter_count()),
                                    network.parameter_tensor_count(), bytes_per_parameter);
}

namespace {

// The kernels of the layers in issue order: forward in network order, then the backward in
// reverse order and the optimizer step.
std::vector<KernelRun> issue_order(const std::vector<LayerPrediction>& layers) {
  std::vector<KernelRun> runs;
  for (const LayerPrediction& l : layers) {
    if (l.node_index) runs.push_back({l.forward_kernel_count, l.forward_time_s});
  }
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    if (it->node_index)
      runs.push_back({it->backward_kernel_count, it->time_s - it->forward_time_s});
  }
  for (const LayerPrediction& l : layers) {
    if (!l.node_index) runs.push_back({l.backward_kernel_count, l.time_s});
  }
  return runs;
}

}  // namespace

void add_host_wait(NetworkPrediction& result, double idle_w) {
  const double launch_s = result.settings.host_launch_s;
  if (launch_s <= 0) return;
  double gpu_s = 0;
  for (const LayerPrediction& l : result.layers) gpu_s += l.time_s;
  const double wait_s = critical_path_s(issue_order(result.layers), launch_s) - gpu_s;
  if (wait_s <= 0) return;
  LayerPrediction layer;
  layer.name = "host.launch_wait";
  layer.module_path = "host";
  layer.op_type = kHostWaitOp;
  layer.op_class = graph::OpClass::kView;
  for (const LayerPrediction& l : result.layers)
    layer.unique_op = std::max(layer.unique_op, l.unique_op + 1);
  layer.time_s = wait_s;
  layer.power_w = idle_w;
  layer.energy_j = wait_s * idle_w;
  result.layers.push_back(std::move(layer));
}

NetworkPrediction predict_network(const CostedNetwork& costed,
                                  const predict::OpPredictor& predictor,
                                  const PredictionSettings& settings) {
  const graph::Network& network = costed.network();
  const bool training = settings.mode == graph::Mode::kTraining;
  NetworkPrediction result;
  result.predictor_name = predictor.name();
  result.predictor_description = predictor.description();
  result.settings = settings;

  // Each unique operation once, at its first occurrence, in one batch.
  const auto& nodes = network.nodes();
  std::vector<predict::OpQuery> queries;
  std::vector<std::size_t> query_of_unique(costed.unique_count(), costed.unique_count());
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const graph::OpCost& cost = costed.costs()[n];
    const std::size_t unique = costed.unique_of_node()[n];
    if (cost.op_class == graph::OpClass::kShape || query_of_unique[unique] != costed.unique_count())
      continue;
    query_of_unique[unique] = queries.size();
    device::OperatingPoint point = settings.point;
    if (settings.tf32_convolutions && point.precision == device::Precision::kFp32 &&
        (nodes[n].op_type == "Conv" || nodes[n].op_type == "ConvTranspose")) {
      point.precision = device::Precision::kTf32;
    }
    queries.push_back({network, nodes[n], cost, settings.mode, point});
  }
  const std::vector<analytical::OpEstimate> estimates = predictor.predict(queries);

  std::vector<double> occurrences(costed.unique_count(), 0.0);
  std::set<std::string> unknown;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const graph::Node& node = nodes[n];
    const graph::OpCost& cost = costed.costs()[n];
    if (cost.op_class == graph::OpClass::kShape) {
      ++result.shape_nodes;
      continue;
    }
    const std::size_t unique = costed.unique_of_node()[n];
    const analytical::OpEstimate& estimate = estimates.at(query_of_unique[unique]);
    occurrences[unique] += 1;
    LayerPrediction layer;
    layer.node_index = n;
    layer.name = node.name;
    layer.module_path = node.module_path;
    layer.op_type = node.op_type;
    layer.op_class = cost.op_class;
    if (!node.outputs.empty()) layer.output_shape = network.tensor(node.outputs.front()).shape;
    layer.unique_op = unique;
    const graph::PassCost work = training ? cost.training_forward + cost.backward : cost.inference;
    layer.mac_count = work.mac_count;
    layer.flop_count = work.flop_count;
    layer.byte_count = work.byte_count;
    layer.parameter_count = cost.parameter_count;
    layer.time_s = estimate.time_s;
    layer.forward_time_s = estimate.forward_time_s;
    layer.forward_kernel_count =
        training ? cost.training_forward.kernel_count : cost.inference.kernel_count;
    layer.backward_kernel_count = training ? cost.backward.kernel_count : 0;
    layer.energy_j = estimate.energy_j;
    layer.power_w = estimate.power_w;
    layer.whitelisted = settings.whitelist.contains(node.op_type);
    layer.known_op = cost.known;
    layer.compute_bound = estimate.compute_bound;
    layer.power_capped = estimate.power_capped;
    layer.time_std_s = estimate.time_std_s;
    layer.power_std_w = estimate.power_std_w;
    layer.energy_std_j = estimate.energy_std_j;
    if (!cost.known) unknown.insert(node.op_type);
    result.layers.push_back(std::move(layer));
  }
  result.unique_operations = queries.size();
  result.unknown_ops.assign(unknown.begin(), unknown.end());

  if (training && network.parameter_count() > 0) {
    const graph::PassCost step = optimizer_step(network, settings.optimizer);
    const analytical::OpEstimate estimate = analytical::predict_pass(
        predictor.device(), step, graph::OpClass::kElementwise, settings.point);
    LayerPrediction layer;
    layer.name = "optimizer.step";
    layer.module_path = "optimizer";
    layer.op_type = "OptimizerStep(" + std::string(graph::to_string(settings.optimizer)) + ")";
    layer.op_class = graph::OpClass::kElementwise;
    layer.output_shape = {network.parameter_count()};
    layer.unique_op = costed.unique_count();
    layer.flop_count = step.flop_count;
    layer.byte_count = step.byte_count;
    layer.parameter_count = network.parameter_count();
    layer.time_s = estimate.time_s;
    layer.forward_time_s = 0;
    layer.backward_kernel_count = step.kernel_count;  // runs after the backward pass
    layer.energy_j = estimate.energy_j;
    layer.power_w = estimate.power_w;
    layer.compute_bound = estimate.compute_bound;
    layer.power_capped = estimate.power_capped;
    result.layers.push_back(std::move(layer));
    result.optimizer_step_included = true;
  }

  add_host_wait(result, predictor.device().idle_w);

  NetworkTotals& totals = result.totals;
  for (const LayerPrediction& layer : result.layers) {
    totals.time_s += layer.time_s;
    if (layer.op_type != kHostWaitOp) totals.gpu_time_s += layer.time_s;
    totals.kernel_count += layer.forward_kernel_count + layer.backward_kernel_count;
    totals.energy_j += layer.energy_j;
    totals.mac_count += layer.mac_count;
    totals.flop_count += layer.flop_count;
    totals.byte_count += layer.byte_count;
  }
  totals.host_launch_s = totals.kernel_count * settings.host_launch_s;
  totals.parameter_count = network.parameter_count();
  totals.power_w = totals.time_s > 0 ? totals.energy_j / totals.time_s : 0;
  totals.edp_j_s = totals.energy_j * totals.time_s;
  // Uncertainty propagation; the assumptions are stated at NetworkTotals.
  double time_variance = 0;
  double energy_variance = 0;
  double time_energy_covariance = 0;
  for (std::size_t u = 0; u < query_of_unique.size(); ++u) {
    if (occurrences[u] == 0) continue;
    const analytical::OpEstimate& e = estimates[query_of_unique[u]];
    const double n = occurrences[u];
    time_variance += n * n * e.time_std_s * e.time_std_s;
    energy_variance += n * n * e.energy_std_j * e.energy_std_j;
    time_energy_covariance += n * n * e.power_w * e.time_std_s * e.time_std_s;
  }
  double edp_variance =
      std::max(0.0, totals.time_s * totals.time_s * energy_variance +
                        totals.energy_j * totals.energy_j * time_variance +
                        2 * totals.energy_j * totals.time_s * time_energy_covariance);
  // A network-level error shared by all ops moves T and E together (E = P·T), EDP twice over.
  const double shared = predictor.network_relative_time_std();
  time_variance += std::pow(shared * totals.time_s, 2);
  energy_variance += std::pow(shared * totals.energy_j, 2);
  edp_variance += std::pow(2 * shared * totals.edp_j_s, 2);
  // A network-level power error moves E and EDP, not T.
  const double power = predictor.network_relative_power_std();
  energy_variance += std::pow(power * totals.energy_j, 2);
  edp_variance += std::pow(power * totals.edp_j_s, 2);
  totals.time_std_s = std::sqrt(time_variance);
  totals.energy_std_j = std::sqrt(energy_variance);
  totals.edp_std_j_s = std::sqrt(edp_variance);
  totals.energy_per_sample_j =
      settings.batch > 0 ? totals.energy_j / static_cast<double>(settings.batch) : 0;
  return result;
}

}  // namespace nnergy::network
