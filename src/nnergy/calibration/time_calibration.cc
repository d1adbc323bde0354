#include "nnergy/calibration/time_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <thread>

#include "nnergy/calibration/least_squares.h"
#include "nnergy/core/error.h"

namespace nnergy::calibration {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using network::NetworkTimeMeasurement;
using network::PreparedTimes;
using network::TimedPart;

double input_copy_rate(const device::CalibratedParameters& p) {
  return p.input_copy_bytes_per_s.value_or(network::kNominalInputCopyBytesPerS);
}

// Source key → the host machines (host_of) of its measurements in `prepared`.
using HostsOfSource = std::map<std::string, std::set<std::string>>;
HostsOfSource hosts_of_sources(const PreparedTimes& prepared) {
  HostsOfSource hosts;
  for (const NetworkTimeMeasurement& m : prepared.measurements)
    hosts[source_key(m.source)].insert(host_of(m));
  return hosts;
}

// Every device of `catalog` with `parameters` applied, and the analytical time model on them.
class CalibratedPredictors {
 public:
  CalibratedPredictors(device::DeviceCatalog catalog, const device::CalibratedParameters& p,
                       const HostsOfSource& hosts_of_source)
      : parameters_(p), hosts_of_source_(hosts_of_source) {
    catalog.calibrate(p, "parameters being fitted");
    for (const device::DeviceSpec& d : catalog.devices()) devices_.emplace(d.id, d);
  }

  // Predicted time of measurement `i` of `prepared`, s.
  double predict(const PreparedTimes& prepared, std::size_t i) const {
    const NetworkTimeMeasurement& m = prepared.measurements[i];
    auto it = devices_.find(m.device_id);
    if (it == devices_.end()) throw InvalidInput("unknown device " + m.device_id);
    const double host_s = host_launch_s(m);
    const double factor = m.mode == graph::Mode::kTraining && m.eager_pytorch
                              ? parameters_.host_launch_training_factor
                              : 1.0;
    return prepared.networks[i].predict_s(it->second, host_s * factor,
                                          input_copy_rate(parameters_));
  }

 private:
  // Host time per kernel of `m`'s machine, s. A machine the fit did not see (a GPU left out
  // with it) takes the mean of its source's other machines (the same benchmark, usually the
  // same framework), else the default.
  double host_launch_s(const NetworkTimeMeasurement& m) const {
    const std::map<std::string, double>& fitted = parameters_.host_launch_by_host;
    if (auto h = fitted.find(host_of(m)); h != fitted.end()) return h->second;
    double sum = 0;
    int n = 0;
    for (const std::string& host : hosts_of_source_.at(source_key(m.source))) {
      if (auto h = fitted.find(host); h != fitted.end()) {
        sum += h->second;
        ++n;
      }
    }
    return n > 0 ? sum / n : parameters_.host_launch_s;
  }

