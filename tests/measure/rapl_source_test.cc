#include "nnergy/measure/rapl_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/measure/source_factories.h"

namespace nnergy::measure {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Power from two counter readings is a quotient of µJ differences; exact up to rounding.
constexpr double kPowerToleranceW = 1e-9;

// A fake /sys/class/powercap in a fresh temporary directory, removed at the end of the test.
class FakePowercap : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "nnergy_powercap_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path zone(const std::string& dir, const std::string& name, std::uint64_t energy_uj,
                std::uint64_t range_uj = 262143328850) {
    const fs::path path = root_ / dir;
    fs::create_directories(path);
    std::ofstream(path / "name") << name << "\n";
    std::ofstream(path / "max_energy_range_uj") << range_uj << "\n";
    set_energy(path, energy_uj);
    return path;
  }
  static void set_energy(const fs::path& zone_dir, std::uint64_t energy_uj) {
    std::ofstream(zone_dir / "energy_uj", std::ios::trunc) << energy_uj << "\n";
  }
  static std::vector<std::string> ids(const Detection& d) {
    std::vector<std::string> result;
    for (const auto& s : d.sources) result.push_back(s->info().id);
    return result;
  }

  fs::path root_;
};

TEST_F(FakePowercap, FindsPackagesAndSubzonesWithKinds) {
  zone("intel-rapl:0", "package-0", 1);
  zone("intel-rapl:0:0", "core", 1);
  zone("intel-rapl:0:1", "dram", 1);
  zone("intel-rapl:0:2", "uncore", 1);
  zone("intel-rapl:1", "psys", 1);
  // Not zones: the control type directory and the MMIO duplicate of the package counter.
  fs::create_directories(root_ / "intel-rapl");
  zone("intel-rapl-mmio:0", "package-0", 1);

  const Detection d = open_rapl_sources_at(root_, "");
  EXPECT_TRUE(d.unavailable.empty());
  EXPECT_THAT(ids(d), ElementsAre("rapl:package-0", "rapl:package-0/core", "rapl:package-0/dram",
                                  "rapl:package-0/uncore", "rapl:psys"));
  std::vector<std::string> kinds;
  for (const auto& s : d.sources) kinds.push_back(s->info().kind);
  EXPECT_THAT(kinds, ElementsAre("cpu-package", "cpu-core", "dram", "uncore", "psys"));
  EXPECT_EQ(d.sources[2]->info().name, "package-0/dram");
  EXPECT_TRUE(d.sources[0]->info().has_energy_counter);
  EXPECT_FALSE(d.sources[0]->info().power_is_averaged);
}

TEST_F(FakePowercap, FindsSubzonesNestedInTheirPackageAndOrdersNumerically) {
  zone("intel-rapl:10", "package-10", 1);
  zone("intel-rapl:2", "package-2", 1);
  zone("intel-rapl:2/intel-rapl:2:0", "dram", 1);
  EXPECT_THAT(ids(open_rapl_sources_at(root_, "")),
              ElementsAre("rapl:package-2", "rapl:package-2/dram", "rapl:package-10"));
}

TEST_F(FakePowercap, CounterBecomesJoulesAndPowerIsEnergyOverTime) {
  const fs::path package = zone("intel-rapl:0", "package-0", 1'000'000);
  Detection d = open_rapl_sources_at(root_, "package-0");
  ASSERT_EQ(d.sources.size(), 1u);
  PowerSource& source = *d.sources[0];

  const PowerSample first = source.read(10.0);
  EXPECT_EQ(first.time_s, 10.0);
  EXPECT_DOUBLE_EQ(*first.energy_j, 1.0);
  EXPECT_FALSE(first.power_w.has_value()) << "one reading has no energy difference";

  set_energy(package, 3'500'000);
  const PowerSample second = source.read(10.5);
  EXPECT_DOUBLE_EQ(*second.energy_j, 3.5);
  ASSERT_TRUE(second.power_w.has_value());
  EXPECT_NEAR(*second.power_w, 2.5 / 0.5, kPowerToleranceW);

  set_energy(package, 3'500'000);
  const PowerSample idle = source.read(11.5);
  EXPECT_NEAR(*idle.power_w, 0.0, kPowerToleranceW);
  EXPECT_DOUBLE_EQ(*idle.energy_j, 3.5);
}

TEST_F(FakePowercap, WraparoundAddsTheCounterPeriod) {
  // max_energy_range_uj = 999'999'999: values run 0..999'999'999, so the period is 10^9 µJ.
  const fs::path package = zone("intel-rapl:0", "package-0", 999'000'000, 999'999'999);
  Detection d = open_rapl_sources_at(root_, "");
  ASSERT_EQ(d.sources.size(), 1u);
  PowerSource& source = *d.sources[0];
  source.read(0.0);
  set_energy(package, 500'000);  // wrapped: 999'999 µJ to the top, 1 to 0, 500'000 after
  const PowerSample wrapped = source.read(0.1);
  EXPECT_DOUBLE_EQ(*wrapped.energy_j, (999'000'000.0 + 1'500'000.0) * 1e-6);
  EXPECT_NEAR(*wrapped.power_w, 1.5 / 0.1, kPowerToleranceW);
  set_energy(package, 2'500'000);  // no wrap: plain difference again
  const PowerSample after = source.read(0.2);
  EXPECT_DOUBLE_EQ(*after.energy_j, (999'000'000.0 + 3'500'000.0) * 1e-6);
  EXPECT_NEAR(*after.power_w, 2.0 / 0.1, kPowerToleranceW);
}

TEST_F(FakePowercap, SelectsOneZoneByNameOrDirectory) {
  zone("intel-rapl:0", "package-0", 1);
  zone("intel-rapl:0:1", "dram", 1);
  zone("intel-rapl:1", "package-1", 1);
  EXPECT_THAT(ids(open_rapl_sources_at(root_, "package-1")), ElementsAre("rapl:package-1"));
  EXPECT_THAT(ids(open_rapl_sources_at(root_, "package-0/dram")),
              ElementsAre("rapl:package-0/dram"));
  EXPECT_THAT(ids(open_rapl_sources_at(root_, "intel-rapl:0:1")),
              ElementsAre("rapl:package-0/dram"));
}

TEST_F(FakePowercap, UnknownZoneListsTheZones) {
  zone("intel-rapl:0", "package-0", 1);
  zone("intel-rapl:0:1", "dram", 1);
  try {
    open_rapl_sources_at(root_, "package-7");
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("no RAPL zone 'package-7'"));
    EXPECT_THAT(e.what(), HasSubstr("accepted: package-0, package-0/dram"));
  }
}

