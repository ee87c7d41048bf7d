// Whether a model's MCP tool call asks a person first, the question's shape
// and how its answer is read (protocol/mcp_tool_approval.hpp), as Codex
// 0.169 decides, asks and reads them.

#include <gtest/gtest.h>

#include <vector>

#include "protocol/mcp_tool_approval.hpp"

namespace parley::protocol {
namespace {

using mode = mcp_approval_mode;

approval_policy on_request() { return approval_policy::on_request(); }
sandbox_policy workspace() { return sandbox_policy::from_mode(sandbox_mode::workspace_write); }

using gate = mcp_call_gate;

gate gate_under(const json& annotations, mode m, approval_policy p = on_request(),
                sandbox_policy s = workspace()) {
  return mcp_call_gate_of(annotations, m, p, s);
}

// Whether a call needs approval, by the tool's annotations and its mode,
// as Codex 0.169 decided it (checked against the real Codex with
// tests/transport/mcp_annotated_server.py: `plain` has no annotations).
struct need_row {
  const char* what;
  json annotations;
  mode m;
  bool needs;
};
const std::vector<need_row>& need_rows() {
  static const std::vector<need_row> rows = {
      // No annotations say nothing: the tool may change the world (fails closed).
      {"none, auto", json(), mode::automatic, true},
      {"empty object, auto", json::object(), mode::automatic, true},
      {"title only, auto", {{"title", "Echo"}}, mode::automatic, true},
      {"read-only, auto", {{"readOnlyHint", true}}, mode::automatic, false},
      {"destructive, auto", {{"destructiveHint", true}}, mode::automatic, true},
      {"destructive and read-only, auto", {{"destructiveHint", true}, {"readOnlyHint", true}},
       mode::automatic, true},
      {"not destructive, open world unsaid, auto", {{"destructiveHint", false}}, mode::automatic,
       true},
      {"not destructive, closed world, auto", {{"destructiveHint", false}, {"openWorldHint", false}},
       mode::automatic, false},
      {"not destructive, open world, auto", {{"destructiveHint", false}, {"openWorldHint", true}},
       mode::automatic, true},
      {"not read-only, not destructive, auto", {{"readOnlyHint", false}, {"destructiveHint", false}},
       mode::automatic, true},
      {"none, prompt", json(), mode::prompt, true},
      {"read-only, prompt", {{"readOnlyHint", true}}, mode::prompt, true},
      {"none, approve", json(), mode::approve, false},
      {"destructive, approve", {{"destructiveHint", true}}, mode::approve, false},
  };
  return rows;
}

approval_policy granular(bool mcp_elicitations) {
  approval_policy g;
  g.value = approval_policy::kind::granular;
  g.granular.mcp_elicitations = mcp_elicitations;
  return g;
}

// What a call that needs approval meets, by policy and sandbox (a call that
// needs none runs under all of them), as Codex 0.169 did: asked under every
// policy but `never`, the granular ones whatever their mcp_elicitations, full
// access included; refused under `never` unless the sandbox is full access.
struct policy_row {
  const char* what;
  approval_policy policy;
  sandbox_policy sandbox;
  gate when_needed;
};
std::vector<policy_row> policy_rows() {
  auto ro = sandbox_policy::from_mode(sandbox_mode::read_only);
  auto full = sandbox_policy::from_mode(sandbox_mode::danger_full_access);
  sandbox_policy external;
  external.type = sandbox_policy::kind::external_sandbox;
  auto untrusted = approval_policy::untrusted();
  auto never = approval_policy::never();
  return {
      {"untrusted, read-only", untrusted, ro, gate::ask},
      {"untrusted, workspace", untrusted, workspace(), gate::ask},
      {"untrusted, full access", untrusted, full, gate::ask},
      {"on-request, read-only", on_request(), ro, gate::ask},
      {"on-request, workspace", on_request(), workspace(), gate::ask},
      {"on-request, full access", on_request(), full, gate::ask},
      {"on-request, external", on_request(), external, gate::ask},
      {"never, read-only", never, ro, gate::refuse},
      {"never, workspace", never, workspace(), gate::refuse},
      {"never, full access", never, full, gate::run},
      {"never, external", never, external, gate::run},
      {"granular without elicitations, workspace", granular(false), workspace(), gate::ask},
      {"granular with elicitations, workspace", granular(true), workspace(), gate::ask},
      {"granular without elicitations, full access", granular(false), full, gate::ask},
      {"granular with elicitations, full access", granular(true), full, gate::ask},
  };
}

TEST(mcp_tool_approval, every_policy_sandbox_annotations_and_mode) {
  int checked = 0;
  for (const auto& p : policy_rows())
    for (const auto& n : need_rows()) {
      auto want = n.needs ? p.when_needed : gate::run;
      // Full access runs even what needs approval.
      EXPECT_EQ(gate_under(n.annotations, n.m, p.policy, p.sandbox), want)
          << p.what << " / " << n.what << ": want " << to_string(want);
      ++checked;
    }
  EXPECT_EQ(checked, 15 * 14);
}

TEST(mcp_tool_approval, an_unannotated_tool_is_asked_refused_or_run_as_codex) {
  // The three cases the end-to-end test (mcp_approvals) shows.
  EXPECT_EQ(gate_under(json(), mode::automatic), gate::ask);
  EXPECT_EQ(gate_under(json(), mode::automatic, approval_policy::never()), gate::refuse);
  EXPECT_EQ(gate_under(json(), mode::automatic, approval_policy::never(),
                       sandbox_policy::from_mode(sandbox_mode::danger_full_access)),
            gate::run);
  EXPECT_STREQ(mcp_refused_by_policy_text,
               "MCP tool call requires approval, but approval policy is never");
}

TEST(mcp_tool_approval, gates_have_names_for_the_log) {
  EXPECT_STREQ(to_string(gate::run), "run");
  EXPECT_STREQ(to_string(gate::ask), "ask");
  EXPECT_STREQ(to_string(gate::refuse), "refuse");
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
