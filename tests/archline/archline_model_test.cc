// Derived quantities of the published parameter sets against seed 003 Tables 6–11.
#include "nnergy/archline/archline_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "nnergy/device/device_catalog.h"

namespace nnergy::archline {
namespace {

using device::Precision;

// The tables print π with 4 significant digits and η with 2 decimals in percent; the peaks the
// seed used are recovered to ~0.1 %, so 0.5 % on power and 0.05 percentage points on η.
constexpr double kPowerRelativeTolerance = 0.005;
constexpr double kEfficiencyTolerance = 0.0005;
constexpr double kMopTolerancePj = 0.05;  // Tables 6, 8 print ε_mop to 0.1 pJ

const device::DeviceCatalog& catalog() {
  static const device::DeviceCatalog c =
      device::DeviceCatalog::load(std::string(NNERGY_TEST_DATA_DIR) + "/devices.json");
  return c;
}

struct TableRow {
  const char* device;
  Precision precision;
  double pi_flop_w;
  double pi_mem_w;
  double eta_flop;
};

class PublishedTables : public testing::TestWithParam<TableRow> {};

TEST_P(PublishedTables, DerivedQuantitiesMatchThePaper) {
  const TableRow& row = GetParam();
  const ArchlineModel m = ArchlineModel::from_device(catalog().find(row.device), row.precision);
  EXPECT_NEAR(m.flop_power_w(), row.pi_flop_w, row.pi_flop_w * kPowerRelativeTolerance);
  EXPECT_NEAR(m.memory_power_w(), row.pi_mem_w, row.pi_mem_w * kPowerRelativeTolerance);
  EXPECT_NEAR(m.flop_efficiency(), row.eta_flop, kEfficiencyTolerance);
}

INSTANTIATE_TEST_SUITE_P(Seed003, PublishedTables,
                         testing::Values(  // Table 7 (FP32)
                             TableRow{"a100-40gb", Precision::kFp32, 121.0, 145.8, 0.5514},
                             TableRow{"a100-80gb", Precision::kFp32, 129.3, 206.2, 0.5467},
                             TableRow{"gh200", Precision::kFp32, 327.8, 386.1, 0.6594},
                             TableRow{"mi210", Precision::kFp32, 188.8, 128.8, 0.6277},
                             // Table 9 (FP64)
                             TableRow{"a100-40gb", Precision::kFp64, 139.7, 127.3, 0.5924},
                             TableRow{"a100-80gb", Precision::kFp64, 145.8, 168.6, 0.5831},
                             TableRow{"gh200", Precision::kFp64, 397.0, 356.9, 0.7000},
                             TableRow{"mi210", Precision::kFp64, 440.5, 141.0, 0.8082},
                             // Table 11 (GTX 580, Choi et al.)
                             TableRow{"gtx-580", Precision::kFp32, 157.6, 73.9, 0.5638},
                             TableRow{"gtx-580", Precision::kFp64, 41.8, 73.9, 0.2556}),
                         [](const testing::TestParamInfo<TableRow>& param_info) {
                           std::string name =
                               std::string(param_info.param.device) + "_" +
                               std::string(device::to_string(param_info.param.precision));
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST(ArchlineModel, EnergyPerWordMatchesTables6And8) {
  struct Mop {
    const char* device;
    Precision precision;
    double eps_mop_pj;
  };
  for (const Mop& row :
       {Mop{"a100-40gb", Precision::kFp32, 373.9}, Mop{"a100-80gb", Precision::kFp32, 408.2},
        Mop{"gh200", Precision::kFp32, 386.1}, Mop{"mi210", Precision::kFp32, 321.9},
        Mop{"a100-40gb", Precision::kFp64, 652.7}, Mop{"a100-80gb", Precision::kFp64, 667.6},
        Mop{"gh200", Precision::kFp64, 713.8}, Mop{"mi210", Precision::kFp64, 705.2},
        // Table 10 FP32; its FP64 row repeats 2052 pJ (4-byte words), which a
        // word of 8 bytes does not reproduce, so it is not checked.
        Mop{"gtx-580", Precision::kFp32, 2052}}) {
    const ArchlineModel m = ArchlineModel::from_device(catalog().find(row.device), row.precision);
    EXPECT_NEAR(m.energy_per_word_j() * 1e12, row.eps_mop_pj, kMopTolerancePj) << row.device;
  }
}

TEST(ArchlineModel, EnergyBalanceMatchesSection52) {
  // §5.2: "The A100 variants have a B_ε of 15 to 15.3 flop/B, followed by the GH200 with 19.7";
  // the MI210 has 9.6 flop/B.
  constexpr double kBalanceTolerance = 0.1;
  EXPECT_NEAR(ArchlineModel::from_device(catalog().find("a100-40gb"), Precision::kFp32)
                  .energy_balance_flop_per_byte(),
              15.05, kBalanceTolerance);
  EXPECT_NEAR(ArchlineModel::from_device(catalog().find("gh200"), Precision::kFp32)
                  .energy_balance_flop_per_byte(),
              19.7, kBalanceTolerance);
  EXPECT_NEAR(ArchlineModel::from_device(catalog().find("mi210"), Precision::kFp32)
                  .energy_balance_flop_per_byte(),
              9.6, kBalanceTolerance);
}

TEST(ArchlineModel, ArchlineAndPowerlineAgreeWithEquation5OnTheRoofline) {
  // Eq. 9 and Eq. 10 are Eq. 5 with T from the roofline: check at both sides of B_τ.
  const ArchlineModel m = ArchlineModel::from_device(catalog().find("a100-40gb"), Precision::kFp32);
  constexpr double kRelative = 1e-12;
  for (double intensity : {0.25, 1.0, 4.0, 12.5, 20.0, 100.0, 1000.0}) {
    const double w = 1e12;
    const double q = w / intensity;
    const double t = std::max(w * m.time_per_flop_s(), q * m.time_per_byte_s());
    const double e = m.energy_j(w, q, t);
    EXPECT_NEAR(m.energy_per_flop_j(intensity), e / w, e / w * kRelative) << intensity;
    EXPECT_NEAR(m.power_w(intensity), e / t, e / t * kRelative) << intensity;
    EXPECT_NEAR(m.roofline_flop_per_s(intensity), w / t, w / t * kRelative) << intensity;
  }
}

TEST(ArchlineModel, EffectiveBalancePointIsAFixedPointOfEquation8) {
  for (const char* id : {"a100-40gb", "gh200", "mi210", "gtx-580"}) {
    for (Precision p : {Precision::kFp32, Precision::kFp64}) {
      const ArchlineModel m = ArchlineModel::from_device(catalog().find(id), p);
      const double i = m.effective_energy_balance_point_flop_per_byte();
      EXPECT_NEAR(m.effective_energy_balance_flop_per_byte(i), i, 1e-9 * i) << id;
    }
  }
  // §5.2: B̂_ε lies below B_τ on every measured GPU (FP32).
  const ArchlineModel a100 =
      ArchlineModel::from_device(catalog().find("a100-40gb"), Precision::kFp32);
  EXPECT_LT(a100.effective_energy_balance_point_flop_per_byte(), a100.time_balance_flop_per_byte());
}

}  // namespace
}  // namespace nnergy::archline
