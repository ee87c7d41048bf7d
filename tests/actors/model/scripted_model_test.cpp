#include "actors/model/scripted_model.hpp"

#include <gtest/gtest.h>

namespace parley {
namespace {

std::string joined(const std::vector<std::string>& deltas) {
  std::string s;
  for (auto& d : deltas) s += d;
  return s;
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

TEST(scripted_model, text_without_directives_gets_the_help_message) {
  auto steps = plan_steps("what can you do?");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(joined(steps[0].deltas), scripted_model_help());
}

TEST(scripted_model, next_step_walks_the_plan_then_is_done) {
  model_context ctx;
  ctx.user_text = "run: a\nsay: b";
  EXPECT_EQ(next_step(ctx).what, model_step::kind::run);
  ctx.step_results.push_back(step_result{step_result::kind::ran, 0, 1, "", "", {}});
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
