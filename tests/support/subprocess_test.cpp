// The test harness's process runner (support/subprocess.h): what every end-to-end test relies on.
#include "support/subprocess.h"

#include <chrono>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>
#include <signal.h>

namespace sb::testing {
namespace {

TEST(Subprocess, ExtraEnvReplacesAndRemovesInheritedVariables) {
  ASSERT_EQ(setenv("SB_SUBPROCESS_TEST_VAR", "inherited", 1), 0);
  const std::vector<std::string> sh = {"/bin/sh", "-c",
                                       "echo \"[${SB_SUBPROCESS_TEST_VAR-unset}]\""};
  EXPECT_EQ(RunProcess(sh).out, "[inherited]\n");
  EXPECT_EQ(RunProcess(sh, std::chrono::seconds(30), {"SB_SUBPROCESS_TEST_VAR=given"}).out,
            "[given]\n");
  EXPECT_EQ(RunProcess(sh, std::chrono::seconds(30), {"SB_SUBPROCESS_TEST_VAR"}).out, "[unset]\n");
  unsetenv("SB_SUBPROCESS_TEST_VAR");
}

// A child that leaves a process behind holding its stdout (as `launch` tests' daemons can):
// RunProcess returns the child's output and exit code when the child exits, not when the
// limit runs out.
TEST(Subprocess, ReturnsWhenTheChildExitsEvenIfAGrandchildHoldsItsOutput) {
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = RunProcess({"/bin/sh", "-c", "sleep 60 & echo $!; echo done >&2; exit 7"},
                                     std::chrono::seconds(50));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.err, "done\n");
  const int grandchild = std::atoi(r.out.c_str());
  ASSERT_GT(grandchild, 0) << r.out;
  kill(grandchild, SIGKILL);
  EXPECT_LT(took, std::chrono::seconds(40)) << "waited for the grandchild's end of the pipe";
}

TEST(Subprocess, ChildWaitReturnsWhenTheChildExitsEvenIfAGrandchildHoldsItsOutput) {
  Child c({"/bin/sh", "-c", "sleep 60 & echo $!; exit 3"});
  const int grandchild = std::atoi(c.ReadLine().c_str());
  ASSERT_GT(grandchild, 0);
  EXPECT_EQ(c.Wait(std::chrono::seconds(40)), 3);
  kill(grandchild, SIGKILL);
}

}  // namespace
}  // namespace sb::testing
