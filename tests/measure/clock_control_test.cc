// Clock locking against the scriptable fake NVML library (fake_nvml.cc), whose log shows every
// lock and reset that reached "the driver".
#include "nnergy/measure/clock_control.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nnergy/core/error.h"
#include "test_environment.h"

namespace nnergy::measure {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using testing::ScopedEnv;
using testing::TempFile;

// The fake NVML with `script`, found through $NNERGY_NVML_LIBRARY, logging its init, shutdown,
// lock_clocks and reset_clocks calls.
class FakeNvml {
 public:
  explicit FakeNvml(const std::string& script)
      : script_("log " + log_.path() + "\n" + script),
        library_env_("NNERGY_NVML_LIBRARY", NNERGY_FAKE_NVML_PATH),
        script_env_("NNERGY_FAKE_NVML_SCRIPT", script_.path()),
        lock_dir_env_("NNERGY_CLOCK_LOCK_DIR", lock_dir_.string()) {
    std::filesystem::create_directories(lock_dir_);
  }
  ~FakeNvml() {
    std::error_code ignored;
    std::filesystem::remove_all(lock_dir_, ignored);
  }
  const std::filesystem::path& lock_dir() const { return lock_dir_; }

  /// The log without init and shutdown: the clock calls in order.
  std::vector<std::string> clock_calls() const {
    std::vector<std::string> calls;
    for (const std::string& line : log_.lines()) {
      if (line != "init" && line != "shutdown") calls.push_back(line);
    }
    return calls;
  }

