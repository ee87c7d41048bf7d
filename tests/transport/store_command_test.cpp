// `parley store check [--repair]`, run as the real binary on a home a real
// server wrote: one line per finding and a summary on stdout, exit 0 / 1 /
// 2, the home lock, and threads a server reads again after the repair.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace store_command_test {  // named: the test executables are unity builds

namespace fs = std::filesystem;

struct outcome {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return out + "'";
}

/// Runs `parley store check <args>` with stdin from /dev/null.
outcome run_check(const std::vector<std::string>& args) {
  auto dir = make_temp_dir("store_check_run");
  auto err_path = dir + "/stderr.txt";
  std::string command = shell_quoted(parley_binary()) + " store check";
  for (auto& a : args) command += " " + shell_quoted(a);
  command += " </dev/null 2>" + shell_quoted(err_path);
  outcome o;
  FILE* p = ::popen(command.c_str(), "r");
  char buf[512];
  while (auto n = std::fread(buf, 1, sizeof buf, p)) o.out.append(buf, n);
  int status = ::pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.err = read_file(err_path);
  return o;
}

std::unique_ptr<app_server_client> server(const std::string& home) {
  auto c = std::make_unique<app_server_client>(
      std::vector<std::string>{"--store=local", "--home=" + home, "--log-level=warn"});
  c->initialize();
  return c;
}

/// A thread with one completed turn answering `text`; returns its id.
std::string thread_with_turn(app_server_client& c, const std::string& dir,
                             const std::string& text) {
  auto thread = c.start_thread(json{{"approvalPolicy", "never"}, {"cwd", dir}});
  auto turn = c.start_turn(thread, "say: " + text);
  c.wait_for([&](const json& m) {
    return method_of(m) == "turn/completed" && m["params"]["turn"]["id"] == turn;
  });
  return thread;
}

std::string rollout_of(const std::string& home, const std::string& thread) {
  for (auto& e : fs::recursive_directory_iterator(home + "/sessions"))
    if (e.path().string().find(thread) != std::string::npos) return e.path().string();
  return {};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in{text};
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (auto& l : lines) out += l + "\n";
  return out;
}

