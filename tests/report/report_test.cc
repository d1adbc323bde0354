#include <gtest/gtest.h>

#include "nnergy/core/run_context.h"
#include "nnergy/report/quantity_format.h"
#include "nnergy/report/text_table.h"

namespace nnergy::report {
namespace {

TEST(QuantityFormat, SiPrefixesWithThreeSignificantDigits) {
  EXPECT_EQ(format_quantity(0.00802, "J"), "8.02 mJ");
  EXPECT_EQ(format_quantity(2.62e11, "FLOP"), "262 GFLOP");
  EXPECT_EQ(format_quantity(250, "W"), "250 W");
  EXPECT_EQ(format_quantity(0.0286, "s"), "28.6 ms");
  EXPECT_EQ(format_quantity(999.7, "W"), "1.00 kW");
  EXPECT_EQ(format_quantity(-0.5, "J"), "-500 mJ");
  EXPECT_EQ(format_quantity(0, "J"), "0 J");
}

TEST(TextTable, AlignsColumnsCountingCodePoints) {
  TextTable t;
  t.add_column("name", TextTable::Align::kLeft);
  t.add_column("µs", TextTable::Align::kRight);
  t.add_row({"a", "1"});
  t.add_row({"long", "100"});
  EXPECT_EQ(t.render(), "name   µs\na       1\nlong  100\n");
}

TEST(RunContext, CarriesVersionSchemaAndFieldsInOrder) {
  RunContext c = RunContext::now("nnergy predict x");
  c.add("device", "a100-40gb").add("batch", 32);
  const auto j = c.to_json();
  EXPECT_EQ(j["tool"], "nnergy");
  EXPECT_EQ(j["schema_version"], kOutputSchemaVersion);
  EXPECT_FALSE(j["tool_version"].get<std::string>().empty());
  EXPECT_EQ(j["batch"], 32);
  EXPECT_EQ(c.date_utc.size(), 20u);
  const std::string csv = c.to_csv_comments();
  EXPECT_EQ(csv.rfind("# tool: nnergy\n", 0), 0u);
  EXPECT_NE(csv.find("# device: a100-40gb\n# batch: 32\n"), std::string::npos);
}

}  // namespace
}  // namespace nnergy::report
