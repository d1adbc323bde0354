#include "nnergy/learn/network_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "learn_fixture.h"

namespace nnergy::learn {
namespace {

using testing::LearnTest;

TEST(RelativeDifference, AgainstAPositiveReferenceOnly) {
  EXPECT_DOUBLE_EQ(*relative_difference(1.5, 2.0), -0.25);
  EXPECT_FALSE(relative_difference(1.0, 0.0).has_value());
}

TEST_F(LearnTest, NetworkValidationSumsCountTimesOpTimeAndEnergy) {
  testing::SyntheticDataset spec;
  spec.networks = {testing::conv_chain("chain", {3, 4, 8, 4})};
  spec.network_factor = 1.1;  // each network measured 10 % slower than its ops
  const std::string path = file("validate.sqlite");
  testing::write_dataset(path, spec);
  {
    // Energies: 2 J per second of op time, but one op has none in training.
    dataset::DatasetStore store = dataset::DatasetStore::open(path);
    bool skipped = false;
    for (dataset::MeasurementRecord m : store.measurements()) {
      if (m.key.mode == "training" && !skipped) {
        skipped = true;
        continue;
      }
      m.values.energy_j = 2 * *m.values.time_s;
      store.record_measurement(m);
    }
  }
  const dataset::DatasetStore store =
      dataset::DatasetStore::open(path, dataset::OpenMode::kReadOnly);
  const std::vector<NetworkValidation> rows = validate_networks(store);
  ASSERT_EQ(rows.size(), 2u);  // inference and training
  for (const NetworkValidation& v : rows) {
    SCOPED_TRACE(v.mode);
    EXPECT_EQ(v.network, "chain");
    EXPECT_EQ(v.ops_measured, v.unique_ops);
    EXPECT_EQ(v.nodes_not_measured, 0);
    EXPECT_NEAR(*relative_difference(v.summed_time_s, v.measured_time_s), 1 / 1.1 - 1, 1e-12);
    EXPECT_FALSE(v.measured_energy_j.has_value());
    if (v.mode == "inference") {
      ASSERT_TRUE(v.summed_energy_j.has_value());
      EXPECT_NEAR(*v.summed_energy_j, 2 * v.summed_time_s, 1e-15);
    } else {
      EXPECT_FALSE(v.summed_energy_j.has_value()) << "an op without energy: no energy sum";
    }
  }
}

}  // namespace
}  // namespace nnergy::learn
