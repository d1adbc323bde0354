#include "nnergy/device/device_catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "json_depth_bomb.h"
#include "nnergy/core/error.h"

namespace nnergy::device {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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

TEST(DeviceCatalog, AddedDevicesCarryTheirDatasheetValues) {
  const DeviceCatalog catalog = DeviceCatalog::load(kCatalog);
  struct Datasheet {
    const char* id;
    int sm_count;
    double fp32_tflops;
    double fp16_tflops;  // dense tensor (matrix) peak
    double bandwidth_gb_s;
    double memory_gib;
    double tdp_w;
    double boost_mhz;
  };
  const Datasheet sheets[] = {
      {"h100-pcie", 114, 51, 756, 2000, 80, 350, 1755},
      {"a100-pcie-80gb", 108, 19.5, 312, 1935, 80, 300, 1410},
      {"t4", 40, 8.1, 65, 320, 16, 70, 1590},
      {"l4", 58, 30.3, 121, 300, 24, 72, 2040},
      {"a10", 72, 31.2, 125, 600, 24, 150, 1695},
      {"l40", 142, 90.5, 181.05, 864, 48, 300, 2490},
      {"mi300x", 304, 81.7, 1307.4, 5300, 192, 750, 2100},
  };
  for (const Datasheet& s : sheets) {
    SCOPED_TRACE(s.id);
    const DeviceSpec& d = catalog.find(s.id);
    EXPECT_EQ(d.sm_count, s.sm_count);
    EXPECT_DOUBLE_EQ(d.peak(Precision::kFp32).value(), s.fp32_tflops * 1e12);
    EXPECT_DOUBLE_EQ(d.peak(Precision::kFp16).value(), s.fp16_tflops * 1e12);
    EXPECT_DOUBLE_EQ(d.memory_bandwidth_byte_per_s, s.bandwidth_gb_s * 1e9);
    EXPECT_DOUBLE_EQ(d.memory_gib, s.memory_gib);
    EXPECT_DOUBLE_EQ(d.tdp_w, s.tdp_w);
    EXPECT_DOUBLE_EQ(d.clock.boost_mhz, s.boost_mhz);
    EXPECT_TRUE(d.is_estimated("idle_w"));
    EXPECT_TRUE(d.archline_for(Precision::kFp32).estimated);
  }
  const DeviceSpec& h100 = catalog.find("h100-pcie");
  EXPECT_DOUBLE_EQ(h100.peak(Precision::kTf32).value(), 378e12);
  EXPECT_DOUBLE_EQ(h100.peak(Precision::kBf16).value(), 756e12);
  EXPECT_EQ(h100.generation(), "Hopper");
}

TEST(DeviceCatalog, EstimatedArchlineIsSaidToBeOne) {
  // An archline entry marked estimated says so in its source and in estimated_fields.
  const DeviceCatalog catalog = DeviceCatalog::load(kCatalog);
  for (const DeviceSpec& d : catalog.devices()) {
    for (const auto& [precision, a] : d.archline) {
      SCOPED_TRACE(d.id + " " + std::string(to_string(precision)));
      if (!a.estimated) continue;
      EXPECT_EQ(a.source.rfind("estimate", 0), 0u) << a.source;
      EXPECT_TRUE(d.is_estimated("archline." + std::string(to_string(precision))));
    }
    EXPECT_FALSE(d.sources.empty()) << d.id;
  }
}

TEST(DeviceCatalog, FindsAliasesCaseInsensitively) {
  const DeviceCatalog catalog = DeviceCatalog::load(kCatalog);
  EXPECT_EQ(catalog.find("A100").id, "a100-40gb");
  EXPECT_EQ(catalog.find("h100").id, "h100-sxm");
}

TEST(DeviceCatalog, FindsTheNamesNvidiaSmiReports) {
  const DeviceCatalog catalog = DeviceCatalog::load(kCatalog);
  // nvidia-smi --query-gpu=name (and rocm-smi's product name) as the drivers print them.
  const std::pair<const char*, const char*> known[] = {
      {"NVIDIA A100-SXM4-40GB", "a100-40gb"},
      {"NVIDIA A100-SXM4-80GB", "a100-80gb"},
      {"NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"},
      {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
      {"NVIDIA H100 80GB HBM3", "h100-sxm"},
      {"NVIDIA H100 PCIe", "h100-pcie"},
      {"NVIDIA H200", "h200"},
      {"NVIDIA GH200 480GB", "gh200"},
      {"Tesla V100-SXM2-32GB", "v100-sxm2-32gb"},
      {"Tesla V100-SXM2-16GB", "v100-sxm2-16gb"},
      {"NVIDIA GeForce RTX 4090", "rtx-4090"},
      {"NVIDIA GeForce RTX 2080 Ti", "rtx-2080-ti"},
      {"NVIDIA GeForce GTX 1080 Ti", "gtx-1080-ti"},
      {"NVIDIA GeForce GTX 1080", "gtx-1080"},
      {"NVIDIA TITAN X (Pascal)", "titan-x-pascal"},
      {"GeForce GTX TITAN X", "titan-x"},
      {"NVIDIA L40S", "l40s"},
      {"NVIDIA L40", "l40"},
      {"NVIDIA L4", "l4"},
      {"Tesla T4", "t4"},
      {"NVIDIA A10", "a10"},
      {"NVIDIA A30", "a30"},
      {"AMD Instinct MI300X", "mi300x"},
      {"AMD Instinct MI210", "mi210"},
  };
  for (const auto& [name, id] : known) {
    SCOPED_TRACE(name);
    EXPECT_EQ(catalog.find(name, "--device").id, id);
  }
}

TEST(DeviceCatalog, FindsShortFormsWhateverTheCaseAndSeparators) {
  const DeviceCatalog catalog = DeviceCatalog::load(kCatalog);
  EXPECT_EQ(catalog.find("A100").id, "a100-40gb");
  EXPECT_EQ(catalog.find("H100 PCIe").id, "h100-pcie");
  EXPECT_EQ(catalog.find("h100 pcie").id, "h100-pcie");
  EXPECT_EQ(catalog.find("H100_PCIE").id, "h100-pcie");
  EXPECT_EQ(catalog.find("  h100 -- pcie ").id, "h100-pcie");
  EXPECT_EQ(catalog.find("RTX 4090").id, "rtx-4090");
  EXPECT_EQ(catalog.find("nvidia a100 pcie 80gb").id, "a100-pcie-80gb");
  EXPECT_EQ(catalog.find("MI300X").id, "mi300x");
  // The catalog name itself.
  EXPECT_EQ(catalog.find("NVIDIA Tesla V100 SXM2 32GB").id, "v100-sxm2-32gb");
}

TEST(DeviceCatalog, NormalisesNamesAsDocumented) {
  EXPECT_EQ(normalize_device_name("NVIDIA GeForce RTX 2080 Ti"), "rtx 2080 ti");
  EXPECT_EQ(normalize_device_name("Tesla V100-SXM2-32GB"), "v100 sxm2 32gb");
  EXPECT_EQ(normalize_device_name("AMD Instinct MI300X"), "mi300x");
  EXPECT_EQ(normalize_device_name("__A100__sxm4  "), "a100 sxm4");
  // A vendor word alone is kept; one after the model name is not a leading word.
  EXPECT_EQ(normalize_device_name("NVIDIA"), "nvidia");
  EXPECT_EQ(normalize_device_name("Titan X NVIDIA"), "titan x nvidia");
  EXPECT_EQ(normalize_device_name(""), "");
}

TEST(DeviceCatalog, EveryIdAliasAndNameOfTheCatalogFindsItsOwnDevice) {
  // No two built-in devices share a name once normalised: nothing a user can type from the
  // catalog is ambiguous.
  const DeviceCatalog catalog = DeviceCatalog::load(kCatalog);
  for (const DeviceSpec& d : catalog.devices()) {
    std::vector<std::string> names = d.aliases;
    names.push_back(d.id);
    names.push_back(d.name);
    for (const std::string& name : names) {
      SCOPED_TRACE(name);
      EXPECT_EQ(catalog.find(name).id, d.id);
      EXPECT_EQ(catalog.find(normalize_device_name(name)).id, d.id);
    }
  }
}

TEST(DeviceCatalog, AmbiguousNameListsTheCandidates) {
  DeviceCatalog catalog = DeviceCatalog::load(kCatalog);
  // A user device whose id differs from a built-in one only in its separator.
  std::string user = device_json();
  user.replace(user.find("\"toy\""), 5, "\"h100_pcie\"");
  catalog.merge(DeviceCatalog::parse(user, "user.json"));
  // Exact ids still win.
  EXPECT_EQ(catalog.find("h100_pcie").id, "h100_pcie");
  EXPECT_EQ(catalog.find("h100-pcie").id, "h100-pcie");
  try {
    catalog.find("NVIDIA H100 PCIe", "--device");
    FAIL() << "no InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("--device: expected the name of one device, found 'NVIDIA "
                                    "H100 PCIe', which matches 2 devices"));
    EXPECT_THAT(e.what(), HasSubstr("h100-pcie (NVIDIA H100 PCIe 80GB), h100_pcie (Toy GPU)"));
    EXPECT_THAT(e.what(), HasSubstr("give one of these ids"));
  }
}

