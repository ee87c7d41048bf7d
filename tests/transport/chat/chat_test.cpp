// `parley chat` end to end through the real binary over pipes: the README's
// demo with --yes, answers typed on input, the approval queue across threads
// (positions, abort all), file-change diffs, /stats and the exit summary, and
// control characters from the model shown escaped.

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "tests/support/app_server_client.hpp"
#include "transport/child_process.hpp"

namespace parley::test {
namespace {

std::string run_shell(const std::string& command, int& status) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  std::array<char, 4096> buf{};
  while (auto n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  status = ::pclose(pipe);
  return out;
}

/// `parley chat [flags]` in `dir`, reading `input` from a file there.
std::string chat(const std::string& dir, const std::string& input, int& status,
                 const std::string& flags = "") {
  std::ofstream{dir + "/input"} << input;
  return run_shell("cd " + dir + " && " + parley_binary() + " chat " + flags + " --home=" + dir
                       + "/home < input 2>" + dir + "/stderr",
                   status);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(chat, auto_accept_runs_a_conversation_with_approvals) {
  auto dir = make_temp_dir("chat_yes");
  std::ofstream{dir + "/input"} << "say: hello\nrun[escalate]: echo made > made.txt\\nsay: done\nrun[escalate]: cat made.txt\n";
  int status = 0;
  auto out = run_shell("cd " + dir + " && " + parley_binary() + " chat --yes --home=" + dir
                           + "/home < input",
                       status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("[agent] hello"), std::string::npos) << out;
  EXPECT_NE(out.find("-> accept (--yes)"), std::string::npos) << out;
  EXPECT_NE(out.find("[command completed, exit 0"), std::string::npos) << out;
  EXPECT_NE(out.find("made\n"), std::string::npos) << out;
  EXPECT_NE(out.find("done: 3 turn(s), 2 approval(s)"), std::string::npos) << out;
  EXPECT_TRUE(file_exists(dir + "/made.txt"));
  // The approval counters, once, at exit.
  EXPECT_EQ(count(out, "[stats] approvals: "), 1u) << out;
  EXPECT_NE(out.find("[stats] approvals: 2 requested, 0 pending, 2 decided (2 allowed, 0 denied)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("[stats] time to decision: p50 "), std::string::npos) << out;
}

TEST(chat, answers_typed_on_input_decide_approvals) {
  auto dir = make_temp_dir("chat_answers");
  // Without --yes, the line after an approval prompt is its answer.
  std::ofstream{dir + "/input"} << "run[escalate]: touch declined.txt\nn\nrun[escalate]: touch accepted.txt\ny\n";
  int status = 0;
  auto out = run_shell("cd " + dir + " && " + parley_binary() + " chat --home=" + dir + "/home < input",
                       status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("[command declined]"), std::string::npos) << out;
  EXPECT_FALSE(file_exists(dir + "/declined.txt"));
  EXPECT_TRUE(file_exists(dir + "/accepted.txt"));
}

TEST(chat, invalid_answers_ask_again) {
  auto dir = make_temp_dir("chat_invalid");
  int status = 0;
  auto out = chat(dir, "run[escalate]: touch accepted.txt\nmaybe\n\nd\ny\n", status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(count(out, "please answer y, s, n, c or a"), 3u) << out;
  EXPECT_TRUE(file_exists(dir + "/accepted.txt"));
}

TEST(chat, file_change_shows_its_diff_before_the_prompt_and_y_applies_it) {
  auto dir = make_temp_dir("chat_patch");
  write_file(dir + "/edited.txt", "keep\nold line\n");
  // One input line: "\n" typed inside it separates the patch's lines.
  int status = 0;
  auto out = chat(dir,
                  "patch:\\n*** Begin Patch\\n*** Add File: added.txt\\n+new file\\n"
                  "*** Update File: edited.txt\\n@@\\n keep\\n-old line\\n+new line\\n"
                  "*** End Patch\n"
                  "y\n",
                  status);
  EXPECT_EQ(status, 0) << out;
  auto header = out.find("[approval 1 of 1] thread ");
  auto question = out.find("[y] accept");
  ASSERT_NE(header, std::string::npos) << out;
  ASSERT_NE(question, std::string::npos) << out;
  auto shown = out.substr(header, question - header);
  EXPECT_NE(shown.find("change 2 file(s)"), std::string::npos) << out;
  EXPECT_NE(shown.find("  add "), std::string::npos) << out;
  EXPECT_NE(shown.find("added.txt\n    +new file\n"), std::string::npos) << out;
  EXPECT_NE(shown.find("  update "), std::string::npos) << out;
  EXPECT_NE(shown.find("    -old line\n    +new line\n"), std::string::npos) << out;
  EXPECT_NE(out.find("y -> accept"), std::string::npos) << out;
  EXPECT_NE(out.find("[file change completed]"), std::string::npos) << out;
  EXPECT_EQ(read_file(dir + "/added.txt"), "new file\n");
  EXPECT_EQ(read_file(dir + "/edited.txt"), "keep\nnew line\n");
}

TEST(chat, declined_file_change_leaves_the_files_alone) {
  auto dir = make_temp_dir("chat_patch_declined");
  int status = 0;
  auto out = chat(dir,
                  "patch:\\n*** Begin Patch\\n*** Add File: added.txt\\n+new file\\n"
                  "*** End Patch\nn\n",
                  status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("+new file"), std::string::npos) << out;
  EXPECT_NE(out.find("n -> decline"), std::string::npos) << out;
  EXPECT_FALSE(file_exists(dir + "/added.txt"));
}

TEST(chat, approvals_of_two_threads_are_queued_and_asked_in_turn) {
  auto dir = make_temp_dir("chat_two_threads");
  // /new starts a second thread while the first one's approval is asked; the
  // second asks too, so both wait in the queue.
  int status = 0;
  auto out = chat(dir, "run[escalate]: touch one.txt\n/new run[escalate]: touch two.txt\ny\ny\n", status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(count(out, "[parley chat] thread "), 2u) << out;
  auto both = out.find("[approval 1 of 2] thread ");
  ASSERT_NE(both, std::string::npos) << out;
  EXPECT_NE(out.substr(both, out.find('\n', both) - both).find("one.txt"), std::string::npos)
      << out;
  // Answering the first makes the other thread's request current.
  auto next = out.find("[approval 1 of 1] thread ", both);
  ASSERT_NE(next, std::string::npos) << out;
  EXPECT_NE(out.substr(next, out.find('\n', next) - next).find("two.txt"), std::string::npos)
      << out;
  EXPECT_EQ(count(out, "y -> accept"), 2u) << out;
  EXPECT_TRUE(file_exists(dir + "/one.txt"));
  EXPECT_TRUE(file_exists(dir + "/two.txt"));
  EXPECT_NE(out.find("done: 2 turn(s), 2 approval(s)"), std::string::npos) << out;
}

TEST(chat, abort_all_cancels_every_pending_approval_of_every_thread) {
  auto dir = make_temp_dir("chat_abort_all");
  int status = 0;
  auto out = chat(dir, "run[escalate]: touch one.txt\n/new run[escalate]: touch two.txt\na\n", status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("[approval 1 of 2]"), std::string::npos) << out;
  EXPECT_NE(out.find("a -> abort all"), std::string::npos) << out;
  EXPECT_NE(out.find("[approval] aborted 2 pending approval(s)"), std::string::npos) << out;
  EXPECT_EQ(count(out, "[turn interrupted"), 2u) << out;
  EXPECT_FALSE(file_exists(dir + "/one.txt"));
  EXPECT_FALSE(file_exists(dir + "/two.txt"));
}

TEST(chat, end_of_input_declines_what_is_still_asked) {
  auto dir = make_temp_dir("chat_eof");
  int status = 0;
  auto out = chat(dir, "run[escalate]: touch never.txt\n", status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("[approval] end of input: declined 1 pending approval(s)"), std::string::npos)
      << out;
  EXPECT_FALSE(file_exists(dir + "/never.txt"));
}

TEST(chat, approval_withdrawn_by_the_server_drops_its_prompt) {
  auto dir = make_temp_dir("chat_withdrawn");
  // The chat's input stays open (a pipe we hold) until the server has timed
  // the approval out; the order comes from reading, not from sleeping.
  child_process chat_process{{parley_binary(), "chat", "--home=" + dir + "/home", "--cwd=" + dir,
                              "--approval-timeout=100ms"},
                             dir + "/stderr"};
  ASSERT_TRUE(chat_process.write_line("run[escalate]: touch late.txt"));
  std::string out;
  bool dropped = false;
  while (auto line = chat_process.read_line(std::chrono::seconds(30))) {
    out += *line + "\n";
    if (line->find("[approval resolved by the server]") != std::string::npos) {
      dropped = true;
      break;
    }
  }
  ASSERT_TRUE(dropped) << out;
  chat_process.close_stdin();
  while (auto line = chat_process.read_line(std::chrono::seconds(30))) out += *line + "\n";
  EXPECT_EQ(chat_process.wait(), 0) << out;
  // Nothing was left to decline at the end of input: the prompt was dropped.
  EXPECT_EQ(out.find("end of input: declined"), std::string::npos) << out;
  EXPECT_NE(out.find("1 timed out"), std::string::npos) << out;
  EXPECT_FALSE(file_exists(dir + "/late.txt"));
}

TEST(chat, stats_line_prints_the_approval_counters) {
  auto dir = make_temp_dir("chat_stats");
  int status = 0;
  auto out = chat(dir, "run[escalate]: touch no.txt\nn\n/stats\nrun[escalate]: touch yes.txt\ny\n", status);
  EXPECT_EQ(status, 0) << out;
  // Once for /stats, once at exit.
  EXPECT_EQ(count(out, "[stats] approvals: "), 2u) << out;
  EXPECT_NE(out.find("[stats] approvals: 1 requested, 0 pending, 1 decided (0 allowed, 1 denied), "
                     "0 timed out, 0 cancelled, 0 failed"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("[stats] approvals: 2 requested, 0 pending, 2 decided (1 allowed, 1 denied)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("[stats] time to decision: p50 "), std::string::npos) << out;
}

TEST(chat, control_characters_of_a_command_reach_the_terminal_escaped) {
  auto dir = make_temp_dir("chat_escapes");
  // Printed raw, the command erases its line and shows `echo harmless` at
  // the prompt (issue 27). The input line holds the raw bytes.
  int status = 0;
  auto out = chat(dir, "run[escalate]: touch pwned.txt #\x1b[2K\r\x1b[1Aecho harmless\nn\n", status);
  EXPECT_EQ(status, 0) << out;
  // stdout is a pipe: no colours, so no ESC at all, and no carriage return.
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  // The whole command, on the item's line and on the approval's (the server
  // shows it as `/bin/sh -c '...'`).
  std::string shown = "touch pwned.txt #\\e[2K\\r\\e[1Aecho harmless'";
  auto line_of = [&](const std::string& start) {
    auto at = out.find(start);
    return at == std::string::npos ? std::string{} : out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_NE(line_of("[command] ").find(shown), std::string::npos) << out;
  EXPECT_NE(line_of("[approval 1 of 1] ").find(shown + "` in "), std::string::npos) << out;
  EXPECT_NE(out.find("are shown escaped"), std::string::npos) << out;
  EXPECT_NE(out.find("n -> decline"), std::string::npos) << out;
  EXPECT_FALSE(file_exists(dir + "/pwned.txt"));
}

TEST(chat, control_characters_of_command_output_reach_the_terminal_escaped) {
  auto dir = make_temp_dir("chat_output_escapes");
  // Output could hide what is asked next (ESC [8m: concealed text).
  int status = 0;
  auto out = chat(dir, "run: printf 'out\\033[8mhidden\\rback'\n", status, "--yes");
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_NE(out.find("out\\e[8mhidden\\rback"), std::string::npos) << out;
}

TEST(chat, unknown_slash_command_is_reported_not_sent) {
  auto dir = make_temp_dir("chat_unknown_command");
  int status = 0;
  auto out = chat(dir, "/bogus\n", status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("unknown command /bogus"), std::string::npos) << out;
  EXPECT_NE(out.find("done: 0 turn(s), 0 approval(s)"), std::string::npos) << out;
}

}  // namespace
}  // namespace parley::test
