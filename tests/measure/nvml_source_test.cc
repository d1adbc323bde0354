// NVML loading and the NVML power source, run against the scriptable fake NVML library
// (fake_nvml.cc) through the real dlopen path.
#include "nnergy/measure/nvml_source.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/measure/cuda_device_mapping.h"
#include "nnergy/measure/nvml_library.h"
#include "nnergy/measure/source_factories.h"
#include "test_environment.h"

namespace nnergy::measure {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using testing::ScopedEnv;
using testing::TempFile;

// The fake NVML with `script`, found through $NNERGY_NVML_LIBRARY as the real one would be, and
// a log of its init, shutdown and clock calls.
class FakeNvml {
 public:
  explicit FakeNvml(const std::string& script, const char* library = NNERGY_FAKE_NVML_PATH)
      : script_("log " + log_.path() + "\n" + script),
        library_env_("NNERGY_NVML_LIBRARY", library),
        script_env_("NNERGY_FAKE_NVML_SCRIPT", script_.path()) {}

  std::vector<std::string> log() const { return log_.lines(); }
  void rewrite(const std::string& script) const {
    script_.write("log " + log_.path() + "\n" + script);
  }
  std::shared_ptr<NvmlLibrary> load() const {
    NvmlLoadResult loaded = NvmlLibrary::load();
    if (!loaded.library) throw std::runtime_error("fake NVML: " + loaded.unavailable_reason);
    return loaded.library;
  }

 private:
  TempFile log_;
  TempFile script_;
  ScopedEnv library_env_;
  ScopedEnv script_env_;
};

constexpr const char* kTwoGpus = R"(
gpus 2
driver 535.104.05
name 0 NVIDIA H100 80GB HBM3
uuid 0 GPU-00000000-1111-2222-3333-444444444444
name 1 NVIDIA A100-SXM4-40GB
uuid 1 GPU-55555555-6666-7777-8888-999999999999
power_limit_mw 0 700000
power_limit_mw 1 400000
instant_mw 0 250000 260000
power_mw 0 240000
power_mw 1 90500
energy_mj 0 1500 2000 2250
clock_sm_mhz 0 1980 1410
clock_mem_mhz 0 2619
temperature_c 0 45 47
reasons 0 0 4
)";

TEST(NvmlLibrary, DefaultPathIsTheDriverLibraryUnlessOverridden) {
  {
    const ScopedEnv env("NNERGY_NVML_LIBRARY", std::nullopt);
    EXPECT_EQ(NvmlLibrary::default_path(), "libnvidia-ml.so.1");
  }
  {
    const ScopedEnv env("NNERGY_NVML_LIBRARY", "");
    EXPECT_EQ(NvmlLibrary::default_path(), "libnvidia-ml.so.1");
  }
  const ScopedEnv env("NNERGY_NVML_LIBRARY", "/opt/nvml/libnvidia-ml.so.1");
  EXPECT_EQ(NvmlLibrary::default_path(), "/opt/nvml/libnvidia-ml.so.1");
}

TEST(NvmlLibrary, MissingLibraryIsUnavailableWithAReason) {
  const NvmlLoadResult loaded = NvmlLibrary::load("libnnergy-absent-nvml.so.1");
  EXPECT_EQ(loaded.library, nullptr);
  EXPECT_EQ(loaded.unavailable_reason, "libnnergy-absent-nvml.so.1 not found (no NVIDIA driver)");
}

TEST(NvmlLibrary, LibraryWithoutNvmlEntryPointsIsUnavailable) {
  const NvmlLoadResult loaded = NvmlLibrary::load("libm.so.6");
  EXPECT_EQ(loaded.library, nullptr);
  EXPECT_THAT(loaded.unavailable_reason, HasSubstr("libm.so.6 lacks nvmlInit_v2"));
}

