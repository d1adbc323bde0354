#include "nnergy/profile/campaign.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/profile/steady_allocator.h"
#include "temp_dir_test.h"

namespace nnergy::profile {
namespace {

namespace fs = std::filesystem;

const fs::path kDataDir = NNERGY_TEST_DATA_DIR;

// A fresh temporary directory per test, removed afterwards.
class CampaignTest : public nnergy::test_support::TempDirTest {
 protected:
  // AlexNet's pooling ops only: three small ops, so that a real campaign takes well under 1 s.
  static CampaignOptions small_options() {
    CampaignOptions o;
    o.models = {"alexnet"};
    o.modes = {graph::Mode::kInference, graph::Mode::kTraining};
    o.min_time_s = 0.002;
    o.repeats = 1;
    o.whitelist = graph::Whitelist::parse("MaxPool", "--whitelist");
    o.data_dir = kDataDir;
    return o;
  }
};

TEST(CampaignParse, ModesAndDtypes) {
  EXPECT_EQ(parse_modes("inference", "--modes"), std::vector<graph::Mode>{graph::Mode::kInference});
  EXPECT_EQ(parse_modes("training, inference,training", "--modes"),
            (std::vector<graph::Mode>{graph::Mode::kTraining, graph::Mode::kInference}));
  EXPECT_THROW(parse_modes("inference,backward", "--modes"), InvalidInput);
  EXPECT_THROW(parse_modes("", "--modes"), InvalidInput);
  EXPECT_EQ(parse_campaign_dtype("fp32", "--dtype"), graph::DataType::kFloat32);
  EXPECT_EQ(parse_campaign_dtype("bf16", "--dtype"), graph::DataType::kBFloat16);
  EXPECT_EQ(parse_campaign_dtype("fp16", "--dtype"), graph::DataType::kFloat16);
  EXPECT_THROW(parse_campaign_dtype("fp8", "--dtype"), InvalidInput);
}

TEST_F(CampaignTest, Fp16AndTf32AreCudaOnlyAndTf32IsItsOwnKey) {
  CampaignOptions o = small_options();
  o.dtype = graph::DataType::kFloat16;
  EXPECT_THROW(check_options(o), InvalidInput);
  o.cuda_device = 0;
  EXPECT_NO_THROW(check_options(o));
  EXPECT_EQ(key_dtype(o), "fp16");
  o.tf32 = true;  // TF32 is a mode of fp32 math
  EXPECT_THROW(check_options(o), InvalidInput);
  o.dtype = graph::DataType::kFloat32;
  EXPECT_NO_THROW(check_options(o));
  EXPECT_EQ(key_dtype(o), "tf32");
  o.cuda_device = -1;
  EXPECT_THROW(check_options(o), InvalidInput);
  // tf32 rows never satisfy an fp32 key on resume, nor the reverse.
  o.cuda_device = 0;
  const CampaignPlan plan = plan_campaign(o, nullptr, 0);
  ASSERT_FALSE(plan.pending.empty());
  for (const PlannedMeasurement& m : plan.pending) EXPECT_EQ(m.key.dtype, "tf32");
}

TEST_F(CampaignTest, InvalidOptionsAreRejected) {
  CampaignOptions o = small_options();
  o.repeats = 0;
  EXPECT_THROW(check_options(o), InvalidInput);
  o = small_options();
  o.min_time_s = 0;
  EXPECT_THROW(check_options(o), InvalidInput);
  o = small_options();
  o.batch = 0;
  EXPECT_THROW(check_options(o), InvalidInput);
  o = small_options();
  o.clocks_mhz = {};
  EXPECT_THROW(check_options(o), InvalidInput);
  o = small_options();
  o.clocks_mhz = {900, 1410, 900};
  EXPECT_THROW(check_options(o), InvalidInput);
  o = small_options();
  o.clocks_mhz = {-5};
  EXPECT_THROW(check_options(o), InvalidInput);
  o = small_options();
  o.models = {"resnet5000"};
  EXPECT_THROW(plan_campaign(o, nullptr, 0), InvalidInput);
}

TEST_F(CampaignTest, RejectionsNameTheSettingAsTheCallerSpellsIt) {
  const auto message = [](const CampaignOptions& o) {
    try {
      check_options(o);
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  CampaignOptions o = small_options();
  o.repeats = 0;
  EXPECT_EQ(message(o), "--repeats 0: expected an integer >= 1");
  o.names = SettingNames::kKeyword;
  EXPECT_EQ(message(o), "repeats=0: expected an integer >= 1");
  o = small_options();
  o.tf32 = true;
  EXPECT_EQ(message(o), "--tf32: TF32 is a mode of NVIDIA tensor cores; not on --device cpu");
  o.names = SettingNames::kKeyword;
  EXPECT_EQ(message(o), "tf32: TF32 is a mode of NVIDIA tensor cores; not on device=cpu");
}

TEST_F(CampaignTest, EachClockIsSetOnceBeforeItsMeasurements) {
  CampaignOptions o = small_options();
  o.modes = {graph::Mode::kInference};
  o.clocks_mhz = {0, 900};
  o.check_proportionality = false;
  dataset::DatasetStore store = dataset::DatasetStore::open((dir_ / "a.sqlite").string());
  const std::int64_t device = store.add_device(cpu_device());
  const CampaignPlan plan = plan_campaign(o, &store, device);
  ASSERT_EQ(plan.pending.size(), 6u);  // 3 MaxPool ops at 2 clocks
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(plan.pending[i].key.clock_mhz, i < 3 ? 0 : 900);
  for (const graph::Network& net : plan.networks) store.add_network(net, o.whitelist);
  dataset::SessionRecord session;
  session.device_id = device;
  const std::int64_t session_id = store.start_session(session);
  std::atomic<bool> stop{false};
  // A device that cannot lock its clock cannot run a plan with a locked clock.
  EXPECT_THROW(run_campaign(plan, o, store, session_id, stop, {}), InvalidInput);
  EXPECT_TRUE(store.measurements().empty());

  std::vector<std::int64_t> clocks_set;
  const CampaignSummary summary = run_campaign(
      plan, o, store, session_id, stop, {}, [&](std::int64_t mhz) { clocks_set.push_back(mhz); });
  EXPECT_EQ(clocks_set, (std::vector<std::int64_t>{0, 900}));
  EXPECT_EQ(summary.measured, 6);
  EXPECT_TRUE(summary.proportionality.empty());
  std::size_t at_900 = 0;
  for (const auto& r : store.measurements()) at_900 += r.key.clock_mhz == 900 ? 1 : 0;
  EXPECT_EQ(at_900, 3u);
}

TEST_F(CampaignTest, PlanHasOneMeasurementPerUniqueOpAndMode) {
  const CampaignOptions o = small_options();
  const CampaignPlan plan = plan_campaign(o, nullptr, 0);
  // AlexNet has three max-pooling layers of three different input shapes.
  ASSERT_EQ(plan.pending.size(), 6u);
  ASSERT_EQ(plan.counts.size(), 2u);
  EXPECT_EQ(plan.counts[0].to_measure, 3);
  EXPECT_EQ(plan.counts[1].mode, graph::Mode::kTraining);
  std::set<dataset::MeasurementKey> keys;
  for (const PlannedMeasurement& m : plan.pending) {
    EXPECT_EQ(m.op_type, "MaxPool");
    EXPECT_EQ(m.key.dtype, "fp32");
    EXPECT_EQ(m.key.mode, to_string(m.mode));
    keys.insert(m.key);
  }
  EXPECT_EQ(keys.size(), plan.pending.size());
  EXPECT_DOUBLE_EQ(estimated_duration_s(plan, o), 6 * (1 + 1) * 0.002);
}

TEST_F(CampaignTest, SharedOpsAreMeasuredOnceForTheFirstNetwork) {
  CampaignOptions o = small_options();
  o.models = {"resnet18", "resnet34"};
  o.modes = {graph::Mode::kInference};
  o.whitelist = graph::Whitelist::standard();
  const CampaignPlan plan = plan_campaign(o, nullptr, 0);
  ASSERT_EQ(plan.counts.size(), 2u);
  EXPECT_GT(plan.counts[0].to_measure, 10);
  // ResNet-34 repeats ResNet-18's blocks more often, with the same shapes.
  EXPECT_EQ(plan.counts[1].to_measure, 0);
  EXPECT_EQ(static_cast<std::int64_t>(plan.pending.size()), plan.counts[0].to_measure);
}

TEST_F(CampaignTest, ShardsPartitionThePlan) {
  CampaignOptions o = small_options();
  o.models = {"resnet18"};
  o.whitelist = graph::Whitelist::standard();
  const std::size_t all = plan_campaign(o, nullptr, 0).pending.size();
  std::set<dataset::MeasurementKey> seen;
  std::size_t sum = 0;
  for (std::int64_t i = 1; i <= 3; ++i) {
    o.shard = dataset::Shard{i, 3};
    const CampaignPlan plan = plan_campaign(o, nullptr, 0);
    EXPECT_EQ(plan.pending.size() + static_cast<std::size_t>(plan.other_shards), all);
    sum += plan.pending.size();
    for (const PlannedMeasurement& m : plan.pending) EXPECT_TRUE(seen.insert(m.key).second);
  }
  EXPECT_EQ(sum, all);
}

TEST_F(CampaignTest, RunWritesRowsAndResumeSkipsThem) {
  const CampaignOptions o = small_options();
  dataset::DatasetStore store = dataset::DatasetStore::open((dir_ / "a.sqlite").string());
  const std::int64_t device = store.add_device(cpu_device());
  const CampaignPlan plan = plan_campaign(o, &store, device);
  for (const graph::Network& net : plan.networks) store.add_network(net, o.whitelist);
  dataset::SessionRecord session;
  session.device_id = device;
  const std::int64_t session_id = store.start_session(session);
  std::atomic<bool> stop{false};
  std::vector<std::int64_t> done_seen;
  const CampaignSummary summary =
      run_campaign(plan, o, store, session_id, stop,
                   [&](const CampaignProgress& p) { done_seen.push_back(p.done); });
  EXPECT_EQ(summary.measured, 6);
  EXPECT_EQ(summary.errors, 0);
  EXPECT_FALSE(summary.interrupted);
  EXPECT_GT(summary.measured_s, 0);
  EXPECT_LE(summary.measured_s, summary.wall_s);
  EXPECT_EQ(done_seen, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6}));
  // Once per op kind: the plan has one kind (MaxPool), checked on its first op.
  ASSERT_EQ(summary.proportionality.size(), 1u);
  EXPECT_EQ(summary.proportionality[0].op_type, "MaxPool");
  EXPECT_TRUE(summary.proportionality[0].error.empty()) << summary.proportionality[0].error;
  EXPECT_EQ(summary.proportionality[0].fit.iterations.size(), 6u);  // 6/7 of 7 loop lengths
  EXPECT_GT(summary.proportionality[0].fit.slope_s, 0);
  const auto rows = store.measurements();
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& r : rows) {
    EXPECT_EQ(r.values.status, dataset::MeasurementStatus::kOk);
    ASSERT_TRUE(r.values.time_s.has_value());
    EXPECT_GT(*r.values.time_s, 0);
    EXPECT_GE(r.values.iterations, 1);
    // No RAPL in the test environment is normal; then power and energy are absent, not zero.
    if (summary.power_sources.empty()) {
      EXPECT_FALSE(r.values.energy_j.has_value());
    }
  }
  const CampaignPlan again = plan_campaign(o, &store, device);
  EXPECT_TRUE(again.pending.empty());
  EXPECT_EQ(again.skipped, 6);
}

TEST_F(CampaignTest, StopDiscardsTheMeasurementInFlight) {
  const CampaignOptions o = small_options();
  dataset::DatasetStore store = dataset::DatasetStore::open((dir_ / "a.sqlite").string());
  const std::int64_t device = store.add_device(cpu_device());
  const CampaignPlan plan = plan_campaign(o, &store, device);
  for (const graph::Network& net : plan.networks) store.add_network(net, o.whitelist);
  dataset::SessionRecord session;
  session.device_id = device;
  const std::int64_t session_id = store.start_session(session);
  std::atomic<bool> stop{false};
  // The stop arrives while the third measurement runs, as a SIGINT would.
  const CampaignSummary summary =
      run_campaign(plan, o, store, session_id, stop, [&](const CampaignProgress& p) {
        if (p.done == 2 && p.current != nullptr) stop.store(true);
      });
  EXPECT_TRUE(summary.interrupted);
  EXPECT_EQ(summary.measured, 2);
  EXPECT_EQ(store.measurements().size(), 2u);
  EXPECT_EQ(plan_campaign(o, &store, device).pending.size(), 4u);
}

TEST_F(CampaignTest, AnOpThatCannotBeBuiltIsAnErrorRowAndTheCampaignGoesOn) {
  CampaignOptions o = small_options();
  o.modes = {graph::Mode::kInference};
  // Flatten is not an op the runners build.
  o.whitelist = graph::Whitelist::parse("MaxPool,Flatten", "--whitelist");
  dataset::DatasetStore store = dataset::DatasetStore::open((dir_ / "a.sqlite").string());
  const std::int64_t device = store.add_device(cpu_device());
  const CampaignPlan plan = plan_campaign(o, &store, device);
  for (const graph::Network& net : plan.networks) store.add_network(net, o.whitelist);
  dataset::SessionRecord session;
  session.device_id = device;
  std::atomic<bool> stop{false};
  const CampaignSummary summary =
      run_campaign(plan, o, store, store.start_session(session), stop, {});
  EXPECT_EQ(summary.measured, 3);
  EXPECT_EQ(summary.errors, 1);
  std::size_t errors = 0;
  for (const auto& r : store.measurements()) {
    if (r.values.status != dataset::MeasurementStatus::kError) continue;
    ++errors;
    EXPECT_NE(r.values.message.find("Flatten"), std::string::npos) << r.values.message;
    EXPECT_FALSE(r.values.time_s.has_value());
  }
  EXPECT_EQ(errors, 1u);
  // Error rows are retried on resume.
  EXPECT_EQ(plan_campaign(o, &store, device).pending.size(), 1u);
}

TEST(NetworkRunner, RunsACnnInBothModes) {
  const CampaignOptions o = [] {
    CampaignOptions c;
    c.models = {"squeezenet1_1"};
    c.data_dir = kDataDir;
    return c;
  }();
  const std::vector<graph::Network> nets = import_networks(o);
  ASSERT_EQ(nets.size(), 1u);
  const std::unique_ptr<OpRunner> runner = OpRunner::build_network(nets[0], RunnerOptions{});
  EXPECT_EQ(runner->output_shape(graph::Mode::kInference), (graph::Shape{1, 1000}));
  EXPECT_EQ(runner->output_shape(graph::Mode::kTraining), (graph::Shape{1, 1000}));
  EXPECT_TRUE(runner->has_backward());
  EXPECT_NO_THROW(runner->run(graph::Mode::kInference, 1));
  EXPECT_NO_THROW(runner->run(graph::Mode::kTraining, 1));
  EXPECT_NE(runner->description().find("network squeezenet1_1 [1, 3, 224, 224] -> [1, 1000]"),
            std::string::npos)
      << runner->description();
}

TEST(NetworkRunner, RunsDenseNetWithItsPadNodes) {
  CampaignOptions o;
  o.models = {"densenet121"};
  o.data_dir = kDataDir;
  const std::vector<graph::Network> nets = import_networks(o);
  const std::unique_ptr<OpRunner> runner = OpRunner::build_network(nets.at(0), RunnerOptions{});
  EXPECT_EQ(runner->output_shape(graph::Mode::kInference), (graph::Shape{1, 1000}));
  EXPECT_NO_THROW(runner->run(graph::Mode::kInference, 1));
}

TEST(NetworkRunner, ListsTheNodeTypesItCannotRun) {
  CampaignOptions o;
  o.models = {"gpt2_small"};
  o.data_dir = kDataDir;
  const std::vector<graph::Network> nets = import_networks(o);
  try {
    OpRunner::build_network(nets.at(0), RunnerOptions{});
    FAIL() << "gpt2_small needs node types the executor does not have";
  } catch (const InvalidInput& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("gpt2_small"), std::string::npos) << what;
    EXPECT_NE(what.find("Split (12)"), std::string::npos) << what;
    EXPECT_NE(what.find("Where (12)"), std::string::npos) << what;
  }
}

