#include "actors/model/wire/tool_outcomes.hpp"

#include <gtest/gtest.h>

namespace parley::wire {
namespace {

using std::chrono::milliseconds;

TEST(tool_outcomes, a_run_reports_wall_time_exit_code_and_output) {
  EXPECT_EQ(exec_ran_text(2, milliseconds(1250), "ls: x: No such file\n"),
            "Wall time: 1.2500 seconds\nProcess exited with code 2\nOutput:\nls: x: No such file\n");
  EXPECT_EQ(exec_ran_text(0, milliseconds(0), ""), "Wall time: 0.0000 seconds\nProcess exited with code 0\nOutput:\n");
}

TEST(tool_outcomes, a_timeout_says_after_how_long) {
  EXPECT_EQ(exec_timed_out_text(milliseconds(10000), "partial"),
            "Wall time: 10.0000 seconds\ncommand timed out after 10000 milliseconds\nOutput:\npartial");
}

TEST(tool_outcomes, declines_interrupts_and_deadlines_use_codexs_words) {
  EXPECT_EQ(exec_declined_text(), "exec command rejected by user");
  EXPECT_EQ(patch_declined_text(), "patch rejected by user");
  EXPECT_EQ(interrupted_text(), "aborted");
  EXPECT_NE(approval_timed_out_text().find("expired"), std::string::npos);
  EXPECT_NE(approval_timed_out_text().find("not a refusal"), std::string::npos);
}

TEST(tool_outcomes, patches_and_failures) {
  EXPECT_EQ(patch_applied_text({{'A', "new.txt"}, {'M', "src/main.cpp"}, {'D', "old.txt"}}),
            "Success. Updated the following files:\nA new.txt\nM src/main.cpp\nD old.txt\n");
  EXPECT_EQ(patch_failed_text("invalid patch: line 3: expected a hunk"),
            "apply_patch failed: invalid patch: line 3: expected a hunk");
  EXPECT_EQ(exec_failed_to_start_text("no such directory: build"),
            "execution error: the command could not be started: no such directory: build");
  EXPECT_EQ(unknown_tool_text("view_image").rfind("unsupported call: view_image", 0), 0u);
}

}  // namespace
}  // namespace parley::wire
