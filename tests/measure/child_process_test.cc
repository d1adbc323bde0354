// ChildProcess: exit status as a shell gives it, signals forwarded or ignored while it runs, and
// the process's dispositions restored afterwards.
#include "nnergy/measure/child_process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>

#include "nnergy/core/error.h"

namespace nnergy::measure {
namespace {

using ::testing::HasSubstr;

// The handler currently installed for `signal_number`.
void (*current_handler(int signal_number))(int) {
  struct sigaction action {};
  sigaction(signal_number, nullptr, &action);
  return action.sa_handler;
}

TEST(ChildProcess, ReturnsTheExitCodeOrOneHundredTwentyEightPlusTheSignal) {
  ChildProcess exits({"sh", "-c", "exit 5"});
  EXPECT_EQ(exits.wait(), 5);
  EXPECT_EQ(exits.wait(), 5);
  ChildProcess killed({"sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(killed.wait(), 128 + SIGKILL);
}

TEST(ChildProcess, InheritsOnlyStandardInputOutputAndError) {
  // A writable file open in this process (as monitor's trace file is) is not the command's.
  FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  const std::string fd = std::to_string(fileno(file));
  ChildProcess child({"sh", "-c", "[ -e /proc/self/fd/" + fd + " ] && exit 1; exit 0"});
  EXPECT_EQ(child.wait(), 0);
  std::fclose(file);
}

TEST(ChildProcess, ACommandThatCannotRunIsInvalidInputNamingIt) {
  try {
    ChildProcess child({"no-such-command-xyz"});
    ADD_FAILURE() << "no InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot run 'no-such-command-xyz'"));
  }
  EXPECT_THROW(ChildProcess({}), InvalidInput);
  EXPECT_EQ(current_handler(SIGTERM), SIG_DFL);
}

// SIGTERM sent to this process reaches the command, and this process lives on; SIGINT (which a
// terminal sends to the command itself) is ignored here.
TEST(ChildProcess, ForwardsSigtermAndIgnoresSigintWhileTheCommandRuns) {
  // A job a non-interactive shell starts in the background (`scripts/test.sh &`) inherits SIGINT
  // ignored; start from the defaults so that the restore below is seen.
  std::signal(SIGINT, SIG_DFL);
  ASSERT_EQ(current_handler(SIGTERM), SIG_DFL);
  ASSERT_EQ(current_handler(SIGINT), SIG_DFL);
  {
    ChildProcess child({"sleep", "30"});
    std::raise(SIGINT);
    std::raise(SIGTERM);
    EXPECT_EQ(child.wait(), 128 + SIGTERM);
  }
  EXPECT_EQ(current_handler(SIGTERM), SIG_DFL);
  EXPECT_EQ(current_handler(SIGINT), SIG_DFL);
}

TEST(ChildProcess, ACommandNotWaitedForIsEndedWithTheScope) {
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  {
    ChildProcess child({"sleep", "30"});
    pid = child.pid();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(kill(pid, 0), -1);  // reaped: no such process
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
}  // namespace nnergy::measure
