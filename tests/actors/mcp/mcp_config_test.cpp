// [mcp_servers.NAME] of config.toml, read by the pure config library.

#include <gtest/gtest.h>

#include "actors/mcp/child_env.hpp"
#include "actors/model/config/model_config.hpp"

namespace parley::model_config {
namespace {

const char* const two_servers = R"(
model = "gpt-5"

[mcp_servers.everything]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-everything"]
env = { LOG_LEVEL = "debug" }
env_vars = ["GITHUB_TOKEN"]
cwd = "/srv"
startup_timeout_sec = 2.5
tool_timeout_sec = 30
enabled_tools = ["echo", "add", "longRunningOperation"]
disabled_tools = ["longRunningOperation"]
bearer_token_env_var = "IGNORED"

[mcp_servers.remote]
url = "https://user:secret@example.com:8443/mcp?x=1"
enabled = false
)";

TEST(mcp_config, reads_stdio_and_url_servers) {
  auto r = parse(two_servers, "config.toml");
  ASSERT_TRUE(r) << r.error;
  const auto& servers = r.config->mcp;
  ASSERT_EQ(servers.size(), 2u);
  const auto& e = servers.at("everything");
  EXPECT_EQ(e.name, "everything");
  EXPECT_TRUE(e.is_stdio());
  EXPECT_EQ(e.command, "npx");
  EXPECT_EQ(e.args, (std::vector<std::string>{"-y", "@modelcontextprotocol/server-everything"}));
  EXPECT_EQ(e.env.at("LOG_LEVEL"), "debug");
  EXPECT_EQ(e.env_vars, std::vector<std::string>{"GITHUB_TOKEN"});
  EXPECT_EQ(e.cwd, "/srv");
  EXPECT_EQ(e.startup_timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(e.tool_timeout, std::chrono::milliseconds(30'000));
  EXPECT_TRUE(e.enabled);
  const auto& remote = servers.at("remote");
  EXPECT_FALSE(remote.is_stdio());
  EXPECT_FALSE(remote.enabled);
  EXPECT_EQ(remote.startup_timeout, std::chrono::milliseconds(10'000));  // Codex's defaults
  EXPECT_EQ(remote.tool_timeout, std::chrono::milliseconds(60'000));
}

TEST(mcp_config, enabled_then_disabled_tools) {
  auto r = parse(two_servers, "config.toml");
  ASSERT_TRUE(r) << r.error;
  const auto& e = r.config->mcp.at("everything");
  EXPECT_TRUE(e.tool_enabled("echo"));
  EXPECT_FALSE(e.tool_enabled("longRunningOperation"));  // allowed, then disabled
  EXPECT_FALSE(e.tool_enabled("printEnv"));               // not in enabled_tools
  mcp_server all;
  EXPECT_TRUE(all.tool_enabled("anything"));
}

TEST(mcp_config, no_servers_without_the_table) {
  auto r = parse("model = \"x\"\n", "config.toml");
  ASSERT_TRUE(r) << r.error;
  EXPECT_TRUE(r.config->mcp.empty());
}

TEST(mcp_config, problems_name_the_key_and_place) {
  auto neither = parse("[mcp_servers.a]\nargs = []\n", "c.toml");
  EXPECT_FALSE(neither);
  EXPECT_NE(neither.error.find("mcp_servers.a"), std::string::npos) << neither.error;
  EXPECT_NE(neither.error.find("needs `command`"), std::string::npos) << neither.error;
  auto both = parse("[mcp_servers.a]\ncommand = \"x\"\nurl = \"http://h\"\n", "c.toml");
  EXPECT_FALSE(both);
  EXPECT_NE(both.error.find("not both"), std::string::npos) << both.error;
  auto timeout = parse("[mcp_servers.a]\ncommand = \"x\"\ntool_timeout_sec = 0\n", "c.toml");
  EXPECT_FALSE(timeout);
  EXPECT_NE(timeout.error.find("c.toml:3:"), std::string::npos) << timeout.error;
  EXPECT_NE(timeout.error.find("mcp_servers.a.tool_timeout_sec"), std::string::npos);
  auto text = parse("[mcp_servers.a]\ncommand = \"x\"\nstartup_timeout_sec = \"10\"\n", "c.toml");
  EXPECT_FALSE(text);
  EXPECT_NE(text.error.find("expected a number of seconds"), std::string::npos) << text.error;
  auto args = parse("[mcp_servers.a]\ncommand = \"x\"\nargs = [1]\n", "c.toml");
  EXPECT_FALSE(args);
  auto url = parse("[mcp_servers.a]\nurl = \"ftp://h\"\n", "c.toml");
  EXPECT_FALSE(url);
  EXPECT_NE(url.error.find("http:// or https://"), std::string::npos) << url.error;
}

TEST(mcp_config, sandbox_keys_default_to_workspace_write_with_network) {
  auto r = parse(two_servers, "config.toml");
  ASSERT_TRUE(r) << r.error;
  const auto& e = r.config->mcp.at("everything");
  EXPECT_EQ(e.sandbox_mode, mcp_server::sandbox::workspace_write);
  EXPECT_TRUE(e.sandbox_writable_roots.empty());
  EXPECT_TRUE(e.sandbox_network);
  auto set = parse("[mcp_servers.a]\ncommand = \"x\"\nsandbox_mode = \"read-only\"\n"
                   "sandbox_writable_roots = [\"/srv/a\"]\nsandbox_network = false\n",
                   "c.toml");
  ASSERT_TRUE(set) << set.error;
  const auto& a = set.config->mcp.at("a");
  EXPECT_EQ(a.sandbox_mode, mcp_server::sandbox::read_only);
  EXPECT_EQ(a.sandbox_writable_roots, std::vector<std::string>{"/srv/a"});
  EXPECT_FALSE(a.sandbox_network);
  auto full = parse("[mcp_servers.a]\ncommand = \"x\"\nsandbox_mode = \"danger-full-access\"\n",
                    "c.toml");
  ASSERT_TRUE(full) << full.error;
  EXPECT_EQ(full.config->mcp.at("a").sandbox_mode, mcp_server::sandbox::danger_full_access);
  auto changed = parse(two_servers, "config.toml", {"mcp_servers.everything.sandbox_network=false"});
  ASSERT_TRUE(changed) << changed.error;
  EXPECT_TRUE(changed.config->mcp.at("everything") != e);
}

TEST(mcp_config, sandbox_keys_refuse_what_they_cannot_mean) {
  auto mode = parse("[mcp_servers.a]\ncommand = \"x\"\nsandbox_mode = \"none\"\n", "c.toml");
  EXPECT_FALSE(mode);
  EXPECT_NE(mode.error.find("mcp_servers.a.sandbox_mode"), std::string::npos) << mode.error;
  auto relative = parse("[mcp_servers.a]\ncommand = \"x\"\nsandbox_writable_roots = [\"data\"]\n",
                        "c.toml");
  EXPECT_FALSE(relative);
  EXPECT_NE(relative.error.find("absolute"), std::string::npos) << relative.error;
}

TEST(mcp_config, an_override_adds_or_changes_a_server) {
  auto r = parse(two_servers, "config.toml",
                 {"mcp_servers.fs.command=\"mcp-fs\"", "mcp_servers.everything.enabled=false"});
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.config->mcp.at("fs").command, "mcp-fs");
  EXPECT_FALSE(r.config->mcp.at("everything").enabled);
}

TEST(mcp_config, a_changed_table_compares_unequal) {
  auto a = parse(two_servers, "config.toml");
  auto b = parse(two_servers, "config.toml", {"mcp_servers.everything.tool_timeout_sec=31"});
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(a.config->mcp.at("remote") == b.config->mcp.at("remote"));
  EXPECT_TRUE(a.config->mcp.at("everything") != b.config->mcp.at("everything"));
}

TEST(mcp_config, tool_approval_modes_are_read_and_checked) {
  const char* text = R"(
[mcp_servers.probe]
command = "probe"
[mcp_servers.probe.tools.delete_file]
approval_mode = "prompt"
[mcp_servers.probe.tools.read_file]
approval_mode = "approve"
[mcp_servers.probe.tools.echo]
description = "ignored: only approval_mode is parley's"
)";
  auto r = parse(text, "config.toml");
  ASSERT_TRUE(r) << r.error;
  const auto& p = r.config->mcp.at("probe");
  EXPECT_EQ(p.approval_mode("delete_file"), "prompt");
  EXPECT_EQ(p.approval_mode("read_file"), "approve");
  EXPECT_EQ(p.approval_mode("echo"), "auto");     // a table without the key
  EXPECT_EQ(p.approval_mode("unnamed"), "auto");  // Codex's default
  auto bad = parse("[mcp_servers.a]\ncommand = \"x\"\n[mcp_servers.a.tools.t]\n"
                   "approval_mode = \"always\"\n",
                   "c.toml");
  EXPECT_FALSE(bad);
  EXPECT_NE(bad.error.find("mcp_servers.a.tools.t.approval_mode"), std::string::npos) << bad.error;
  EXPECT_NE(bad.error.find("\"auto\", \"prompt\" or \"approve\""), std::string::npos)
      << bad.error;
  // A reload takes a changed mode without restarting the server.
  auto changed = parse(text, "config.toml",
                       {"mcp_servers.probe.tools.delete_file.approval_mode=\"approve\""});
  ASSERT_TRUE(changed) << changed.error;
  EXPECT_EQ(changed.config->mcp.at("probe").approval_mode("delete_file"), "approve");
  EXPECT_TRUE(changed.config->mcp.at("probe") == p);
}

TEST(mcp_child_env, inherits_a_few_passes_named_sets_given) {
  auto r = parse(two_servers, "config.toml");
  ASSERT_TRUE(r) << r.error;
  auto env = mcp::child_environment(
      r.config->mcp.at("everything"),
      {"PATH=/usr/bin", "HOME=/home/u", "GITHUB_TOKEN=t", "OPENAI_API_KEY=secret",
       "LOG_LEVEL=info", "broken"});
  EXPECT_EQ(env, (std::vector<std::string>{"GITHUB_TOKEN=t", "HOME=/home/u", "LOG_LEVEL=debug",
                                           "PATH=/usr/bin"}));
}

}  // namespace
}  // namespace parley::model_config
