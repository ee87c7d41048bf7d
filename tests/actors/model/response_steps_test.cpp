// A finished response as the steps a turn takes.
#include "actors/model/response_steps.hpp"

#include <gtest/gtest.h>

namespace parley {
namespace {

using json = nlohmann::json;

json message(const char* id, const char* text) {
  return json{{"type", "message"},
              {"id", id},
              {"role", "assistant"},
              {"content", json::array({{{"type", "output_text"}, {"text", text}}})}};
}

json exec_call(const char* call_id, const char* cmd) {
  return json{{"type", "function_call"},
              {"call_id", call_id},
              {"name", "exec_command"},
              {"arguments", json{{"cmd", cmd}, {"workdir", "sub"}}.dump()}};
}

TEST(ResponseSteps, AMessageAloneEndsTheTurn) {
  auto plan = plan_response({json{{"type", "reasoning"}, {"id", "rs_1"}}, message("msg_1", "hi")});
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].step.what, model_step::kind::say);
  EXPECT_EQ(plan.steps[0].step.streamed_item, "msg_1");
  EXPECT_EQ(plan.steps[0].step.deltas, std::vector<std::string>{"hi"});
  EXPECT_FALSE(plan.steps[0].call);
  EXPECT_FALSE(plan.called_tools);
}

TEST(ResponseSteps, AnEscalationAndATimeoutReachTheStep) {
  json call{{"type", "function_call"},
            {"call_id", "call_9"},
            {"name", "exec_command"},
            {"arguments", json{{"cmd", "touch /opt/x"},
                               {"sandbox_permissions", "require_escalated"},
                               {"justification", "writes /opt"},
                               {"timeout_ms", 2500}}
                              .dump()}};
  auto plan = plan_response({call, exec_call("call_10", "ls")});
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_TRUE(plan.steps[0].step.escalate);
  EXPECT_EQ(plan.steps[0].step.justification, "writes /opt");
  EXPECT_EQ(plan.steps[0].step.timeout_ms, 2500);
  EXPECT_FALSE(plan.steps[1].step.escalate);
  EXPECT_EQ(plan.steps[1].step.timeout_ms, 0);
}

TEST(ResponseSteps, ACommandCallBecomesARunThatRemembersItsCall) {
  auto plan = plan_response({message("msg_1", "let me look"), exec_call("call_1", "ls -la")});
  ASSERT_EQ(plan.steps.size(), 2u);
  const auto& run = plan.steps[1];
  EXPECT_EQ(run.step.what, model_step::kind::run);
  EXPECT_EQ(run.step.command, "ls -la");
  EXPECT_EQ(run.step.workdir, "sub");
  ASSERT_TRUE(run.call);
  EXPECT_EQ(run.call->call_id, "call_1");
  EXPECT_TRUE(plan.called_tools);
}

TEST(ResponseSteps, APatchCallBecomesAPatch) {
  auto patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n";
  auto plan = plan_response({json{{"type", "custom_tool_call"},
                                  {"call_id", "call_2"},
                                  {"name", "apply_patch"},
                                  {"input", patch}}});
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].step.what, model_step::kind::patch);
  EXPECT_EQ(plan.steps[0].step.patch, patch);
}

TEST(ResponseSteps, UnknownAndBrokenCallsAreAnsweredAtOnceAndTheModelAskedAgain) {
  auto plan = plan_response({json{{"type", "function_call"},
                                  {"call_id", "call_3"},
                                  {"name", "frobnicate"},
                                  {"arguments", "{}"}},
                             json{{"type", "function_call"},
                                  {"call_id", "call_4"},
                                  {"name", "exec_command"},
                                  {"arguments", "{not json"}}});
  EXPECT_TRUE(plan.steps.empty());
  ASSERT_EQ(plan.immediate_outputs.size(), 2u);
  EXPECT_EQ(plan.immediate_outputs[0]["call_id"], "call_3");
  EXPECT_EQ(plan.immediate_outputs[1]["call_id"], "call_4");
  EXPECT_TRUE(plan.called_tools) << "the model must hear the answers";
}

TEST(ResponseSteps, EmptyMessagesAndOddItemsAreSkipped) {
  auto plan = plan_response({message("msg_1", ""), json("not an object"), json{{"type", "web_search_call"}}});
  EXPECT_TRUE(plan.steps.empty());
  EXPECT_FALSE(plan.called_tools);
}

}  // namespace
}  // namespace parley