TEST(NvmlLibrary, FailingInitIsUnavailableNamingTheCallAndCode) {
  const FakeNvml fake("fail init 9\n");
  const NvmlLoadResult loaded = NvmlLibrary::load();
  EXPECT_EQ(loaded.library, nullptr);
  EXPECT_EQ(loaded.unavailable_reason, "nvmlInit_v2 failed: Driver Not Loaded (NVML error 9)");
}

TEST(NvmlLibrary, SharesOneInitialisedInstanceAndShutsDownWithTheLastUser) {
  const FakeNvml fake("name 0 First\n");
  auto first = fake.load();
  auto second = fake.load();
  EXPECT_EQ(first, second);
  EXPECT_THAT(fake.log(), ElementsAre("init"));
  first.reset();
  EXPECT_THAT(fake.log(), ElementsAre("init"));
  second.reset();
  EXPECT_THAT(fake.log(), ElementsAre("init", "shutdown"));

  // A fresh load initialises NVML again, which is how a changed script is picked up.
  fake.rewrite("name 0 Second\n");
  const auto third = fake.load();
  EXPECT_EQ(third->name(third->gpu(0)), "Second");
  EXPECT_THAT(fake.log(), ElementsAre("init", "shutdown", "init"));
}

TEST(NvmlLibrary, ConcurrentLoadsInitialiseOnce) {
  const FakeNvml fake("");
  std::vector<std::shared_ptr<NvmlLibrary>> loaded(8);
  std::vector<std::thread> threads;
  for (auto& slot : loaded) threads.emplace_back([&slot] { slot = NvmlLibrary::load().library; });
  for (auto& thread : threads) thread.join();
  for (const auto& library : loaded) EXPECT_EQ(library, loaded.front());
  EXPECT_NE(loaded.front(), nullptr);
  EXPECT_THAT(fake.log(), ElementsAre("init"));
}

TEST(NvmlLibrary, ConvertsVendorUnitsToSiExactly) {
  const FakeNvml fake(
      "power_mw 0 250000\ninstant_mw 0 312500\nenergy_mj 0 1500\npower_limit_mw 0 700000\n"
      "clock_sm_mhz 0 1410\ntemperature_c 0 61\nreasons 0 68\n");
  const auto nvml = fake.load();
  const NvmlGpu gpu = nvml->gpu(0);
  EXPECT_EQ(nvml->average_power_w(gpu), 250.0);
  EXPECT_EQ(nvml->instant_power_w(gpu), 312.5);
  EXPECT_EQ(nvml->total_energy_j(gpu), 1.5);
  EXPECT_EQ(nvml->power_limit_w(gpu), 700.0);
  EXPECT_EQ(nvml->clock_mhz(gpu, nvml::kClockSm), 1410.0);
  EXPECT_EQ(nvml->temperature_c(gpu), 61.0);
  EXPECT_EQ(nvml->clock_event_reasons(gpu), std::uint64_t{0x44});
}

TEST(NvmlLibrary, UnsupportedReadingsAreAbsentNotErrors) {
  const FakeNvml fake("");
  const auto nvml = fake.load();
  const NvmlGpu gpu = nvml->gpu(0);
  EXPECT_EQ(nvml->average_power_w(gpu), std::nullopt);
  EXPECT_EQ(nvml->instant_power_w(gpu), std::nullopt);
  EXPECT_EQ(nvml->total_energy_j(gpu), std::nullopt);
  EXPECT_EQ(nvml->power_limit_w(gpu), std::nullopt);
  EXPECT_EQ(nvml->clock_mhz(gpu, nvml::kClockMemory), std::nullopt);
  EXPECT_EQ(nvml->temperature_c(gpu), std::nullopt);
  EXPECT_EQ(nvml->clock_event_reasons(gpu), std::nullopt);
  EXPECT_TRUE(nvml->supported_memory_clocks_mhz(gpu).empty());
}

