// Slurm array campaigns: the shard of an array task, the GPUs of a step, the sbatch scripts; and
// the per-job GPU energy records of the SPANK plugin with their summary per job, user, partition.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "json_depth_bomb.h"
#include "nnergy/core/error.h"
#include "nnergy/fleet/job_energy_record.h"
#include "nnergy/fleet/job_summary.h"
#include "nnergy/fleet/sbatch_campaign.h"
#include "nnergy/fleet/slurm_environment.h"
#include "temp_dir_test.h"

namespace nnergy::fleet {
namespace {

using ::testing::HasSubstr;

Environment env(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    const auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "no InvalidInput";
}

TEST(ShardFromSlurm, ArrayFromZero) {
  const dataset::Shard s = shard_from_slurm(env({{"SLURM_ARRAY_TASK_ID", "2"},
                                                 {"SLURM_ARRAY_TASK_COUNT", "4"},
                                                 {"SLURM_ARRAY_TASK_MIN", "0"},
                                                 {"SLURM_ARRAY_TASK_MAX", "3"}}),
                                            "--shard auto");
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 4);
}

TEST(ShardFromSlurm, ArrayFromOneAndWithAStep) {
  const dataset::Shard from_one = shard_from_slurm(env({{"SLURM_ARRAY_TASK_ID", "1"},
                                                        {"SLURM_ARRAY_TASK_COUNT", "4"},
                                                        {"SLURM_ARRAY_TASK_MIN", "1"}}),
                                                   "--shard auto");
  EXPECT_EQ(from_one.index, 1);
  const dataset::Shard stepped = shard_from_slurm(env({{"SLURM_ARRAY_TASK_ID", "6"},
                                                       {"SLURM_ARRAY_TASK_COUNT", "4"},
                                                       {"SLURM_ARRAY_TASK_MIN", "0"},
                                                       {"SLURM_ARRAY_TASK_STEP", "2"}}),
                                                  "--shard auto");
  EXPECT_EQ(stepped.index, 4);
  EXPECT_EQ(stepped.count, 4);
}

TEST(ShardFromSlurm, MalformedVariablesNameTheVariable) {
  EXPECT_THAT(message_of([] { shard_from_slurm(env({}), "--shard auto"); }),
              HasSubstr("SLURM_ARRAY_TASK_ID"));
  EXPECT_THAT(message_of([] {
                shard_from_slurm(
                    env({{"SLURM_ARRAY_TASK_ID", "x1"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}),
                    "--shard auto");
              }),
              HasSubstr("SLURM_ARRAY_TASK_ID='x1'"));
  EXPECT_THAT(message_of([] {
                shard_from_slurm(env({{"SLURM_ARRAY_TASK_ID", "9"},
                                      {"SLURM_ARRAY_TASK_COUNT", "3"},
                                      {"SLURM_ARRAY_TASK_MIN", "1"},
                                      {"SLURM_ARRAY_TASK_MAX", "9"}}),
                                 "--shard auto");
              }),
              HasSubstr("--shard auto"));
}

TEST(SlurmGpuIndices, StepGpusBeforeJobGpusNotCudaVisibleDevices) {
  EXPECT_THAT(slurm_gpu_indices(env({{"SLURM_STEP_GPUS", "1,3"},
                                     {"SLURM_JOB_GPUS", "0,1,2,3"},
                                     {"CUDA_VISIBLE_DEVICES", "0,1"}}),
                                "--gpu auto"),
              ::testing::ElementsAre(1u, 3u));
  EXPECT_THAT(slurm_gpu_indices(env({{"SLURM_JOB_GPUS", "2"}}), "--gpu auto"),
              ::testing::ElementsAre(2u));
  EXPECT_TRUE(slurm_gpu_indices(env({{"CUDA_VISIBLE_DEVICES", "0"}}), "--gpu auto").empty());
  EXPECT_THAT(message_of([] {
                slurm_gpu_indices(env({{"SLURM_JOB_GPUS", "0,gpu1"}}), "x");
              }),
              HasSubstr("SLURM_JOB_GPUS"));
}

TEST(StepGpuIndices, EachStepKindReadsOnlyTheVariableSlurmstepdSetsForIt) {
  // sbatch copies a submitter's SLURM_STEP_GPUS into the batch step: it is never read there.
  const auto hostile = env({{"SLURM_STEP_GPUS", "0,0,0,0,0,0,0,0,0,0"}, {"SLURM_JOB_GPUS", "1"}});
  EXPECT_THAT(step_gpu_indices(hostile, SlurmStepKind::kBatch, "plugin"),
              ::testing::ElementsAre(1u));
  EXPECT_THAT(step_gpu_indices(hostile, SlurmStepKind::kInteractive, "plugin"),
              ::testing::ElementsAre(1u));
  // srun steps: SLURM_STEP_GPUS, deduplicated.
  EXPECT_THAT(step_gpu_indices(hostile, SlurmStepKind::kOther, "plugin"),
              ::testing::ElementsAre(0u));
  EXPECT_TRUE(step_gpu_indices(env({{"SLURM_JOB_GPUS", "1"}}), SlurmStepKind::kOther, "p").empty());
  EXPECT_EQ(slurm_step_kind(0xFFFFFFFBu), SlurmStepKind::kBatch);
  EXPECT_EQ(slurm_step_kind(0xFFFFFFFAu), SlurmStepKind::kInteractive);
  EXPECT_EQ(slurm_step_kind(3), SlurmStepKind::kOther);
}

constexpr const char* kScontrolShowJob =
    "JobId=12 JobName=Nodes=gpu01 CPU_IDs=0 Mem=0 GRES=gpu:8(IDX:0-7)\n"
    "   UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A\n"
    "   NodeList=gpu[01-02] BatchHost=gpu01\n"
    "   JOB_GRES=gpu:3\n"
    "     Nodes=gpu01 CPU_IDs=0-3 Mem=0 GRES=gpu:2(IDX:1,3)\n"
    "     Nodes=gpu02 CPU_IDs=0-1 Mem=0 GRES=gpu:a100:1(IDX:0)\n"
    "   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0\n"
    "   Comment=x\n"
    "     Nodes=gpu03 CPU_IDs=0 Mem=0 GRES=gpu:8(IDX:0-7)\n";

TEST(AllocatedGpuIndices, FromScontrolsDetailLinesForThisNodeOnly) {
  EXPECT_THAT(allocated_gpu_indices(kScontrolShowJob, "gpu01").value(),
              ::testing::ElementsAre(1u, 3u));
  EXPECT_THAT(allocated_gpu_indices(kScontrolShowJob, "gpu02").value(), ::testing::ElementsAre(0u));
  // A detail line forged in a free-text field (after MinCPUsNode=) or the job name is not read.
  EXPECT_FALSE(allocated_gpu_indices(kScontrolShowJob, "gpu03").has_value());
  // Host lists.
  const std::string listed =
      "JobId=1\n     Nodes=node[01-04,07] CPU_IDs=0 Mem=0 GRES=gpu:1(IDX:2)\n";
  EXPECT_THAT(allocated_gpu_indices(listed, "node03").value(), ::testing::ElementsAre(2u));
  EXPECT_THAT(allocated_gpu_indices(listed, "node07").value(), ::testing::ElementsAre(2u));
  EXPECT_FALSE(allocated_gpu_indices(listed, "node05").has_value());
  EXPECT_FALSE(allocated_gpu_indices(listed, "node3").has_value());
}

TEST(CheckStepGpus, TheAllocationWinsAndAMismatchIsSaid) {
  const std::vector<unsigned int> allocation = {1};
  EXPECT_TRUE(check_step_gpus({1}, allocation, SlurmStepKind::kBatch).tampering.empty());
  for (const std::vector<unsigned int>& claimed :
       std::vector<std::vector<unsigned int>>{{99}, {0}, {0, 1}, {}}) {
    const CheckedGpus c = check_step_gpus(claimed, allocation, SlurmStepKind::kBatch);
    EXPECT_THAT(c.gpus, ::testing::ElementsAre(1u));
    EXPECT_THAT(c.tampering, HasSubstr("possible tampering"));
  }
  // An srun step may use part of the job's GPUs.
  EXPECT_TRUE(check_step_gpus({3}, std::vector<unsigned int>{1, 3}, SlurmStepKind::kOther)
                  .tampering.empty());
  EXPECT_THAT(check_step_gpus({2}, std::vector<unsigned int>{1, 3}, SlurmStepKind::kOther).gpus,
              ::testing::ElementsAre(1u, 3u));
  // Unknown allocation: the environment as it is.
  EXPECT_THAT(check_step_gpus({2}, std::nullopt, SlurmStepKind::kOther).gpus,
              ::testing::ElementsAre(2u));
}

class SbatchCampaignTest : public test_support::TempDirTest {};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_F(SbatchCampaignTest, RecordsAreRefusedInADirectoryOthersCanWrite) {
  JobEnergyRecord record;
  record.job_id = "5";
  record.step = "batch";
  record.node = "n1";
  const std::filesystem::path open_dir = dir_ / "open";
  std::filesystem::create_directories(open_dir);
  std::filesystem::permissions(open_dir, std::filesystem::perms::all);  // 0777, as /tmp
  EXPECT_THAT(message_of([&] { write_record(open_dir, record); }),
              HasSubstr("writable by nobody else"));
  EXPECT_TRUE(std::filesystem::is_empty(open_dir));
  // A symbolic link in place of the directory is refused too.
  std::filesystem::create_directories(dir_ / "real");
  std::filesystem::create_directory_symlink(dir_ / "real", dir_ / "link");
  EXPECT_THAT(message_of([&] { write_record(dir_ / "link", record); }), HasSubstr("symbolic link"));
  // A planted link where the record goes is replaced, not followed.
  const std::filesystem::path safe = dir_ / "safe";
  std::filesystem::create_directories(safe);
  std::filesystem::permissions(safe, std::filesystem::perms::owner_all |
                                         std::filesystem::perms::group_read |
                                         std::filesystem::perms::group_exec);
  std::ofstream(dir_ / "victim") << "keep";
  std::filesystem::create_symlink(dir_ / "victim", safe / record.file_name());
  const std::filesystem::path written = write_record(safe, record);
  EXPECT_FALSE(std::filesystem::is_symlink(written));
  EXPECT_EQ(read_file(dir_ / "victim"), "keep");
  EXPECT_EQ(read_record(written).job_id, "5");
}

TEST_F(SbatchCampaignTest, ArrayOfShardsAndADependentMerge) {
  SbatchCampaign c;
  c.directory = dir_ / "campaign";
  c.nnergy = "/opt/nnergy/bin/nnergy";
  c.profile_arguments = {"--models", "alexnet", "--modes", "inference"};
  c.db = dir_ / "all.sqlite";
  c.tasks = 3;
  c.gpu = true;
  c.sbatch_options = {"--partition=gpu"};
  const SbatchFiles files = write_sbatch_campaign(c);
  const std::string array = read_file(files.array_script);
  EXPECT_THAT(array, HasSubstr("#SBATCH --array=0-2\n"));
  EXPECT_THAT(array, HasSubstr("#SBATCH --requeue\n"));
  EXPECT_THAT(array, HasSubstr("#SBATCH --gres=gpu:1\n"));
  EXPECT_THAT(array, HasSubstr("#SBATCH --partition=gpu\n"));
  EXPECT_THAT(array, HasSubstr("/opt/nnergy/bin/nnergy profile --models alexnet --modes inference "
                               "--gpu auto --shard auto --db "));
  EXPECT_THAT(array, HasSubstr("scontrol requeue"));
  const std::string merge = read_file(files.merge_script);
  EXPECT_THAT(merge, HasSubstr("dataset merge " + (dir_ / "all.sqlite").string()));
  EXPECT_THAT(merge, HasSubstr("shard-2.sqlite"));
  const std::string submit = read_file(files.submit_script);
  EXPECT_THAT(submit, HasSubstr("--dependency=afterok:\"$array\""));
  ASSERT_EQ(files.shard_dbs.size(), 3u);
}

TEST_F(SbatchCampaignTest, RefusesBadTaskCountsAndOptions) {
  SbatchCampaign c;
  c.directory = dir_;
  c.nnergy = "/bin/nnergy";
  c.db = dir_ / "all.sqlite";
  c.tasks = 0;
  EXPECT_THAT(message_of([&] { write_sbatch_campaign(c); }), HasSubstr("--sbatch-tasks 0"));
  c.tasks = 2;
  c.sbatch_options = {"partition=gpu"};
  EXPECT_THAT(message_of([&] { write_sbatch_campaign(c); }), HasSubstr("--sbatch-option"));
}

TEST(ShellQuote, QuotesWhatTheShellWouldSplit) {
  EXPECT_EQ(shell_quote("alexnet"), "alexnet");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

JobEnergyRecord record(std::string job, std::string step, std::string user, double joules,
                       unsigned int gpu = 0) {
  JobEnergyRecord r;
  r.job_id = std::move(job);
  r.step = std::move(step);
  r.user = std::move(user);
  r.partition = "gpu";
  r.node = "n1";
  r.start_epoch_s = 1000;
  r.end_epoch_s = 1010;
  GpuStepEnergy g;
  g.index = gpu;
  g.uuid = "GPU-" + std::to_string(gpu);
  g.energy_j = joules;
  g.energy_method = "counter";
  r.gpus.push_back(g);
  return r;
}

class JobRecords : public test_support::TempDirTest {};

TEST_F(JobRecords, WrittenAndReadBack) {
  const JobEnergyRecord r = record("42", "batch", "ada", 2500);
  write_record(dir_, r);
  const std::vector<JobEnergyRecord> read = read_records(dir_, "--dir");
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].job_id, "42");
  EXPECT_DOUBLE_EQ(read[0].energy_j(), 2500);
  EXPECT_EQ(read[0].gpus[0].uuid, "GPU-0");
}

TEST_F(JobRecords, AMalformedRecordNamesItsFile) {
  std::ofstream(dir_ / "job-1.step-0.n1.json") << "{\"schema\": \"nnergy-job-energy/1\"}";
  EXPECT_THAT(message_of([&] { read_records(dir_, "--dir"); }), HasSubstr("job-1.step-0.n1.json"));
  EXPECT_THAT(message_of([&] { read_records(dir_ / "missing", "--dir"); }), HasSubstr("--dir"));
}

// Security review: a record whose "gpus" was nested deep was copied recursively, which
// overflowed the stack (SIGSEGV) of `nnergy jobs` at 100,000 levels under the sanitizers and at
// 1,000,000 levels (a 2 MB record) in a release build.
TEST_F(JobRecords, ADeeplyNestedRecordIsInvalidInput) {
  for (const std::size_t depth :
       {test_support::kJsonBombDepth, 10 * test_support::kJsonBombDepth}) {
    std::ofstream(dir_ / "job-1.step-0.n1.json")
        << R"({"schema": "nnergy-job-energy/1", "job_id": "1", "step": "0", "array_job_id": "",
            "array_task_id": "", "user": "ada", "partition": "p", "node": "n1",
            "start_epoch_s": 0, "end_epoch_s": 1, "gpus": )"
        << test_support::nested_json_arrays(depth) << "}";
    EXPECT_THAT(message_of([&] { read_records(dir_, "--dir"); }),
                HasSubstr("job-1.step-0.n1.json: JSON nested deeper than 256 levels"))
        << depth;
  }
}

