// The Slurm job of a process (environment, cgroup) and of a GPU (job-mapping directory).
#include "nnergy/fleet/slurm_job_lookup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

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

TEST_F(SlurmJobLookup, FromTheProcessEnvironment) {
  write(dir_ / "100" / "environ",
        std::string("PATH=/usr/bin\0SLURM_JOB_ID=4711\0SLURM_ARRAY_JOB_ID=4700\0", 56));
  EXPECT_EQ(slurm_job_of_process(100, dir_).value_or("none"), "4711");
}

TEST_F(SlurmJobLookup, FromTheCgroupWhenTheEnvironmentHasNone) {
  write(dir_ / "200" / "environ", std::string("PATH=/usr/bin\0", 14));
  write(dir_ / "200" / "cgroup",
        "12:devices:/slurm/uid_1000/job_815/step_0/task_0\n0::/user.slice\n");
  EXPECT_EQ(slurm_job_of_process(200, dir_).value_or("none"), "815");
}

TEST_F(SlurmJobLookup, NoneForAProcessOutsideSlurmOrGone) {
  write(dir_ / "300" / "environ", std::string("SLURM_JOB_ID=\0", 14));
  write(dir_ / "300" / "cgroup", "0::/user.slice/user-1000.slice/session-2.scope\n");
  EXPECT_FALSE(slurm_job_of_process(300, dir_).has_value());
  EXPECT_FALSE(slurm_job_of_process(301, dir_).has_value());
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