TEST(NvmlLibrary, FailingCallThrowsDeviceErrorWithFunctionTextAndCode) {
  const FakeNvml fake("energy_mj 0 1000\nfail energy 15\n");
  const auto nvml = fake.load();
  const NvmlGpu gpu = nvml->gpu(0);
  try {
    nvml->total_energy_j(gpu);
    ADD_FAILURE() << "no DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_STREQ(
        e.what(),
        "nvmlDeviceGetTotalEnergyConsumption for GPU 0 failed: GPU is lost (NVML error 15)");
  }
}

TEST(NvmlLibrary, MissingGpuIsInvalidInputListingTheValidIndices) {
  const FakeNvml fake("gpus 2\n");
  const auto nvml = fake.load();
  EXPECT_EQ(nvml->device_count(), 2u);
  EXPECT_EQ(nvml->gpu(1).index, 1u);
  try {
    nvml->gpu(2);
    ADD_FAILURE() << "no InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("no GPU 2; GPU indices here: 0, 1"));
  }
}

TEST(NvmlLibrary, FallsBackToThrottleReasonsOnOlderDrivers) {
  // The old-driver fake really lacks the newer entry point; without the fallback the reasons
  // would read as unsupported.
  void* old_driver = dlopen(NNERGY_FAKE_NVML_OLD_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(old_driver, nullptr);
  EXPECT_EQ(dlsym(old_driver, "nvmlDeviceGetCurrentClocksEventReasons"), nullptr);
  EXPECT_NE(dlsym(old_driver, "nvmlDeviceGetCurrentClocksThrottleReasons"), nullptr);
  dlclose(old_driver);

  const FakeNvml fake("reasons 0 36\n", NNERGY_FAKE_NVML_OLD_PATH);
  const auto nvml = fake.load();
  EXPECT_EQ(nvml->clock_event_reasons(nvml->gpu(0)), std::uint64_t{36});
}

TEST(NvmlSource, DescribesTheGpu) {
  const FakeNvml fake(kTwoGpus);
  const auto nvml = fake.load();
  const NvmlSource h100(nvml, 0);
  EXPECT_EQ(h100.info().id, "nvml:0");
  EXPECT_EQ(h100.info().kind, "gpu");
  EXPECT_EQ(h100.info().name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h100.info().uuid, "GPU-00000000-1111-2222-3333-444444444444");
  EXPECT_EQ(h100.info().driver_version, "535.104.05");
  EXPECT_EQ(h100.info().power_limit_w, 700.0);
  EXPECT_TRUE(h100.info().has_power);
  EXPECT_TRUE(h100.info().has_energy_counter);
  EXPECT_FALSE(h100.info().power_is_averaged);

  const NvmlSource a100(nvml, 1);
  EXPECT_EQ(a100.info().id, "nvml:1");
  EXPECT_EQ(a100.info().name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(a100.info().power_limit_w, 400.0);
  EXPECT_TRUE(a100.info().has_power);
  EXPECT_FALSE(a100.info().has_energy_counter);
  EXPECT_TRUE(a100.info().power_is_averaged);
}

TEST(NvmlSource, ReadsInstantPowerEnergyClocksTemperatureAndReasons) {
  const FakeNvml fake(kTwoGpus);
  NvmlSource gpu(fake.load(), 0);
  // Opening probed each reading once, so these are the scripts' second values.
  const PowerSample first = gpu.read(2.5);
  EXPECT_EQ(first.time_s, 2.5);
  EXPECT_EQ(first.power_w, 260.0);
  EXPECT_EQ(first.energy_j, 2.0);
  EXPECT_EQ(first.sm_clock_mhz, 1410.0);
  EXPECT_EQ(first.memory_clock_mhz, 2619.0);
  EXPECT_EQ(first.temperature_c, 47.0);
  EXPECT_EQ(first.throttle_reasons, 4u);

  const PowerSample second = gpu.read(2.6);
  EXPECT_EQ(second.power_w, 260.0);  // the script's last value repeats
  EXPECT_EQ(second.energy_j, 2.25);
}

TEST(NvmlSource, AveragedPowerWhenInstantPowerIsUnsupported) {
  const FakeNvml fake(kTwoGpus);
  NvmlSource gpu(fake.load(), 1);
  const PowerSample sample = gpu.read(0);
  EXPECT_EQ(sample.power_w, 90.5);
  EXPECT_EQ(sample.energy_j, std::nullopt);
  EXPECT_EQ(sample.sm_clock_mhz, std::nullopt);
  EXPECT_EQ(sample.temperature_c, std::nullopt);
  EXPECT_EQ(sample.throttle_reasons, 0u);
}

TEST(NvmlSource, WithoutAnyPowerReadingReportsNoPower) {
  const FakeNvml fake("energy_mj 0 100\n");
  NvmlSource gpu(fake.load(), 0);
  EXPECT_FALSE(gpu.info().has_power);
  EXPECT_TRUE(gpu.info().has_energy_counter);
  const PowerSample sample = gpu.read(0);
  EXPECT_EQ(sample.power_w, std::nullopt);
  EXPECT_EQ(sample.energy_j, 0.1);
}

TEST(NvmlSource, EnergyStaysMonotonicWhenTheCounterGoesBackwards) {
  // The first value is consumed by the probe at open.
  const FakeNvml fake("energy_mj 0 1000 1000 2000 500 1500 100\n");
  NvmlSource gpu(fake.load(), 0);
  std::vector<double> energy_j;
  for (int i = 0; i < 5; ++i) energy_j.push_back(gpu.read(i).energy_j.value());
  // 2000 → 500: the counter restarted; the 500 mJ since then add to the 2 J counted before.
  EXPECT_THAT(energy_j, ElementsAre(DoubleEq(1.0), DoubleEq(2.0), DoubleEq(2.5), DoubleEq(3.5),
                                    DoubleEq(3.6)));
}

TEST(NvmlSource, GpuLostMidRunThrowsDeviceErrorNamingTheCall) {
  // One successful call is the probe at open, two more are reads.
  const FakeNvml fake("power_mw 0 100000\nfail power 15 after 3\n");
  NvmlSource gpu(fake.load(), 0);
  EXPECT_EQ(gpu.read(0).power_w, 100.0);
  EXPECT_EQ(gpu.read(1).power_w, 100.0);
  try {
    gpu.read(2);
    ADD_FAILURE() << "no DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_STREQ(e.what(), "nvmlDeviceGetPowerUsage for GPU 0 failed: GPU is lost (NVML error 15)");
  }
}

TEST(NvmlSource, InstantPowerFailingMidRunThrowsDeviceError) {
  const FakeNvml fake("instant_mw 0 100000\nfail instant_power 15 after 2\n");
  NvmlSource gpu(fake.load(), 0);
  EXPECT_EQ(gpu.read(0).power_w, 100.0);
  EXPECT_THROW(
      {
        try {
          gpu.read(1);
        } catch (const DeviceError& e) {
          EXPECT_THAT(e.what(), HasSubstr("nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_INSTANT)"));
          EXPECT_THAT(e.what(), HasSubstr("(NVML error 15)"));
          throw;
        }
      },
      DeviceError);
}

TEST(OpenNvmlSources, LibraryNotFoundIsUnavailable) {
  const ScopedEnv env("NNERGY_NVML_LIBRARY", "/nonexistent");
  const Detection detection = open_nvml_sources("");
  EXPECT_TRUE(detection.sources.empty());
  ASSERT_EQ(detection.unavailable.size(), 1u);
  EXPECT_EQ(detection.unavailable[0].source, "nvml");
  EXPECT_EQ(detection.unavailable[0].reason, "/nonexistent not found (no NVIDIA driver)");
}

TEST(OpenNvmlSources, OpensEveryGpu) {
  const FakeNvml fake(kTwoGpus);
  const Detection detection = open_nvml_sources("");
  ASSERT_EQ(detection.sources.size(), 2u);
  EXPECT_EQ(detection.sources[0]->info().id, "nvml:0");
  EXPECT_EQ(detection.sources[1]->info().id, "nvml:1");
  EXPECT_TRUE(detection.unavailable.empty());
}

TEST(OpenNvmlSources, OpensOneGpuByIndex) {
  const FakeNvml fake(kTwoGpus);
  const Detection detection = open_nvml_sources("1");
  ASSERT_EQ(detection.sources.size(), 1u);
  EXPECT_EQ(detection.sources[0]->info().name, "NVIDIA A100-SXM4-40GB");
}

TEST(OpenNvmlSources, RejectsAMissingGpuListingTheValidIndices) {
  const FakeNvml fake(kTwoGpus);
  try {
    open_nvml_sources("5");
    ADD_FAILURE() << "no InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(), "there is no GPU 5; accepted: 0, 1");
  }
}

TEST(OpenNvmlSources, RejectsAnArgumentThatIsNotAnIndex) {
  // Checked before NVML is even loaded: a typo is an error on every machine.
  const ScopedEnv env("NNERGY_NVML_LIBRARY", "/nonexistent");
  for (const char* argument : {"x", "-1", "1x", " 1", "0.5", "12345678901"}) {
    EXPECT_THROW(open_nvml_sources(argument), InvalidInput) << argument;
  }
}

TEST(OpenNvmlSources, NoGpuIsUnavailable) {
  const FakeNvml fake("gpus 0\n");
  const Detection detection = open_nvml_sources("");
  EXPECT_TRUE(detection.sources.empty());
  ASSERT_EQ(detection.unavailable.size(), 1u);
  EXPECT_EQ(detection.unavailable[0].reason, "NVML reports no GPU");
}

TEST(OpenNvmlSources, AGpuFailingToOpenIsReportedAndTheOthersAreUsed) {
  const FakeNvml fake("gpus 2\nfail name 15 gpu 1\n");
  const Detection detection = open_nvml_sources("");
  ASSERT_EQ(detection.sources.size(), 1u);
  EXPECT_EQ(detection.sources[0]->info().id, "nvml:0");
  ASSERT_EQ(detection.unavailable.size(), 1u);
  EXPECT_EQ(detection.unavailable[0].source, "nvml:1");
  EXPECT_THAT(detection.unavailable[0].reason, HasSubstr("nvmlDeviceGetName for GPU 1 failed"));
  // Asked for by index, the same failure is an error.
  EXPECT_THROW(open_nvml_sources("1"), DeviceError);
}

TEST(OpenNvmlSources, SourcesKeepNvmlInitialisedUntilTheLastGoes) {
  const FakeNvml fake(kTwoGpus);
  {
    Detection detection = open_nvml_sources("");
    ASSERT_EQ(detection.sources.size(), 2u);
    detection.sources.erase(detection.sources.begin());
    EXPECT_THAT(fake.log(), ElementsAre("init"));
  }
  EXPECT_THAT(fake.log(), ElementsAre("init", "shutdown"));
}

// CUDA device N is NVML's GPU N, unless CUDA_VISIBLE_DEVICES picks GPUs by index or UUID.
TEST(CudaDeviceMapping, FollowsCudaVisibleDevices) {
  const FakeNvml fake("gpus 3\nuuid 0 GPU-aaaa-0\nuuid 1 GPU-bbbb-1\nuuid 2 GPU-cccc-2\n");
  const std::shared_ptr<NvmlLibrary> nvml = fake.load();
  {
    const ScopedEnv none("CUDA_VISIBLE_DEVICES", std::nullopt);
    EXPECT_EQ(nvml_index_of_cuda_device(*nvml, 2), 2u);
  }
  {
    const ScopedEnv visible("CUDA_VISIBLE_DEVICES", "2,0");
    EXPECT_EQ(nvml_index_of_cuda_device(*nvml, 0), 2u);
    EXPECT_EQ(nvml_index_of_cuda_device(*nvml, 1), 0u);
    try {
      nvml_index_of_cuda_device(*nvml, 2);
      FAIL() << "expected InvalidInput";
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), HasSubstr("--device cuda:2"));
      EXPECT_THAT(e.what(), HasSubstr("makes 2 device(s) visible"));
    }
  }
  {
    const ScopedEnv visible("CUDA_VISIBLE_DEVICES", "GPU-cccc,GPU-aaaa-0");  // UUID prefixes
    EXPECT_EQ(nvml_index_of_cuda_device(*nvml, 0), 2u);
    EXPECT_EQ(nvml_index_of_cuda_device(*nvml, 1), 0u);
  }
  {
    const ScopedEnv visible("CUDA_VISIBLE_DEVICES", "GPU-dddd");
    EXPECT_THROW(nvml_index_of_cuda_device(*nvml, 0), InvalidInput);
  }
  {
    const ScopedEnv visible("CUDA_VISIBLE_DEVICES", "MIG-GPU-aaaa-0/1/0");
    EXPECT_THROW(nvml_index_of_cuda_device(*nvml, 0), InvalidInput);
  }
}