// nlohmann::json throws out_of_range, not parse_error, for a number beyond double's range; it
// escaped read_record as an internal error (exit 1) instead of the record's InvalidInput.
TEST_F(JobRecords, ANumberBeyondDoubleIsInvalidInput) {
  std::ofstream(dir_ / "job-1.step-0.n1.json")
      << R"({"schema": "nnergy-job-energy/1", "job_id": 1e999})";
  EXPECT_THAT(message_of([&] { read_records(dir_, "--dir"); }),
              HasSubstr("job-1.step-0.n1.json: not JSON"));
}

TEST(JobEnergy, TheBatchStepSpansTheJobsStepsOnItsNode) {
  // The batch step (100 J) contains srun step 0 (60 J) on the same GPU: the job used 100 J.
  const std::vector<JobEnergyRecord> records = {record("7", "batch", "ada", 100),
                                                record("7", "0", "ada", 60)};
  EXPECT_DOUBLE_EQ(job_energy_j(records, "7"), 100);
  EXPECT_THAT(admin_comment(records, "7"), HasSubstr("nnergy_gpu_joules=100.0"));
}

TEST(JobSummary, PerJobUserAndPartition) {
  const std::vector<JobEnergyRecord> records = {record("1", "batch", "ada", 100),
                                                record("2", "batch", "bob", 300, 1),
                                                record("3", "batch", "ada", 50)};
  const JobsSummary all = summarize_jobs(records, {});
  ASSERT_EQ(all.jobs.size(), 3u);
  EXPECT_DOUBLE_EQ(all.energy_j, 450);
  ASSERT_EQ(all.users.size(), 2u);
  EXPECT_EQ(all.users[0].name, "bob");  // largest first
  EXPECT_DOUBLE_EQ(all.users[1].energy_j, 150);
  EXPECT_EQ(all.users[1].jobs, 2);
  ASSERT_EQ(all.partitions.size(), 1u);
  EXPECT_DOUBLE_EQ(all.partitions[0].energy_j, 450);
  JobFilter only_ada;
  only_ada.user = "ada";
  EXPECT_DOUBLE_EQ(summarize_jobs(records, only_ada).energy_j, 150);
}

}  // namespace
}  // namespace nnergy::fleet
