#include "nnergy/device/calibrated_parameters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"

namespace nnergy::device {
namespace {

const std::filesystem::path kDataDir = NNERGY_TEST_DATA_DIR;

CalibratedParameters example() {
  CalibratedParameters p;
  p.corpus = "data/calibration/measured_public.json";
  p.records = 300;
  p.generations["Ampere"] = {0.6, 0.4, 0.5, 2020, 200, {"a100-40gb", "a100-80gb"}, 0.2};
  p.generations["Pascal"] = {0.8, std::nullopt, 0.7, 2016.5, 100, {"gtx-1080-ti"}, 0.25};
  p.kernel_overhead_s = 3e-6;
  p.work_half_flop_per_sm = 1e6;
  p.reduction_half = 10;
  p.winograd_speedup = 1.5;
  p.grouped_conv_efficiency = 0.6;
  p.backward_matrix_efficiency = 0.7;
  p.statistics_memory_efficiency = 0.55;
  p.host_launch_s = 50e-6;
  p.host_launch_source = "github:x/y";
  p.host_launch_by_host = {{"github:x/y", 50e-6}};
  p.host_launch_training_factor = 1.4;
  p.input_copy_bytes_per_s = 4e9;
  p.transferred_time_log_sigma = 0.3;
  p.power = PowerFit{0.4, 5, {"titan-x"}, 0.12, {{"bf16", 1.3}}};
  return p;
}

TEST(CalibratedParameters, WrittenAndReadBack) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "nnergy_calibrated_roundtrip.json";
  std::ofstream(path) << calibrated_parameters_json(example());
  const CalibratedParameters p = read_calibrated_parameters(path);
  std::filesystem::remove(path);
  EXPECT_EQ(p.records, 300u);
  EXPECT_DOUBLE_EQ(p.generations.at("Ampere").tensor.value(), 0.4);
  EXPECT_FALSE(p.generations.at("Pascal").tensor.has_value());
  EXPECT_EQ(p.generations.at("Ampere").devices.size(), 2u);
  EXPECT_DOUBLE_EQ(p.host_launch_by_host.at("github:x/y"), 50e-6);
  EXPECT_DOUBLE_EQ(p.transferred_time_log_sigma, 0.3);
  ASSERT_TRUE(p.power.has_value());
  EXPECT_DOUBLE_EQ(p.power->operand_share, 0.4);
  EXPECT_EQ(p.power->records, 5u);
  EXPECT_EQ(p.power->devices, std::vector<std::string>{"titan-x"});
  EXPECT_DOUBLE_EQ(p.power->power_log_sigma, 0.12);
  EXPECT_DOUBLE_EQ(p.power->tensor_flop_power.at("bf16"), 1.3);
  EXPECT_DOUBLE_EQ(p.winograd_speedup, 1.5);
  EXPECT_DOUBLE_EQ(p.grouped_conv_efficiency, 0.6);
  EXPECT_DOUBLE_EQ(p.backward_matrix_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(p.statistics_memory_efficiency, 0.55);
  EXPECT_DOUBLE_EQ(p.host_launch_training_factor, 1.4);
  EXPECT_DOUBLE_EQ(p.input_copy_bytes_per_s.value(), 4e9);
  EXPECT_DOUBLE_EQ(p.host_launch_for(false), 50e-6);
  EXPECT_DOUBLE_EQ(p.host_launch_for(true), 70e-6);
}

// nlohmann::json throws out_of_range, not parse_error, for a number beyond double's range: it
// escaped the reader instead of InvalidInput (the bug fuzz/device_catalog found in the catalog).
TEST(CalibratedParameters, NumberBeyondDoubleIsInvalidInput) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "nnergy_calibrated_big_number.json";
  std::ofstream(path) << R"({"schema_version": 1, "records": 1e999})";
  EXPECT_THROW(read_calibrated_parameters(path), InvalidInput);
  std::filesystem::remove(path);
}

// A count beyond size_t's range was converted (undefined behaviour); now refused, as a fraction is.
TEST(CalibratedParameters, RecordCountsAreWholeNumbersInRange) {
  for (const char* records : {"1e300", "2.5"}) {
    nlohmann::json j = nlohmann::json::parse(calibrated_parameters_json(example()));
    j["records"] = nlohmann::json::parse(records);
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() / "nnergy_calibrated_records.json";
    std::ofstream(path) << j.dump();
    try {
      read_calibrated_parameters(path);
      ADD_FAILURE() << records << ": no error";
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), testing::HasSubstr("field 'records': expected a whole number"))
          << records;
    }
    std::filesystem::remove(path);
  }
}

