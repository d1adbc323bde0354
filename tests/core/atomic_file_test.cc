#include "nnergy/core/atomic_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

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

}  // namespace
}  // namespace nnergy
