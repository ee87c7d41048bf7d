// External hook programs: hooks.json, the answer format, and the runner actor
// with real shell scripts as hooks (through the real process reactor).

#include "actors/approval/hooks/external_hook_runner.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "actors/runtime/runtime.hpp"

namespace parley {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using hooks::action_kind;
using hooks::verdict;

/// A fresh directory under /tmp, removed with everything in it.
class hook_dir {
 public:
  hook_dir() {
    auto pattern = (fs::temp_directory_path() / "parley-hooks-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~hook_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  hook_dir(const hook_dir&) = delete;
  hook_dir& operator=(const hook_dir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out{p, std::ios::binary | std::ios::trunc};
  out << text;
}

std::string read_file(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---------------------------------------------------------------------------
// hooks.json

class ExternalHookConfig : public ::testing::Test {
 protected:
  /// Writes hooks.json and returns load_external_hooks' exception text, or
  /// "" if it loaded.
  std::string load_error(const std::string& text) {
    write_file(dir.path() / "hooks.json", text);
    try {
      hooks::load_external_hooks(dir.path().string());
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }
  hook_dir dir;
};

TEST_F(ExternalHookConfig, a_missing_file_means_no_hooks) {
  EXPECT_TRUE(hooks::load_external_hooks(dir.path().string()).empty());
}

TEST_F(ExternalHookConfig, a_dangling_symlink_or_a_directory_is_refused) {
  auto path = dir.path() / "hooks.json";
  fs::create_symlink(dir.path() / "gone.json", path);
  EXPECT_THROW(hooks::load_external_hooks(dir.path().string()), std::runtime_error);
  fs::remove(path);
  fs::create_directory(path);
  try {
    hooks::load_external_hooks(dir.path().string());
    ADD_FAILURE() << "a directory loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string{e.what()}.find("not a regular file"), std::string::npos) << e.what();
  }
}

TEST_F(ExternalHookConfig, an_empty_list_means_no_hooks) {
  write_file(dir.path() / "hooks.json", R"({"hooks": []})");
  EXPECT_TRUE(hooks::load_external_hooks(dir.path().string()).empty());
}

TEST_F(ExternalHookConfig, loads_every_field_and_defaults) {
  write_file(dir.path() / "hooks.json", R"({"hooks": [
    {"name": "ticket", "command": ["/usr/local/bin/ticket-hook", "--queue", "ops"],
     "timeoutMs": 1500, "on": ["command", "fileChange"]},
    {"name": "all", "command": ["all-hook"]}
  ]})");
  auto specs = hooks::load_external_hooks(dir.path().string());
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "ticket");
  EXPECT_EQ(specs[0].argv, (std::vector<std::string>{"/usr/local/bin/ticket-hook", "--queue", "ops"}));
  EXPECT_EQ(specs[0].timeout, 1500ms);
  EXPECT_TRUE(specs[0].reviews(action_kind::command));
  EXPECT_TRUE(specs[0].reviews(action_kind::file_change));
  EXPECT_FALSE(specs[0].reviews(action_kind::tool));
  EXPECT_EQ(specs[1].name, "all");
  EXPECT_EQ(specs[1].argv, std::vector<std::string>{"all-hook"});
  EXPECT_EQ(specs[1].timeout, 5000ms);
  EXPECT_TRUE(specs[1].on.empty());
  EXPECT_TRUE(specs[1].reviews(action_kind::tool));
}

TEST_F(ExternalHookConfig, malformed_files_are_refused_with_path_and_field) {
  auto path = (dir.path() / "hooks.json").string();
  struct bad_case {
    std::string text;
    std::string mentions;  // besides the path
  };
  const bad_case cases[] = {
      {"", "not valid JSON"},
      {"{\"hooks\": [", "not valid JSON"},
      {"[]", "top level"},
      {"{}", "hooks"},
      {R"({"hooks": {}})", "hooks: expected an array"},
      {R"({"hooks": [], "hook": []})", "unknown key \"hook\""},
      {R"({"hooks": [42]})", "hooks[0]: expected an object"},
      {R"({"hooks": [{"command": ["x"]}]})", "hooks[0].name"},
      {R"({"hooks": [{"name": "", "command": ["x"]}]})", "hooks[0].name"},
      {R"({"hooks": [{"name": 7, "command": ["x"]}]})", "hooks[0].name"},
      {R"({"hooks": [{"name": "a", "command": ["x"]}, {"name": "a", "command": ["y"]}]})",
       "hooks[1].name: duplicate hook name \"a\""},
      {R"({"hooks": [{"name": "a"}]})", "hooks[0].command"},
      {R"({"hooks": [{"name": "a", "command": []}]})", "hooks[0].command"},
      {R"({"hooks": [{"name": "a", "command": "/bin/hook --flag"}]})", "hooks[0].command"},
      {R"({"hooks": [{"name": "a", "command": ["x", 1]}]})", "hooks[0].command"},
      {R"({"hooks": [{"name": "a", "command": [""]}]})", "hooks[0].command"},
      {R"({"hooks": [{"name": "a", "command": ["x"], "timeoutMs": 0}]})", "hooks[0].timeoutMs"},
      {R"({"hooks": [{"name": "a", "command": ["x"], "timeoutMs": -5}]})", "hooks[0].timeoutMs"},
      {R"({"hooks": [{"name": "a", "command": ["x"], "timeoutMs": "5000"}]})", "hooks[0].timeoutMs"},
      {R"({"hooks": [{"name": "a", "command": ["x"], "timeoutMs": 1.5}]})", "hooks[0].timeoutMs"},
      {R"({"hooks": [{"name": "a", "command": ["x"], "timeoutMs": 360000000}]})", "hooks[0].timeoutMs"},
      {R"({"hooks": [{"name": "a", "command": ["x"], "on": "command"}]})", "hooks[0].on"},
      {R"({"hooks": [{"name": "a", "command": ["x"], "on": ["commands"]}]})",
       "unknown action kind \"commands\""},
      {R"({"hooks": [{"name": "a", "command": ["x"], "on": [1]}]})", "hooks[0].on"},
      {R"({"hooks": [{"name": "a", "command": ["x"], "timeout": 5000}]})",
       "hooks[0]: unknown key \"timeout\""},
  };
  for (const auto& c : cases) {
    auto err = load_error(c.text);
    EXPECT_NE(err.find(path), std::string::npos) << "text: " << c.text << "\nerror: " << err;
    EXPECT_NE(err.find(c.mentions), std::string::npos) << "text: " << c.text << "\nerror: " << err;
  }
}

// ---------------------------------------------------------------------------
// A hook's answer

TEST(ExternalHookOutput, reads_each_decision) {
  auto v = hooks::parse_hook_output("t", R"({"decision": "allow"})");
  EXPECT_EQ(v.what, verdict::kind::allow);
  EXPECT_EQ(v.reason, "");
  v = hooks::parse_hook_output("t", R"({"decision": "allow", "reason": "ticket OPS-1"})");
  EXPECT_EQ(v.what, verdict::kind::allow);
  EXPECT_EQ(v.reason, "ticket OPS-1");
  v = hooks::parse_hook_output("t", R"({"decision": "deny", "reason": "not on a Friday"})");
  EXPECT_EQ(v.what, verdict::kind::deny);
  EXPECT_EQ(v.reason, "not on a Friday");
  v = hooks::parse_hook_output("t", R"({"decision": "deny"})");
  EXPECT_EQ(v.what, verdict::kind::deny);
  EXPECT_EQ(v.reason, "denied by hook t");
  v = hooks::parse_hook_output("t", "\n  {\"decision\": \"abstain\", \"reason\": null}\r\n\n");
  EXPECT_EQ(v.what, verdict::kind::abstain);
  v = hooks::parse_hook_output("t", R"({"decision": "allow", "extra": {"ignored": true}})");
  EXPECT_EQ(v.what, verdict::kind::allow);
}

TEST(ExternalHookOutput, anything_else_is_garbage_and_denies) {
  const std::string garbage[] = {
      "",
      " \n\t ",
      "allow",
      "{\"decision\": \"allow\"} {\"decision\": \"allow\"}",
      "{\"decision\": \"allow\"}\n{\"decision\": \"deny\"}",
      "{\"decision\": \"allow\"} trailing",
      "[{\"decision\": \"allow\"}]",
      "\"allow\"",
      "{}",
      "{\"decision\": \"ALLOW\"}",
      "{\"decision\": \"maybe\"}",
      "{\"decision\": true}",
      "{\"decision\": \"allow\", \"reason\": 5}",
      "{\"decision\": \"allow\"",
  };
  for (const auto& text : garbage) {
    auto v = hooks::parse_hook_output("ticket", text);
    EXPECT_EQ(v.what, verdict::kind::deny) << "output: " << text;
    EXPECT_EQ(v.reason.rfind("hook ticket answered garbage: ", 0), 0u)
        << "output: " << text << "\nreason: " << v.reason;
  }
}

// ---------------------------------------------------------------------------
// The runner, with real programs

/// True once `pid` no longer runs (gone, or a zombie nobody reaped yet: the
/// container's init may not reap orphans).
bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
}

bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return cond();
}

/// Waits for a script to write its pid ("<pid>\n") into `file`.
pid_t pid_from(const fs::path& file) {
  pid_t pid = 0;
  wait_until(
      [&] {
        auto text = read_file(file);
        if (text.empty() || text.back() != '\n') return false;
        pid = static_cast<pid_t>(std::stol(text));
        return true;
      },
      10s);
  return pid;
}

hooks::review_request sample_request() {
  hooks::review_request r;
  r.what = action_kind::command;
  r.approval_key = 42;
  r.thread_id = "thr_1";
  r.turn_id = "turn_1";
  r.item_id = "item_1";
  r.cwd = "/work/project";
  r.command = "rm -rf 'build dir' && echo \"done\" \\ ünïcödé ✓";
  r.argv = std::nullopt;
  r.reason = "clean up\nsecond line\ttab";
  r.digest = "sha256:0123";
  r.metadata = {{"origin", "test"}};
  return r;
}

class ExternalHookRunner : public ::testing::Test {
 protected:
  ExternalHookRunner() : sys(configured()) {}
  static caf::actor_system_config& configured() {
    static caf::actor_system_config cfg;
    static bool once = [] {
      configure_scheduler(cfg, 2);
      return true;
    }();
    (void)once;
    return cfg;
  }