TEST(store_command, names_the_damage_and_repairs_it) {
  auto dir = make_temp_dir("store_command");
  auto home = dir + "/home";
  std::string holed, headless;
  {
    auto c = server(home);
    holed = thread_with_turn(*c, dir, "first");
    headless = thread_with_turn(*c, dir, "second");
    EXPECT_EQ(c->close_and_wait(), 0);
  }
  auto sound = run_check({"--home", home});
  EXPECT_EQ(sound.code, 0) << sound.out << sound.err;
  EXPECT_EQ(sound.out, "checked 2 rollout(s) under " + home + ": all sound\n");
  EXPECT_EQ(sound.err, "");

  // A hole of garbage (NUL and invalid UTF-8) over line 3 of one rollout,
  // the session metadata gone from the other.
  auto holed_path = rollout_of(home, holed), headless_path = rollout_of(home, headless);
  auto holed_lines = lines_of(read_file(holed_path));
  auto headless_lines = lines_of(read_file(headless_path));
  ASSERT_GT(holed_lines.size(), 4u);
  auto damaged_lines = holed_lines;
  damaged_lines[2] = std::string("\0\xff\xfe garbage", 11);
  auto holed_bytes = joined(damaged_lines);
  write_file(holed_path, holed_bytes);
  auto headless_bytes = joined({headless_lines.begin() + 1, headless_lines.end()});
  write_file(headless_path, headless_bytes);

  auto found = run_check({"--home=" + home});
  EXPECT_EQ(found.code, 1);
  EXPECT_EQ(found.err, "");
  auto expected_findings = std::vector<std::string>{
      "damaged " + holed_path + ":3: not JSON",
      "unreadable " + headless_path + ":1: it does not start with session metadata",
      "index " + headless + ": points to " + headless_path + ", which is unreadable"};
  if (headless_path < holed_path) std::swap(expected_findings[0], expected_findings[1]);
  auto summary
      = "checked 2 rollout(s) under " + home + ": 1 unreadable, 1 damaged, 1 index finding(s)";
  auto expected = expected_findings;
  expected.push_back(summary);
  EXPECT_EQ(lines_of(found.out), expected) << found.out;
  EXPECT_EQ(read_file(holed_path), holed_bytes) << "a check alone changes nothing";
  EXPECT_EQ(read_file(headless_path), headless_bytes);

  auto repaired = run_check({"--home", home, "--repair"});
  EXPECT_EQ(repaired.code, 0) << repaired.out << repaired.err;
  auto out = lines_of(repaired.out);
  ASSERT_EQ(out.size(), 7u) << repaired.out;
  EXPECT_EQ(std::vector<std::string>(out.begin(), out.begin() + 3), expected_findings);
  for (auto& [path, what] :
       {std::pair{holed_path, std::string{"1 line(s) dropped"}},
        std::pair{headless_path, std::string{"0 line(s) dropped, session metadata rebuilt"}}}) {
    auto line = std::find_if(out.begin(), out.end(), [&, p = path](const std::string& l) {
      return l.rfind("repaired " + p + ": ", 0) == 0;
    });
    ASSERT_NE(line, out.end()) << path << "\n" << repaired.out;
    EXPECT_NE(line->find(what + "; the original is " + path + ".damaged-"), std::string::npos)
        << *line;
  }
  EXPECT_EQ(out[5], "reindexed 2 thread(s)");
  EXPECT_EQ(out[6], summary + "; all repaired");
  // The originals are kept beside the rollouts.
  for (auto& [path, bytes] :
       {std::pair{holed_path, holed_bytes}, std::pair{headless_path, headless_bytes}}) {
    std::vector<std::string> kept;
    for (auto& e : fs::directory_iterator(fs::path(path).parent_path()))
      if (e.path().string().rfind(path + ".damaged-", 0) == 0) kept.push_back(e.path().string());
    ASSERT_EQ(kept.size(), 1u) << path;
    EXPECT_EQ(read_file(kept[0]), bytes);
  }
  auto again = run_check({"--home", home});
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(again.out, "checked 2 rollout(s) under " + home + ": all sound\n");
  auto nothing_to_do = run_check({"--home", home, "--repair"});
  EXPECT_EQ(nothing_to_do.code, 0);
  EXPECT_EQ(nothing_to_do.out, again.out);

  // A server lists and reads both threads again, every good record kept.
  auto c = server(home);
  auto listed = c->call_ok("thread/list", json::object());
  EXPECT_EQ(listed["data"].size(), 2u) << listed.dump();
  for (auto& [thread, text] :
       {std::pair{holed, std::string{"first"}}, std::pair{headless, std::string{"second"}}}) {
    auto read = c->call_ok("thread/read", json{{"threadId", thread}, {"includeTurns", true}});
    auto& turns = read["thread"]["turns"];
    ASSERT_EQ(turns.size(), 1u) << read.dump();
    EXPECT_EQ(turns[0]["status"], "completed");
    EXPECT_EQ(turns[0]["items"].back()["text"], text) << read.dump();
  }
  EXPECT_EQ(c->close_and_wait(), 0);
}

TEST(store_command, refuses_a_home_a_server_holds) {
  auto dir = make_temp_dir("store_command_locked");
  auto home = dir + "/home";
  auto c = server(home);
  auto o = run_check({"--home", home});
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(o.out, "");
  EXPECT_NE(o.err.find("another parley process"), std::string::npos) << o.err;
  EXPECT_EQ(c->close_and_wait(), 0);
  EXPECT_EQ(run_check({"--home", home}).code, 0) << "free again once it stopped";
}

TEST(store_command, usage_errors_exit_2) {
  auto dir = make_temp_dir("store_command_usage");
  for (auto args : std::vector<std::vector<std::string>>{
           {"--bogus"}, {"--home"}, {"--home", dir, "extra"}, {"--home", dir + "/missing"}}) {
    auto o = run_check(args);
    EXPECT_EQ(o.code, 2) << args[0];
    EXPECT_EQ(o.out, "") << args[0];
    EXPECT_EQ(o.err.rfind("parley: ", 0), 0u) << o.err;
    EXPECT_NE(o.err.find("usage:"), std::string::npos) << o.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/missing")) << "a check creates no home";
  auto help = run_check({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--repair"), std::string::npos) << help.out;
  EXPECT_EQ(help.err, "");
}

}  // namespace store_command_test
}  // namespace parley::test
