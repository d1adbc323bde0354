#include "nnergy/measure/synthetic_source.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <set>
#include <utility>

#include "nnergy/core/error.h"
#include "nnergy/measure/source_factories.h"
#include "nnergy/measure/trace_reading.h"

namespace nnergy::measure {

namespace {

constexpr const char* kAccepted =
    "constant=W, steps=W/S,W/S,..., noise=SIGMA_W, seed=N, clock=MHZ, throttle=BITS, name=NAME";

[[noreturn]] void fail(const std::string& what) { throw InvalidInput(what); }

// A finite number (trace_reading.h's parse_number without "nan" and the infinities).
std::optional<double> parse_double(const std::string& text) {
  const std::optional<double> value = parse_number(text);
  if (!value || !std::isfinite(*value)) return std::nullopt;
  return value;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (true) {
    const auto end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end - begin));
    if (end == std::string::npos) return parts;
    begin = end + 1;
  }
}

SyntheticSpec::Step parse_step(const std::string& text) {
  const auto slash = text.find('/');
  const std::string expected =
      "key 'steps': expected W/S items (watts >= 0 for seconds > 0, e.g. steps=100/1,300/0.5), "
      "found '" +
      text + "'";
  if (slash == std::string::npos) fail(expected);
  const std::optional<double> power = parse_double(text.substr(0, slash));
  const std::optional<double> duration = parse_double(text.substr(slash + 1));
  if (!power || !duration || *power < 0 || *duration <= 0) fail(expected);
  return {*power, *duration};
}

}  // namespace

SyntheticSpec parse_synthetic_spec(const std::string& argument) {
  if (argument.empty()) {
    fail(std::string("expected a waveform, e.g. synthetic:constant=250; accepted: ") + kAccepted);
  }
  SyntheticSpec spec;
  std::set<std::string> seen;
  bool in_steps = false;  // bare W/S items continue a preceding steps= list
  for (const std::string& item : split(argument, ',')) {
    const auto equals = item.find('=');
    if (equals == std::string::npos) {
      if (!in_steps) {
        fail("expected key=value, found '" + item + "'; accepted: " + kAccepted);
      }
      spec.steps.push_back(parse_step(item));
      continue;
    }
    const std::string key = item.substr(0, equals);
    const std::string value = item.substr(equals + 1);
    in_steps = key == "steps";
    if (!seen.insert(key).second) fail("key '" + key + "' given twice");
    if (key == "constant") {
      const std::optional<double> power = parse_double(value);
      if (!power || *power < 0) {
        fail("key 'constant': expected a power in W (a number >= 0), found '" + value + "'");
      }
      spec.constant = true;
      spec.steps = {{*power, 1.0}};
    } else if (key == "steps") {
      spec.steps.push_back(parse_step(value));
    } else if (key == "noise") {
      const std::optional<double> sigma = parse_double(value);
      if (!sigma || *sigma < 0) {
        fail("key 'noise': expected a standard deviation in W (a number >= 0), found '" + value +
             "'");
      }
      spec.noise_sigma_w = *sigma;
    } else if (key == "seed") {
      const std::optional<std::uint64_t> seed =
          value.rfind("0x", 0) == 0 ? std::nullopt : parse_bits(value);
      if (!seed) fail("key 'seed': expected an unsigned integer, found '" + value + "'");
      spec.seed = *seed;
    } else if (key == "clock") {
      const std::optional<double> clock = parse_double(value);
      if (!clock || *clock <= 0) {
        fail("key 'clock': expected an SM clock in MHz (a number > 0), found '" + value + "'");
      }
      spec.sm_clock_mhz = clock;
    } else if (key == "throttle") {
      const std::optional<std::uint64_t> bits = parse_bits(value);
      if (!bits) {
        fail("key 'throttle': expected clock-event reason bits (decimal or 0x-hex), found '" +
             value + "'");
      }
      spec.throttle_reasons = *bits;
    } else if (key == "name") {
      if (value.empty()) fail("key 'name': expected a non-empty name, found ''");
      spec.name = value;
    } else {
      fail("unknown key '" + key + "'; accepted: " + kAccepted);
    }
  }
  if (seen.count("constant") != 0 && seen.count("steps") != 0) {
    fail("expected one of constant=W and steps=W/S,..., found both");
  }
  if (spec.steps.empty()) {
    fail(std::string("expected constant=W or steps=W/S,..., found neither; accepted: ") +
         kAccepted);
  }
  return spec;
}

