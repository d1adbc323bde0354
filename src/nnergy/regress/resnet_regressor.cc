#include "nnergy/regress/resnet_regressor.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/regress/regressor_checks.h"
#include "nnergy/regress/torch_regressors.h"

namespace nnergy::regress {
namespace {

const std::string kRegressorName = "resnet";
/// Predictions stay within [min y / k, max y · k] of the training targets.
constexpr double kPredictionRangeFactor = 1e3;
/// Box-Cox λ grid (appendix D): [−2, 2] in steps of 0.01.
constexpr double kBoxCoxLambdaLimit = 2;
constexpr double kBoxCoxLambdaStep = 0.01;
/// The automatic target scale (Eq. 8) maps the smallest training target to this value. Then
/// log(1 + s·t) ≈ log(s·t) for every row and its range is narrow (4.6 to 11.5 for three
/// decades of t), so MAPLE, divided by log(1 + s·t), weighs relative errors of small and large
/// ops about alike; a scale near 1/min t would weigh the smallest ops ten times more.
constexpr double kAutomaticScaledMinimum = 100;
/// Inputs are clipped to ±this many training standard deviations, far beyond any value seen, so
/// that a wild input (Box-Cox with λ = 2 of a value 10⁶ times the largest) stays finite in
/// float arithmetic.
constexpr double kMaxZScore = 1e4;
/// Rows per forward pass at prediction, bounding the activations' memory (rows × W × columns).
constexpr std::int64_t kPredictionBatchRows = 256;

/// One residual block of Fig. 1: y = ReLU(F(x) + x), F = Conv1d → ReLU → Conv1d (seed 002 Eq. 1).
struct ResidualBlockImpl : torch::nn::Module {
  explicit ResidualBlockImpl(std::int64_t channels)
      : first(register_module(
            "first",
            torch::nn::Conv1d(torch::nn::Conv1dOptions(channels, channels, 3).padding(1)))),
        second(register_module(
            "second",
            torch::nn::Conv1d(torch::nn::Conv1dOptions(channels, channels, 3).padding(1)))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    return torch::relu(second(torch::relu(first(x))) + x);
  }

  torch::nn::Conv1d first;
  torch::nn::Conv1d second;
};
TORCH_MODULE(ResidualBlock);

/// ResPerfNet (seed 002 Fig. 1): 3 × (head Conv1d + 2 residual blocks), 3 FC, dropout, FC(1).
/// The dropout is applied by the caller between hidden() and output, so that prediction can
/// draw its own Monte-Carlo masks.
struct ResPerfNetImpl : torch::nn::Module {
  ResPerfNetImpl(std::int64_t columns, std::int64_t width) {
    std::int64_t in_channels = 1;
    for (int stage = 0; stage < 3; ++stage) {
      const std::int64_t channels = width >> stage;  // W, W/2, W/4
      heads.push_back(register_module(
          "head" + std::to_string(stage + 1),
          torch::nn::Conv1d(torch::nn::Conv1dOptions(in_channels, channels, 3).padding(1))));
      for (int b = 0; b < 2; ++b) {
        blocks.push_back(
            register_module("block" + std::to_string(2 * stage + b + 1), ResidualBlock(channels)));
      }
      in_channels = channels;
    }
    fc1 = register_module("fc1", torch::nn::Linear(columns * in_channels, width));
    fc2 = register_module("fc2", torch::nn::Linear(width, width));
    fc3 = register_module("fc3", torch::nn::Linear(width, width));
    output = register_module("output", torch::nn::Linear(width, 1));
  }

  /// (rows, 1, columns) → (rows, W): everything before the dropout layer.
  torch::Tensor hidden(torch::Tensor x) {
    for (int stage = 0; stage < 3; ++stage) {
      x = torch::relu(heads[static_cast<std::size_t>(stage)](x));
      x = blocks[static_cast<std::size_t>(2 * stage)](x);
      x = blocks[static_cast<std::size_t>(2 * stage + 1)](x);
    }
    x = torch::relu(fc1(x.flatten(1)));
    x = torch::relu(fc2(x));
    return torch::relu(fc3(x));
  }

