#include "actors/model/config/environment_policy.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace parley::model_config {
namespace {

const std::vector<std::string> parent{
    "PATH=/usr/bin:/bin",       "HOME=/home/ada",      "OPENAI_API_KEY=sk-secret",
    "GITHUB_TOKEN=ghp_abc",     "AWS_SECRET_ACCESS_KEY=aws", "my_api_key=lower",
    "LANG=C.UTF-8",             "USER=ada",            "KEYBOARD_LAYOUT=us",
    "EDITOR=vi",                "TMPDIR=/tmp"};

bool has(const std::vector<std::string>& env, const std::string& entry) {
  return std::find(env.begin(), env.end(), entry) != env.end();
}

bool has_name(const std::vector<std::string>& env, const std::string& name) {
  return std::any_of(env.begin(), env.end(),
                     [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; });
}

TEST(environment_policy, default_drops_keys_secrets_and_tokens_and_keeps_the_rest) {
  auto env = command_environment({}, parent);
  EXPECT_FALSE(has_name(env, "OPENAI_API_KEY"));
  EXPECT_FALSE(has_name(env, "GITHUB_TOKEN"));
  EXPECT_FALSE(has_name(env, "AWS_SECRET_ACCESS_KEY"));
  EXPECT_FALSE(has_name(env, "my_api_key"));       // the globs ignore case
  EXPECT_FALSE(has_name(env, "KEYBOARD_LAYOUT"));  // *KEY* is a crude net, as in Codex
  EXPECT_TRUE(has(env, "PATH=/usr/bin:/bin"));
  EXPECT_TRUE(has(env, "HOME=/home/ada"));
  EXPECT_TRUE(has(env, "LANG=C.UTF-8"));
  EXPECT_TRUE(has(env, "EDITOR=vi"));
  EXPECT_EQ(env.size(), 6u);
}

TEST(environment_policy, ignore_default_excludes_keeps_everything) {
  shell_environment_policy p;
  p.ignore_default_excludes = true;
  EXPECT_EQ(command_environment(p, parent), parent);
}

TEST(environment_policy, core_keeps_only_the_core_names) {
  shell_environment_policy p;
  p.inherit = inherit_kind::core;
  auto env = command_environment(p, parent);
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/usr/bin:/bin", "HOME=/home/ada", "USER=ada",
                                           "TMPDIR=/tmp"}));
}

TEST(environment_policy, none_starts_empty_and_set_adds) {
  shell_environment_policy p;
  p.inherit = inherit_kind::none;
  p.set = {{"ONLY", "yes"}};
  EXPECT_EQ(command_environment(p, parent), (std::vector<std::string>{"ONLY=yes"}));
}

TEST(environment_policy, exclude_globs_then_set_replaces_and_adds) {
  shell_environment_policy p;
  p.exclude = {"ed*", "L?NG"};
  p.set = {{"PATH", "/opt/bin"}, {"CI", "1"}, {"A_TOKEN", "set-wins"}};
  auto env = command_environment(p, parent);
  EXPECT_FALSE(has_name(env, "EDITOR"));
  EXPECT_FALSE(has_name(env, "LANG"));
  EXPECT_TRUE(has(env, "PATH=/opt/bin"));
  EXPECT_EQ(env.front(), "PATH=/opt/bin");  // replaced in place
  EXPECT_TRUE(has(env, "CI=1"));
  // set comes after the default excludes: an explicit value is kept.
  EXPECT_TRUE(has(env, "A_TOKEN=set-wins"));
}

TEST(environment_policy, include_only_comes_last_and_also_filters_set) {
  shell_environment_policy p;
  p.include_only = {"PATH", "h*"};
  p.set = {{"EXTRA", "x"}};
  auto env = command_environment(p, parent);
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/usr/bin:/bin", "HOME=/home/ada"}));
}

TEST(environment_policy, malformed_and_repeated_entries) {
  auto env = command_environment({}, {"NOEQUALS", "=nameless", "A=1", "A=2", "B=x=y"});
  EXPECT_EQ(env, (std::vector<std::string>{"A=1", "B=x=y"}));
}

TEST(environment_policy, glob_matching) {
  EXPECT_TRUE(env_name_matches("*KEY*", "my_api_key"));
  EXPECT_TRUE(env_name_matches("*", ""));
  EXPECT_TRUE(env_name_matches("A*B*C", "AxxBxxC"));
  EXPECT_FALSE(env_name_matches("A*B*C", "AxxBxxCx"));
  EXPECT_TRUE(env_name_matches("?ATH", "path"));
  EXPECT_FALSE(env_name_matches("?ATH", "ATH"));
  EXPECT_FALSE(env_name_matches("PATH", "PATHX"));
  EXPECT_TRUE(env_name_matches("**x", "x"));
}

TEST(environment_policy, environment_of_reads_a_null_terminated_array) {
  const char* envp[] = {"A=1", "B=2", nullptr};
  EXPECT_EQ(environment_of(envp), (std::vector<std::string>{"A=1", "B=2"}));
  EXPECT_TRUE(environment_of(nullptr).empty());
}

}  // namespace
}  // namespace parley::model_config