  /// A hook spec running a /bin/sh script with `body`; $DIR is the test's dir.
  hooks::external_hook_spec hook(const std::string& body,
                                 std::chrono::milliseconds timeout = 10s) {
    auto path = dir.path() / ("hook" + std::to_string(++scripts) + ".sh");
    write_file(path, "#!/bin/sh\nDIR='" + dir.path().string() + "'\n" + body + "\n");
    fs::permissions(path, fs::perms::owner_all);
    hooks::external_hook_spec spec;
    spec.name = "t";
    spec.argv = {path.string()};
    spec.timeout = timeout;
    return spec;
  }

  hook_runner_actor start(const hooks::external_hook_spec& spec,
                          const std::string& request = hooks::to_json(sample_request()).dump()) {
    return sys.spawn(external_hook_runner, spec, request, reactor);
  }

  verdict decide(const hook_runner_actor& runner) {
    caf::scoped_actor self{sys};
    verdict out = verdict::deny("no reply");
    self->request(runner, 20s, atom::decide::value)
        .receive([&](verdict& v) { out = std::move(v); },
                 [&](caf::error& err) { ADD_FAILURE() << "decide failed: " << caf::to_string(err); });
    return out;
  }

  verdict run(const hooks::external_hook_spec& spec) { return decide(start(spec)); }