std::string find_message(const DeviceCatalog& catalog, const std::string& name) {
  try {
    catalog.find(name, "--device");
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no InvalidInput thrown)";
}

TEST(DeviceCatalog, UnknownDeviceSuggestsTheNearestAndListsAcceptedIds) {
  const DeviceCatalog catalog = DeviceCatalog::load(kCatalog);
  const std::string far = find_message(catalog, "tpu-v9");
  EXPECT_THAT(far, HasSubstr("--device: expected a device of the catalog (an id, an alias or the "
                             "GPU's name as the driver reports it), found 'tpu-v9'; accepted "
                             "ids: h100-sxm, h100-pcie, "));
  EXPECT_THAT(far, HasSubstr("gtx-580"));
  EXPECT_THAT(far, Not(HasSubstr("did you mean")));
  // One letter off an id; a typo of an alias names the alias and its device.
  EXPECT_THAT(find_message(catalog, "h100-pcei"), HasSubstr("found 'h100-pcei'; did you mean "
                                                            "'h100-pcie'? accepted ids: "));
  EXPECT_THAT(find_message(catalog, "NVIDIA GeForce RTX 4909"),
              HasSubstr("did you mean 'rtx-4090'?"));
  EXPECT_THAT(find_message(catalog, "rtx409"), HasSubstr("did you mean 'rtx4090' (rtx-4090)?"));
  // Without a `where`, the message starts with "device".
  try {
    catalog.find("tpu-v9");
    FAIL() << "no InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), testing::StartsWith("device: expected a device of the catalog"));
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

// Found by fuzz/device_catalog: nlohmann::json throws out_of_range (not parse_error) for a number
// beyond double's range, which escaped as an internal error (exit 1) instead of exit 2.
TEST(DeviceCatalog, NumberBeyondDoubleIsInvalidInput) {
  EXPECT_THAT(message_of(device_json("tdp_w", "\"tdp_w\": 1e999")),
              HasSubstr("user.json: not valid JSON"));
}

// Found by a 30-minute fuzz/device_catalog run: an SM count or release year beyond int's range
// was converted to int (undefined behaviour) instead of refused.
TEST(DeviceCatalog, CountsOutsideTheirRangeOrWithAFractionAreInvalidInput) {
  EXPECT_THAT(message_of(device_json("sm_count", "\"sm_count\": 2.02233e+46")),
              HasSubstr("device 'toy'.sm_count: expected a whole number of streaming "
                        "multiprocessors from 0 to 1000000, found 2.02233e+46"));
  EXPECT_THAT(message_of(device_json("sm_count", "\"sm_count\": 10.5")),
              HasSubstr("device 'toy'.sm_count: expected a whole number"));
  EXPECT_THAT(message_of(device_json("sm_count", "\"sm_count\": 10, \"release_year\": -3e30")),
              HasSubstr("device 'toy'.release_year: expected a whole number of years"));
}

// Security review: a value nested 100,000 deep went into the message through a recursive dump()
// and overflowed the stack (SIGSEGV) of every command, which all load the user catalog. The
// catalog is now refused before it is parsed.
TEST(DeviceCatalog, DeeplyNestedDocumentIsInvalidInput) {
  const std::string bomb =
      R"({"devices": [], "schema_version": )" + test_support::nested_json_arrays() + "}";
  // The root object opens level 1: the value reaches level 257 with its 256th bracket.
  EXPECT_THAT(message_of(bomb),
              HasSubstr("user.json: JSON nested deeper than 256 levels at byte 290"));
  // Within the limit, a deep value is described in a line, not written out.
  const std::string deep_tdp = R"("tdp_w": )" + test_support::nested_json_arrays(250);
  EXPECT_THAT(message_of(device_json("tdp_w", deep_tdp)),
              HasSubstr("tdp_w: expected a number in W, found an array of 1 element: [[[["));
  EXPECT_LT(message_of(device_json("tdp_w", deep_tdp)).size(), 200u);
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