  std::vector<torch::nn::Conv1d> heads;
  std::vector<ResidualBlock> blocks;
  torch::nn::Linear fc1{nullptr};
  torch::nn::Linear fc2{nullptr};
  torch::nn::Linear fc3{nullptr};
  torch::nn::Linear output{nullptr};
};
TORCH_MODULE(ResPerfNet);

/// He initialisation for ReLU networks (He et al. 2015, by the authors of the residual network):
/// weights U(±√(6/fan_in)), biases 0. LibTorch's default, U(±1/√fan_in), shrinks the signal
/// through the 15 convolutions so much that short trainings sometimes never leave a constant
/// output. Drawn from `generator` instead of the global one: two fits in one process then
/// neither share nor disturb random state.
void initialise(ResPerfNetImpl& net, at::Generator& generator) {
  torch::NoGradGuard no_grad;
  for (const auto& module : net.modules(/*include_self=*/false)) {
    torch::Tensor weight;
    torch::Tensor bias;
    if (const auto* conv = module->as<torch::nn::Conv1d>()) {
      weight = conv->weight;
      bias = conv->bias;
    } else if (const auto* linear = module->as<torch::nn::Linear>()) {
      weight = linear->weight;
      bias = linear->bias;
    } else {
      continue;
    }
    const double bound = std::sqrt(6.0 / static_cast<double>(weight[0].numel()));
    weight.uniform_(-bound, bound, generator);
    bias.zero_();
  }
}

/// Intra-op threads for the lifetime of the guard; LibTorch's setting is process-wide.
class ThreadCountGuard {
 public:
  explicit ThreadCountGuard(int threads) : previous_(torch::get_num_threads()) {
    torch::set_num_threads(threads);
  }
  ~ThreadCountGuard() { torch::set_num_threads(previous_); }
  ThreadCountGuard(const ThreadCountGuard&) = delete;
  ThreadCountGuard& operator=(const ThreadCountGuard&) = delete;