TEST_F(CampaignTest, NetworksAreMeasuredAfterTheirOpsAndResumed) {
  CampaignOptions o = small_options();
  o.models = {"squeezenet1_1"};
  o.modes = {graph::Mode::kInference};
  o.measure_networks = true;
  dataset::DatasetStore store = dataset::DatasetStore::open((dir_ / "a.sqlite").string());
  const std::int64_t device = store.add_device(cpu_device());
  const CampaignPlan plan = plan_campaign(o, &store, device);
  ASSERT_GE(plan.pending.size(), 2u);
  EXPECT_TRUE(plan.pending.back().whole_network);
  EXPECT_FALSE(plan.pending.front().whole_network);
  EXPECT_EQ(plan.counts.at(0).network_to_measure, 1);
  for (const graph::Network& net : plan.networks) store.add_network(net, o.whitelist);
  dataset::SessionRecord session;
  session.device_id = device;
  std::atomic<bool> stop{false};
  const CampaignSummary summary =
      run_campaign(plan, o, store, store.start_session(session), stop, {});
  EXPECT_EQ(summary.errors, 0);
  EXPECT_EQ(summary.measured, static_cast<std::int64_t>(plan.pending.size()));
  const auto networks = store.network_measurements();
  ASSERT_EQ(networks.size(), 1u);
  EXPECT_EQ(networks[0].network_name, "squeezenet1_1");
  EXPECT_EQ(networks[0].mode, "inference");
  ASSERT_TRUE(networks[0].values.time_s.has_value());
  // The whole network takes longer than any one of its max-pooling layers.
  for (const auto& m : store.measurements())
    EXPECT_GT(*networks[0].values.time_s, *m.values.time_s);
  EXPECT_EQ(store.measurements().size(), plan.pending.size() - 1);
  const CampaignPlan again = plan_campaign(o, &store, device);
  EXPECT_TRUE(again.pending.empty());
  EXPECT_EQ(again.counts.at(0).network_to_measure, 0);
}

TEST(SteadyAllocator, IsSetOnGlibcAndSaysWhat) {
#if defined(__GLIBC__)
  EXPECT_EQ(use_steady_allocator(), "glibc malloc: mmap threshold 32 MiB, heap never trimmed");
  EXPECT_EQ(use_steady_allocator(), "glibc malloc: mmap threshold 32 MiB, heap never trimmed");
#else
  EXPECT_EQ(use_steady_allocator(), "");
#endif
}

TEST(CpuDevice, IsACpuWithAName) {
  const dataset::DeviceRecord d = cpu_device();
  EXPECT_EQ(d.kind, "cpu");
  EXPECT_FALSE(d.name.empty());
  EXPECT_EQ(d.uuid, "");
}

}  // namespace
}  // namespace nnergy::profile
