#include "nnergy/learn/training_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "learn_fixture.h"
#include "nnergy/core/error.h"

namespace nnergy::learn {
namespace {

using ::testing::HasSubstr;
using testing::LearnTest;
using testing::SyntheticDataset;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST_F(LearnTest, TableHasOneEncodedRowPerOkMeasurement) {
  testing::copy_two_chains_dataset(file("d.sqlite"));
  const TrainingTable table = build_training_table(file("d.sqlite"), testing::test_catalog(), {});

  // 55 unique ops (chain_a 32, chain_b 30, 7 shared) × 2 modes.
  EXPECT_EQ(table.signatures().size(), 55u);
  ASSERT_EQ(table.rows.size(), 110u);
  EXPECT_EQ(table.features.rows(), 110u);
  EXPECT_EQ(table.features.names, table.encoder.names());
  EXPECT_EQ(table.dropped_rows, 0u);
  EXPECT_EQ(table.error_rows, 0u);
  EXPECT_TRUE(table.rows_with(Target::kPower).empty()) << "a CPU dataset has no power";
  EXPECT_EQ(table.networks.size(), 2u);
  EXPECT_EQ(table.network_measurements.size(), 4u);

  const std::size_t training = table.features.column("training");
  const std::size_t clock = table.features.column("core_clock_mhz");
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    EXPECT_EQ(table.features.row(i)[training], table.rows[i].mode == "training" ? 1.0 : 0.0);
    // Clock 0 in the dataset is the device's default: encoded as its boost clock.
    EXPECT_EQ(table.features.row(i)[clock], table.device.clock.boost_mhz);
    EXPECT_EQ(table.features.families[i], table.rows[i].op_type);
    EXPECT_GT(table.rows[i].time_s, 0);
  }
  EXPECT_EQ(table.dataset_digest, fnv1a_64_file_digest(file("d.sqlite")));
  EXPECT_EQ(table.dataset_digest.size(), 16u);
}

TEST_F(LearnTest, UnknownCpuIsOneEstimatedCore) {
  testing::copy_two_chains_dataset(file("d.sqlite"));
  const TrainingTable table = build_training_table(file("d.sqlite"), testing::test_catalog(), {});
  EXPECT_EQ(table.device_resolution.catalog_id, kCpuCoreDeviceId);
  EXPECT_EQ(table.device.id, kCpuCoreDeviceId);
  EXPECT_EQ(table.device_resolution.dataset_name, "Synthetic CPU");
  // 2 FMA units × 8 fp32 lanes × 2 flop × 2.5 GHz.
  EXPECT_DOUBLE_EQ(*table.device.peak(device::Precision::kFp32), 80e9);
  EXPECT_TRUE(table.device.is_estimated("peak_flop_per_s"));
}

TEST_F(LearnTest, GpuIsMatchedByItsNvmlName) {
  SyntheticDataset spec;
  spec.networks = {testing::conv_chain("c", {3, 4, 8})};
  spec.device_name = "NVIDIA A100-SXM4-40GB";
  spec.device_kind = "cuda";
  testing::write_dataset(file("d.sqlite"), spec);
  const TrainingTable table = build_training_table(file("d.sqlite"), testing::test_catalog(), {});
  EXPECT_EQ(table.device.id, "a100-40gb");
}

// The driver's name of the H100 SXM5 drops the form factor ("NVIDIA H100 80GB HBM3"): the
// catalog's lookup (its aliases) finds it, as for --device.
TEST_F(LearnTest, GpuIsMatchedByTheCatalogsLookup) {
  SyntheticDataset spec;
  spec.networks = {testing::conv_chain("c", {3, 4, 8})};
  spec.device_name = "NVIDIA H100 80GB HBM3";
  spec.device_kind = "cuda";
  testing::write_dataset(file("d.sqlite"), spec);
  const TrainingTable table = build_training_table(file("d.sqlite"), testing::test_catalog(), {});
  EXPECT_EQ(table.device.id, "h100-sxm");
}

TEST_F(LearnTest, UnknownGpuAsksForDeviceAndDeviceOverrides) {
  SyntheticDataset spec;
  spec.networks = {testing::conv_chain("c", {3, 4, 8})};
  spec.device_name = "Mystery Accelerator 9000";
  spec.device_kind = "cuda";
  testing::write_dataset(file("d.sqlite"), spec);
  try {
    build_training_table(file("d.sqlite"), testing::test_catalog(), {});
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("Mystery Accelerator 9000"));
    EXPECT_THAT(e.what(), HasSubstr("--device"));
  }
  const TrainingTable table =
      build_training_table(file("d.sqlite"), testing::test_catalog(), std::string("h100"));
  EXPECT_EQ(table.device.id, "h100-sxm");
  EXPECT_THAT(table.device_resolution.how, HasSubstr("--device"));
}

