// The Slurm job of a process (environment, cgroup) and of a GPU (job-mapping directory).
#include "nnergy/fleet/slurm_job_lookup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "temp_dir_test.h"

namespace nnergy::fleet {
namespace {

class SlurmJobLookup : public test_support::TempDirTest {
 protected:
  void write(const std::filesystem::path& path, const std::string& content) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << content;
  }
};

// Who owns which job, as scontrol would say.
JobOwner owners(std::map<std::string, unsigned int> table) {
  return [table](const std::string& job) -> std::optional<unsigned int> {
    const auto found = table.find(job);
    if (found == table.end()) return std::nullopt;
    return found->second;
  };
}

TEST_F(SlurmJobLookup, FromTheEnvironmentOnlyOutsideSlurmCgroupsAndForTheJobsOwner) {
  write(dir_ / "100" / "environ",
        std::string("PATH=/usr/bin\0SLURM_JOB_ID=4711\0SLURM_ARRAY_JOB_ID=4700\0", 56));
  write(dir_ / "100" / "cgroup", "0::/user.slice/user-1000.slice/session-2.scope\n");
  write(dir_ / "100" / "status", "Name:\tpython\nUid:\t1000\t1000\t1000\t1000\n");
  EXPECT_EQ(slurm_job_of_process(100, owners({{"4711", 1000}}), dir_).value_or("none"), "4711");
  // `env SLURM_JOB_ID=4711 cmd` by another user does not label the GPU as job 4711.
  EXPECT_FALSE(slurm_job_of_process(100, owners({{"4711", 2000}}), dir_).has_value());
  EXPECT_FALSE(slurm_job_of_process(100, owners({}), dir_).has_value());
  EXPECT_FALSE(slurm_job_of_process(100, nullptr, dir_).has_value());
}

TEST_F(SlurmJobLookup, TheCgroupWinsOverTheEnvironment) {
  write(dir_ / "200" / "environ", std::string("SLURM_JOB_ID=777777\0", 20));
  write(dir_ / "200" / "cgroup",
        "12:devices:/slurm/uid_1000/job_815/step_0/task_0\n0::/user.slice\n");
  write(dir_ / "200" / "status", "Uid:\t1000\t1000\t1000\t1000\n");
  EXPECT_EQ(slurm_job_of_process(200, owners({{"777777", 1000}}), dir_).value_or("none"), "815");
  // In a Slurm cgroup without a job (slurmstepd's own), the environment is not read.
  write(dir_ / "201" / "environ", std::string("SLURM_JOB_ID=777777\0", 20));
  write(dir_ / "201" / "cgroup", "0::/system.slice/slurmstepd.scope/system\n");
  write(dir_ / "201" / "status", "Uid:\t1000\t1000\t1000\t1000\n");
  EXPECT_FALSE(slurm_job_of_process(201, owners({{"777777", 1000}}), dir_).has_value());
}

TEST_F(SlurmJobLookup, NoneForAProcessOutsideSlurmOrGone) {
  write(dir_ / "300" / "environ", std::string("SLURM_JOB_ID=\0", 14));
  write(dir_ / "300" / "cgroup", "0::/user.slice/user-1000.slice/session-2.scope\n");
  EXPECT_FALSE(slurm_job_of_process(300, owners({}), dir_).has_value());
  EXPECT_FALSE(slurm_job_of_process(301, owners({}), dir_).has_value());
}

TEST_F(SlurmJobLookup, ScontrolSaysWhoOwnsAJob) {
  const std::filesystem::path scontrol = dir_ / "scontrol";
  write(scontrol,
        "#!/bin/sh\n[ \"$4\" = 42 ] && echo 'JobId=42 JobName=x UserId=alice(1234) "
        "GroupId=alice(1234)' && exit 0\nexit 1\n");
  std::filesystem::permissions(scontrol, std::filesystem::perms::owner_all);
  const JobOwner owner_of = scontrol_job_owner(scontrol);
  EXPECT_EQ(owner_of("42").value_or(0), 1234u);
  EXPECT_FALSE(owner_of("43").has_value());
  EXPECT_FALSE(owner_of("42; rm -rf /").has_value());
}

TEST_F(SlurmJobLookup, MappingDirectoryListsJobsPerGpuIndex) {
  write(dir_ / "map" / "1", "17\n 9 \nnot-a-job\n");
  EXPECT_THAT(jobs_in_mapping_dir(dir_ / "map", 1), ::testing::ElementsAre("17", "9"));
  EXPECT_TRUE(jobs_in_mapping_dir(dir_ / "map", 0).empty());
}

TEST(SlurmJobLabel, SortedNumericallyWithoutRepeats) {
  EXPECT_EQ(slurm_job_label({"17", "9", "17", "100"}), "9,17,100");
  EXPECT_EQ(slurm_job_label({}), "");
}

}  // namespace
}  // namespace nnergy::fleet