 private:
  int previous_;
};

[[noreturn]] void bad_setting(const std::string& key, const std::string& expected,
                              const nlohmann::json& found) {
  throw InvalidInput(kRegressorName + ": setting '" + key + "' must be " + expected + ", found " +
                     core::describe_json_value(found));
}

int integer_setting(const nlohmann::json& extra, const std::string& key, int fallback, int low,
                    int high) {
  const auto it = extra.find(key);
  if (it == extra.end()) {
    return fallback;
  }
  if (!it->is_number_integer() || it->get<std::int64_t>() < low || it->get<std::int64_t>() > high) {
    bad_setting(key, "an integer in [" + std::to_string(low) + ", " + std::to_string(high) + "]",
                *it);
  }
  return it->get<int>();
}

/// A finite number in [low, high] (or (low, high] when `open_low`).
double number_setting(const nlohmann::json& extra, const std::string& key, double fallback,
                      double low, double high, bool open_low) {
  const auto it = extra.find(key);
  if (it == extra.end()) {
    return fallback;
  }
  const bool ok = it->is_number() && std::isfinite(it->get<double>()) &&
                  (open_low ? it->get<double>() > low : it->get<double>() >= low) &&
                  it->get<double>() <= high;
  if (!ok) {
    bad_setting(key,
                std::string("a number in ") + (open_low ? "(" : "[") + std::to_string(low) + ", " +
                    std::to_string(high) + "]",
                *it);
  }
  return it->get<double>();
}

ResnetRegressor::Settings parse_settings(const nlohmann::json& extra,
                                         const ResnetRegressor::Settings& defaults) {
  check_setting_names(kRegressorName, extra,
                      {"target", "epochs", "batch_size", "learning_rate", "lr_decay_period_epochs",
                       "lr_decay_factor", "l2", "target_scale", "width", "dropout", "mc_samples"});
  constexpr double kMaxNumber = std::numeric_limits<double>::max();
  ResnetRegressor::Settings s;
  s.target = extra.contains("target") ? target_setting(kRegressorName, extra) : defaults.target;
  s.epochs = integer_setting(extra, "epochs", defaults.epochs, 1, 1'000'000);
  s.batch_size = integer_setting(extra, "batch_size", defaults.batch_size, 1, 1'000'000);
  s.learning_rate = number_setting(extra, "learning_rate", defaults.learning_rate, 0, 10, true);
  s.lr_decay_period_epochs = integer_setting(extra, "lr_decay_period_epochs",
                                             defaults.lr_decay_period_epochs, 1, 1'000'000);
  s.lr_decay_factor =
      number_setting(extra, "lr_decay_factor", defaults.lr_decay_factor, 0, 1, true);
  s.l2 = number_setting(extra, "l2", defaults.l2, 0, kMaxNumber, false);
  s.target_scale =
      number_setting(extra, "target_scale", defaults.target_scale, 0, kMaxNumber, false);
  s.width = integer_setting(extra, "width", defaults.width, 4, 4096);
  if (s.width % 4 != 0) {
    bad_setting("width", "a multiple of 4 (the stages use W, W/2 and W/4 filters)", s.width);
  }
  s.dropout = number_setting(extra, "dropout", defaults.dropout, 0, 0.99, false);
  s.mc_samples = integer_setting(extra, "mc_samples", defaults.mc_samples, 2, 100'000);
  return s;
}

nlohmann::json settings_to_json(const ResnetRegressor::Settings& s) {
  return {{"target", s.target},
          {"epochs", s.epochs},
          {"batch_size", s.batch_size},
          {"learning_rate", s.learning_rate},
          {"lr_decay_period_epochs", s.lr_decay_period_epochs},
          {"lr_decay_factor", s.lr_decay_factor},
          {"l2", s.l2},
          {"target_scale", s.target_scale},
          {"width", s.width},
          {"dropout", s.dropout},
          {"mc_samples", s.mc_samples}};
}

/// Box-Cox transform (seed 002 Eq. 10, written there with a typo as x^(λ−1)/λ):
/// (x^λ − 1)/λ, or ln x for λ = 0.
double box_cox(double x, double lambda) {
  const double log_x = std::log(x);
  return std::abs(lambda) < 1e-12 ? log_x : std::expm1(lambda * log_x) / lambda;
}

double population_variance(const std::vector<double>& values) {
  double mean = 0;
  for (const double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double sum = 0;
  for (const double v : values) sum += (v - mean) * (v - mean);
  return sum / static_cast<double>(values.size());
}

/// Fits the transform of one column (appendices C and D). Box-Cox λ by maximum likelihood: the
/// profile log-likelihood of normal transformed values is ℓ(λ) = −(n/2)·ln σ²(λ) + (λ − 1)·Σ ln xᵢ.
/// Dividing the values by their geometric mean first makes Σ ln xᵢ = 0 and keeps x^λ in range;
/// it changes the transformed column only by an affine map, which the z-score removes.
/// Written by hand: no Debian C++ library offers it (scipy.stats.boxcox is Python), and a grid
/// search of a one-parameter likelihood is a few lines.
ResnetRegressor::ColumnTransform fit_column(std::vector<double> values) {
  ResnetRegressor::ColumnTransform t;
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  t.minimum = *low;
  if (*low == *high) {
    return t;  // constant: z = 0
  }
  if (*low > 0) {
    double log_sum = 0;
    for (const double v : values) log_sum += std::log(v);
    t.scale = std::exp(log_sum / static_cast<double>(values.size()));
    for (double& v : values) v /= t.scale;
    double best = -std::numeric_limits<double>::infinity();
    std::vector<double> transformed(values.size());
    const int steps = static_cast<int>(std::lround(2 * kBoxCoxLambdaLimit / kBoxCoxLambdaStep));
    for (int k = 0; k <= steps; ++k) {
      const double lambda = -kBoxCoxLambdaLimit + k * kBoxCoxLambdaStep;
      for (std::size_t i = 0; i < values.size(); ++i) transformed[i] = box_cox(values[i], lambda);
      const double variance = population_variance(transformed);
      const double likelihood = variance > 0 && std::isfinite(variance)
                                    ? -0.5 * static_cast<double>(values.size()) * std::log(variance)
                                    : -std::numeric_limits<double>::infinity();
      if (likelihood > best) {
        best = likelihood;
        t.lambda = lambda;
      }
    }
    if (std::isfinite(best)) {
      t.box_cox = true;
      for (double& v : values) v = box_cox(v, t.lambda);
    } else {
      for (double& v : values) v *= t.scale;  // no usable λ: plain z-score
      t.scale = 1;
    }
  }
  double mean = 0;
  for (const double v : values) mean += v;
  t.mean = mean / static_cast<double>(values.size());
  t.stddev = std::sqrt(population_variance(values));
  if (!(t.stddev > 0) || !std::isfinite(t.stddev)) {
    t.stddev = 0;
  }
  return t;
}

double apply(const ResnetRegressor::ColumnTransform& t, double x) {
  if (t.stddev == 0) {
    return 0;
  }
  if (t.box_cox) {
    x = box_cox(std::max(x, t.minimum) / t.scale, t.lambda);
  }
  return std::clamp((x - t.mean) / t.stddev, -kMaxZScore, kMaxZScore);
}

/// The columns that vary in training, which form the network's input sequence: a constant
/// column would be 0 for every row and only lengthen the sequence.
std::vector<std::size_t> sequence_columns(
    const std::vector<ResnetRegressor::ColumnTransform>& transforms) {
  std::vector<std::size_t> columns;
  for (std::size_t c = 0; c < transforms.size(); ++c) {
    if (transforms[c].stddev > 0) {
      columns.push_back(c);
    }
  }
  return columns;
}

/// The transformed rows of `x` as a (rows, 1, sequence length) float tensor.
torch::Tensor input_tensor(const features::FeatureMatrix& x,
                           const std::vector<ResnetRegressor::ColumnTransform>& transforms) {
  const std::vector<std::size_t> columns = sequence_columns(transforms);
  const auto rows = static_cast<std::int64_t>(x.rows());
  const auto length = static_cast<std::int64_t>(columns.size());
  torch::Tensor out = torch::empty({rows, 1, length}, torch::kFloat32);
  float* data = out.data_ptr<float>();
  for (std::size_t i = 0; i < x.rows(); ++i) {
    const auto row = x.row(i);
    for (std::size_t k = 0; k < columns.size(); ++k) {
      data[i * columns.size() + k] =
          static_cast<float>(apply(transforms[columns[k]], row[columns[k]]));
    }
  }
  return out;
}

nlohmann::json tensor_to_json(const torch::Tensor& tensor) {
  const torch::Tensor flat = tensor.detach().to(torch::kFloat32).contiguous().view(-1);
  const float* data = flat.data_ptr<float>();
  std::vector<double> values(data, data + flat.numel());
  return {{"shape", tensor.sizes().vec()}, {"values", values}};
}

}  // namespace

struct ResnetRegressor::Network {
  ResPerfNet net;
};

ResnetRegressor::ResnetRegressor() : ResnetRegressor(Settings{}) {}

ResnetRegressor::ResnetRegressor(Settings defaults)
    : defaults_(std::move(defaults)), settings_(defaults_) {}

ResnetRegressor::~ResnetRegressor() = default;

std::string ResnetRegressor::description() const {
  return "ResPerfNet residual 1-D CNN: width " + std::to_string(settings_.width) + ", " +
         std::to_string(settings_.epochs) + " epochs of Adam on MAPLE + L2, Box-Cox + " +
         "z-score inputs, MC-dropout uncertainty";
}

void ResnetRegressor::fit(const features::FeatureMatrix& x, std::span<const double> y,
                          const FitOptions& options) {
  const Settings s = parse_settings(options.extra, defaults_);
  check_training_data(kRegressorName, x, y, 2);
  if (x.columns() == 0) {
    throw InvalidInput(kRegressorName + ": the feature matrix has no columns");
  }
  const std::size_t n = x.rows();

  std::vector<ColumnTransform> transforms;
  std::vector<double> column(n);
  for (std::size_t c = 0; c < x.columns(); ++c) {
    for (std::size_t i = 0; i < n; ++i) column[i] = x.row(i)[c];
    transforms.push_back(fit_column(column));
  }
  if (sequence_columns(transforms).empty()) {
    throw InvalidInput(kRegressorName + ": every feature column is constant in training");
  }
  const auto [low, high] = std::minmax_element(y.begin(), y.end());
  const double scale = s.target_scale > 0 ? s.target_scale : kAutomaticScaledMinimum / *low;

  ThreadCountGuard threads(options.threads > 0 ? options.threads : 1);
  at::Generator generator = at::detail::createCPUGenerator(options.seed);
  const torch::Tensor inputs = input_tensor(x, transforms);
  std::vector<float> scaled(n);
  for (std::size_t i = 0; i < n; ++i) {
    scaled[i] = static_cast<float>(std::log1p(scale * y[i]));  // log(1 + t), Eqs. 7–8
  }
  const torch::Tensor targets =
      torch::from_blob(scaled.data(), {static_cast<std::int64_t>(n)}, torch::kFloat32).clone();

  auto network = std::make_unique<Network>(
      Network{ResPerfNet(static_cast<std::int64_t>(sequence_columns(transforms).size()), s.width)});
  ResPerfNetImpl& net = *network->net;
  initialise(net, generator);
  {
    // Start the output at the mean target instead of 0, which with large scaled targets would
    // cost the first epochs climbing to their level.
    torch::NoGradGuard no_grad;
    net.output->bias.fill_(targets.mean().item<double>());
  }
  // λ₂‖w‖² of Eq. 7 adds 2λ₂w to the gradient: Adam's (coupled) weight decay of 2λ₂ does
  // exactly that, without summing the squares of every parameter at every step.
  torch::optim::Adam optimizer(net.parameters(),
                               torch::optim::AdamOptions(s.learning_rate).weight_decay(2 * s.l2));
  const auto batch = static_cast<std::int64_t>(s.batch_size);
  const auto rows = static_cast<std::int64_t>(n);
  // The parameters returned are those of the epoch with the lowest loss (Eq. 7) over the whole
  // training set, dropout off: with an absolute-error loss and dropout noise the last iterate
  // wanders around the optimum, so short trainings would otherwise end wherever it stopped.
  const auto training_loss = [&] {
    torch::NoGradGuard no_grad;
    double sum = 0;
    for (std::int64_t start = 0; start < rows; start += kPredictionBatchRows) {
      const std::int64_t end = std::min(start + kPredictionBatchRows, rows);
      const torch::Tensor u = net.output(net.hidden(inputs.slice(0, start, end))).squeeze(1);
      const torch::Tensor t = targets.slice(0, start, end);
      sum += ((u - t).abs() / t).sum().item<double>();
    }
    double squares = 0;
    for (const torch::Tensor& p : net.parameters()) squares += p.square().sum().item<double>();
    return sum / static_cast<double>(rows) + s.l2 * squares;
  };
  double best_loss = std::numeric_limits<double>::infinity();
  std::vector<torch::Tensor> best_parameters;
  // Algorithm 1 (seed 002 appendix E).
  for (int epoch = 0; epoch < s.epochs; ++epoch) {
    const double lr =
        s.learning_rate * std::pow(s.lr_decay_factor, epoch / s.lr_decay_period_epochs);
    for (auto& group : optimizer.param_groups()) {
      static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
    }
    const torch::Tensor order = torch::randperm(rows, generator, torch::kLong);
    for (std::int64_t start = 0; start < rows; start += batch) {
      const torch::Tensor index = order.slice(0, start, std::min(start + batch, rows));
      torch::Tensor hidden = net.hidden(inputs.index_select(0, index));
      if (s.dropout > 0) {
        const torch::Tensor keep =
            torch::bernoulli(torch::full_like(hidden, 1 - s.dropout), generator);
        hidden = hidden * keep / (1 - s.dropout);
      }
      const torch::Tensor u = net.output(hidden).squeeze(1);
      const torch::Tensor t = targets.index_select(0, index);
      // MAPLE (Eq. 7): |log(1 + ŷ) − log(1 + t)| / log(1 + t), the network giving log(1 + ŷ);
      // its L2 term is the optimizer's weight decay.
      const torch::Tensor loss = ((u - t).abs() / t).mean();
      if (!std::isfinite(loss.item<double>())) {
        throw InvalidInput(kRegressorName + ": training diverged (loss " +
                           std::to_string(loss.item<double>()) + " at epoch " +
                           std::to_string(epoch + 1) + "); lower 'learning_rate'");
      }
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
    }
    if (const double epoch_loss = training_loss(); epoch_loss < best_loss) {
      best_loss = epoch_loss;
      best_parameters.clear();
      for (const torch::Tensor& p : net.parameters()) {
        best_parameters.push_back(p.detach().clone());
      }
    }
  }
  {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> parameters = net.parameters();
    for (std::size_t i = 0; i < best_parameters.size(); ++i) {
      parameters[i].copy_(best_parameters[i]);
    }
  }

  settings_ = s;
  feature_names_ = x.names;
  transforms_ = std::move(transforms);
  target_scale_ = scale;
  min_target_ = *low;
  max_target_ = *high;
  seed_ = options.seed;
  network_ = std::move(network);
}

std::vector<Prediction> ResnetRegressor::predict(const features::FeatureMatrix& x) const {
  if (!network_) {
    throw InternalError(kRegressorName + ": predict() before fit() or load()");
  }
  check_feature_names(kRegressorName, feature_names_, x);
  for (std::size_t i = 0; i < x.rows(); ++i) {
    const auto row = x.row(i);
    if (!std::all_of(row.begin(), row.end(), [](double v) { return std::isfinite(v); })) {
      throw InvalidInput(kRegressorName + ": row " + std::to_string(i) +
                         " has a non-finite feature value");
    }
  }
  std::vector<Prediction> out;
  if (x.rows() == 0) {
    return out;
  }
  torch::NoGradGuard no_grad;
  ResPerfNetImpl& net = *network_->net;
  const double low = min_target_ / kPredictionRangeFactor;
  const double high = max_target_ * kPredictionRangeFactor;
  const auto to_target = [&](double u) {
    return std::clamp(std::expm1(u) / target_scale_, low, high);
  };

  // Monte-Carlo dropout: the same `mc_samples` masks for every row and call, so that a row's
  // stddev does not depend on the rows predicted with it. Only the output layer follows the
  // dropout, so each thinned network is one matrix product on the shared hidden layer.
  const bool sample = settings_.dropout > 0;
  torch::Tensor thinned_weights;
  if (sample) {
    at::Generator generator = at::detail::createCPUGenerator(seed_);
    const torch::Tensor keep = torch::bernoulli(
        torch::full({settings_.mc_samples, settings_.width}, 1 - settings_.dropout), generator);
    thinned_weights = (keep / (1 - settings_.dropout)) * net.output->weight;  // (N, W)
  }

  const torch::Tensor inputs = input_tensor(x, transforms_);
  const auto rows = static_cast<std::int64_t>(x.rows());
  out.reserve(x.rows());
  for (std::int64_t start = 0; start < rows; start += kPredictionBatchRows) {
    const torch::Tensor hidden =
        net.hidden(inputs.slice(0, start, std::min(start + kPredictionBatchRows, rows)));
    const torch::Tensor u = net.output(hidden).squeeze(1).to(torch::kFloat64).contiguous();
    torch::Tensor u_samples;
    if (sample) {
      u_samples = (hidden.matmul(thinned_weights.t()) + net.output->bias)
                      .to(torch::kFloat64)
                      .contiguous();  // (rows, N)
    }
    for (std::int64_t r = 0; r < u.size(0); ++r) {
      Prediction p{to_target(u[r].item<double>()), 0};
      if (sample) {
        const double* values = u_samples.data_ptr<double>() + r * settings_.mc_samples;
        double mean = 0;
        for (int k = 0; k < settings_.mc_samples; ++k) mean += to_target(values[k]);
        mean /= settings_.mc_samples;
        double squares = 0;
        for (int k = 0; k < settings_.mc_samples; ++k) {
          const double d = to_target(values[k]) - mean;
          squares += d * d;
        }
        p.stddev = std::sqrt(squares / (settings_.mc_samples - 1));
      }
      out.push_back(p);
    }
  }
  return out;
}

nlohmann::json ResnetRegressor::save() const {
  if (!network_) {
    throw InternalError(kRegressorName + ": save() before fit() or load()");
  }
  nlohmann::json saved = saved_model_header(kRegressorName, feature_names_);
  saved["settings"] = settings_to_json(settings_);
  saved["seed"] = seed_;
  saved["target_scale_in_effect"] = target_scale_;
  saved["min_target"] = min_target_;
  saved["max_target"] = max_target_;
  nlohmann::json columns = nlohmann::json::array();
  for (const ColumnTransform& t : transforms_) {
    columns.push_back({{"box_cox", t.box_cox},
                       {"lambda", t.lambda},
                       {"scale", t.scale},
                       {"minimum", t.minimum},
                       {"mean", t.mean},
                       {"stddev", t.stddev}});
  }
  saved["column_transforms"] = columns;
  nlohmann::json tensors = nlohmann::json::object();
  for (const auto& item : network_->net->named_parameters()) {
    tensors[item.key()] = tensor_to_json(item.value());
  }
  for (const auto& item : network_->net->named_buffers()) {
    tensors[item.key()] = tensor_to_json(item.value());
  }
  saved["tensors"] = tensors;
  return saved;
}

void ResnetRegressor::load(const nlohmann::json& model) {
  try {
    const std::vector<std::string> names = read_saved_model_header(kRegressorName, model);
    const Settings s = parse_settings(saved_field(kRegressorName, model, "settings"), Settings{});
    const auto seed = saved_field(kRegressorName, model, "seed").get<std::uint64_t>();
    const auto scale = saved_field(kRegressorName, model, "target_scale_in_effect").get<double>();
    const auto low = saved_field(kRegressorName, model, "min_target").get<double>();
    const auto high = saved_field(kRegressorName, model, "max_target").get<double>();
    if (!(scale > 0) || !std::isfinite(scale) || !(low > 0) || !(high >= low) ||
        !std::isfinite(high)) {
      throw InvalidInput(kRegressorName + " model: target scale or range out of range");
    }
    std::vector<ColumnTransform> transforms;
    for (const nlohmann::json& c : saved_field(kRegressorName, model, "column_transforms")) {
      ColumnTransform t;
      t.box_cox = c.at("box_cox").get<bool>();
      t.lambda = c.at("lambda").get<double>();
      t.scale = c.at("scale").get<double>();
      t.minimum = c.at("minimum").get<double>();
      t.mean = c.at("mean").get<double>();
      t.stddev = c.at("stddev").get<double>();
      if (!(t.scale > 0) || !(t.stddev >= 0) || !std::isfinite(t.mean) ||
          !std::isfinite(t.lambda) || (t.box_cox && !(t.minimum > 0))) {
        throw InvalidInput(kRegressorName + " model: bad transform of column " +
                           std::to_string(transforms.size()));
      }
      transforms.push_back(t);
    }
    if (transforms.size() != names.size()) {
      throw InvalidInput(kRegressorName + " model: " + std::to_string(transforms.size()) +
                         " column transforms for " + std::to_string(names.size()) + " features");
    }

    auto network = std::make_unique<Network>(Network{
        ResPerfNet(static_cast<std::int64_t>(sequence_columns(transforms).size()), s.width)});
    const nlohmann::json& tensors = saved_field(kRegressorName, model, "tensors");
    if (!tensors.is_object()) {
      throw InvalidInput(kRegressorName + " model: \"tensors\" must be an object");
    }
    std::size_t expected = 0;
    torch::NoGradGuard no_grad;
    const auto restore = [&](const std::string& name, torch::Tensor& tensor) {
      ++expected;
      const auto it = tensors.find(name);
      if (it == tensors.end()) {
        throw InvalidInput(kRegressorName + " model: missing tensor '" + name + "'");
      }
      const auto shape = it->at("shape").get<std::vector<std::int64_t>>();
      const auto values = it->at("values").get<std::vector<float>>();
      if (shape != tensor.sizes().vec() ||
          static_cast<std::int64_t>(values.size()) != tensor.numel()) {
        throw InvalidInput(kRegressorName + " model: tensor '" + name +
                           "' has the wrong shape or size for the saved architecture");
      }
      tensor.copy_(
          torch::from_blob(const_cast<float*>(values.data()), tensor.sizes(), torch::kFloat32));
    };
    for (auto& item : network->net->named_parameters()) restore(item.key(), item.value());
    for (auto& item : network->net->named_buffers()) restore(item.key(), item.value());
    if (tensors.size() != expected) {
      throw InvalidInput(kRegressorName + " model: " + std::to_string(tensors.size()) +
                         " tensors, the architecture has " + std::to_string(expected));
    }

    settings_ = s;
    feature_names_ = names;
    transforms_ = std::move(transforms);
    target_scale_ = scale;
    min_target_ = low;
    max_target_ = high;
    seed_ = seed;
    network_ = std::move(network);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(kRegressorName + ": malformed model JSON: " + e.what());
  }
}

void register_torch_regressors(RegressorRegistry& registry) {
  registry.add("resnet", kResnetRegressorSummary,
               [] { return std::make_unique<ResnetRegressor>(); });
}

}  // namespace nnergy::regress
