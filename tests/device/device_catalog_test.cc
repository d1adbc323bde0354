#include "nnergy/device/device_catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nnergy/core/error.h"

namespace nnergy::device {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kCatalog = std::filesystem::path(NNERGY_TEST_DATA_DIR) / "devices.json";

std::string message_of(const std::string& json) {
  try {
    DeviceCatalog::parse(json, "user.json");
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no InvalidInput thrown)";
}

// A minimal valid device entry; tests break one field at a time.
std::string device_json(const std::string& replace_key = "", const std::string& with = "") {
  std::string entry = R"({"id": "toy", "name": "Toy GPU", "sm_count": 10,
    "peak_flop_per_s": {"fp32": 1e13, "fp16": 4e13},
    "memory_bandwidth_byte_per_s": 1e12, "tdp_w": 300, "idle_w": 30,
    "clock_mhz": {"min": 300, "base": 900, "boost": 1500, "step": 100},
    "archline": {"fp32": {"eps_flop_pj": 10, "eps_mem_pj_per_byte": 100, "pi0_w": 80,
                          "source": "test", "estimated": false}}})";
  if (!replace_key.empty()) {
    const auto at = entry.find("\"" + replace_key + "\"");
    const auto end = entry.find_first_of(",}", entry.find(':', at));
    entry = entry.substr(0, at) + with + entry.substr(end);
  }
  return R"({"schema_version": 1, "devices": [)" + entry + "]}";
}

TEST(DeviceCatalog, BuiltInCatalogHasTheRequiredDevicesWithPublishedArchline) {
  const DeviceCatalog catalog = DeviceCatalog::load(kCatalog);
  for (const char* id : {"h100-sxm", "h200", "a100-40gb", "a100-80gb", "a30", "gh200", "mi210",
                         "rtx-2080-ti", "gtx-1080-ti", "titan-x", "gtx-580"}) {
    SCOPED_TRACE(id);
    const DeviceSpec& d = catalog.find(id);
    EXPECT_GT(d.memory_bandwidth_byte_per_s, 0);
    EXPECT_LE(d.clock.min_mhz, d.clock.boost_mhz);
    EXPECT_TRUE(d.peak(Precision::kFp32).has_value());
  }
  // Seed 003 Table 6 (FP32) and Table 8 (FP64), A100 40GB.
  const DeviceSpec& a100 = catalog.find("a100-40gb");
  const ArchlineParameters fp32 = a100.archline_for(Precision::kFp32);
  EXPECT_NEAR(fp32.eps_flop_j, 6.21e-12, 1e-15);
  EXPECT_NEAR(fp32.eps_mem_j_per_byte, 93.48e-12, 1e-15);
  EXPECT_DOUBLE_EQ(fp32.pi0_w, 98.42);
  EXPECT_FALSE(fp32.estimated);
  EXPECT_NEAR(a100.archline_for(Precision::kFp64).eps_flop_j, 14.33e-12, 1e-15);
  // GTX 580 (seed 003 Table 10, from the original archline paper).
  EXPECT_NEAR(catalog.find("gtx-580").archline_for(Precision::kFp32).eps_flop_j, 99.7e-12, 1e-15);
}

TEST(DeviceCatalog, FindsAliasesCaseInsensitively) {
  const DeviceCatalog catalog = DeviceCatalog::load(kCatalog);
  EXPECT_EQ(catalog.find("A100").id, "a100-40gb");
  EXPECT_EQ(catalog.find("h100").id, "h100-sxm");
}

TEST(DeviceCatalog, UnknownDeviceListsAcceptedIds) {
  const DeviceCatalog catalog = DeviceCatalog::load(kCatalog);
  try {
    catalog.find("tpu-v9");
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("--device tpu-v9: unknown device; accepted: "));
    EXPECT_THAT(e.what(), HasSubstr("a100-40gb"));
    EXPECT_THAT(e.what(), HasSubstr("gtx-580"));
  }
}