  const device::CalibratedParameters& parameters_;
  std::map<std::string, device::DeviceSpec> devices_;
  const HostsOfSource& hosts_of_source_;  // of the measurements predicted
};

enum class Kind {
  kCompute,
  kTensor,
  kMemory,
  kOverhead,
  kWorkHalf,
  kReductionHalf,
  kWinograd,
  kGrouped,
  kBackward,
  kStatistics,
  kConvolutionScale,
  kHost,
  kHostTraining,
  kCopy
};

struct Parameter {
  Kind kind;
  std::string key;                // the generation or the host; empty for global parameters
  double prior = 0;               // in the fitted (logit or log) space
  double prior_sigma = 1;         // same space
  std::vector<std::size_t> rows;  // the rows whose prediction depends on it
};

struct Row {
  std::size_t index = 0;  // into the prepared measurements
  std::string generation;
  std::string host;  // host_of its measurement
  bool tensor = false;
};

// Least-squares problem: one residual ln(predicted/measured) per row, one prior residual per
// parameter.
class Problem {
 public:
  Problem(const PreparedTimes& prepared, const std::vector<std::size_t>& use,
          const device::DeviceCatalog& catalog, std::string corpus,
          const CalibrationOptions& options, const std::vector<BandwidthAnchor>& anchors,
          std::vector<std::string>& notes)
      : prepared_(prepared),
        catalog_(catalog),
        corpus_(std::move(corpus)),
        options_(options),
        hosts_of_source_(hosts_of_sources(prepared)) {
    std::vector<Row> candidates;
    std::map<std::string, std::size_t> per_generation;
    std::map<std::string, std::size_t> tensor_per_generation;
    std::size_t other_vendor = 0;
    for (std::size_t i : use) {
      const NetworkTimeMeasurement& m = prepared.measurements.at(i);
      const device::DeviceSpec& d = catalog.find(m.device_id);
      if (d.vendor != "nvidia") {
        ++other_vendor;
        continue;
      }
      Row r{i, d.generation(), host_of(m), d.has_matrix_units(m.precision)};
      ++per_generation[r.generation];
      if (r.tensor) ++tensor_per_generation[r.generation];
      candidates.push_back(r);
    }
    if (other_vendor > 0) {
      notes.push_back(fmt::format(
          "{} measurements of other vendors' GPUs left out (the model is calibrated for NVIDIA "
          "generations only)",
          other_vendor));
    }
    for (const auto& [g, n] : per_generation) {
      if (n < options.min_generation_records) {
        notes.push_back(fmt::format(
            "{}: {} measurements (fewer than {}), not fitted: its GPUs are transferred from the "
            "nearest generation",
            g, n, options.min_generation_records));
      } else if (tensor_per_generation[g] > 0 &&
                 tensor_per_generation[g] < options.min_tensor_records) {
        notes.push_back(fmt::format(
            "{}: {} tensor-core measurements (fewer than {}), left out: its tensor-core "
            "efficiency is transferred",
            g, tensor_per_generation[g], options.min_tensor_records));
      }
    }
    std::map<std::string, std::size_t> records_per_host;
    for (const Row& r : candidates) {
      if (per_generation[r.generation] < options.min_generation_records) continue;
      if (r.tensor && tensor_per_generation[r.generation] < options.min_tensor_records) continue;
      rows_.push_back(r);
      // Ops timed one by one have no host in their time: they say nothing of its launch cost.
      if (prepared.measurements[r.index].nodes.empty()) ++records_per_host[r.host];
      if (prepared.measurements[r.index].eager_pytorch) pytorch_hosts_.insert(r.host);
    }
    if (rows_.empty()) {
      throw InvalidInput(
          fmt::format("no generation has {} or more whole-network times to calibrate on",
                      options.min_generation_records));
    }

    // What the fit leaves fixed: per generation its records, devices and mean release year.
    skeleton_.corpus = corpus_;
    skeleton_.records = rows_.size();
    std::map<std::string, double> year_sums;
    for (const Row& r : rows_) {
      const std::string& id = prepared.measurements[r.index].device_id;
      device::GenerationEfficiency& g = skeleton_.generations[r.generation];
      ++g.records;
      if (std::find(g.devices.begin(), g.devices.end(), id) == g.devices.end()) {
        g.devices.push_back(id);
        year_sums[r.generation] += catalog.find(id).release_year;
      }
    }
    for (auto& [name, g] : skeleton_.generations)
      g.release_year = year_sums[name] / static_cast<double>(g.devices.size());

    // Parameters and the rows each one moves.
    all_rows_.resize(rows_.size());
    for (std::size_t k = 0; k < all_rows_.size(); ++k) all_rows_[k] = k;
    const std::vector<std::size_t>& all = all_rows_;
    std::map<std::string, std::vector<std::size_t>> generation_rows;
    std::map<std::string, std::vector<std::size_t>> tensor_rows;
    std::map<std::string, std::vector<std::size_t>> host_rows;  // per host machine
    std::vector<std::size_t> copy_rows;           // the rows whose time includes copying the inputs
    std::vector<std::size_t> host_training_rows;  // host rows of eager PyTorch training
    std::vector<std::size_t> vector_rows;         // Winograd runs on the CUDA cores only
    std::vector<std::size_t> training_rows;       // the rows with a backward pass
    for (std::size_t k = 0; k < rows_.size(); ++k) {
      const Row& r = rows_[k];
      generation_rows[r.generation].push_back(k);
      if (r.tensor) tensor_rows[r.generation].push_back(k);
      if (!r.tensor) vector_rows.push_back(k);
      const NetworkTimeMeasurement& m = prepared.measurements[r.index];
      if (m.mode == graph::Mode::kTraining && m.part != TimedPart::kForward)
        training_rows.push_back(k);
      if (prepared.measurements[r.index].nodes.empty() &&
          records_per_host[r.host] >= options.min_host_records) {
        host_rows[r.host].push_back(k);
        if (m.mode == graph::Mode::kTraining && m.eager_pytorch) host_training_rows.push_back(k);
      }
      if (m.input_copied && m.nodes.empty()) copy_rows.push_back(k);
    }
    // Per generation the copy-kernel bandwidths its GPUs reached, where measured.
    std::map<std::string, std::vector<const BandwidthAnchor*>> anchors_of;
    for (const BandwidthAnchor& a : anchors)
      anchors_of[catalog.find(a.device_id).generation()].push_back(&a);
    for (const auto& [g, rows] : generation_rows) {
      parameters_.push_back({Kind::kCompute, g, logit(0.6), 1.5, rows});
      if (const auto it = anchors_of.find(g); it != anchors_of.end()) {
        double sum = 0;
        std::set<std::string> gpus;
        for (const BandwidthAnchor* a : it->second) {
          sum += a->fraction;
          gpus.insert(a->device_id);
        }
        const double mean = sum / static_cast<double>(it->second.size());
        parameters_.push_back(
            {Kind::kMemory, g, logit(mean), options.bandwidth_anchor_sigma, rows});
        notes.push_back(
            fmt::format("{}: memory efficiency drawn towards {:.1f} %, the mean of {} copy-kernel "
                        "bandwidths measured on {}",
                        g, 100 * mean, it->second.size(),
                        join_with_commas(std::vector<std::string>(gpus.begin(), gpus.end()))));
      } else {
        parameters_.push_back({Kind::kMemory, g, logit(0.8), 1.5, rows});
      }
      if (tensor_rows.count(g))
        parameters_.push_back({Kind::kTensor, g, logit(0.4), 1.5, tensor_rows[g]});
    }
    parameters_.push_back({Kind::kOverhead, "", std::log(3e-6), 0.5, all});
    parameters_.push_back({Kind::kWorkHalf, "", std::log(1e6), 0.5, all});
    parameters_.push_back({Kind::kReductionHalf, "", std::log(8.0), 2, all});
    // Weak priors at "no effect": the measurements decide (Winograd F(2×2,3×3) does 2.25× fewer
    // multiplications; cuDNN picks it only for some layers).
    if (!vector_rows.empty())
      parameters_.push_back({Kind::kWinograd, "", std::log(1.0), 0.5, vector_rows});
    parameters_.push_back({Kind::kGrouped, "", std::log(1.0), 1, all});
    if (!training_rows.empty())
      parameters_.push_back({Kind::kBackward, "", std::log(1.0), 0.5, training_rows});
    // Normalizations computing statistics (a reduction, then the normalization) against
    // streaming kernels' bandwidth: a weak prior at "no effect".
    parameters_.push_back({Kind::kStatistics, "", std::log(1.0), 1, all});
    // cuDNN's convolutions against the kernel model's GEMMs (fitted on the engines' Linear
    // layers): a weak prior at "the same".
    std::vector<std::size_t> tensor_all;
    for (const auto& [g, rows] : tensor_rows)
      tensor_all.insert(tensor_all.end(), rows.begin(), rows.end());
    if (!tensor_all.empty())
      parameters_.push_back({Kind::kConvolutionScale, "", std::log(1.0), 0.5, tensor_all});
    for (const auto& [s, rows] : host_rows)
      parameters_.push_back({Kind::kHost, s, std::log(20e-6), 2, rows});
    if (!host_training_rows.empty())
      parameters_.push_back({Kind::kHostTraining, "", std::log(1.0), 0.5, host_training_rows});
    if (copy_rows.size() >= options.min_host_records)
      parameters_.push_back(
          {Kind::kCopy, "", std::log(network::kNominalInputCopyBytesPerS), 1, copy_rows});
    for (const auto& [host, n] : records_per_host) {
      if (n < options.min_host_records) {
        notes.push_back(fmt::format(
            "{}: {} measurements (fewer than {}): host launch time not fitted, predicted with "
            "the mean of its source's other hosts, else the default",
            host, n, options.min_host_records));
      }
    }
  }

