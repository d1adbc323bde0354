#include "nnergy/calibration/serve_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "nnergy/calibration/least_squares.h"
#include "nnergy/core/error.h"
#include "nnergy/serve/deployment.h"

namespace nnergy::calibration {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// Weak priors: the catalog's defaults, σ in the parameter's own (logit or log) scale.
constexpr double kGemmPrior = 0.6;
constexpr double kMemoryPrior = 0.8;
constexpr double kPciePrior = 0.5;
constexpr double kPriorSigmaEfficiency = 1.0;
constexpr double kPriorSigmaEnergy = 0.5;
constexpr double kPriorSigmaHost = 1.5;
// Finite-difference step of the Jacobian, in the parameters' scale.
constexpr double kStep = 1e-3;

// One fitted parameter.
struct Parameter {
  enum class Kind {
    kGemm,
    kGemm8,
    kMemory,
    kEnergy,
    kKernelPower,
    kMemoryEnergy,
    kPcie,
    kHostStep,
    kHostSequence,
    kHostKernel
  } kind;
  std::string key;  // a generation or an engine id
  double prior = 0;
  double sigma = 1;
};

// The runs a fit sees and what it fits.
class Problem {
 public:
  Problem(const ServeFitInputs& inputs, std::vector<const PublishedServingRun*> runs)
      : inputs_(inputs), runs_(std::move(runs)) {
    std::set<std::string> generations;
    std::set<std::string> eight_bit;  // generations with 8-bit runs
    std::set<std::string> families;   // memory families with energy measured
    std::set<std::string> engines;
    bool pcie = false;
    for (const PublishedServingRun* r : runs_) {
      const device::DeviceSpec& d = inputs.devices->find(r->device_id, "gpu");
      generations.insert(d.generation());
      if (r->precision == llm::WeightFormat::kFp8 || r->precision == llm::WeightFormat::kInt8)
        eight_bit.insert(d.generation());
      if (r->measured.energy_per_output_token_j &&
          !serve::ServeCalibration::memory_family(d).empty())
        families.insert(serve::ServeCalibration::memory_family(d));
      pcie = pcie || r->tp * r->pp > std::max(1, d.interconnect.scale_up_domain_gpus);
      engines.insert(r->engine_id);
    }
    for (const std::string& f : families)
      parameters_.push_back({Parameter::Kind::kMemoryEnergy, f, 0.0, kPriorSigmaEnergy});
    if (pcie)
      parameters_.push_back({Parameter::Kind::kPcie, "", logit(kPciePrior), kPriorSigmaEfficiency});
    for (const std::string& g : generations) {
      parameters_.push_back({Parameter::Kind::kGemm, g, logit(kGemmPrior), kPriorSigmaEfficiency});
      // 8-bit matrix products: the kernel model's when it costs them.
      if (eight_bit.count(g) > 0 && inputs.kernels == nullptr)
        parameters_.push_back(
            {Parameter::Kind::kGemm8, g, logit(kGemmPrior), kPriorSigmaEfficiency});
      parameters_.push_back(
          {Parameter::Kind::kMemory, g, logit(kMemoryPrior), kPriorSigmaEfficiency});
      parameters_.push_back({Parameter::Kind::kEnergy, g, 0.0, kPriorSigmaEnergy});
      if (inputs.kernels != nullptr)
        parameters_.push_back({Parameter::Kind::kKernelPower, g, 0.0, kPriorSigmaEnergy});
    }
    for (const std::string& e : engines) {
      const serve::EngineProfile& profile = inputs.engines->find(e, "engine");
      parameters_.push_back({Parameter::Kind::kHostStep, e,
                             std::log(std::max(profile.host_per_step_s, 1e-5)), kPriorSigmaHost});
      if (profile.continuous_batching) {
        parameters_.push_back({Parameter::Kind::kHostSequence, e,
                               std::log(std::max(profile.host_per_sequence_s, 2e-6)),
                               kPriorSigmaHost});
      }
      if (profile.cuda_graphs == serve::CudaGraphs::kNone) {
        parameters_.push_back({Parameter::Kind::kHostKernel, e,
                               std::log(std::max(profile.host_per_kernel_s, 1e-7)),
                               kPriorSigmaHost});
      }
    }
    for (const PublishedServingRun* r : runs_) {
      offsets_.push_back(residual_count_);
      residual_count_ += static_cast<int>(r->scored.size());
    }
  }

  int parameter_count() const { return static_cast<int>(parameters_.size()); }
  int residual_count() const { return residual_count_ + parameter_count(); }
  VectorXd initial() const {
    VectorXd x(parameter_count());
    for (int j = 0; j < parameter_count(); ++j) x[j] = parameters_[j].prior;
    return x;
  }

