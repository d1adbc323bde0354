#include "nnergy/core/signals.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <cstdlib>

#include "nnergy/core/error.h"

namespace nnergy {
namespace {

std::atomic<int> g_outer_calls{0};
std::atomic<int> g_inner_calls{0};

void count_outer(int) { g_outer_calls.fetch_add(1); }
void count_inner(int) { g_inner_calls.fetch_add(1); }

// The handler currently installed for `signal_number`.
void (*current_handler(int signal_number))(int) {
  struct sigaction action {};
  sigaction(signal_number, nullptr, &action);
  return action.sa_handler;
}

class SignalScopeTest : public testing::Test {
 protected:
  void SetUp() override {
    g_outer_calls = 0;
    g_inner_calls = 0;
    ASSERT_EQ(current_handler(SIGUSR1), SIG_DFL);
  }
  void TearDown() override { EXPECT_EQ(current_handler(SIGUSR1), SIG_DFL); }
};

TEST_F(SignalScopeTest, HandlesWhileAliveAndRestoresThePreviousDisposition) {
  {
    const SignalScope scope({SIGUSR1}, count_outer);
    EXPECT_NE(current_handler(SIGUSR1), SIG_DFL);
    std::raise(SIGUSR1);
    std::raise(SIGUSR1);
    EXPECT_EQ(g_outer_calls, 2);
  }
}

TEST_F(SignalScopeTest, TheInnermostScopeReceivesTheSignal) {
  const SignalScope outer({SIGUSR1}, count_outer);
  {
    const SignalScope inner({SIGUSR1}, count_inner);
    std::raise(SIGUSR1);
    EXPECT_EQ(g_inner_calls, 1);
    EXPECT_EQ(g_outer_calls, 0);
  }
  std::raise(SIGUSR1);
  EXPECT_EQ(g_inner_calls, 1);
  EXPECT_EQ(g_outer_calls, 1);
}

TEST_F(SignalScopeTest, AChainingScopePassesTheSignalOnOnceAndThenStepsAside) {
  const SignalScope outer({SIGUSR1}, count_outer);
  const SignalScope inner({SIGUSR1}, count_inner, {SignalScope::Then::kChain, false});
  std::raise(SIGUSR1);
  EXPECT_EQ(g_inner_calls, 1);
  EXPECT_EQ(g_outer_calls, 1);
  std::raise(SIGUSR1);
  EXPECT_EQ(g_inner_calls, 1);
  EXPECT_EQ(g_outer_calls, 2);
}

TEST_F(SignalScopeTest, KeepIgnoredLeavesAnIgnoredSignalIgnored) {
  const SignalScope ignore = SignalScope::ignoring({SIGUSR1});
  EXPECT_EQ(current_handler(SIGUSR1), SIG_IGN);
  {
    const SignalScope scope({SIGUSR1}, count_inner, {SignalScope::Then::kContinue, true});
    EXPECT_EQ(current_handler(SIGUSR1), SIG_IGN);
    std::raise(SIGUSR1);
  }
  {
    const SignalScope scope({SIGUSR1}, count_inner);
    EXPECT_NE(current_handler(SIGUSR1), SIG_IGN);
    std::raise(SIGUSR1);
  }
  EXPECT_EQ(current_handler(SIGUSR1), SIG_IGN);
  EXPECT_EQ(g_inner_calls, 1);
}

TEST_F(SignalScopeTest, UncatchableSignalsAndNullHandlersAreRefusedAndInstallNothing) {
  EXPECT_THROW(SignalScope({SIGUSR1, SIGKILL}, count_outer), InvalidInput);
  EXPECT_THROW(SignalScope::ignoring({SIGUSR1, SIGSTOP}), InvalidInput);
  EXPECT_THROW(SignalScope({SIGUSR1}, nullptr), InvalidInput);
  EXPECT_EQ(current_handler(SIGUSR1), SIG_DFL);
}

TEST(SignalScopeDeathTest, ChainingToTheDefaultActionEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(
      {
        const SignalScope scope({SIGUSR2}, count_inner, {SignalScope::Then::kChain, false});
        std::raise(SIGUSR2);
        std::_Exit(g_inner_calls == 1 ? 0 : 1);
      },
      testing::KilledBySignal(SIGUSR2), "");
}

}  // namespace
}  // namespace nnergy