  int inputs() const { return static_cast<int>(parameters_.size()); }
  int values() const { return static_cast<int>(rows_.size() + parameters_.size()); }
  std::size_t rows() const { return rows_.size(); }

  VectorXd start() const {
    VectorXd x(inputs());
    for (std::size_t j = 0; j < parameters_.size(); ++j)
      x[static_cast<Eigen::Index>(j)] = parameters_[j].prior;
    return x;
  }

  device::CalibratedParameters parameters(const VectorXd& x) const {
    device::CalibratedParameters p = skeleton_;
    for (std::size_t j = 0; j < parameters_.size(); ++j) {
      const Parameter& q = parameters_[j];
      const double t = x[static_cast<Eigen::Index>(j)];
      switch (q.kind) {
        case Kind::kCompute:
          p.generations[q.key].compute = logistic(t);
          break;
        case Kind::kTensor:
          p.generations[q.key].tensor = logistic(t);
          break;
        case Kind::kMemory:
          p.generations[q.key].memory = logistic(t);
          break;
        case Kind::kOverhead:
          p.kernel_overhead_s = std::exp(t);
          break;
        case Kind::kWorkHalf:
          p.work_half_flop_per_sm = std::exp(t);
          break;
        case Kind::kReductionHalf:
          p.reduction_half = std::exp(t);
          break;
        case Kind::kWinograd:
          p.winograd_speedup = std::exp(t);
          break;
        case Kind::kGrouped:
          p.grouped_conv_efficiency = std::exp(t);
          break;
        case Kind::kBackward:
          p.backward_matrix_efficiency = std::exp(t);
          break;
        case Kind::kStatistics:
          p.statistics_memory_efficiency = std::exp(t);
          break;
        case Kind::kConvolutionScale:
          p.convolution_time_scale = std::exp(t);
          break;
        case Kind::kHost:
          p.host_launch_by_host[q.key] = std::exp(t);
          break;
        case Kind::kHostTraining:
          p.host_launch_training_factor = std::exp(t);
          break;
        case Kind::kCopy:
          p.input_copy_bytes_per_s = std::exp(t);
          break;
      }
    }
    const auto preferred =
        std::find_if(options_.host_launch_hosts.begin(), options_.host_launch_hosts.end(),
                     [&](const std::string& host) { return p.host_launch_by_host.contains(host); });
    if (preferred != options_.host_launch_hosts.end()) {
      p.host_launch_s = p.host_launch_by_host.at(*preferred);
      p.host_launch_source = *preferred;
    } else if (!p.host_launch_by_host.empty()) {
      // predict models eager PyTorch: the mean of its hosts, else of all.
      bool any_pytorch = false;
      for (const auto& [host, v] : p.host_launch_by_host)
        any_pytorch |= pytorch_hosts_.contains(host);
      double sum = 0;
      std::vector<std::string> hosts;
      for (const auto& [host, v] : p.host_launch_by_host) {
        if (any_pytorch && !pytorch_hosts_.contains(host)) continue;
        sum += v;
        hosts.push_back(host);
      }
      p.host_launch_s = sum / static_cast<double>(hosts.size());
      p.host_launch_source = "mean of " + join_with_commas(hosts);
    }
    return p;
  }