TEST(DeviceCatalog, MalformedFilesNameFileDeviceAndField) {
  EXPECT_EQ(message_of(device_json()), "(no InvalidInput thrown)");
  EXPECT_THAT(message_of("{not json"), HasSubstr("user.json: not valid JSON"));
  EXPECT_THAT(message_of(R"({"devices": 3})"), HasSubstr("\"devices\" array"));
  EXPECT_THAT(message_of(device_json("tdp_w", "\"tdp_w\": \"lots\"")),
              HasSubstr("user.json: device 'toy'.tdp_w: expected a number in W, found \"lots\""));
  EXPECT_THAT(message_of(device_json("sm_count", "\"x\": 1")),
              HasSubstr("device 'toy': missing field 'sm_count'"));
  EXPECT_THAT(message_of(device_json("min", "\"min\": 2000")),
              HasSubstr("0 < min <= base <= boost"));
  EXPECT_THAT(message_of(device_json("idle_w", "\"idle_w\": 400")), HasSubstr("idle_w < tdp_w"));
}

TEST(DeviceCatalog, UserCatalogReplacesAndAdds) {
  DeviceCatalog catalog = DeviceCatalog::load(kCatalog);
  const std::size_t before = catalog.devices().size();
  std::string user = device_json();
  catalog.merge(DeviceCatalog::parse(user, "user.json"));
  EXPECT_EQ(catalog.devices().size(), before + 1);
  EXPECT_EQ(catalog.find("toy").tdp_w, 300);
  // Same id again, different TDP: replaced, not duplicated.
  const std::string again = device_json("tdp_w", "\"tdp_w\": 250");
  catalog.merge(DeviceCatalog::parse(again, "user2.json"));
  EXPECT_EQ(catalog.devices().size(), before + 1);
  EXPECT_EQ(catalog.find("toy").tdp_w, 250);
}

TEST(DeviceSpec, DerivesMissingPrecisionsFromFp32AtEqualFlopPower) {
  const DeviceSpec toy = DeviceCatalog::parse(device_json(), "toy.json").find("toy");
  const ArchlineParameters fp16 = toy.archline_for(Precision::kFp16);
  EXPECT_NEAR(fp16.eps_flop_j, 10e-12 * 1e13 / 4e13, 1e-18);
  EXPECT_DOUBLE_EQ(fp16.pi0_w, 80);
  EXPECT_TRUE(fp16.estimated);
  EXPECT_THAT(fp16.source, HasSubstr("derived from fp32"));
}

TEST(DeviceSpec, ClocksAndVoltageModel) {
  const DeviceSpec toy = DeviceCatalog::parse(device_json(), "toy.json").find("toy");
  const std::vector<double> clocks = toy.supported_clocks_mhz();
  ASSERT_EQ(clocks.size(), 13u);  // 300, 400, ..., 1500
  EXPECT_DOUBLE_EQ(clocks.front(), 300);
  EXPECT_DOUBLE_EQ(clocks.back(), 1500);
  // Knee defaults to the base clock (900 MHz); v_min_ratio defaults to 0.7.
  EXPECT_DOUBLE_EQ(toy.relative_voltage(300), 0.7);
  EXPECT_DOUBLE_EQ(toy.relative_voltage(900), 0.7);
  EXPECT_DOUBLE_EQ(toy.relative_voltage(1200), 0.85);
  EXPECT_DOUBLE_EQ(toy.relative_voltage(1500), 1.0);
  EXPECT_NO_THROW(toy.check_clock(300, "--clock-mhz"));
  EXPECT_THROW(toy.check_clock(299, "--clock-mhz"), InvalidInput);
  try {
    toy.check_clock(5000, "--clock-mhz");
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("--clock-mhz 5000: outside the core clock range of toy (300–1500 MHz)"));
  }
}

}  // namespace
}  // namespace nnergy::device