  hook_dir dir;
  int scripts = 0;
  caf::actor_system sys;
  std::shared_ptr<process_reactor> reactor = std::make_shared<process_reactor>();
};

TEST_F(ExternalHookRunner, allow_after_reading_the_request_intact_from_stdin) {
  auto request = hooks::to_json(sample_request()).dump();
  auto v = decide(start(hook(R"(cat > "$DIR/stdin.json"
echo '{"decision": "allow", "reason": "looks fine"}')"),
                         request));
  EXPECT_EQ(v.what, verdict::kind::allow);
  EXPECT_EQ(v.reason, "looks fine");
  auto received = read_file(dir.path() / "stdin.json");
  EXPECT_EQ(received, request + "\n");
  auto parsed = nlohmann::json::parse(received);
  EXPECT_EQ(parsed, hooks::to_json(sample_request()));
  EXPECT_EQ(parsed["type"], "command");
  EXPECT_EQ(parsed["approvalId"], "42");
}

TEST_F(ExternalHookRunner, deny_with_the_hooks_reason) {
  auto v = run(hook(R"(echo '{"decision": "deny", "reason": "ticket OPS-7 was rejected"}')"));
  EXPECT_EQ(v.what, verdict::kind::deny);
  EXPECT_EQ(v.reason, "ticket OPS-7 was rejected");
}

TEST_F(ExternalHookRunner, abstain_passes_the_approval_on) {
  auto v = run(hook(R"(printf '\n  {"decision":"abstain"}  \n\n')"));
  EXPECT_EQ(v.what, verdict::kind::abstain);
}

TEST_F(ExternalHookRunner, stderr_is_not_part_of_the_answer) {
  auto v = run(hook(R"(echo 'hook diagnostics (expected test noise)' >&2
echo '{"decision": "allow"}')"));
  EXPECT_EQ(v.what, verdict::kind::allow);
}

TEST_F(ExternalHookRunner, a_nonzero_exit_denies_even_with_an_allow_answer) {
  auto v = run(hook(R"(echo '{"decision": "allow"}'
exit 3)"));
  EXPECT_EQ(v.what, verdict::kind::deny);
  EXPECT_EQ(v.reason, "hook t exited with code 3");
}

TEST_F(ExternalHookRunner, garbage_denies) {
  auto v = run(hook("echo 'sure, go ahead'"));
  EXPECT_EQ(v.what, verdict::kind::deny);
  EXPECT_EQ(v.reason.rfind("hook t answered garbage: ", 0), 0u) << v.reason;
}

TEST_F(ExternalHookRunner, no_output_denies) {
  auto v = run(hook("exit 0"));
  EXPECT_EQ(v.what, verdict::kind::deny);
  EXPECT_EQ(v.reason, "hook t answered garbage: no output");
}

TEST_F(ExternalHookRunner, more_than_64_KiB_of_output_denies) {
  auto v = run(hook(R"(head -c 70000 /dev/zero | tr '\0' ' '
echo '{"decision": "allow"}')"));
  EXPECT_EQ(v.what, verdict::kind::deny);
  EXPECT_EQ(v.reason, "hook t answered garbage: more than 65536 bytes of output");
}

TEST_F(ExternalHookRunner, a_missing_program_denies) {
  hooks::external_hook_spec spec;
  spec.name = "t";
  spec.argv = {(dir.path() / "no-such-hook").string(), "--flag"};
  auto v = run(spec);
  EXPECT_EQ(v.what, verdict::kind::deny);
  EXPECT_EQ(v.reason.rfind("hook t could not start: ", 0), 0u) << v.reason;
}

TEST_F(ExternalHookRunner, the_deadline_kills_the_program_and_denies) {
  auto started = std::chrono::steady_clock::now();
  auto runner = start(hook(R"(echo $$ > "$DIR/pid"
sleep 30
echo '{"decision": "allow"}')",
                           300ms));
  // Nobody has asked yet: the deadline alone must end the program.
  auto pid = pid_from(dir.path() / "pid");
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(wait_until([&] { return process_gone(pid); }, 5s)) << "hook still runs";
  auto v = decide(runner);
  EXPECT_EQ(v.what, verdict::kind::deny);
  EXPECT_EQ(v.reason, "approval timeout");
  EXPECT_LT(std::chrono::steady_clock::now() - started, 15s);
}

TEST_F(ExternalHookRunner, a_pending_decide_gets_the_timeout) {
  auto v = run(hook("sleep 30", 300ms));
  EXPECT_EQ(v.what, verdict::kind::deny);
  EXPECT_EQ(v.reason, "approval timeout");
}

TEST_F(ExternalHookRunner, a_background_child_holding_stdout_does_not_delay_the_verdict) {
  auto started = std::chrono::steady_clock::now();
  auto v = run(hook(R"(sleep 30 &
echo $! > "$DIR/child"
echo '{"decision": "allow"}')"));
  EXPECT_EQ(v.what, verdict::kind::allow);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 15s);
  auto child = pid_from(dir.path() / "child");
  ASSERT_GT(child, 0);
  EXPECT_TRUE(wait_until([&] { return process_gone(child); }, 5s)) << "background child survived";
}

TEST_F(ExternalHookRunner, decide_may_come_before_the_program_finishes) {
  auto v = run(hook(R"(sleep 0.3
echo '{"decision": "allow"}')"));
  EXPECT_EQ(v.what, verdict::kind::allow);
}

TEST_F(ExternalHookRunner, the_verdict_waits_for_a_late_decide) {
  auto runner = start(hook(R"(echo '{"decision": "deny", "reason": "early"}')"));
  std::this_thread::sleep_for(300ms);
  auto v = decide(runner);
  EXPECT_EQ(v.what, verdict::kind::deny);
  EXPECT_EQ(v.reason, "early");
}

TEST_F(ExternalHookRunner, ending_the_runner_kills_the_program) {
  auto runner = start(hook(R"(echo $$ > "$DIR/pid"
sleep 30)",
                           60s));
  auto pid = pid_from(dir.path() / "pid");
  ASSERT_GT(pid, 0);
  caf::anon_send_exit(runner, caf::exit_reason::user_shutdown);
  EXPECT_TRUE(wait_until([&] { return process_gone(pid); }, 5s)) << "hook outlived its runner";
}

}  // namespace
}  // namespace parley