  // ln(predicted/measured) of `rows` (indices into rows_) at x, into `out` at the same indices.
  void log_ratios(const VectorXd& x, const std::vector<std::size_t>& rows, VectorXd& out) const {
    const device::CalibratedParameters p = parameters(x);
    const CalibratedPredictors predictors(catalog_, p, hosts_of_source_);
    for (std::size_t k : rows) {
      const std::size_t i = rows_[k].index;
      out[static_cast<Eigen::Index>(k)] =
          std::log(predictors.predict(prepared_, i) / prepared_.measurements[i].measured_s);
    }
  }

  void residuals(const VectorXd& x, VectorXd& f) const {
    f.resize(values());
    log_ratios(x, all_rows_, f);
    for (std::size_t j = 0; j < parameters_.size(); ++j) {
      const auto jj = static_cast<Eigen::Index>(j);
      f[static_cast<Eigen::Index>(rows_.size()) + jj] =
          options_.prior_weight * (x[jj] - parameters_[j].prior) / parameters_[j].prior_sigma;
    }
  }

  // Forward differences, each parameter moving only the rows that depend on it.
  void jacobian(const VectorXd& x, MatrixXd& J) const {
    J.setZero(values(), inputs());
    VectorXd base(values());
    residuals(x, base);
    constexpr double kStep = 1e-4;
    VectorXd moved(static_cast<Eigen::Index>(rows_.size()));
    for (std::size_t j = 0; j < parameters_.size(); ++j) {
      const auto jj = static_cast<Eigen::Index>(j);
      VectorXd xj = x;
      xj[jj] += kStep;
      log_ratios(xj, parameters_[j].rows, moved);
      for (std::size_t k : parameters_[j].rows) {
        const auto kk = static_cast<Eigen::Index>(k);
        J(kk, jj) = (moved[kk] - base[kk]) / kStep;
      }
      J(static_cast<Eigen::Index>(rows_.size()) + jj, jj) =
          options_.prior_weight / parameters_[j].prior_sigma;
    }
  }

