// thread_text writes a thread, thread/start's (resume's, fork's) result and
// turn/start's without a DOM: every shape it writes must come out byte for
// byte as nlohmann writes it, and whatever it does not write (another item
// kind, a string that is not valid UTF-8) must be left to nlohmann whole.

#include "protocol/thread_text.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "protocol/json_codec.hpp"
#include "protocol/notification_text.hpp"

namespace parley::protocol {
namespace thread_text_tests {

/// Strings for the escaper and the UTF-8 check (each byte alone and between
/// text, sequences at the edges of what is well-formed, malformed ones).
std::vector<std::string> strings() {
  std::vector<std::string> out{"",
                               "plain",
                               "/home/u/my \"project\"\\n",
                               "\b\f\x01\x1f\x7f\t\r\n",
                               "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
                               "\xf4\x8f\xbf\xbf",
                               "\xed\xa0\x80",
                               "\xc0\xaf",
                               "\xff",
                               "\xe2\x82",
                               "ok \xf0\x9f\x98 then"};
  for (int c = 0; c < 256; c += 3) out.push_back("a" + std::string(1, static_cast<char>(c)) + "b");
  std::mt19937 rng(19);  // seeded: the same strings every run
  for (int k = 0; k < 200; ++k) {
    std::string s(rng() % 10, '\0');
    for (auto& ch : s) ch = static_cast<char>(rng() % 256);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<thread_status> statuses() {
  std::vector<thread_status> out{{thread_status::kind::not_loaded, false, false},
                                 thread_status::idle(),
                                 {thread_status::kind::system_error, false, false}};
  for (bool approval : {false, true})
    for (bool input : {false, true}) out.push_back({thread_status::kind::active, approval, input});
  return out;
}

/// A thread with `s` in every string it has, in several shapes: every
/// optional absent and present, turns with items item_text writes and one
/// it does not.
std::vector<thread> threads_with(const std::string& s) {
  std::vector<thread> out;
  thread t;
  t.id = "019b0000-0000-7000-8000-" + s;
  t.model_provider = "parley";
  t.cwd = s;
  t.cli_version = "0.1.0";
  t.created_at = 1795868059;
  t.updated_at = 1795868060;
  out.push_back(t);
  t.preview = s;
  t.ephemeral = true;
  t.model = s;
  t.path = "/rollouts/" + s;
  t.source = s;
  t.name = s;
  t.forked_from_id = s;
  t.git = git_info{s, std::nullopt, s};
  t.created_at = INT64_MIN;
  t.updated_at = INT64_MAX;
  t.dynamic_tools = json{{"not", "on the wire"}};
  t.tenant = "not on the wire";
  out.push_back(t);
  t.git = git_info{};
  turn done;
  done.id = s;
  done.status = turn_status::completed;
  done.started_at = 1;
  done.completed_at = 2;
  done.duration_ms = 1000;
  done.items = {user_message_item{"u", {user_input::make_text(s)}, std::nullopt},
                agent_message_item{"msg", s, std::nullopt}};
  turn failed;
  failed.id = "t2";
  failed.status = turn_status::failed;
  failed.error = turn_error{s, s, std::nullopt};
  failed.items_view = "summary";
  t.turns = {done, failed};
  out.push_back(t);
  t.turns.push_back(turn{});
  t.turns.back().items.push_back(file_change_item{});  // a kind nlohmann writes
  out.push_back(t);
  return out;
}

std::vector<sandbox_policy> sandboxes_with(const std::string& s) {
  std::vector<sandbox_policy> out;
  for (auto kind : {sandbox_policy::kind::danger_full_access, sandbox_policy::kind::read_only,
                    sandbox_policy::kind::external_sandbox, sandbox_policy::kind::workspace_write})
    for (bool network : {false, true}) {
      sandbox_policy p;
      p.type = kind;
      p.network_access = network;
      p.exclude_slash_tmp = network;
      p.exclude_tmpdir_env_var = !network;
      if (network) p.writable_roots = {s, "/tmp", s + s};
      out.push_back(p);
    }
  return out;
}

std::vector<approval_policy> approval_policies() {
  std::vector<approval_policy> out{approval_policy::untrusted(), approval_policy::on_request(),
                                   approval_policy::never()};
  for (int bits = 0; bits < 32; ++bits) {
    approval_policy p;
    p.value = approval_policy::kind::granular;
    p.granular = {(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0, (bits & 8) != 0,
                  (bits & 16) != 0};
    out.push_back(p);
  }
  return out;
}

/// What the reply writes for a result: thread_text's, or nlohmann's whole
/// when thread_text refuses (rpc_session's reply_as_json).
template <class Result>
std::string written(const Result& r) {
  std::string out;
  if (append_result(out, r)) return out;
  return dump_line(json(r));
}

TEST(thread_text, threads_match_nlohmann) {
  auto all = statuses();
  size_t k = 0;  // each thread gets the next status: every status meets every string's shapes
  for (const auto& s : strings())
    for (const auto& t : threads_with(s))
      for (int twice = 0; twice < 2; ++twice) {
        auto x = t;
        x.status = all[k++ % all.size()];
        std::string out;
        if (append_thread(out, x)) {
          EXPECT_EQ(out, dump_line(json(x))) << dump_line(json(x));
        }
        notification started = thread_started{x};
        EXPECT_EQ(params_text(started), dump_line(params_of(started)));
      }
}

TEST(thread_text, a_thread_of_valid_text_and_known_items_is_written_without_nlohmann) {
  // The fallback must stay the exception: the common thread is written here.
  for (const auto& t : threads_with("plain \"text\" \xe2\x82\xac\n")) {
    std::string out;
    bool nlohmann_only_item = !t.turns.empty() && t.turns.size() == 3;
    EXPECT_EQ(append_thread(out, t), !nlohmann_only_item) << dump_line(json(t));
  }
  std::string out;
  EXPECT_FALSE(append_thread(out, threads_with("\xff")[0]));  // nlohmann replaces the byte
}

TEST(thread_text, thread_closed_matches_nlohmann) {
  for (const auto& s : strings()) {
    notification closed = thread_closed{s};
    EXPECT_EQ(params_text(closed), dump_line(params_of(closed)));
  }
}

TEST(thread_text, thread_session_results_match_nlohmann) {
  auto policies = approval_policies();
  size_t k = 0;
  for (const auto& s : strings())
    for (const auto& t : threads_with(s))
      for (int twice = 0; twice < 2; ++twice) {
        auto sandboxes = sandboxes_with(s);
        const auto& sandbox = sandboxes[k % sandboxes.size()];  // each kind in turn
        thread_session_response r;
        r.thread_ = t;
        r.model = s;
        r.model_provider = "parley";
        r.cwd = s;
        r.approval_policy_ = policies[k++ % policies.size()];
        r.approvals_reviewer = k % 2 ? "user" : s;
        r.sandbox = sandbox;
        EXPECT_EQ(written(r), dump_line(json(r))) << dump_line(json(r));
      }
}

TEST(thread_text, every_approval_policy_and_sandbox_matches_nlohmann) {
  for (const auto& p : approval_policies()) {
    std::string out;
    ASSERT_TRUE(append_approval_policy(out, p));
    EXPECT_EQ(out, dump_line(json(p)));
  }
  for (const auto& sandbox : sandboxes_with("/w \"x\"")) {
    std::string out;
    ASSERT_TRUE(append_sandbox_policy(out, sandbox));
    EXPECT_EQ(out, dump_line(json(sandbox)));
  }
}

TEST(thread_text, turn_start_results_match_nlohmann) {
  for (const auto& s : strings())
    for (const auto& t : threads_with(s)) {
      for (const auto& x : t.turns) {
        EXPECT_EQ(written(turn_start_response{x}), dump_line(json(turn_start_response{x})));
      }
      turn fresh;  // what turn/start answers: a turn just begun
      fresh.id = s;
      EXPECT_EQ(written(turn_start_response{fresh}), dump_line(json(turn_start_response{fresh})));
    }
}

}  // namespace thread_text_tests
}  // namespace parley::protocol