TEST_F(LearnTest, NonFiniteAndNonPositiveTargetsAreDroppedAndCounted) {
  SyntheticDataset spec;
  spec.networks = {testing::conv_chain("c", {3, 4, 8, 12})};  // 6 ops, 12 measurements
  int time_calls = 0;
  spec.time_s = [&time_calls](const graph::OpDescriptor& op,
                              const std::string& mode) -> std::optional<double> {
    switch (time_calls++) {
      case 0:
        return kInf;
      case 1:
        return 0.0;
      case 2:
        return -1e-3;
      case 3:
        return std::numeric_limits<double>::quiet_NaN();  // SQLite stores NULL: no time
      default:
        return testing::synthetic_time_s(op, mode);
    }
  };
  int power_calls = 0;
  spec.power_w = [&power_calls](const graph::OpDescriptor&, const std::string&) {
    ++power_calls;
    if (power_calls == 5) return std::optional<double>(-3.0);
    if (power_calls == 6) return std::optional<double>(kInf);
    return std::optional<double>(10.0 + power_calls);
  };
  testing::write_dataset(file("d.sqlite"), spec);
  const TrainingTable table = build_training_table(file("d.sqlite"), testing::test_catalog(), {});
  EXPECT_EQ(table.dropped_rows, 4u);
  EXPECT_EQ(table.rows.size(), 8u);
  EXPECT_EQ(table.dropped_power, 2u);
  EXPECT_EQ(table.rows_with(Target::kPower).size(), 6u);
  for (const std::size_t i : table.rows_with(Target::kPower)) {
    EXPECT_GT(*table.rows[i].power_w, 10.0);
  }
}

TEST_F(LearnTest, ErrorRowsAreSkippedAndCountedApart) {
  SyntheticDataset spec;
  spec.networks = {testing::conv_chain("c", {3, 4, 8})};
  testing::write_dataset(file("d.sqlite"), spec);
  {
    dataset::DatasetStore store = dataset::DatasetStore::open(file("d.sqlite"));
    dataset::MeasurementRecord m = store.measurements().front();
    m.values.status = dataset::MeasurementStatus::kError;
    m.values.time_s.reset();
    m.values.message = "synthetic failure";
    store.record_measurement(m);
  }
  const TrainingTable table = build_training_table(file("d.sqlite"), testing::test_catalog(), {});
  EXPECT_EQ(table.error_rows, 1u);
  EXPECT_EQ(table.dropped_rows, 0u);
  EXPECT_EQ(table.rows.size(), 7u);
}

TEST_F(LearnTest, MissingOrEmptyDatasetNamesTheFile) {
  try {
    build_training_table(file("missing.sqlite"), testing::test_catalog(), {});
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("missing.sqlite"));
  }
  { dataset::DatasetStore::open(file("empty.sqlite")); }
  try {
    build_training_table(file("empty.sqlite"), testing::test_catalog(), {});
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("empty.sqlite"));
    EXPECT_THAT(e.what(), HasSubstr("no op measurements"));
  }
}

}  // namespace
}  // namespace nnergy::learn
