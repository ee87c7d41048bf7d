// The approval pipeline (rules -> session grants -> hooks -> client) in a
// real runtime with real subprocesses: each stage alone and combined. A
// command that must not run proves it with a sentinel file that stays absent.

#include <atomic>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <thread>

#include "actors/approval/approval.hpp"
#include "actors/core/telemetry.hpp"
#include "actors/approval/hooks/approval_hook.hpp"
#include "tests/support/in_process_host.hpp"

namespace parley {
namespace {

using test::recording_host;
using test::temp_dir;
using test::turn_params;
namespace fs = std::filesystem;
using hooks::hook_reply;

/// A hook whose answer the test scripts; it counts its calls and keeps the
/// last request and handle.
class scripted_hook : public hooks::approval_hook {
 public:
  scripted_hook(std::string name, std::function<hook_reply()> answer,
                std::chrono::milliseconds timeout = std::chrono::seconds(30))
      : name_(std::move(name)), answer_(std::move(answer)), timeout_(timeout) {}

  std::string name() const override { return name_; }
  std::chrono::milliseconds timeout() const override { return timeout_; }
  void prepare(hooks::review_request& r) override { r.metadata["prepared_by"] = name_; }
  hook_reply review_command(const hooks::review_request& r,
                            const hooks::decision_handle& h) override {
    std::lock_guard<std::mutex> lock{mtx};
    ++calls;
    last = r;
    handle = h;
    return answer_();
  }
  hook_reply review_file(const hooks::review_request& r, const hooks::decision_handle& h) override {
    return review_command(r, h);
  }

  std::mutex mtx;
  int calls = 0;
  hooks::review_request last;
  hooks::decision_handle handle;

 private:
  std::string name_;
  std::function<hook_reply()> answer_;
  std::chrono::milliseconds timeout_;
};

class approval_pipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    host = std::make_shared<recording_host>();
    // The client accepts whatever reaches it: a command that stays unrun was
    // stopped by an earlier stage.
    host->decide = [](const approval_ask&, approval_reply r) {
      r(protocol::approval_decision::accept());
    };
  }

  void write_rules(const std::string& text) {
    fs::create_directories(dir + "/rules");
    std::ofstream(dir + "/rules/default.rules") << text;
    cfg.rules_dir = dir + "/rules";
  }

  /// Runs one turn with `text` in `dir`; returns the command items' statuses.
  std::vector<protocol::item_status> run(const std::string& text) {
    rt = std::make_unique<runtime>(cfg);
    client = std::make_unique<in_process_client>(*rt, host);
    protocol::thread_start_params sp;
    sp.cwd = dir;
    auto started = client->start_thread(sp);
    EXPECT_TRUE(started);
    if (!started) return {};
    EXPECT_TRUE(client->start_turn(turn_params(started->thread_.id, text)));
    EXPECT_TRUE(host->wait_turns(1));
    std::vector<protocol::item_status> out;
    for (auto& c : host->all<protocol::item_completed>())
      if (auto* cmd = std::get_if<protocol::command_execution_item>(&c.item))
        out.push_back(cmd->status);
    return out;
  }

  bool ran(const std::string& name) { return fs::exists(dir + "/" + name); }

  void TearDown() override {
    client.reset();
    rt.reset();
  }

  std::string dir;
  runtime_config cfg;
  std::shared_ptr<recording_host> host;
  std::unique_ptr<runtime> rt;
  std::unique_ptr<in_process_client> client;
};

using status = protocol::item_status;

TEST_F(approval_pipeline, a_deny_rule_refuses_without_asking_anyone) {
  write_rules("prefix_rule(pattern=[\"touch\"], decision=\"forbidden\", justification=\"no\")\n");
  auto hook = std::make_shared<scripted_hook>("h", [] { return hook_reply::allow(); });
  cfg.hooks = {hook};
  EXPECT_EQ(run("run[escalate]: touch denied"), (std::vector<status>{status::declined}));
  EXPECT_FALSE(ran("denied"));
  EXPECT_EQ(host->asks(), 0u);
  EXPECT_EQ(hook->calls, 0) << "a deny ends the pipeline before the hooks";
}