  serve::ServeCalibration calibration(const VectorXd& x) const {
    serve::ServeCalibration c;
    for (int j = 0; j < parameter_count(); ++j) {
      const Parameter& p = parameters_[j];
      switch (p.kind) {
        case Parameter::Kind::kGemm:
          c.generations[p.key].gemm_efficiency = logistic(x[j]);
          break;
        case Parameter::Kind::kGemm8:
          c.generations[p.key].gemm_efficiency_8bit = logistic(x[j]);
          break;
        case Parameter::Kind::kMemory:
          c.generations[p.key].memory_efficiency = logistic(x[j]);
          break;
        case Parameter::Kind::kMemoryEnergy:
          c.memory_energy_scale[p.key] = std::exp(x[j]);
          break;
        case Parameter::Kind::kPcie:
          c.pcie_efficiency = logistic(x[j]);
          break;
        case Parameter::Kind::kEnergy:
          c.generations[p.key].tensor_energy_scale = std::exp(x[j]);
          break;
        case Parameter::Kind::kKernelPower:
          c.generations[p.key].kernel_power_scale = std::exp(x[j]);
          break;
        case Parameter::Kind::kHostStep:
          c.engines[p.key].host_per_step_s = std::exp(x[j]);
          break;
        case Parameter::Kind::kHostSequence:
          c.engines[p.key].host_per_sequence_s = std::exp(x[j]);
          break;
        case Parameter::Kind::kHostKernel:
          c.engines[p.key].host_per_kernel_s = std::exp(x[j]);
          break;
      }
    }
    for (const PublishedServingRun* r : runs_) {
      ++c.generations[inputs_.devices->find(r->device_id, "gpu").generation()].measurements;
      ++c.engines[r->engine_id].measurements;
    }
    return c;
  }

  // Residuals: log(predicted/measured) of every scored quantity of every run (0 where a run
  // cannot be predicted), then the priors' (x − prior)/σ. Only the runs `affected` says are
  // recomputed; the others keep `base`'s values.
  void residuals(const VectorXd& x, VectorXd& f, const std::vector<bool>* affected = nullptr,
                 const VectorXd* base = nullptr) const {
    f.resize(residual_count());
    const serve::ServeCalibration c = calibration(x);
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const int at = offsets_[i];
      const PublishedServingRun& run = *runs_[i];
      if (affected != nullptr && !(*affected)[i]) {
        for (std::size_t k = 0; k < run.scored.size(); ++k)
          f[at + static_cast<int>(k)] = (*base)[at + static_cast<int>(k)];
        continue;
      }
      const ServingPrediction p = predict_one(c, run);
      for (std::size_t k = 0; k < run.scored.size(); ++k) {
        const auto predicted = figure(p.predicted, run.scored[k]);
        const auto measured = figure(run.measured, run.scored[k]);
        f[at + static_cast<int>(k)] = p.error.empty() && predicted && measured && *predicted > 0
                                          ? std::log(*predicted / *measured)
                                          : 0.0;
      }
    }
    for (int j = 0; j < parameter_count(); ++j) {
      f[residual_count_ + j] = (x[j] - parameters_[j].prior) / parameters_[j].sigma;
    }
  }

