#include "nnergy/core/atomic_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "nnergy/core/error.h"
#include "temp_dir_test.h"

namespace nnergy {
namespace {

using AtomicFile = test_support::TempDirTest;

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(AtomicFile, ReplacesTheFileAndLeavesNoTemporary) {
  const std::filesystem::path path = dir_ / "out.txt";
  write_file_atomically(path, "first", "--out");
  write_file_atomically(path, std::string("second\0line", 11), "--out");
  EXPECT_EQ(read(path), std::string("second\0line", 11));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1);
}

TEST_F(AtomicFile, APlantedLinkIsNeverFollowed) {
  // Links planted where the old, predictable temporary name (<path>.tmp.<pid>) went, and at the
  // destination itself: the victim file is untouched, the destination becomes a regular file.
  const std::filesystem::path victim = dir_ / "victim";
  std::ofstream(victim) << "keep";
  const std::filesystem::path path = dir_ / "record.json";
  std::filesystem::create_symlink(victim, dir_ / ("record.json.tmp." + std::to_string(::getpid())));
  std::filesystem::create_symlink(victim, path);
  write_file_atomically(path, "new", "record");
  EXPECT_EQ(read(victim), "keep");
  EXPECT_FALSE(std::filesystem::is_symlink(path));
  EXPECT_EQ(read(path), "new");
}

TEST_F(AtomicFile, AMissingDirectoryIsInvalidInputNamingTheFlagAndPath) {
  const std::filesystem::path path = dir_ / "no-such-dir" / "out.txt";
  try {
    write_file_atomically(path, "text", "--out");
    ADD_FAILURE() << "no InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("--out " + path.string() + ": cannot write"));
  }
  EXPECT_FALSE(std::filesystem::exists(path.parent_path()));
}

TEST_F(AtomicFile, SeveralFilesAreWrittenTogether) {
  const std::string json = "{}";
  const std::string csv = "a,b\n";
  write_files_atomically({{dir_ / "a.json", json, "--json"}, {dir_ / "a.csv", csv, "--csv"}});
  EXPECT_EQ(read(dir_ / "a.json"), json);
  EXPECT_EQ(read(dir_ / "a.csv"), csv);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 2);
}

// The second file cannot be written: the first keeps its old content and no temporary is left.
TEST_F(AtomicFile, OneFailingFileLeavesEveryDestinationAsItWas) {
  const std::filesystem::path first = dir_ / "a.json";
  write_file_atomically(first, "old", "--json");
  const std::filesystem::path second = dir_ / "no-such-dir" / "a.csv";
  try {
    write_files_atomically({{first, "new", "--json"}, {second, "x", "--csv"}});
    ADD_FAILURE() << "no InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("--csv " + second.string() + ": cannot write"));
  }
  EXPECT_EQ(read(first), "old");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1);
}

}  // namespace
}  // namespace nnergy