TEST_F(approval_pipeline, a_forbidden_command_inside_a_command_list_is_refused_even_under_never) {
  write_rules("prefix_rule(pattern=[\"touch\", \"forbidden\"], decision=\"forbidden\")\n");
  protocol::approval_policy never = protocol::approval_policy::never();
  rt = std::make_unique<runtime>(cfg);
  client = std::make_unique<in_process_client>(*rt, host);
  protocol::thread_start_params sp;
  sp.cwd = dir;
  sp.approval_policy_ = never;
  auto started = client->start_thread(sp);
  ASSERT_TRUE(started);
  ASSERT_TRUE(client->start_turn(
      turn_params(started->thread_.id, "run: true && touch forbidden\nrun: touch fine; true")));
  ASSERT_TRUE(host->wait_turns(1));
  std::vector<status> statuses;
  for (auto& c : host->all<protocol::item_completed>())
    if (auto* cmd = std::get_if<protocol::command_execution_item>(&c.item))
      statuses.push_back(cmd->status);
  EXPECT_EQ(statuses, (std::vector<status>{status::declined, status::completed}));
  EXPECT_FALSE(ran("forbidden"));
  EXPECT_TRUE(ran("fine"));
}

TEST_F(approval_pipeline, rules_allow_a_command_list_only_when_they_allow_every_command) {
  write_rules("prefix_rule(pattern=[\"touch\"], decision=\"allow\")\n");
  host->decide = [](const approval_ask&, approval_reply r) {
    r(protocol::approval_decision::decline());
  };
  EXPECT_EQ(run("run[escalate]: touch a && touch b\nrun[escalate]: touch c; rm -f a"),
            (std::vector<status>{status::completed, status::declined}));
  EXPECT_TRUE(ran("b"));
  EXPECT_FALSE(ran("c"));
  EXPECT_EQ(host->asks(), 1u) << "only the list with an unruled command reached the client";
}

TEST_F(approval_pipeline, an_allow_rule_runs_without_asking_the_client) {
  write_rules("prefix_rule(pattern=[\"touch\"], decision=\"allow\")\n");
  EXPECT_EQ(run("run[escalate]: touch allowed"), (std::vector<status>{status::completed}));
  EXPECT_TRUE(ran("allowed"));
  EXPECT_EQ(host->asks(), 0u);
}

TEST_F(approval_pipeline, an_ask_rule_keeps_the_client_in_the_loop_despite_an_allowing_hook) {
  write_rules("prefix_rule(pattern=[\"touch\"], decision=\"prompt\")\n");
  cfg.hooks = {std::make_shared<scripted_hook>("h", [] { return hook_reply::allow(); })};
  EXPECT_EQ(run("run[escalate]: touch asked"), (std::vector<status>{status::completed}));
  EXPECT_EQ(host->asks(), 1u);
}

TEST_F(approval_pipeline, a_hook_alone_allows_denies_or_abstains) {
  auto allow = std::make_shared<scripted_hook>("allow", [] { return hook_reply::allow(); });
  cfg.hooks = {allow};
  EXPECT_EQ(run("run[escalate]: touch by_hook"), (std::vector<status>{status::completed}));
  EXPECT_EQ(host->asks(), 0u);
  // The hook saw the action it approved, prepared by itself.
  EXPECT_EQ(allow->last.command, "touch by_hook");
  ASSERT_TRUE(allow->last.argv);
  EXPECT_EQ(*allow->last.argv, (std::vector<std::string>{"touch", "by_hook"}));
  EXPECT_EQ(allow->last.cwd, dir);
  EXPECT_EQ(allow->last.digest.rfind("sha256:", 0), 0u);
  EXPECT_EQ(allow->last.metadata["prepared_by"], "allow");
}

TEST_F(approval_pipeline, a_denying_hook_refuses) {
  cfg.hooks = {std::make_shared<scripted_hook>("deny", [] { return hook_reply::deny("ticket closed"); })};
  EXPECT_EQ(run("run[escalate]: touch denied"), (std::vector<status>{status::declined}));
  EXPECT_FALSE(ran("denied"));
  EXPECT_EQ(host->asks(), 0u);
}

TEST_F(approval_pipeline, an_abstaining_hook_passes_on_to_the_client) {
  auto hook = std::make_shared<scripted_hook>("quiet", [] { return hook_reply::abstain(); });
  cfg.hooks = {hook};
  EXPECT_EQ(run("run[escalate]: touch client_decides"), (std::vector<status>{status::completed}));
  EXPECT_EQ(host->asks(), 1u);
  EXPECT_EQ(hook->calls, 1);
}

TEST_F(approval_pipeline, any_deny_wins_over_earlier_allows) {
  write_rules("prefix_rule(pattern=[\"touch\"], decision=\"allow\")\n");
  auto first = std::make_shared<scripted_hook>("yes", [] { return hook_reply::allow(); });
  auto second = std::make_shared<scripted_hook>("no", [] { return hook_reply::deny("vetoed"); });
  cfg.hooks = {first, second};
  EXPECT_EQ(run("run[escalate]: touch vetoed"), (std::vector<status>{status::declined}));
  EXPECT_FALSE(ran("vetoed"));
  EXPECT_EQ(first->calls, 1);
  EXPECT_EQ(second->calls, 1);
  EXPECT_EQ(host->asks(), 0u);
}