TEST(CalibratedParameters, FilesWithoutConvolutionRegimesReadAsNoEffect) {
  nlohmann::json j = nlohmann::json::parse(calibrated_parameters_json(example()));
  j.erase("winograd_speedup");
  j.erase("grouped_conv_efficiency");
  j.erase("backward_matrix_efficiency");
  j.erase("statistics_memory_efficiency");
  j.erase("host_launch_training_factor");
  j.erase("input_copy_bytes_per_s");
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "nnergy_calibrated_without_regimes.json";
  std::ofstream(path) << j.dump();
  const CalibratedParameters p = read_calibrated_parameters(path);
  std::filesystem::remove(path);
  EXPECT_DOUBLE_EQ(p.winograd_speedup, 1);
  EXPECT_DOUBLE_EQ(p.grouped_conv_efficiency, 1);
  EXPECT_DOUBLE_EQ(p.backward_matrix_efficiency, 1);
  EXPECT_DOUBLE_EQ(p.statistics_memory_efficiency, 1);
  EXPECT_DOUBLE_EQ(p.host_launch_for(true), p.host_launch_for(false));  // one host time
  EXPECT_FALSE(p.input_copy_bytes_per_s.has_value());
}

TEST(CalibratedParameters, ConvolutionRegimesReachTheDevice) {
  DeviceCatalog catalog = DeviceCatalog::load(kDataDir / "devices.json");
  catalog.calibrate(example(), "test");
  EXPECT_DOUBLE_EQ(catalog.find("gtx-1080-ti").efficiency.winograd_speedup, 1.5);
  EXPECT_DOUBLE_EQ(catalog.find("h100-sxm").efficiency.grouped_conv_efficiency, 0.6);
  EXPECT_DOUBLE_EQ(catalog.find("a100-40gb").efficiency.backward_matrix_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(catalog.find("rtx-2080-ti").efficiency.statistics_memory_efficiency, 0.55);
}

TEST(CalibratedParameters, ThePowerFitReachesEveryNvidiaDeviceAndReplacesEstimatedEfficiency) {
  DeviceCatalog catalog = DeviceCatalog::load(kDataDir / "devices.json");
  ASSERT_TRUE(catalog.find("a100-40gb").is_estimated("efficiency.compute"));
  catalog.calibrate(example(), "test");
  const DeviceSpec& a100 = catalog.find("a100-40gb");
  EXPECT_DOUBLE_EQ(a100.power_activity.operand_share, 0.4);
  EXPECT_NE(a100.power_activity.provenance.find("5 measured average powers (titan-x)"),
            std::string::npos)
      << a100.power_activity.provenance;
  EXPECT_FALSE(a100.is_estimated("efficiency.compute"));
  // The matrix units' flop power: bf16 at 1.3x the fp32 units' flop power at its own peak, so
  // ε_flop,bf16 = ε_flop,fp32 × peak_fp32/peak_bf16 × 1.3; fp16, not fitted, keeps 1.
  const double eps32 = a100.archline_for(Precision::kFp32).eps_flop_j;
  const double scale = *a100.peak(Precision::kFp32) / *a100.peak(Precision::kBf16);
  EXPECT_DOUBLE_EQ(a100.archline_for(Precision::kBf16).eps_flop_j, eps32 * scale * 1.3);
  EXPECT_DOUBLE_EQ(a100.archline_for(Precision::kFp16).eps_flop_j,
                   eps32 * *a100.peak(Precision::kFp32) / *a100.peak(Precision::kFp16));
  // A file without a power fit leaves κ at 0.
  CalibratedParameters no_power = example();
  no_power.power.reset();
  DeviceCatalog other = DeviceCatalog::load(kDataDir / "devices.json");
  other.calibrate(no_power, "test");
  EXPECT_EQ(other.find("a100-40gb").power_activity.operand_share, 0);
}

TEST(CalibratedParameters, AMalformedFileNamesTheField) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "nnergy_calibrated_bad.json";
  std::string text = calibrated_parameters_json(example());
  text.replace(text.find("\"memory\": 0.5"), 13, "\"memory\": 1.5");
  std::ofstream(path) << text;
  try {
    read_calibrated_parameters(path);
    ADD_FAILURE() << "accepted a memory efficiency of 1.5";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("generations.Ampere: field 'memory'"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove(path);
  EXPECT_THROW(read_calibrated_parameters(path), InvalidInput);  // missing file
}

TEST(CalibratedParameters, AMeasuredGenerationIsCalibratedOthersAreTransferred) {
  const DeviceCatalog catalog = DeviceCatalog::load(kDataDir / "devices.json");
  DeviceSpec a100 = catalog.find("a100-40gb");
  ASSERT_TRUE(apply_calibration(example(), a100));
  EXPECT_FALSE(a100.calibration.transferred);
  EXPECT_DOUBLE_EQ(a100.efficiency.tensor.value(), 0.4);
  EXPECT_DOUBLE_EQ(a100.efficiency.memory, 0.5);
  EXPECT_DOUBLE_EQ(a100.calibration.time_log_sigma, 0.2);
  EXPECT_NE(
      a100.calibration.provenance.find("calibrated on 200 measured whole-network times of Ampere"),
      std::string::npos)
      << a100.calibration.provenance;

  // Hopper (2022) is nearest to Ampere (2020); its uncertainty is the transfer's.
  DeviceSpec h100 = catalog.find("h100-sxm");
  ASSERT_TRUE(apply_calibration(example(), h100));
  EXPECT_TRUE(h100.calibration.transferred);
  EXPECT_DOUBLE_EQ(h100.efficiency.compute, 0.6);
  EXPECT_DOUBLE_EQ(h100.calibration.time_log_sigma, 0.3);
  EXPECT_NE(h100.calibration.provenance.find("transferred from Ampere"), std::string::npos);

  // Maxwell (2015) is nearest to Pascal, which has no tensor efficiency; Maxwell needs none.
  DeviceSpec titan = catalog.find("titan-x");
  ASSERT_TRUE(apply_calibration(example(), titan));
  EXPECT_NE(titan.calibration.provenance.find("transferred from Pascal"), std::string::npos);
  EXPECT_FALSE(titan.efficiency.tensor.has_value());

  // Turing (2018) has tensor cores: its own generation is absent, Pascal is nearest, and the
  // tensor efficiency comes from the nearest generation that has one.
  DeviceSpec turing = catalog.find("rtx-2080-ti");
  ASSERT_TRUE(apply_calibration(example(), turing));
  EXPECT_DOUBLE_EQ(turing.efficiency.tensor.value(), 0.4);
  EXPECT_NE(turing.calibration.provenance.find("tensor-core efficiency from Ampere"),
            std::string::npos)
      << turing.calibration.provenance;

  DeviceSpec mi210 = catalog.find("mi210");
  EXPECT_FALSE(apply_calibration(example(), mi210));
  EXPECT_TRUE(mi210.calibration.provenance.empty());
}

TEST(CalibratedParameters, TheDefaultCatalogIsCalibratedAndSaysSo) {
  const DeviceCatalog catalog = DeviceCatalog::load_default(kDataDir);
  ASSERT_TRUE(catalog.calibration().has_value());
  EXPECT_GT(catalog.calibration()->host_launch_s, 0);
  const DeviceSpec& a100 = catalog.find("a100-40gb");
  EXPECT_FALSE(a100.calibration.transferred);
  EXPECT_GT(a100.calibration.time_log_sigma, 0);
  // Hopper is fitted on nnergy's own H100 campaign; Ada has no measurement: transferred.
  EXPECT_FALSE(catalog.find("h100-sxm").calibration.transferred);
  EXPECT_TRUE(catalog.find("l4").calibration.transferred);
}

TEST(CalibratedParameters, TheAddedDevicesGetTheirGenerationsCalibration) {
  const DeviceCatalog catalog = DeviceCatalog::load_default(kDataDir);
  // Measured generations (data/calibration/calibrated.json): their own fit.
  for (const auto& [id, generation] :
       {std::pair{"a100-pcie-80gb", "Ampere"}, std::pair{"a10", "Ampere"},
        std::pair{"t4", "Turing"}, std::pair{"h100-pcie", "Hopper"}}) {
    SCOPED_TRACE(id);
    const DeviceSpec& d = catalog.find(id);
    EXPECT_EQ(d.generation(), generation);
    EXPECT_EQ(d.calibration.from_generation, generation);
    EXPECT_FALSE(d.calibration.transferred);
    EXPECT_TRUE(d.efficiency.tensor.has_value());
  }
  // Ada has no measurements: transferred, with the larger spread.
  for (const auto& [id, generation] : {std::pair{"l4", "Ada"}, std::pair{"l40", "Ada"}}) {
    SCOPED_TRACE(id);
    const DeviceSpec& d = catalog.find(id);
    EXPECT_EQ(d.generation(), generation);
    EXPECT_TRUE(d.calibration.transferred);
    EXPECT_NE(d.calibration.provenance.find("transferred from"), std::string::npos);
    EXPECT_GE(d.calibration.time_log_sigma, catalog.calibration()->transferred_time_log_sigma);
  }
  // The L40's tensor peaks (FP32 accumulate at half rate) are not matrix-unit peaks.
  EXPECT_FALSE(catalog.find("l40").has_matrix_units(Precision::kFp16));
  EXPECT_TRUE(catalog.find("l4").has_matrix_units(Precision::kFp16));
  // AMD devices keep the catalog's own estimates.
  EXPECT_TRUE(catalog.find("mi300x").calibration.provenance.empty());
}

}  // namespace
}  // namespace nnergy::device