  // Which runs parameter j changes.
  std::vector<bool> affected_by(int j) const {
    const Parameter& p = parameters_[j];
    std::vector<bool> out(runs_.size(), false);
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const device::DeviceSpec& d = inputs_.devices->find(runs_[i]->device_id, "gpu");
      switch (p.kind) {
        case Parameter::Kind::kGemm:
        case Parameter::Kind::kGemm8:
        case Parameter::Kind::kMemory:
        case Parameter::Kind::kEnergy:
        case Parameter::Kind::kKernelPower:
          out[i] = d.generation() == p.key;
          break;
        case Parameter::Kind::kMemoryEnergy:
          out[i] = serve::ServeCalibration::memory_family(d) == p.key;
          break;
        case Parameter::Kind::kPcie:
          out[i] = runs_[i]->tp * runs_[i]->pp > std::max(1, d.interconnect.scale_up_domain_gpus);
          break;
        default:
          out[i] = runs_[i]->engine_id == p.key;
      }
    }
    return out;
  }

  ServingPrediction predict_one(const serve::ServeCalibration& c,
                                const PublishedServingRun& run) const {
    return predict_with(inputs_, c, run);
  }

  static ServingPrediction predict_with(const ServeFitInputs& inputs,
                                        const serve::ServeCalibration& c,
                                        const PublishedServingRun& run) {
    ServingPrediction out;
    out.run = run;
    try {
      const llm::Architecture& model =
          inputs.models->find(run.model_id, "model").model->architecture;
      const device::DeviceSpec device = c.apply(inputs.devices->find(run.device_id, "gpu"));
      const serve::EngineProfile engine = c.apply(inputs.engines->find(run.engine_id, "engine"));
      serve::DeploymentRequest dr;
      dr.model = &model;
      dr.device = &device;
      dr.catalog = inputs.devices;
      dr.engine = &engine;
      dr.kernels = inputs.kernels;
      dr.kernel_power = c.kernel_power(device);
      dr.weights = run.precision;
      dr.tp = run.tp;
      dr.pp = run.pp;
      dr.gpus = run.gpus;
      dr.sequence_tokens = run.input_tokens + run.output_tokens;
      const serve::Deployment d = serve::settle(dr);
      serve::RunSettings s;
      s.workload = run.workload;
      s.input_tokens = run.input_tokens;
      s.output_tokens = run.output_tokens;
      if (run.batch) {
        // A batch the source ran but nnergy's memory estimate does not hold: the largest it
        // holds (the source's engine fitted it, so the estimate is the conservative one).
        const bool staggered =
            run.workload == serve::Workload::kServing && engine.continuous_batching;
        const double held = staggered ? run.input_tokens + run.output_tokens / 2
                                      : run.input_tokens + run.output_tokens;
        const double fits = std::floor(d.sequences_that_fit(held));
        s.batch = static_cast<int>(std::max(1.0, std::min(std::round(*run.batch), fits)));
      }
      const serve::ServeResult r = serve::run(d, s);
      out.predicted.tokens_per_s = r.output_tokens_per_s;
      out.predicted.time_per_output_token_s =
          run.tpot_is_decode_step ? r.decode_step_s : r.time_per_output_token_s;
      out.predicted.energy_per_output_token_j = r.energy_per_output_token_j;
      out.predicted.avg_power_w = r.avg_power_w;
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    return out;
  }

 private:
  const ServeFitInputs& inputs_;
  std::vector<const PublishedServingRun*> runs_;
  std::vector<Parameter> parameters_;
  std::vector<int> offsets_;
  int residual_count_ = 0;
};

// Eigen's Levenberg–Marquardt on a Problem, with a Jacobian that recomputes, per parameter,
// only the runs it changes.
struct Functor : Eigen::DenseFunctor<double> {
  explicit Functor(const Problem& p)
      : Eigen::DenseFunctor<double>(p.parameter_count(), p.residual_count()), problem(p) {}
  int operator()(const VectorXd& x, VectorXd& f) const {
    problem.residuals(x, f);
    return 0;
  }
  int df(const VectorXd& x, MatrixXd& jacobian) const {
    VectorXd base;
    problem.residuals(x, base);
    jacobian.resize(problem.residual_count(), problem.parameter_count());
    for (int j = 0; j < problem.parameter_count(); ++j) {
      VectorXd moved = x;
      moved[j] += kStep;
      const std::vector<bool> affected = problem.affected_by(j);
      VectorXd f;
      problem.residuals(moved, f, &affected, &base);
      jacobian.col(j) = (f - base) / kStep;
    }
    return 0;
  }
  const Problem& problem;
};

serve::ServeCalibration fit(const ServeFitInputs& inputs,
                            const std::vector<const PublishedServingRun*>& runs, int* iterations) {
  if (runs.empty()) return {};
  const Problem problem(inputs, runs);
  Functor functor(problem);
  Eigen::LevenbergMarquardt<Functor> lm(functor);
  lm.setMaxfev(60);
  lm.setXtol(1e-5);
  lm.setFtol(1e-6);
  VectorXd x = problem.initial();
  lm.minimize(x);
  if (iterations != nullptr) *iterations = static_cast<int>(lm.iterations());
  return problem.calibration(x);
}

std::vector<ServingPrediction> predict_subset(const ServeFitInputs& inputs,
                                              const serve::ServeCalibration& c,
                                              const std::vector<const PublishedServingRun*>& runs) {
  std::vector<ServingPrediction> out;
  for (const PublishedServingRun* r : runs) out.push_back(Problem::predict_with(inputs, c, *r));
  return out;
}

