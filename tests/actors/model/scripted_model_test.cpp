#include "actors/model/scripted_model.hpp"

#include <gtest/gtest.h>

namespace parley {
namespace {

std::string joined(const std::vector<std::string>& deltas) {
  std::string s;
  for (auto& d : deltas) s += d;
  return s;
}

TEST(scripted_model, ask_is_a_question_for_the_user) {
  auto steps = plan_steps("ask: Which one?\nask: {\"questions\": [{\"id\": \"x\"}]}\nask: {broken");
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].what, model_step::kind::ask_user);
  EXPECT_EQ(steps[0].arguments["questions"][0]["question"], "Which one?");
  EXPECT_EQ(steps[0].arguments["questions"][0]["id"], "q1");
  EXPECT_EQ(steps[1].arguments["questions"][0]["id"], "x");  // as given, checked by the turn
  EXPECT_TRUE(steps[2].arguments.is_discarded());             // the turn tells the model
}

TEST(scripted_model, permissions_asks_for_more_sandbox) {
  auto steps = plan_steps(
      "permissions: {\"permissions\": {\"network\": {\"enabled\": true}}}\npermissions: nope");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].what, model_step::kind::request_permissions);
  EXPECT_EQ(steps[0].arguments["permissions"]["network"]["enabled"], true);
  EXPECT_EQ(steps[1].what, model_step::kind::request_permissions);
  EXPECT_TRUE(steps[1].arguments.is_discarded());  // the turn tells the model
}

TEST(scripted_model, directives_become_steps_in_order) {
  auto steps = plan_steps("say: hello world\n  run: make test  \nnot a directive\nrun:   \nsay: bye");
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].what, model_step::kind::say);
  EXPECT_EQ(joined(steps[0].deltas), "hello world");
  EXPECT_EQ(steps[1].what, model_step::kind::run);
  EXPECT_EQ(steps[1].command, "make test");
  EXPECT_EQ(joined(steps[2].deltas), "bye");
}

TEST(scripted_model, run_options_ask_to_leave_the_sandbox_and_name_a_timeout) {
  auto steps = plan_steps("run[escalate]: touch /opt/x\nrun[timeout_ms=1500]: sleep 9\n"
                          "run[ escalate , timeout_ms=20 ]: a: b\nrun[bogus]: ls\n"
                          "run[timeout_ms=-1]: ls\nrun[escalate]:\nrun: plain");
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_TRUE(steps[0].escalate);
  EXPECT_FALSE(steps[0].justification.empty());
  EXPECT_EQ(steps[0].command, "touch /opt/x");
  EXPECT_EQ(steps[0].timeout_ms, 0);
  EXPECT_FALSE(steps[1].escalate);
  EXPECT_EQ(steps[1].timeout_ms, 1500);
  EXPECT_EQ(steps[1].command, "sleep 9");
  EXPECT_TRUE(steps[2].escalate);
  EXPECT_EQ(steps[2].timeout_ms, 20);
  EXPECT_EQ(steps[2].command, "a: b");
  EXPECT_EQ(steps[3].command, "plain");
  EXPECT_FALSE(steps[3].escalate);
}

TEST(scripted_model, text_without_directives_gets_the_help_message) {
  auto steps = plan_steps("what can you do?");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(joined(steps[0].deltas), scripted_model_help());
}

TEST(scripted_model, next_step_walks_the_plan_then_is_done) {
  model_context ctx;
  ctx.user_text = "run: a\nsay: b";
  EXPECT_EQ(next_step(ctx).what, model_step::kind::run);
  ctx.step_results.push_back(step_result{step_result::kind::ran, 0, 1, "", "", {}, true, {}});
  EXPECT_EQ(next_step(ctx).what, model_step::kind::say);
  ctx.step_results.push_back(step_result{});
  EXPECT_EQ(next_step(ctx).what, model_step::kind::done);
}

TEST(scripted_model, messages_stream_in_several_deltas) {
  auto deltas = split_into_deltas("one two three four five six seven");
  EXPECT_EQ(deltas.size(), 3u);
  EXPECT_EQ(joined(deltas), "one two three four five six seven");
  EXPECT_EQ(split_into_deltas("").size(), 1u);
}

}  // namespace
}  // namespace parley