TEST(CudaDeviceMapping, ParsesTheOrdinalOfADeviceFlag) {
  EXPECT_EQ(parse_cuda_ordinal("cuda:0"), 0);
  EXPECT_EQ(parse_cuda_ordinal("cuda:12"), 12);
  EXPECT_EQ(parse_cuda_ordinal("3"), 3);
  for (const char* bad : {"", "cuda", "cuda:", "cuda:-1", "cuda:x", "gpu:0", "+1", "12345"}) {
    EXPECT_EQ(parse_cuda_ordinal(bad), std::nullopt) << bad;
  }
}

TEST(CudaDeviceMapping, PciBusOrderKeepsAUsersSetting) {
  {
    const ScopedEnv order("CUDA_DEVICE_ORDER", std::nullopt);
    use_pci_bus_order_for_cuda();
    EXPECT_STREQ(std::getenv("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  }
  const ScopedEnv order("CUDA_DEVICE_ORDER", "FASTEST_FIRST");
  use_pci_bus_order_for_cuda();
  EXPECT_STREQ(std::getenv("CUDA_DEVICE_ORDER"), "FASTEST_FIRST");
}

}  // namespace
}  // namespace nnergy::measure

namespace nnergy::measure {
namespace {

TEST(NvmlLibrary, ListsTheComputeProcessesOfAGpu) {
  const FakeNvml fake("gpus 2\nprocesses 0 4242 4343\n");
  const auto nvml = fake.load();
  EXPECT_THAT(nvml->compute_process_ids(nvml->gpu(0)).value(), ElementsAre(4242u, 4343u));
  // A GPU that does not report its processes reads as unknown, not as none.
  EXPECT_FALSE(nvml->compute_process_ids(nvml->gpu(1)).has_value());
}

TEST(NvmlLibrary, ComputeProcessListErrorIsADeviceError) {
  const FakeNvml fake("processes 0 7\nfail processes 15\n");
  const auto nvml = fake.load();
  EXPECT_THROW(nvml->compute_process_ids(nvml->gpu(0)), DeviceError);
}

TEST(NvmlSource, EnergyRateCounterGrowsWithWallTime) {
  // The fake's energy_rate_mw counts like a live GPU at constant power: 250 W for ~0.2 s.
  const FakeNvml fake("energy_rate_mw 0 250000\npower_mw 0 250000\n");
  NvmlSource source(fake.load(), 0);
  const double before = source.read(0).energy_j.value();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double after = source.read(0.2).energy_j.value();
  EXPECT_GT(after - before, 250.0 * 0.19);
  EXPECT_LT(after - before, 250.0 * 0.40);
}

}  // namespace
}  // namespace nnergy::measure
