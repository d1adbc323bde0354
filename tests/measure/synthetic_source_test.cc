#include "nnergy/measure/synthetic_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/measure/source_factories.h"

namespace nnergy::measure {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Sums of a few products of short decimals: rounding only.
constexpr double kEnergyToleranceJ = 1e-9;

TEST(SyntheticSource, ConstantPowerForTwoSecondsIsExactly500Joules) {
  SyntheticSource source(parse_synthetic_spec("constant=250"));
  const PowerSample at_start = source.read(0.0);
  EXPECT_EQ(*at_start.energy_j, 0.0);
  const PowerSample sample = source.read(2.0);
  EXPECT_EQ(sample.time_s, 2.0);
  EXPECT_EQ(*sample.power_w, 250.0);
  EXPECT_EQ(*sample.energy_j, 500.0);
  EXPECT_FALSE(sample.sm_clock_mhz.has_value());
  EXPECT_EQ(sample.throttle_reasons, 0u);
  EXPECT_EQ(source.info().id, "synthetic");
  EXPECT_EQ(source.info().kind, "synthetic");
  EXPECT_TRUE(source.info().has_energy_counter);
}

TEST(SyntheticSource, StepsCycleAndIntegrateExactly) {
  // 100 W for 1 s, then 300 W for 0.5 s: a 1.5 s period of 250 J.
  SyntheticSource source(parse_synthetic_spec("steps=100/1,300/0.5"));
  EXPECT_EQ(source.power_at(0.5), 100.0);
  EXPECT_EQ(source.power_at(1.0), 300.0) << "a step starts at its boundary";
  EXPECT_EQ(source.power_at(1.2), 300.0);
  EXPECT_EQ(source.power_at(1.6), 100.0) << "the list repeats";
  EXPECT_EQ(source.power_at(2.8), 300.0);
  EXPECT_NEAR(source.energy_at(0.5), 50.0, kEnergyToleranceJ);
  EXPECT_NEAR(source.energy_at(1.25), 100.0 + 75.0, kEnergyToleranceJ);
  EXPECT_NEAR(source.energy_at(1.5), 250.0, kEnergyToleranceJ);
  EXPECT_NEAR(source.energy_at(3.0), 500.0, kEnergyToleranceJ);
  EXPECT_NEAR(source.energy_at(3.25), 525.0, kEnergyToleranceJ);
  EXPECT_NEAR(source.energy_at(150.0 + 1.1), 100 * 250.0 + 100.0 + 30.0, kEnergyToleranceJ);
  EXPECT_NEAR(*source.read(3.25).energy_j, 525.0, kEnergyToleranceJ);
}

TEST(SyntheticSource, ParsesTheRegistryHelpExample) {
  const SyntheticSpec spec = parse_synthetic_spec("steps=100/1,300/0.5,noise=5,seed=1");
  ASSERT_EQ(spec.steps.size(), 2u);
  EXPECT_EQ(spec.steps[0].power_w, 100.0);
  EXPECT_EQ(spec.steps[0].duration_s, 1.0);
  EXPECT_EQ(spec.steps[1].power_w, 300.0);
  EXPECT_EQ(spec.steps[1].duration_s, 0.5);
  EXPECT_EQ(spec.noise_sigma_w, 5.0);
  EXPECT_EQ(spec.seed, 1u);
  EXPECT_FALSE(spec.constant);
}

TEST(SyntheticSource, ReportsClockThrottleAndName) {
  SyntheticSource source(parse_synthetic_spec("constant=80,clock=1410,throttle=0x24,name=gpu0"));
  const PowerSample s = source.read(1.0);
  EXPECT_EQ(*s.sm_clock_mhz, 1410.0);
  EXPECT_EQ(s.throttle_reasons, 0x24u);
  EXPECT_EQ(source.info().id, "synthetic:gpu0");
  EXPECT_EQ(source.info().name, "gpu0");
  EXPECT_EQ(parse_synthetic_spec("constant=1,throttle=4").throttle_reasons, 4u);
}

TEST(SyntheticSource, NoiseIsSeededGaussianAndLeavesEnergyExact) {
  SyntheticSource a(parse_synthetic_spec("constant=250,noise=5,seed=7"));
  SyntheticSource b(parse_synthetic_spec("constant=250,noise=5,seed=7"));
  SyntheticSource c(parse_synthetic_spec("constant=250,noise=5,seed=8"));
  constexpr int kReads = 20000;
  double sum = 0;
  double sum_sq = 0;
  bool differs_from_other_seed = false;
  for (int i = 0; i < kReads; ++i) {
    const double t = 0.01 * i;
    const PowerSample sa = a.read(t);
    const PowerSample sb = b.read(t);
    const PowerSample sc = c.read(t);
    ASSERT_EQ(*sa.power_w, *sb.power_w) << "read " << i;
    differs_from_other_seed |= *sa.power_w != *sc.power_w;
    EXPECT_EQ(*sa.energy_j, 250.0 * t);
    sum += *sa.power_w;
    sum_sq += *sa.power_w * *sa.power_w;
  }
  EXPECT_TRUE(differs_from_other_seed);
  const double mean = sum / kReads;
  const double sigma = std::sqrt(sum_sq / kReads - mean * mean);
  // Standard error of the mean is 5/√20000 ≈ 0.035 W; of σ about 0.025 W.
  EXPECT_NEAR(mean, 250.0, 0.2);
  EXPECT_NEAR(sigma, 5.0, 0.2);
}

TEST(SyntheticSource, FactoryOpensOneSource) {
  const Detection d = open_synthetic_sources("constant=250");
  ASSERT_EQ(d.sources.size(), 1u);
  EXPECT_TRUE(d.unavailable.empty());
  EXPECT_EQ(*d.sources[0]->read(2.0).energy_j, 500.0);
}

struct Malformed {
  std::string argument;
  std::string message;
};

class SyntheticMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(SyntheticMalformed, NamesTheKeyAndWhatIsAccepted) {
  try {
    parse_synthetic_spec(GetParam().argument);
    FAIL() << "accepted '" << GetParam().argument << "'";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), testing::Not(StartsWith("--source")));
    EXPECT_THAT(e.what(), HasSubstr(GetParam().message));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Arguments, SyntheticMalformed,
    ::testing::Values(
        Malformed{"", "expected a waveform, e.g. synthetic:constant=250; accepted: constant=W"},
        Malformed{"constant=abc",
                  "key 'constant': expected a power in W (a number >= 0), found "
                  "'abc'"},
        Malformed{"constant=-1", "key 'constant'"}, Malformed{"constant=inf", "key 'constant'"},
        Malformed{"steps=100", "key 'steps': expected W/S items"},
        Malformed{"steps=100/0", "found '100/0'"}, Malformed{"steps=100/1,300", "found '300'"},
        Malformed{"noise=-1,constant=1", "key 'noise': expected a standard deviation in W"},
        Malformed{"constant=1,seed=x", "key 'seed': expected an unsigned integer, found 'x'"},
        Malformed{"constant=1,clock=0", "key 'clock': expected an SM clock in MHz"},
        Malformed{"constant=1,throttle=zz", "key 'throttle': expected clock-event reason bits"},
        Malformed{"constant=1,name=", "key 'name': expected a non-empty name"},
        Malformed{"constant=1,watts=3", "unknown key 'watts'; accepted: constant=W, steps=W/S"},
        Malformed{"constant=1,steps=1/1",
                  "expected one of constant=W and steps=W/S,..., found "
                  "both"},
        Malformed{"constant=1,constant=2", "key 'constant' given twice"},
        Malformed{"noise=1", "expected constant=W or steps=W/S,..., found neither"},
        Malformed{"constant=1,300/0.5", "expected key=value, found '300/0.5'"}));

}  // namespace
}  // namespace nnergy::measure
