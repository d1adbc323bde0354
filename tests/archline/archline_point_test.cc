#include "nnergy/archline/archline_point.h"

#include <gtest/gtest.h>

#include "nnergy/core/error.h"

namespace nnergy::archline {
namespace {

const char* kHeader =
    "benchmark,precision,occupancy,intensity_flop_per_byte,flop_count,bytes,time_s,energy_j,"
    "power_mean_w,sm_clock_mhz,memory_clock_mhz,throttle_reasons,admitted\n";

std::string expect_invalid(const std::string& text) {
  try {
    parse_archline_csv(text, "pts.csv");
  } catch (const InvalidInput& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected InvalidInput for:\n" << text;
  return "";
}

TEST(ArchlineCsv, TheHeaderNamesTheByteCountAndOlderFilesCallingItBytesStillRead) {
  EXPECT_NE(archline_csv_header().find(",flop_count,byte_count,"), std::string::npos);
  // kHeader is the layout written before the column was renamed.
  const ArchlineDataSet old = parse_archline_csv(
      std::string(kHeader) + "roofline,fp32,1,0.5,1e12,2e12,1,300,300,,,0,1\n", "old.csv");
  ASSERT_EQ(old.points.size(), 1u);
  EXPECT_DOUBLE_EQ(old.points[0].byte_count, 2e12);
}

TEST(ArchlineCsv, RoundTripsPointsAndContext) {
  ArchlinePoint a;
  a.benchmark = BenchmarkKind::kRoofline;
  a.precision = device::Precision::kFp64;
  a.occupancy = 0.25;
  a.flop_count = 2e13;
  a.byte_count = 4e12;
  a.time_s = 3.5;
  a.energy_j = 812.25;
  a.power_mean_w = a.energy_j / a.time_s;
  a.sm_clock_mhz = 1410;
  a.throttle_reasons = 4;
  a.admitted = false;
  ArchlinePoint b;
  b.benchmark = BenchmarkKind::kBaseline;
  b.time_s = 2;
  b.energy_j = 200;
  RunContext context = RunContext::now("test");
  context.add("device", "a100-40gb");
  const std::string text = to_csv({a, b}, context);
  const ArchlineDataSet data = parse_archline_csv(text, "mem");
  ASSERT_EQ(data.points.size(), 2u);
  EXPECT_EQ(data.context_value("device"), "a100-40gb");
  const ArchlinePoint& r = data.points[0];
  EXPECT_EQ(r.benchmark, BenchmarkKind::kRoofline);
  EXPECT_EQ(r.precision, device::Precision::kFp64);
  EXPECT_DOUBLE_EQ(r.occupancy, 0.25);
  EXPECT_DOUBLE_EQ(r.flop_count, 2e13);
  EXPECT_DOUBLE_EQ(r.byte_count, 4e12);
  EXPECT_DOUBLE_EQ(r.energy_j, 812.25);
  EXPECT_DOUBLE_EQ(r.intensity_flop_per_byte(), 5.0);
  EXPECT_EQ(r.sm_clock_mhz, 1410.0);
  EXPECT_FALSE(r.memory_clock_mhz);
  EXPECT_EQ(r.throttle_reasons, 4u);
  EXPECT_FALSE(r.admitted);
  EXPECT_EQ(data.points[1].benchmark, BenchmarkKind::kBaseline);
  EXPECT_TRUE(data.points[1].admitted);
}

TEST(ArchlineCsv, NamesMissingColumns) {
  const std::string message =
      expect_invalid("benchmark,precision,flop_count,time_s\nroofline,fp32,1,1\n");
  EXPECT_NE(message.find("pts.csv:1"), std::string::npos) << message;
  EXPECT_NE(message.find("byte_count, energy_j"), std::string::npos) << message;
}

TEST(ArchlineCsv, RejectsNegativeOrZeroQuantities) {
  const std::string negative_w =
      expect_invalid(std::string(kHeader) + "roofline,fp32,1,1,-5,4,1,100,100,,,0,1\n");
  EXPECT_NE(negative_w.find("pts.csv:2"), std::string::npos) << negative_w;
  EXPECT_NE(negative_w.find("W = -5"), std::string::npos) << negative_w;
  const std::string zero_t =
      expect_invalid(std::string(kHeader) + "roofline,fp32,1,1,4,4,0,100,100,,,0,1\n");
  EXPECT_NE(zero_t.find("T = 0"), std::string::npos) << zero_t;
  const std::string zero_w_roofline =
      expect_invalid(std::string(kHeader) + "roofline,fp32,1,1,0,4,1,100,100,,,0,1\n");
  EXPECT_NE(zero_w_roofline.find("W > 0 and Q > 0"), std::string::npos) << zero_w_roofline;
  // W = 0 is what a copy point has.
  EXPECT_NO_THROW(
      parse_archline_csv(std::string(kHeader) + "copy,fp32,1,0,0,4,1,100,,,,,\n", "ok"));
}

TEST(ArchlineCsv, NamesTheColumnOfAMalformedNumber) {
  const std::string message =
      expect_invalid(std::string(kHeader) + "roofline,fp32,1,1,4,4,1,lots,100,,,0,1\n");
  EXPECT_NE(message.find("energy_j"), std::string::npos) << message;
  EXPECT_NE(message.find("'lots'"), std::string::npos) << message;
  const std::string occupancy =
      expect_invalid(std::string(kHeader) + "roofline,fp32,1.5,1,4,4,1,1,100,,,0,1\n");
  EXPECT_NE(occupancy.find("occupancy"), std::string::npos) << occupancy;
  const std::string kind = expect_invalid(std::string(kHeader) + "gemm,fp32,1,1,4,4,1,1,1,,,0,1\n");
  EXPECT_NE(kind.find("'gemm'"), std::string::npos) << kind;
}

}  // namespace
}  // namespace nnergy::archline