TEST_F(approval_pipeline, a_hook_that_throws_denies) {
  cfg.hooks = {std::make_shared<scripted_hook>(
      "broken", []() -> hook_reply { throw std::runtime_error("database down"); })};
  EXPECT_EQ(run("run[escalate]: touch crashed"), (std::vector<status>{status::declined}));
  EXPECT_FALSE(ran("crashed"));
  EXPECT_EQ(host->asks(), 0u);
}

TEST_F(approval_pipeline, an_async_hook_answers_later_through_its_handle) {
  auto hook = std::make_shared<scripted_hook>("later", [] { return hook_reply::later(); });
  cfg.hooks = {hook};
  // Answer from another thread once the hook has been asked.
  std::thread answerer([hook] {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard<std::mutex> lock{hook->mtx};
        if (hook->calls > 0) {
          hook->handle.allow("approved in the ticket");
          return;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  auto statuses = run("run[escalate]: touch async_allowed");
  answerer.join();
  EXPECT_EQ(statuses, (std::vector<status>{status::completed}));
  EXPECT_TRUE(ran("async_allowed"));
  EXPECT_EQ(host->asks(), 0u);
}

TEST_F(approval_pipeline, an_async_hook_that_misses_its_deadline_denies_and_its_late_answer_is_ignored) {
  auto hook = std::make_shared<scripted_hook>(
      "slow", [] { return hook_reply::later(); }, std::chrono::milliseconds(200));
  cfg.hooks = {hook};
  EXPECT_EQ(run("run[escalate]: touch too_late"), (std::vector<status>{status::declined}));
  // The deny was given; now the hook answers "allow": nothing runs.
  hooks::decision_handle late;
  {
    std::lock_guard<std::mutex> lock{hook->mtx};
    late = hook->handle;
  }
  late.allow("sorry, I was slow");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(ran("too_late"));
  EXPECT_EQ(host->asks(), 0u);
  // This runtime's own figures: exactly the one approval, denied by the hook.
  auto stats = rt->telemetry()->approvals.snapshot();
  EXPECT_EQ(stats.requested, 1);
  EXPECT_EQ(stats.pending, 0);
  EXPECT_EQ(stats.denied, 1);
  EXPECT_EQ(stats.by_hooks, 1);
}

TEST_F(approval_pipeline, session_grants_come_after_rules_and_before_hooks) {
  auto hook = std::make_shared<scripted_hook>("quiet", [] { return hook_reply::abstain(); });
  cfg.hooks = {hook};
  host->decide = [](const approval_ask&, approval_reply r) {
    r(protocol::approval_decision::accept_for_session());
  };
  EXPECT_EQ(run("run[escalate]: touch granted\nrun[escalate]: touch granted"),
            (std::vector<status>{status::completed, status::completed}));
  EXPECT_EQ(host->asks(), 1u) << "the second run was covered by the session grant";
  EXPECT_EQ(hook->calls, 2) << "hooks still review granted commands (any deny wins)";
}

TEST_F(approval_pipeline, path_rules_decide_file_changes) {
  write_rules("path_rule(glob=\"**/.env\", decision=\"forbidden\", justification=\"secrets\")\n"
              "path_rule(glob=\"notes/**\", decision=\"allow\")\n");
  rt = std::make_unique<runtime>(cfg);
  client = std::make_unique<in_process_client>(*rt, host);
  protocol::thread_start_params sp;
  sp.cwd = dir;
  auto started = client->start_thread(sp);
  ASSERT_TRUE(started);
  ASSERT_TRUE(client->start_turn(turn_params(
      started->thread_.id,
      "patch:\n*** Begin Patch\n*** Add File: .env\n+KEY=1\n*** End Patch\n"
      "patch:\n*** Begin Patch\n*** Add File: notes/a.txt\n+hi\n*** End Patch")));
  ASSERT_TRUE(host->wait_turns(1));
  std::vector<status> statuses;
  for (auto& c : host->all<protocol::item_completed>())
    if (auto* f = std::get_if<protocol::file_change_item>(&c.item)) statuses.push_back(f->status);
  EXPECT_EQ(statuses, (std::vector<status>{status::declined, status::completed}));
  EXPECT_FALSE(ran(".env"));
  EXPECT_TRUE(ran("notes/a.txt"));
  EXPECT_EQ(host->asks(), 0u);
}

}  // namespace
}  // namespace parley