SyntheticSource::SyntheticSource(SyntheticSpec spec)
    : spec_(std::move(spec)), generator_(spec_.seed) {
  if (spec_.steps.empty()) throw InvalidInput("synthetic source: the waveform has no steps");
  for (const SyntheticSpec::Step& step : spec_.steps) {
    period_s_ += step.duration_s;
    energy_per_period_j_ += step.power_w * step.duration_s;
  }
  info_.id = spec_.name.empty() ? "synthetic" : "synthetic:" + spec_.name;
  info_.kind = "synthetic";
  info_.name = spec_.name.empty() ? "synthetic" : spec_.name;
  info_.has_energy_counter = true;
  info_.has_power = true;
  info_.power_is_averaged = false;
}

double SyntheticSource::power_at(double time_s) const {
  if (spec_.steps.size() == 1) return spec_.steps.front().power_w;
  double offset_s = time_s - std::floor(time_s / period_s_) * period_s_;
  for (const SyntheticSpec::Step& step : spec_.steps) {
    if (offset_s < step.duration_s) return step.power_w;
    offset_s -= step.duration_s;
  }
  // Rounding can leave offset_s a hair short of the period: that instant is the last step's end.
  return spec_.steps.back().power_w;
}

double SyntheticSource::energy_at(double time_s) const {
  // A single step is constant power: W·t directly, so 250 W for 2 s is exactly 500 J.
  if (spec_.steps.size() == 1) return spec_.steps.front().power_w * time_s;
  // Whole periods, then whole steps of the last partial period, then the started step: the
  // exact integral of the piecewise-constant waveform.
  const double periods = std::floor(time_s / period_s_);
  double offset_s = std::max(0.0, time_s - periods * period_s_);
  double energy_j = periods * energy_per_period_j_;
  for (const SyntheticSpec::Step& step : spec_.steps) {
    if (offset_s <= step.duration_s) return energy_j + step.power_w * offset_s;
    energy_j += step.power_w * step.duration_s;
    offset_s -= step.duration_s;
  }
  return energy_j;
}

double SyntheticSource::standard_normal() {
  // Box–Muller on mt19937_64 rather than std::normal_distribution, whose algorithm differs
  // between standard libraries: the same seed gives the same noise everywhere.
  if (spare_normal_) {
    const double value = *spare_normal_;
    spare_normal_.reset();
    return value;
  }
  auto uniform = [this] {
    return static_cast<double>(generator_() >> 11) * 0x1.0p-53;  // [0, 1), 53 random bits
  };
  const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
  const double u2 = uniform();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * std::numbers::pi * u2;
  spare_normal_ = radius * std::sin(angle);
  return radius * std::cos(angle);
}

PowerSample SyntheticSource::read(double time_s) {
  PowerSample sample;
  sample.time_s = time_s;
  double power_w = power_at(time_s);
  if (spec_.noise_sigma_w > 0) {
    // Clamped because a power meter never reads below zero; noise that large is a test setup.
    power_w = std::max(0.0, power_w + spec_.noise_sigma_w * standard_normal());
  }
  sample.power_w = power_w;
  sample.energy_j = energy_at(time_s);
  sample.sm_clock_mhz = spec_.sm_clock_mhz;
  sample.throttle_reasons = spec_.throttle_reasons;
  return sample;
}

Detection open_synthetic_sources(const std::string& argument) {
  Detection detection;
  detection.sources.push_back(std::make_unique<SyntheticSource>(parse_synthetic_spec(argument)));
  return detection;
}

}  // namespace nnergy::measure
