// api::account and api::compare_footprints on the committed real run (a ResNet-18 on the CPU
// with a synthetic 100 W source), and the text report they feed.
#include "nnergy/api/account.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "invalid_input_message.h"
#include "nnergy/account/footprint_writers.h"
#include "nnergy/core/error.h"
#include "nnergy/report/accounting_report.h"
#include "temp_dir_test.h"

namespace nnergy::api {
namespace {

using testing::HasSubstr;
using testing::Not;
using testing::StartsWith;

const std::filesystem::path kRun =
    std::filesystem::path(NNERGY_TEST_FIXTURE_DIR) / "account" / "resnet18_cpu";

AccountRequest committed_run() {
  AccountRequest r;
  r.runs = {kRun};
  r.command_line = "api_test";
  return r;
}

std::string message_of(const AccountRequest& r) {
  return test_support::invalid_input_message([&] { account(r); });
}

using ApiAccount = test_support::TempDirTest;

TEST_F(ApiAccount, AttributesTheMeasuredEnergyAndCarriesItsContext) {
  const report::AccountingReport report = account(committed_run());
  ASSERT_EQ(report.runs.size(), 1u);
  const report::AccountedRun& run = report.runs.front();
  ASSERT_EQ(run.accounting.devices.size(), 1u);
  const account::DeviceAccount& cpu = run.accounting.devices.front();
  EXPECT_EQ(cpu.device, "cpu");
  EXPECT_TRUE(cpu.has_power);
  // A constant 100 W: the attributed energy is 100 W × busy time, and the TEF sums to it.
  constexpr double kTolerance_j = 1e-6;
  EXPECT_NEAR(cpu.attributed_energy_j, 100.0 * cpu.busy_time_s, kTolerance_j);
  double tef_j = 0;
  for (const account::FootprintEntry& e : run.tef) tef_j += e.energy_j;
  EXPECT_NEAR(tef_j, cpu.attributed_energy_j, kTolerance_j);
  EXPECT_LT(run.stef.size(), run.tef.size());  // the default rules merged the repeated layers
  EXPECT_FALSE(report::has_no_power(run));
  EXPECT_EQ(report.context.command_line, "api_test");
  EXPECT_EQ(report.context.to_json()["run"], "resnet18_cpu");
  EXPECT_EQ(report.context.to_json()["alignment"], "recency");
  EXPECT_FALSE(report.assessment);
}

TEST_F(ApiAccount, MessagesNameSettingsAsTheFrontEndSpellsThem) {
  AccountRequest r = committed_run();
  r.max_factor = 1;
  EXPECT_THAT(message_of(r), StartsWith("max_factor: expected >= 2, found 1"));
  r.names = SettingNames::kFlag;
  EXPECT_THAT(message_of(r), StartsWith("--max-factor: expected >= 2, found 1"));
  AccountRequest none;
  none.names = SettingNames::kFlag;
  EXPECT_THAT(message_of(none), HasSubstr("or --trace FILE and --power FILE, found no trace"));
  AccountRequest device = committed_run();
  device.power_devices["synthetic"] = "tpu";
  EXPECT_THAT(message_of(device),
              StartsWith("power_devices['synthetic']='tpu': expected a device"));
  // Files are named by the request's fields for Python and by the flags for the CLI.
  AccountRequest two = committed_run();
  two.runs = {kRun, kRun};
  two.json_file = dir_ / "a.json";
  two.csv_file = dir_ / "a.csv";
  EXPECT_THAT(message_of(two), StartsWith("json_file/csv_file: expected one runs, found 2"));
  two.names = SettingNames::kFlag;
  EXPECT_THAT(message_of(two), StartsWith("--output/--csv: expected one RUN, found 2"));
}

TEST_F(ApiAccount, WritesEveryFileOrNone) {
  AccountRequest r = committed_run();
  r.json_file = dir_ / "a.json";
  r.csv_file = dir_ / "a.csv";
  r.folded_file = dir_ / "a.folded";
  r.perfetto_file = dir_ / "no-such-dir" / "a.perfetto.json";
  r.names = SettingNames::kFlag;
  EXPECT_THAT(message_of(r), HasSubstr("--perfetto " + r.perfetto_file.string()));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 0);