ServingScore score_group(const std::string& group, ServingQuantity q,
                         const std::vector<const ServingPrediction*>& members) {
  ServingScore s;
  s.group = group;
  s.quantity = q;
  std::vector<double> ratios;
  for (const ServingPrediction* p : members) {
    if (!p->error.empty()) continue;
    const auto predicted = figure(p->predicted, q);
    const auto measured = figure(p->run.measured, q);
    if (!predicted || !measured) continue;
    if (std::find(p->run.scored.begin(), p->run.scored.end(), q) == p->run.scored.end()) continue;
    ratios.push_back(*predicted / *measured);
  }
  s.count = static_cast<int>(ratios.size());
  if (ratios.empty()) return s;
  double abs_sum = 0;
  int within = 0;
  for (double r : ratios) {
    abs_sum += std::abs(r - 1);
    within += std::abs(r - 1) <= 0.2 ? 1 : 0;
  }
  s.mape = abs_sum / static_cast<double>(ratios.size());
  s.within_20 = static_cast<double>(within) / static_cast<double>(ratios.size());
  std::sort(ratios.begin(), ratios.end());
  const std::size_t n = ratios.size();
  s.median_ratio = n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
  return s;
}

}  // namespace

std::vector<ServingPrediction> predict_runs(const ServeFitInputs& inputs,
                                            const serve::ServeCalibration& calibration) {
  std::vector<const PublishedServingRun*> all;
  for (const PublishedServingRun& r : inputs.data->runs) all.push_back(&r);
  return predict_subset(inputs, calibration, all);
}

std::vector<ServingScore> score(const std::vector<ServingPrediction>& predictions) {
  std::vector<ServingScore> out;
  std::map<std::string, std::vector<const ServingPrediction*>> groups;
  for (const ServingPrediction& p : predictions) {
    groups["all"].push_back(&p);
    groups["source " + p.run.source].push_back(&p);
    groups["gpu " + p.run.device_id].push_back(&p);
  }
  for (const auto& [group, members] : groups) {
    for (int k = 0; k < kServingQuantities; ++k) {
      ServingScore s = score_group(group, static_cast<ServingQuantity>(k), members);
      if (s.count > 0) out.push_back(s);
    }
  }
  return out;
}

ServeFitReport fit_serving(const ServeFitInputs& inputs) {
  ServeFitReport report;
  std::vector<const PublishedServingRun*> all;
  for (const PublishedServingRun& r : inputs.data->runs) all.push_back(&r);
  report.runs = all.size();
  report.skipped = inputs.data->skipped.size();
  std::set<std::string> gpus, sources, models;
  for (const PublishedServingRun* r : all) {
    gpus.insert(r->device_id);
    sources.insert(r->source);
    models.insert(r->model_id);
  }
  const std::size_t total =
      1 + (inputs.cross_validate ? gpus.size() + sources.size() + models.size() : 0);
  std::size_t done = 0;
  const auto progress = [&](const std::string&) {
    if (inputs.progress) inputs.progress(done, total);
    ++done;
  };

  ServingValidation uncalibrated{
      "uncalibrated (documented defaults)", predict_subset(inputs, {}, all), {}};
  uncalibrated.scores = score(uncalibrated.predictions);
  report.validations.push_back(std::move(uncalibrated));

  progress("fit on every run");
  report.fitted = fit(inputs, all, &report.iterations);
  ServingValidation in_sample{"in-sample", predict_subset(inputs, report.fitted, all), {}};
  in_sample.scores = score(in_sample.predictions);
  report.validations.push_back(std::move(in_sample));
  if (!inputs.cross_validate) {
    progress("done");
    return report;
  }

  // Held out by one key: each value of `key` in turn.
  const auto held_out = [&](const std::string& scheme,
                            const std::function<std::string(const PublishedServingRun&)>& key) {
    std::set<std::string> values;
    for (const PublishedServingRun* r : all) values.insert(key(*r));
    ServingValidation v;
    v.scheme = scheme;
    for (const std::string& value : values) {
      progress(fmt::format("{}: {}", scheme, value));
      std::vector<const PublishedServingRun*> train;
      std::vector<const PublishedServingRun*> test;
      for (const PublishedServingRun* r : all) (key(*r) == value ? test : train).push_back(r);
      const serve::ServeCalibration c = fit(inputs, train, nullptr);
      for (ServingPrediction& p : predict_subset(inputs, c, test))
        v.predictions.push_back(std::move(p));
    }
    v.scores = score(v.predictions);
    report.validations.push_back(std::move(v));
  };
  held_out("leave-one-gpu-out", [](const PublishedServingRun& r) { return r.device_id; });
  held_out("leave-one-source-out", [](const PublishedServingRun& r) { return r.source; });
  held_out("leave-one-model-out", [](const PublishedServingRun& r) { return r.model_id; });
  progress("done");
  return report;
}

}  // namespace nnergy::calibration
