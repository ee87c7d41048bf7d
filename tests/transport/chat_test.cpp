// `parley chat --yes` end to end: the README's demo, as a test.

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "tests/support/app_server_client.hpp"

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

TEST(chat, auto_accept_runs_a_conversation_with_approvals) {
  auto dir = make_temp_dir("chat_yes");
  std::ofstream{dir + "/input"} << "say: hello\nrun: echo made > made.txt\\nsay: done\nrun: cat made.txt\n";
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
}

TEST(chat, answers_typed_on_input_decide_approvals) {
  auto dir = make_temp_dir("chat_answers");
  // Without --yes, the line after an approval prompt is its answer.
  std::ofstream{dir + "/input"} << "run: touch declined.txt\nd\nrun: touch accepted.txt\na\n";
  int status = 0;
  auto out = run_shell("cd " + dir + " && " + parley_binary() + " chat --home=" + dir + "/home < input",
                       status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("[command declined]"), std::string::npos) << out;
  EXPECT_FALSE(file_exists(dir + "/declined.txt"));
  EXPECT_TRUE(file_exists(dir + "/accepted.txt"));
}

}  // namespace
}  // namespace parley::test
