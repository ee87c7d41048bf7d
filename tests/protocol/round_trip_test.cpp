// Every v2 message parley speaks survives encode -> decode -> encode.

#include <gtest/gtest.h>

#include "protocol/methods.hpp"
#include "protocol/notifications.hpp"

namespace parley::protocol {
namespace {

template <class T>
void expect_round_trip(const T& value) {
  json first = value;
  auto decoded = decode<T>(first);
  json second = decoded;
  EXPECT_EQ(first, second);
}

thread sample_thread() {
  thread t;
  t.id = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80";
  t.preview = "Run the unit tests";
  t.model_provider = "parley";
  t.model = "parley-scripted";
  t.created_at = 1762500000;
  t.updated_at = 1762500001;
  t.status = thread_status::active(true);
  t.cwd = "/home/dev/project";
  t.cli_version = "0.1.0";
  t.name = "tests";
  turn u;
  u.id = "019a5c3e-7b44-7d02-8e11-90ab12cd34ef";
  u.status = turn_status::interrupted;
  u.started_at = 1762500000;
  u.completed_at = 1762500004;
  u.duration_ms = 3990;
  u.error = turn_error{"boom", std::string{"other"}, std::nullopt};
  u.items.push_back(user_message_item{"u1", {user_input::make_text("hi")}, std::string{"c1"}});
  u.items.push_back(agent_message_item{"m1", "hello", std::string{"final_answer"}});
  command_execution_item c;
  c.id = "call_1";
  c.command = "/bin/sh -c 'ls'";
  c.cwd = "/w";
  c.status = item_status::completed;
  c.command_actions = {command_action{command_action::kind::list_files, "ls", {}, std::string{"."}, {}},
                       command_action{command_action::kind::read, "cat a", std::string{"a"}, std::string{"a"}, {}},
                       command_action{command_action::kind::search, "grep x", {}, {}, std::string{"x"}}};
  c.aggregated_output = "a\n";
  c.exit_code = 0;
  c.duration_ms = 3;
  c.process_id = "4242";
  u.items.push_back(c);
  t.turns.push_back(u);
  return t;
}

TEST(round_trip, shared_types) {
  expect_round_trip(sample_thread());
  for (auto s : {thread_status::idle(), thread_status::active(false), thread_status::active(true),
                 thread_status{thread_status::kind::not_loaded, false, false},
                 thread_status{thread_status::kind::system_error, false, false}})
    expect_round_trip(s);
  for (auto m : {sandbox_mode::read_only, sandbox_mode::workspace_write,
                 sandbox_mode::danger_full_access})
    expect_round_trip(sandbox_policy::from_mode(m));
  sandbox_policy ext;
  ext.type = sandbox_policy::kind::external_sandbox;
  ext.network_access = true;
  expect_round_trip(ext);
  for (auto p : {approval_policy::never(), approval_policy::on_request(), approval_policy::untrusted()})
    expect_round_trip(p);
  auto granular = decode<approval_policy>(json::parse(
      R"({"granular":{"sandbox_approval":true,"rules":false,"mcp_elicitations":false}})"));
  EXPECT_EQ(granular.value, approval_policy::kind::granular);
  EXPECT_TRUE(granular.granular.sandbox_approval);
  expect_round_trip(granular);
}

TEST(round_trip, user_input_variants_are_echoed_verbatim) {
  auto image = json::parse(R"({"type":"image","url":"https://x/y.png","detail":null})");
  EXPECT_EQ(json(decode<user_input>(image)), image);
  EXPECT_THROW(decode<user_input>(json::parse(R"({"type":"hologram"})")), decode_error);
  EXPECT_THROW(decode<user_input>(json::parse(R"({"type":"text"})")), decode_error);
  EXPECT_EQ(joined_text({user_input::make_text("a"), decode<user_input>(image),
                         user_input::make_text("b")}),
            "a\nb");
}

TEST(round_trip, client_requests_and_results) {
  initialize_params ip;
  ip.client = {"codex-tui", "0.169.0", std::string{"TUI"}};
  ip.capabilities.experimental_api = true;
  ip.capabilities.opt_out_notification_methods = {"configWarning"};
  auto ip2 = decode<initialize_params>(json(ip));
  EXPECT_EQ(ip2.client.name, "codex-tui");
  EXPECT_TRUE(ip2.capabilities.experimental_api);
  EXPECT_EQ(ip2.capabilities.opt_out_notification_methods, ip.capabilities.opt_out_notification_methods);
  expect_round_trip(initialize_response{"ua", "/home/.parley", "unix", "linux"});

  thread_start_params sp;
  sp.cwd = "/w";
  sp.approval_policy_ = approval_policy::untrusted();
  sp.sandbox = sandbox_mode::read_only;
  sp.ephemeral = true;
  sp.model = "m";
  expect_round_trip(sp);
  thread_session_response sr;
  sr.thread_ = sample_thread();
  sr.model = "m";
  sr.model_provider = "parley";
  sr.cwd = "/w";
  sr.approval_policy_ = approval_policy::on_request();
  sr.sandbox = sandbox_policy::from_mode(sandbox_mode::workspace_write);
  expect_round_trip(sr);

  expect_round_trip(thread_read_params{"t", true});
  expect_round_trip(thread_read_response{sample_thread()});
  expect_round_trip(thread_loaded_list_params{std::string{"c"}, 10u, std::nullopt});
  expect_round_trip(thread_loaded_list_response{{"a", "b"}, std::string{"b"}});

  turn_start_params tp;
  tp.thread_id = "t";
  tp.input = {user_input::make_text("run: ls")};
  tp.approval_policy_ = approval_policy::never();
  tp.sandbox_policy_ = sandbox_policy::from_mode(sandbox_mode::danger_full_access);
  tp.client_user_message_id = "c";
  expect_round_trip(tp);
  expect_round_trip(turn_start_response{sample_thread().turns[0]});
  expect_round_trip(turn_interrupt_params{"t", "u"});
  expect_round_trip(turn_steer_params{"t", {user_input::make_text("say: more")}, "u", "c"});
  expect_round_trip(turn_steer_params{"t", {user_input::make_text("x")}, "u", std::nullopt});
  expect_round_trip(turn_steer_response{"u"});
}

TEST(round_trip, every_server_notification) {
  auto t = sample_thread();
  const auto& u = t.turns[0];
  std::vector<notification> all = {
      thread_started{t},
      thread_status_changed{t.id, thread_status::active(true)},
      turn_started{t.id, u},
      turn_completed{t.id, u},
      item_started{t.id, u.id, u.items[2], 1},
      item_completed{t.id, u.id, u.items[1], 2},
      agent_message_delta{t.id, u.id, "m1", "hel"},
      command_output_delta{t.id, u.id, "call_1", "out"},
      server_request_resolved{t.id, request_id{0}},
      server_request_resolved{t.id, request_id{"s"}},
      error_notification{t.id, u.id, turn_error{"x", std::string{"internalServerError"}, {}}, false},
  };
  for (auto& n : all) {
    auto params = params_of(n);
    auto back = decode_notification(method_of(n), params);
    EXPECT_EQ(params_of(back), params) << method_of(n);
    EXPECT_EQ(std::string{method_of(back)}, std::string{method_of(n)});
    EXPECT_EQ(thread_of(back), t.id);
  }
}

TEST(round_trip, bootstrap_results_have_required_fields) {
  auto models = model_list_result("m");
  for (auto key : {"id", "model", "displayName", "description", "hidden", "isDefault",
                   "defaultReasoningEffort", "supportedReasoningEfforts"})
    EXPECT_TRUE(models["data"][0].contains(key)) << key;
  EXPECT_EQ(account_read_result()["requiresOpenaiAuth"], false);
  EXPECT_TRUE(config_read_result().contains("origins"));
  EXPECT_TRUE(config_requirements_read_result()["requirements"].is_null());
}

}  // namespace
}  // namespace parley::protocol