 private:
  TempFile log_;
  TempFile script_;
  ScopedEnv library_env_;
  ScopedEnv script_env_;
  std::filesystem::path lock_dir_ = log_.path() + ".locks";
  ScopedEnv lock_dir_env_;
};

std::shared_ptr<NvmlLibrary> load_fake() {
  NvmlLoadResult loaded = NvmlLibrary::load();
  if (!loaded.library) throw std::runtime_error("fake NVML: " + loaded.unavailable_reason);
  return loaded.library;
}

// The handler currently installed for `signal_number`.
void (*current_handler(int signal_number))(int) {
  struct sigaction action {};
  sigaction(signal_number, nullptr, &action);
  return action.sa_handler;
}

TEST(SupportedCoreClocks, AllGraphicsClocksOverAllMemoryClocksAscendingAndUnique) {
  const FakeNvml fake(
      "memory_clocks 0 2619 1593\n"
      "graphics_clocks 0 2619 1980 1410 210\n"
      "graphics_clocks 0 1593 1410 1200\n");
  EXPECT_THAT(supported_core_clocks_mhz(0), ElementsAre(210.0, 1200.0, 1410.0, 1980.0));
}

TEST(SupportedCoreClocks, ReadsListsLongerThanTheFirstBuffer) {
  std::string graphics = "graphics_clocks 0 1215";
  for (int mhz = 2000; mhz > 500; mhz -= 5) graphics += " " + std::to_string(mhz);
  const FakeNvml fake("memory_clocks 0 1215\n" + graphics + "\n");
  const std::vector<double> clocks = supported_core_clocks_mhz(0);
  ASSERT_EQ(clocks.size(), 300u);
  EXPECT_EQ(clocks.front(), 505.0);
  EXPECT_EQ(clocks.back(), 2000.0);
}

TEST(SupportedCoreClocks, EmptyWhenTheGpuDoesNotReportThem) {
  const FakeNvml fake("");
  EXPECT_TRUE(supported_core_clocks_mhz(0).empty());
}

TEST(SupportedCoreClocks, WithoutNvmlIsADeviceError) {
  const ScopedEnv env("NNERGY_NVML_LIBRARY", "/nonexistent");
  EXPECT_THROW(supported_core_clocks_mhz(0), DeviceError);
}

TEST(ClockLock, LocksAndResetsInTheDestructor) {
  const FakeNvml fake("gpus 2\n");
  {
    const ClockLock lock(1, 1410, 1410.4);
    EXPECT_TRUE(lock.active());
    EXPECT_EQ(lock.gpu(), 1u);
    EXPECT_EQ(lock.min_mhz(), 1410u);
    EXPECT_EQ(lock.max_mhz(), 1410u);
    EXPECT_THAT(fake.clock_calls(), ElementsAre("lock_clocks 1 1410 1410"));
  }
  EXPECT_THAT(fake.clock_calls(), ElementsAre("lock_clocks 1 1410 1410", "reset_clocks 1"));
}

TEST(ClockLock, ResetsWhenAnExceptionUnwinds) {
  const FakeNvml fake("");
  try {
    const ClockLock lock(0, 900, 1200);
    throw std::runtime_error("the measured run failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_THAT(fake.clock_calls(), ElementsAre("lock_clocks 0 900 1200", "reset_clocks 0"));
}

TEST(ClockLock, ExplicitResetIsNotRepeated) {
  const FakeNvml fake("");
  {
    ClockLock lock(load_fake(), 0, 1000, 1000);
    lock.reset();
    EXPECT_FALSE(lock.active());
    lock.reset();
  }
  EXPECT_THAT(fake.clock_calls(), ElementsAre("lock_clocks 0 1000 1000", "reset_clocks 0"));
}

TEST(ClockLock, WithoutPermissionThrowsAClearDeviceError) {
  const FakeNvml fake("fail lock_clocks 4\n");
  try {
    const ClockLock lock(0, 1410, 1410);
    ADD_FAILURE() << "no DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_STREQ(e.what(), "locking clocks of GPU 0 needs root (NVML_ERROR_NO_PERMISSION)");
  }
  EXPECT_TRUE(fake.clock_calls().empty());
  // The failed lock left no signal handler behind.
  EXPECT_EQ(current_handler(SIGTERM), SIG_DFL);
}

TEST(ClockLock, UnsupportedGpuThrowsDeviceErrorSayingSo) {
  const FakeNvml fake("fail lock_clocks 3\n");
  try {
    const ClockLock lock(0, 1410, 1410);
    ADD_FAILURE() << "no DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("locking clocks of GPU 0 is not supported"));
    EXPECT_THAT(e.what(), HasSubstr("NVML_ERROR_NOT_SUPPORTED"));
  }
}

TEST(ClockLock, WithoutNvmlIsADeviceErrorWithTheReason) {
  const ScopedEnv env("NNERGY_NVML_LIBRARY", "/nonexistent");
  try {
    const ClockLock lock(0, 1410, 1410);
    ADD_FAILURE() << "no DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent not found (no NVIDIA driver)"));
  }
}

TEST(ClockLock, RejectsAnInvalidRangeOrGpu) {
  const FakeNvml fake("");
  EXPECT_THROW(ClockLock(0, 1500, 1400), InvalidInput);
  EXPECT_THROW(ClockLock(0, 0, 1400), InvalidInput);
  EXPECT_THROW(ClockLock(0, -5, 1400), InvalidInput);
  EXPECT_THROW(ClockLock(3, 1400, 1400), InvalidInput);
  EXPECT_TRUE(fake.clock_calls().empty());
}

TEST(ClockLock, LocksTwoGpusButNotOneGpuTwice) {
  const FakeNvml fake("gpus 2\n");
  {
    const ClockLock first(0, 1000, 1000);
    const ClockLock second(1, 1200, 1200);
    EXPECT_THROW(ClockLock(0, 900, 900), InvalidInput);
  }
  EXPECT_THAT(fake.clock_calls(), ElementsAre("lock_clocks 0 1000 1000", "lock_clocks 1 1200 1200",
                                              "reset_clocks 1", "reset_clocks 0"));
}

TEST(ClockLock, FailingResetThrowsFromResetAndReleasesTheLock) {
  const FakeNvml fake("fail reset_clocks 15\n");
  ClockLock lock(0, 1000, 1000);
  try {
    lock.reset();
    ADD_FAILURE() << "no DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("nvmlDeviceResetGpuLockedClocks for GPU 0 failed"));
    EXPECT_THAT(e.what(), HasSubstr("(NVML error 15)"));
  }
  EXPECT_FALSE(lock.active());
  EXPECT_EQ(current_handler(SIGTERM), SIG_DFL);
}

TEST(ClockLock, HandlesSignalsOnlyWhileLockedAndLeavesIgnoredOnesIgnored) {
  const FakeNvml fake("");
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction saved_int {};
  sigaction(SIGINT, &ignore, &saved_int);
  ASSERT_EQ(current_handler(SIGTERM), SIG_DFL);
  {
    const ClockLock lock(0, 1000, 1000);
    EXPECT_NE(current_handler(SIGTERM), SIG_DFL);
    EXPECT_EQ(current_handler(SIGINT), SIG_IGN);
  }
  EXPECT_EQ(current_handler(SIGTERM), SIG_DFL);
  EXPECT_EQ(current_handler(SIGINT), SIG_IGN);
  sigaction(SIGINT, &saved_int, nullptr);
}

// The child forks at EXPECT_EXIT ("fast" style) and so shares the log file with the parent.
TEST(ClockLockDeathTest, SigtermResetsTheClocksAndStillTerminates) {
  GTEST_FLAG_SET(death_test_style, "fast");
  const FakeNvml fake("");
  EXPECT_EXIT(
      {
        const ClockLock lock(0, 1410, 1410);
        std::raise(SIGTERM);
        std::_Exit(0);
      },
      ::testing::KilledBySignal(SIGTERM), "");
  EXPECT_THAT(fake.clock_calls(), ElementsAre("lock_clocks 0 1410 1410", "reset_clocks 0"));
}

TEST(ClockLockDeathTest, SighupAndSigquitResetTheClocksToo) {
  GTEST_FLAG_SET(death_test_style, "fast");
  for (const int signal_number : {SIGHUP, SIGQUIT}) {
    const FakeNvml fake("");
    EXPECT_EXIT(
        {
          // A shell starts background commands with SIGQUIT (and under nohup SIGHUP) ignored,
          // and the lock leaves ignored signals alone: the default action, as in a foreground
          // run.
          std::signal(signal_number, SIG_DFL);
          const ClockLock lock(0, 1200, 1200);
          std::raise(signal_number);
          std::_Exit(0);
        },
        ::testing::KilledBySignal(signal_number), "");
    EXPECT_THAT(fake.clock_calls(), ElementsAre("lock_clocks 0 1200 1200", "reset_clocks 0"));
    // The handler removed the lock file too.
    EXPECT_TRUE(std::filesystem::is_empty(fake.lock_dir()));
  }
}

TEST(ClockLock, ALockFileSaysWhileTheClocksAreLocked) {
  const FakeNvml fake("");
  {
    const ClockLock lock(0, 900, 1000);
    std::ifstream in(fake.lock_dir() / "gpu-0.lock");
    long pid = 0;
    unsigned int low = 0, high = 0;
    in >> pid >> low >> high;
    EXPECT_EQ(pid, ::getpid());
    EXPECT_EQ(low, 900u);
    EXPECT_EQ(high, 1000u);
  }
  EXPECT_TRUE(std::filesystem::is_empty(fake.lock_dir()));
}

TEST(ClockLock, ClocksAProcessLeftLockedAreResetAtTheNextLockAndSaid) {
  // A run killed with SIGKILL left GPU 1 locked at 705 MHz: its lock file names a process that
  // no longer runs.
  const FakeNvml fake("gpus 2\n");
  const pid_t gone = fork();
  if (gone == 0) std::_Exit(0);
  ASSERT_GT(gone, 0);
  waitpid(gone, nullptr, 0);
  std::ofstream(fake.lock_dir() / "gpu-1.lock") << gone << " 705 705\n";
  ::testing::internal::CaptureStderr();
  { const ClockLock lock(0, 1410, 1410); }
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(fake.clock_calls(),
              ElementsAre("reset_clocks 1", "lock_clocks 0 1410 1410", "reset_clocks 0"));
  EXPECT_THAT(said, HasSubstr("the clocks of GPU 1 were left locked at 705-705 MHz by process " +
                              std::to_string(gone)));
  EXPECT_TRUE(std::filesystem::is_empty(fake.lock_dir()));
}

void exit_with_42(int) { std::_Exit(42); }

TEST(ClockLockDeathTest, SigintResetsTheClocksAndReachesThePreviousHandler) {
  GTEST_FLAG_SET(death_test_style, "fast");
  const FakeNvml fake("gpus 2\n");
  EXPECT_EXIT(
      {
        std::signal(SIGINT, exit_with_42);
        const ClockLock first(0, 1000, 1000);
        const ClockLock second(1, 1100, 1100);
        std::raise(SIGINT);
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(42), "");
  EXPECT_THAT(fake.clock_calls(), ElementsAre("lock_clocks 0 1000 1000", "lock_clocks 1 1100 1100",
                                              "reset_clocks 0", "reset_clocks 1"));
}

TEST(ClockList, DefaultIsZeroAndAnythingButWholeMhzNamesTheSettingAndTheItem) {
  EXPECT_EQ(parse_clock_list("900, 1200,default", "--clocks-mhz"),
            (std::vector<std::int64_t>{900, 1200, 0}));
  EXPECT_TRUE(parse_clock_list("", "--clocks-mhz").empty());
  for (const char* bad : {"1410,fast", "1.5", "-900", "1234567", "900,,1200"}) {
    try {
      parse_clock_list(bad, "clocks_mhz");
      ADD_FAILURE() << bad << ": no error";
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("clocks_mhz ") + bad + ": '"));
      EXPECT_THAT(e.what(),
                  HasSubstr("is not a clock; expected MHz as whole numbers, or 'default'"));
    }
  }
}

}  // namespace
}  // namespace nnergy::measure