 private:
  const PreparedTimes& prepared_;
  const device::DeviceCatalog& catalog_;
  std::string corpus_;
  CalibrationOptions options_;
  std::vector<Row> rows_;
  std::vector<std::size_t> all_rows_;  // 0 … rows_.size() − 1
  std::vector<Parameter> parameters_;
  std::set<std::string> pytorch_hosts_;    // hosts of eager PyTorch runs
  HostsOfSource hosts_of_source_;          // of all the prepared measurements
  device::CalibratedParameters skeleton_;  // counts, devices and years; no fitted value
};

struct Functor : Eigen::DenseFunctor<double> {
  explicit Functor(const Problem& p) : DenseFunctor(p.inputs(), p.values()), problem(p) {}
  int operator()(const VectorXd& x, VectorXd& f) const {
    problem.residuals(x, f);
    return 0;
  }
  int df(const VectorXd& x, MatrixXd& J) const {
    problem.jacobian(x, J);
    return 0;
  }
  const Problem& problem;
};

// Runs `task(k)` for k in [0, n) on up to `threads` threads.
void parallel_for(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& task) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, n));
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(n);
  auto worker = [&] {
    for (std::size_t k = next++; k < n; k = next++) {
      try {
        task(k);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

double rms(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v * v;
  return std::sqrt(sum / static_cast<double>(values.size()));
}

}  // namespace

std::string source_key(const std::string& source) { return source.substr(0, source.find(" (")); }

std::string host_of(const NetworkTimeMeasurement& m) {
  return m.host.empty() ? source_key(m.source) + " on " + m.device_id : m.host;
}

TimeFit fit_times(const PreparedTimes& prepared, const std::vector<std::size_t>& use,
                  const device::DeviceCatalog& catalog, const std::string& corpus,
                  const CalibrationOptions& options, const std::vector<BandwidthAnchor>& anchors) {
  TimeFit fit;
  const Problem problem(prepared, use, catalog, corpus, options, anchors, fit.notes);
  Functor functor(problem);
  Eigen::LevenbergMarquardt<Functor> lm(functor);
  lm.setMaxfev(400);
  VectorXd x = problem.start();
  const auto status = lm.minimize(x);
  fit.iterations = static_cast<int>(lm.iterations());
  if (status == Eigen::LevenbergMarquardtSpace::TooManyFunctionEvaluation) {
    fit.notes.push_back(
        fmt::format("the fit stopped after {} iterations without converging", fit.iterations));
  }
  fit.parameters = problem.parameters(x);
  fit.fitted_records = problem.rows();
  VectorXd f;
  problem.residuals(x, f);
  fit.rms_log_error = std::sqrt(f.head(static_cast<Eigen::Index>(problem.rows())).squaredNorm() /
                                static_cast<double>(problem.rows()));
  return fit;
}

std::vector<network::EvaluatedTime> predict_with(const PreparedTimes& prepared,
                                                 const std::vector<std::size_t>& use,
                                                 const device::DeviceCatalog& catalog,
                                                 const device::CalibratedParameters& parameters) {
  const HostsOfSource hosts = hosts_of_sources(prepared);
  const CalibratedPredictors predictors(catalog, parameters, hosts);
  std::vector<network::EvaluatedTime> out;
  out.reserve(use.size());
  for (std::size_t i : use)
    out.push_back({prepared.measurements[i], predictors.predict(prepared, i)});
  return out;
}

std::vector<network::EvaluatedTime> cross_validate(
    const PreparedTimes& prepared, const device::DeviceCatalog& catalog,
    const std::function<std::string(const NetworkTimeMeasurement&)>& group,
    const CalibrationOptions& options, unsigned threads,
    const std::vector<BandwidthAnchor>& anchors) {
  std::map<std::string, std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < prepared.measurements.size(); ++i)
    members[group(prepared.measurements[i])].push_back(i);
  std::vector<std::string> keys;
  for (const auto& [key, rows] : members) keys.push_back(key);
  std::vector<std::vector<network::EvaluatedTime>> folds(keys.size());
  parallel_for(keys.size(), threads, [&](std::size_t k) {
    std::vector<std::size_t> train;
    for (const auto& [key, rows] : members) {
      if (key != keys[k]) train.insert(train.end(), rows.begin(), rows.end());
    }
    // The held-out GPUs' own microbenchmarks leave with them.
    std::set<std::string> held_out_gpus;
    for (std::size_t i : members[keys[k]]) held_out_gpus.insert(prepared.measurements[i].device_id);
    std::vector<BandwidthAnchor> kept;
    std::copy_if(anchors.begin(), anchors.end(), std::back_inserter(kept),
                 [&](const BandwidthAnchor& a) { return !held_out_gpus.contains(a.device_id); });
    const TimeFit fit = fit_times(prepared, train, catalog, "", options, kept);
    folds[k] = predict_with(prepared, members[keys[k]], catalog, fit.parameters);
  });
  std::vector<network::EvaluatedTime> out;
  for (auto& fold : folds) out.insert(out.end(), fold.begin(), fold.end());
  return out;
}

Calibration calibrate(const PreparedTimes& prepared, const device::DeviceCatalog& catalog,
                      const std::string& corpus, const CalibrationOptions& options,
                      unsigned threads, const std::vector<BandwidthAnchor>& anchors) {
  Calibration c;
  std::vector<std::size_t> all(prepared.measurements.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  c.fit = fit_times(prepared, all, catalog, corpus, options, anchors);
  c.in_sample = predict_with(prepared, all, catalog, c.fit.parameters);
  c.leave_one_gpu_out = cross_validate(
      prepared, catalog, [](const NetworkTimeMeasurement& m) { return m.device_id; }, options,
      threads, anchors);
  c.leave_one_source_out = cross_validate(
      prepared, catalog, [](const NetworkTimeMeasurement& m) { return source_key(m.source); },
      options, threads, anchors);

  // Uncertainty from the leave-one-GPU-out residuals: a GPU whose generation kept enough
  // measurements without it tells how well a calibrated generation predicts a new GPU of it;
  // one alone in its generation tells how well a transfer does.
  std::map<std::string, std::size_t> per_device;
  std::map<std::string, std::size_t> per_generation;
  std::map<std::string, std::string> generation_of;
  for (const NetworkTimeMeasurement& m : prepared.measurements) {
    const std::string g = catalog.find(m.device_id).generation();
    ++per_device[m.device_id];
    ++per_generation[g];
    generation_of[m.device_id] = g;
  }
  std::map<std::string, std::vector<double>> generation_residuals;
  std::vector<double> transferred_residuals;
  for (const network::EvaluatedTime& t : c.leave_one_gpu_out) {
    const std::string& id = t.measurement.device_id;
    const std::string& g = generation_of[id];
    const double r = std::log(t.ratio());
    generation_residuals[g].push_back(r);
    // Measurements of the other GPUs of its generation: too few, and its fold transferred it.
    if (per_generation[g] - per_device[id] < options.min_generation_records)
      transferred_residuals.push_back(r);
  }
  for (auto& [name, g] : c.fit.parameters.generations)
    g.time_log_sigma = rms(generation_residuals[name]);
  c.fit.parameters.transferred_time_log_sigma = rms(transferred_residuals);
  return c;
}

}  // namespace nnergy::calibration