  r.perfetto_file = dir_ / "a.perfetto.json";
  const report::AccountingReport report = account(r);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 4);
  // The accounting document reads back as the STEF it was written from.
  const account::Footprint stef = account::read_footprint_json(r.json_file);
  ASSERT_EQ(stef.size(), report.runs.front().stef.size());
  EXPECT_EQ(stef.front().name, report.runs.front().stef.front().name);
  EXPECT_EQ(stef.front().energy_j, report.runs.front().stef.front().energy_j);
  EXPECT_NEAR(compare_footprints(r.json_file, r.json_file).similarity, 1.0, 1e-12);

  AccountRequest two = r;
  two.runs = {kRun, kRun};
  EXPECT_THAT(message_of(two), HasSubstr("--output/--csv/--folded/--perfetto: expected one RUN"));
}

// The session's only power source left out: the CPU's events have no power, which the run's
// warnings and the text say instead of listing 0 J everywhere.
TEST_F(ApiAccount, ADeviceWithoutPowerIsNamedInsteadOfShownAsZeroJoules) {
  AccountRequest r = committed_run();
  r.power_devices["synthetic"] = "none";
  r.names = SettingNames::kFlag;
  const report::AccountingReport report = account(r);
  const report::AccountedRun& run = report.runs.front();
  EXPECT_TRUE(report::has_no_power(run));
  EXPECT_THAT(run.run.warnings, testing::Contains(HasSubstr(
                                    "cpu: no power samples for this device (no power source is "
                                    "assigned to it)")));
  EXPECT_THAT(run.run.warnings, testing::Contains(HasSubstr("--power-device SOURCE=cpu")));
  const std::string text = report::render_text(report, {});
  EXPECT_THAT(text, HasSubstr("No energy attributed: no device of this run has power samples"));
  EXPECT_THAT(text, Not(HasSubstr("Energy distribution diagram")));
  EXPECT_THAT(text, Not(HasSubstr("energy hotspots")));
  EXPECT_THAT(text, HasSubstr("cpu: no power trace for this device"));
}

TEST_F(ApiAccount, TheTextListsTopRowsWithUnitsAndCountsTheRest) {
  const report::AccountingReport report = account(committed_run());
  const std::size_t hotspots = report.runs.front().stef.size();
  ASSERT_GT(hotspots, 3u);
  const std::string top3 = report::render_text(report, {2, 3});
  EXPECT_THAT(top3, HasSubstr("Top 3 energy hotspots"));
  EXPECT_THAT(
      top3, HasSubstr("… " + std::to_string(hotspots - 3) + " more hotspots (--top 0 lists all)"));
  EXPECT_THAT(top3, HasSubstr("more units (--top 0 lists all)"));
  // Energies and times with SI prefixes, as predict writes them.
  EXPECT_THAT(top3, testing::ContainsRegex(" [0-9.]+ mJ "));
  EXPECT_THAT(top3, testing::ContainsRegex(" [0-9.]+ ms"));
  const std::string all = report::render_text(report, {2, 0});
  EXPECT_THAT(all, HasSubstr("Top " + std::to_string(hotspots) + " energy hotspots"));
  EXPECT_THAT(all, Not(HasSubstr("lists all")));
}

TEST_F(ApiAccount, AssessingTwoRunsCorrelatesThem) {
  AccountRequest r = committed_run();
  r.runs = {kRun, kRun};
  r.assess = true;
  r.max_factor = 3;
  const report::AccountingReport report = account(r);
  ASSERT_TRUE(report.assessment);
  ASSERT_EQ(report.assessment->widening.size(), 1u);
  EXPECT_NEAR(report.assessment->widening[0], 1.0, 1e-9);
  ASSERT_EQ(report.runs.front().sparsing.size(), 2u);  // factors 2 and 3
  EXPECT_EQ(report.runs.front().sparsing[1].factor, 3u);
}

}  // namespace
}  // namespace nnergy::api
