// api::PowerMeter: in-process windows over a synthetic source (known energies), nested and
// overlapping windows from several threads, names, and the errors of a misuse.
#include "nnergy/api/power_meter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "invalid_input_message.h"
#include "nnergy/core/error.h"
#include "test_environment.h"

namespace nnergy::api {
namespace {

using measure::testing::ScopedEnv;
using test_support::invalid_input_message;
using testing::HasSubstr;

PowerMeterRequest synthetic(const std::string& spec, double interval_ms = 5) {
  PowerMeterRequest r;
  r.sources = {spec};
  r.interval_ms = interval_ms;
  return r;
}

void sleep_s(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

// The synthetic source's counter is the exact integral, so a window's energy is 250 W times its
// length up to the interpolation of the counter at the ends (exact for a constant).
TEST(ApiPowerMeter, ConstantPowerGivesPowerTimesTime) {
  PowerMeter meter(synthetic("synthetic:constant=250"));
  const std::size_t w = meter.begin("step");
  sleep_s(0.3);
  const measure::Measurement m = meter.end(w);
  ASSERT_EQ(m.sources.size(), 1u);
  const measure::SourceMeasurement& s = m.sources[0];
  const double t = m.end_s - m.begin_s;
  EXPECT_NEAR(t, 0.3, 0.1);
  ASSERT_TRUE(s.energy_j.has_value());
  EXPECT_EQ(s.energy_method, "counter");
  EXPECT_NEAR(*s.energy_j, 250 * t, 0.01 * 250 * t);
  ASSERT_TRUE(s.power_mean_w.has_value());
  EXPECT_NEAR(*s.power_mean_w, 250, 1e-9);
}

// Nested windows see the energy of their own span: a step of 100 W then one of 300 W.
TEST(ApiPowerMeter, NestedWindowsByNameMeasureTheirOwnSpans) {
  PowerMeter meter(synthetic("synthetic:steps=100/3,300/10"));
  const std::size_t outer = meter.begin("epoch");
  sleep_s(0.1);
  meter.begin("step");
  sleep_s(0.1);
  const measure::Measurement inner = meter.end_named("step");
  const measure::Measurement whole = meter.end(outer);
  EXPECT_GT(inner.begin_s, whole.begin_s);
  EXPECT_LT(inner.end_s, whole.end_s);
  EXPECT_NEAR(*inner.sources[0].energy_j, 100 * (inner.end_s - inner.begin_s), 1.0);
  EXPECT_NEAR(*whole.sources[0].energy_j, 100 * (whole.end_s - whole.begin_s), 2.0);
}

TEST(ApiPowerMeter, WindowsFromSeveralThreadsAreIndependent) {
  PowerMeter meter(synthetic("synthetic:constant=50"));
  std::vector<double> errors(4, -1);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < errors.size(); ++i) {
    threads.emplace_back([&meter, &errors, i] {
      for (int k = 0; k < 5; ++k) {
        const std::size_t w = meter.begin("thread" + std::to_string(i));
        sleep_s(0.01 * static_cast<double>(i + 1));
        const measure::Measurement m = meter.end(w);
        const double expected = 50 * (m.end_s - m.begin_s);
        errors[i] = std::max(errors[i], std::abs(*m.sources[0].energy_j - expected));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const double e : errors) EXPECT_LT(e, 1e-6);
}

TEST(ApiPowerMeter, MisuseIsInvalidInputNamingTheWindow) {
  PowerMeter meter(synthetic("synthetic:constant=1"));
  const std::size_t w = meter.begin("a");
  meter.end(w);
  EXPECT_THAT(invalid_input_message([&] { meter.end(w); }),
              HasSubstr("never opened or is already closed"));
  meter.begin("b");
  EXPECT_EQ(invalid_input_message([&] { meter.end_named("epoch"); }),
            "end window 'epoch': no window of that name is open (open: 'b')");
  meter.stop();
  EXPECT_THAT(invalid_input_message([&] { meter.begin("c"); }), HasSubstr("was stopped"));
}

TEST(ApiPowerMeter, RequestErrorsNameTheKeyword) {
  EXPECT_EQ(invalid_input_message([] { PowerMeter m(synthetic("synthetic:constant=1", 0.5)); }),
            "interval_ms=0.5: expected 1 to 60000");
  const ScopedEnv nvml("NNERGY_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  try {
    PowerMeter m(synthetic("nvml"));
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("source=nvml: the power source is not available here"));
  }
}

}  // namespace
}  // namespace nnergy::api
