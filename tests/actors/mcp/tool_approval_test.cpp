// Whether a model's MCP tool call asks a person first, the question's shape
// and how its answer is read (protocol/mcp_tool_approval.hpp), as Codex
// 0.169 decides, asks and reads them.

#include <gtest/gtest.h>

#include "protocol/mcp_tool_approval.hpp"

namespace parley::protocol {
namespace {

using mode = mcp_approval_mode;

approval_policy on_request() { return approval_policy::on_request(); }
sandbox_policy workspace() { return sandbox_policy::from_mode(sandbox_mode::workspace_write); }

bool asks(const json& annotations, mode m, approval_policy p = on_request(),
          sandbox_policy s = workspace()) {
  return mcp_call_needs_approval(annotations, m, p, s);
}

TEST(mcp_tool_approval, auto_mode_follows_the_annotations) {
  // No annotations at all: Codex runs it unasked.
  EXPECT_FALSE(asks(json(), mode::automatic));
  // Annotated: destructive asks; read-only runs; unsaid hints count as true.
  EXPECT_TRUE(asks({{"destructiveHint", true}}, mode::automatic));
  EXPECT_TRUE(asks({{"destructiveHint", true}, {"readOnlyHint", true}}, mode::automatic));
  EXPECT_FALSE(asks({{"readOnlyHint", true}}, mode::automatic));
  EXPECT_TRUE(asks(json::object(), mode::automatic));  // annotations, none said
  EXPECT_TRUE(asks({{"title", "Echo"}}, mode::automatic));
  EXPECT_TRUE(asks({{"destructiveHint", false}}, mode::automatic));  // openWorld unsaid
  EXPECT_FALSE(asks({{"destructiveHint", false}, {"openWorldHint", false}}, mode::automatic));
  EXPECT_TRUE(asks({{"destructiveHint", false}, {"openWorldHint", true}}, mode::automatic));
  EXPECT_TRUE(asks({{"readOnlyHint", false}, {"destructiveHint", false}}, mode::automatic));
}

TEST(mcp_tool_approval, prompt_asks_always_and_approve_never) {
  EXPECT_TRUE(asks(json(), mode::prompt));
  EXPECT_TRUE(asks({{"readOnlyHint", true}}, mode::prompt));
  EXPECT_FALSE(asks({{"destructiveHint", true}}, mode::approve));
  EXPECT_FALSE(asks(json(), mode::approve));
}

TEST(mcp_tool_approval, only_full_access_skips_the_question) {
  auto full = sandbox_policy::from_mode(sandbox_mode::danger_full_access);
  json destructive = {{"destructiveHint", true}};
  EXPECT_FALSE(asks(destructive, mode::automatic, approval_policy::never(), full));
  EXPECT_FALSE(asks(destructive, mode::prompt, approval_policy::never(), full));
  sandbox_policy external;
  external.type = sandbox_policy::kind::external_sandbox;
  EXPECT_FALSE(asks(destructive, mode::automatic, approval_policy::never(), external));
  // `never` with a sandbox still asks (Codex's tool approval is no
  // elicitation of the server's); so do the other policies with full access.
  EXPECT_TRUE(asks(destructive, mode::automatic, approval_policy::never(), workspace()));
  EXPECT_TRUE(asks(destructive, mode::automatic, on_request(), full));
  EXPECT_TRUE(asks(destructive, mode::automatic, approval_policy::untrusted(), full));
}

TEST(mcp_tool_approval, server_elicitations_follow_the_granular_policy) {
  EXPECT_FALSE(elicitations_rejected(on_request()));
  EXPECT_FALSE(elicitations_rejected(approval_policy::untrusted()));
  EXPECT_TRUE(elicitations_rejected(approval_policy::never()));
  approval_policy g;
  g.value = approval_policy::kind::granular;
  g.granular.mcp_elicitations = false;
  EXPECT_TRUE(elicitations_rejected(g));
  g.granular.mcp_elicitations = true;
  EXPECT_FALSE(elicitations_rejected(g));
}

TEST(mcp_tool_approval, modes_read_as_codex_spells_them) {
  EXPECT_EQ(mcp_approval_mode_of("auto"), mode::automatic);
  EXPECT_EQ(mcp_approval_mode_of("prompt"), mode::prompt);
  EXPECT_EQ(mcp_approval_mode_of("approve"), mode::approve);
  EXPECT_FALSE(mcp_approval_mode_of("Auto"));
  EXPECT_FALSE(mcp_approval_mode_of(""));
  EXPECT_STREQ(to_string(mode::automatic), "auto");
}

mcp_approval_subject subject(mode m = mode::automatic) {
  mcp_approval_subject s;
  s.thread_id = "thr";
  s.turn_id = "turn-1";
  s.call_id = "call_7";
  s.server = "probe";
  s.tool = "delete_file";
  s.arguments = {{"path", "/tmp/x"}, {"force", true}};
  s.title = "Delete a file";
  s.description = "Deletes it.";
  s.annotations = {{"destructiveHint", true}};
  s.mode = m;
  return s;
}

TEST(mcp_tool_approval, the_question_is_a_form_elicitation_with_codex_meta) {
  auto p = mcp_approval_request_params(subject());
  EXPECT_EQ(p["threadId"], "thr");
  EXPECT_EQ(p["turnId"], "turn-1");
  EXPECT_EQ(p["serverName"], "probe");
  EXPECT_EQ(p["mode"], "form");
  EXPECT_EQ(p["message"], "Allow the probe MCP server to run tool \"delete_file\"?");
  EXPECT_EQ(p["requestedSchema"], (json{{"type", "object"}, {"properties", json::object()}}));
  const auto& meta = p["_meta"];
  EXPECT_EQ(meta["codex_approval_kind"], "mcp_tool_call");
  EXPECT_EQ(meta["persist"], json({"session", "always"}));
  EXPECT_EQ(meta["tool_name"], "delete_file");
  EXPECT_EQ(meta["tool_annotations"], (json{{"destructiveHint", true}}));
  EXPECT_EQ(meta["tool_title"], "Delete a file");
  EXPECT_EQ(meta["tool_description"], "Deletes it.");
  EXPECT_EQ(meta["tool_params"], (json{{"path", "/tmp/x"}, {"force", true}}));
  ASSERT_EQ(meta["tool_params_display"].size(), 2u);  // by name
  EXPECT_EQ(meta["tool_params_display"][0],
            (json{{"name", "force"}, {"value", true}, {"display_name", "force"}}));
  EXPECT_EQ(meta["tool_params_display"][1]["name"], "path");
}

TEST(mcp_tool_approval, prompt_mode_offers_no_session_and_empty_fields_stay_out) {
  auto s = subject(mode::prompt);
  s.title.clear();
  s.description.clear();
  s.arguments = nullptr;
  s.annotations = nullptr;
  auto meta = mcp_approval_request_params(s)["_meta"];
  EXPECT_EQ(meta, (json{{"codex_approval_kind", "mcp_tool_call"}, {"tool_name", "delete_file"}}));
}

TEST(mcp_tool_approval, only_an_accept_runs_and_persist_session_remembers) {
  auto read = [](const json& a, mode m = mode::automatic) {
    return decode_mcp_approval_answer(a, "call_7", m);
  };
  using answer = mcp_approval_answer;
  EXPECT_EQ(read({{"action", "accept"}}), answer::accept);
  EXPECT_EQ(read({{"action", "accept"}, {"content", json::object()}}), answer::accept);
  EXPECT_EQ(read({{"action", "decline"}}), answer::decline);
  EXPECT_EQ(read({{"action", "cancel"}}), answer::cancel);
  EXPECT_EQ(read({{"action", "maybe"}}), answer::cancel);
  EXPECT_EQ(read(json()), answer::cancel);
  EXPECT_EQ(read({{"action", "accept"}, {"_meta", {{"persist", "session"}}}}),
            answer::accept_for_session);
  // "always": config.toml is to say approval_mode = "approve".
  EXPECT_EQ(read({{"action", "accept"}, {"_meta", {{"persist", "always"}}}}),
            answer::accept_always);
  EXPECT_EQ(read({{"action", "accept"}, {"_meta", {{"persist", {"session", "always"}}}}}),
            answer::accept);  // the offer sent back is no choice
  EXPECT_EQ(read({{"action", "decline"}, {"_meta", {{"persist", "always"}}}}), answer::decline);
  EXPECT_EQ(read({{"action", "accept"},
                  {"content", {{"mcp_tool_call_approval_call_7", "Allow and don't ask me again"}}}}),
            answer::accept_always);
  // The question's labels, as a request_user_input answer would give them.
  EXPECT_EQ(read({{"action", "accept"},
                  {"content", {{"mcp_tool_call_approval_call_7", "Allow for this session"}}}}),
            answer::accept_for_session);
  EXPECT_EQ(read({{"action", "accept"},
                  {"content", {{"mcp_tool_call_approval_call_7", {"__codex_mcp_decline__"}}}}}),
            answer::decline);
  EXPECT_EQ(read({{"action", "accept"},
                  {"content", {{"mcp_tool_call_approval_other", "Allow for this session"}}}}),
            answer::accept);
  // A tool in `prompt` mode is never remembered.
  EXPECT_EQ(read({{"action", "accept"}, {"_meta", {{"persist", "session"}}}}, mode::prompt),
            answer::accept);
  EXPECT_EQ(read({{"action", "accept"}, {"_meta", {{"persist", "always"}}}}, mode::prompt),
            answer::accept);
}

}  // namespace
}  // namespace parley::protocol