TEST_F(FakePowercap, MissingTreeIsUnavailableNotAnError) {
  const Detection d = open_rapl_sources_at(root_ / "absent", "");
  EXPECT_TRUE(d.sources.empty());
  ASSERT_EQ(d.unavailable.size(), 1u);
  EXPECT_EQ(d.unavailable[0].source, "rapl");
  EXPECT_THAT(d.unavailable[0].reason, HasSubstr("intel-rapl zones (not an Intel/AMD RAPL CPU"));
  // The same for a zone asked by name: absence of RAPL is normal, not a bad flag.
  EXPECT_EQ(open_rapl_sources_at(root_, "package-0").unavailable.size(), 1u);
}

TEST_F(FakePowercap, UnreadableCounterIsReportedNeverReadAsZero) {
  zone("intel-rapl:0", "package-0", 5);
  const fs::path dram = zone("intel-rapl:0:1", "dram", 5);
  const fs::path core = zone("intel-rapl:0:0", "core", 5);
  // Tests run as root, for whom mode 000 is still readable: a directory and a dangling symlink
  // give real read errors instead.
  fs::remove(dram / "energy_uj");
  fs::create_directory(dram / "energy_uj");
  fs::remove(core / "energy_uj");
  fs::create_symlink(root_ / "nowhere", core / "energy_uj");

  const Detection d = open_rapl_sources_at(root_, "");
  EXPECT_THAT(ids(d), ElementsAre("rapl:package-0"));
  ASSERT_EQ(d.unavailable.size(), 2u);
  EXPECT_EQ(d.unavailable[0].reason,
            "cannot read " + (core / "energy_uj").string() + ": No such file or directory");
  EXPECT_EQ(d.unavailable[1].reason,
            "cannot read " + (dram / "energy_uj").string() + ": Is a directory");
}

TEST_F(FakePowercap, RootOnlyCounterSaysPermissionDenied) {
  const fs::path package = zone("intel-rapl:0", "package-0", 5);
  ASSERT_EQ(chmod((package / "energy_uj").c_str(), 0), 0);
  if (geteuid() == 0) GTEST_SKIP() << "root reads mode-000 files; see the errno mapping test";
  const Detection d = open_rapl_sources_at(root_, "");
  EXPECT_TRUE(d.sources.empty());
  ASSERT_EQ(d.unavailable.size(), 1u);
  EXPECT_THAT(d.unavailable[0].reason, HasSubstr("permission denied reading"));
}

TEST(RaplReadError, MapsAccessErrorsToPermissionDenied) {
  EXPECT_EQ(describe_powercap_read_error("/sys/class/powercap/intel-rapl:0/energy_uj", EACCES),
            "permission denied reading /sys/class/powercap/intel-rapl:0/energy_uj "
            "(root-only since Linux 5.10)");
  EXPECT_THAT(describe_powercap_read_error("/x/energy_uj", EPERM),
              HasSubstr("permission denied reading /x/energy_uj"));
  EXPECT_EQ(describe_powercap_read_error("/x/energy_uj", EIO),
            "cannot read /x/energy_uj: Input/output error");
}

TEST_F(FakePowercap, MalformedCounterIsUnavailable) {
  const fs::path package = zone("intel-rapl:0", "package-0", 5);
  std::ofstream(package / "energy_uj", std::ios::trunc) << "lots\n";
  const Detection d = open_rapl_sources_at(root_, "");
  EXPECT_TRUE(d.sources.empty());
  ASSERT_EQ(d.unavailable.size(), 1u);
  EXPECT_THAT(d.unavailable[0].reason,
              HasSubstr("expected an unsigned integer in µJ, found 'lots'"));
}

TEST_F(FakePowercap, CounterVanishingDuringARunIsADeviceError) {
  const fs::path package = zone("intel-rapl:0", "package-0", 5);
  Detection d = open_rapl_sources_at(root_, "");
  ASSERT_EQ(d.sources.size(), 1u);
  d.sources[0]->read(0);
  fs::remove(package / "energy_uj");
  try {
    d.sources[0]->read(1);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rapl:package-0: cannot read"));
    EXPECT_THAT(e.what(), HasSubstr("energy_uj"));
  }
}

TEST_F(FakePowercap, FactoryReadsTheRootFromTheEnvironment) {
  zone("intel-rapl:0", "package-0", 5);
  ASSERT_EQ(setenv("NNERGY_POWERCAP_ROOT", root_.c_str(), 1), 0);
  const Detection d = open_rapl_sources("");
  unsetenv("NNERGY_POWERCAP_ROOT");
  EXPECT_THAT(ids(d), ElementsAre("rapl:package-0"));
  EXPECT_EQ(powercap_root(), fs::path("/sys/class/powercap"));
}

}  // namespace
}  // namespace nnergy::measure
