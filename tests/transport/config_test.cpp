// Codex's config.toml through the real binary: --config and -c at startup
// (errors exit 2 naming the problem), the default path, and the environment
// a model-run command gets (API keys and tokens filtered out by default).

#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

/// `parley app-server --store memory ARGS` with stdin at EOF (serves
/// nothing), `env` ("NAME=value ..." or "") in front.
outcome run_server(const std::vector<std::string>& args, const std::string& env = "") {
  auto dir = make_temp_dir("config_run");
  std::string command = env + " " + shell_quoted(parley_binary()) + " app-server --store memory";
  for (auto& a : args) command += " " + shell_quoted(a);
  command += " </dev/null >/dev/null 2>" + shell_quoted(dir + "/stderr.txt");
  outcome o;
  int status = std::system(command.c_str());
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.err = read_file(dir + "/stderr.txt");
  return o;
}

/// Sets environment variables for the servers this test starts; restores
/// them after.
struct scoped_env {
  std::vector<std::string> names;
  scoped_env(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (auto& [name, value] : vars) {
      ::setenv(name, value, 1);
      names.emplace_back(name);
    }
  }
  ~scoped_env() {
    for (auto& n : names) ::unsetenv(n.c_str());
  }
};

/// The output of `command` run by a turn of a fresh server (approval accepted).
std::string output_of_command(const std::vector<std::string>& args, const std::string& command) {
  std::vector<std::string> all{"--store", "memory"};
  all.insert(all.end(), args.begin(), args.end());
  app_server_client c(all);
  c.initialize();
  auto thread = c.start_thread();
  c.start_turn(thread, "run[escalate]: " + command);
  c.answer(c.wait_for_method("item/commandExecution/requestApproval"), "accept");
  auto done = c.wait_for([](const json& m) {
    return method_of(m) == "item/completed" && m["params"]["item"]["type"] == "commandExecution";
  });
  EXPECT_EQ(c.close_and_wait(), 0);
  return done["params"]["item"].value("aggregatedOutput", "");
}

TEST(Config, commands_do_not_see_api_keys_or_tokens_without_any_config) {
  scoped_env env{{"OPENAI_API_KEY", "sk-secret-4711"},
                 {"MY_TOKEN", "tok-secret-0815"},
                 {"PARLEY_TEST_PLAIN", "plain-visible"}};
  auto out = output_of_command({}, "env");
  EXPECT_NE(("\n" + out).find("\nPATH=/"), std::string::npos) << out;
  EXPECT_NE(out.find("PARLEY_TEST_PLAIN=plain-visible"), std::string::npos) << out;
  EXPECT_EQ(out.find("sk-secret-4711"), std::string::npos) << out;
  EXPECT_EQ(out.find("tok-secret-0815"), std::string::npos) << out;
  EXPECT_EQ(out.find("OPENAI_API_KEY"), std::string::npos) << out;
}

TEST(Config, the_files_shell_environment_policy_reaches_commands) {
  scoped_env env{{"OPENAI_API_KEY", "sk-secret-4711"}, {"PARLEY_TEST_PLAIN", "plain-visible"}};
  auto dir = make_temp_dir("config_policy");
  write_file(dir + "/config.toml",
             "[shell_environment_policy]\n"
             "set = { PARLEY_MARK = \"from-config\" }\n"
             "include_only = [\"PARLEY_MARK\", \"path\"]\n");
  auto out = output_of_command({"--config", dir + "/config.toml"}, "env | sort");
  EXPECT_EQ(out.rfind("PARLEY_MARK=from-config\nPATH=", 0), 0u) << out;
  EXPECT_EQ(out.find("PARLEY_TEST_PLAIN"), std::string::npos) << out;
  // -c on top of the file: the policy lets keys through again.
  out = output_of_command({"--config", dir + "/config.toml", "-c",
                           "shell_environment_policy.include_only=[]", "-c",
                           "shell_environment_policy.ignore_default_excludes=true"},
                          "env");
  EXPECT_NE(out.find("OPENAI_API_KEY=sk-secret-4711"), std::string::npos) << out;
  EXPECT_NE(out.find("PARLEY_MARK=from-config"), std::string::npos) << out;
}

TEST(Config, a_missing_config_file_given_explicitly_exits_2) {
  auto dir = make_temp_dir("config_missing");
  auto o = run_server({"--config", dir + "/nope.toml"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("cannot read config file " + dir + "/nope.toml: No such file or directory"),
            std::string::npos)
      << o.err;
  // Codex's `--config key=value`: pointed to -c.
  o = run_server({"--config", "model=o3"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("use -c model=o3"), std::string::npos) << o.err;
}

TEST(Config, a_bad_override_exits_2_naming_the_key) {
  auto o = run_server({"-c", "model_providers.openai.wire_api=carrier-pigeon"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("-c model_providers.openai.wire_api: unknown value \"carrier-pigeon\""),
            std::string::npos)
      << o.err;
}

TEST(Config, a_valid_file_starts_and_says_which_provider_is_active) {
  auto dir = make_temp_dir("config_valid");
  write_file(dir + "/config.toml",
             "model = \"llama3\"\nmodel_provider = \"local\"\napproval_policy = \"never\"\n"
             "[model_providers.local]\nbase_url = \"http://127.0.0.1:9/v1\"\n"
             "http_headers = { X-Secret-Header = \"hv-do-not-log\" }\n");
  auto o = run_server({"--config", dir + "/config.toml", "--log-level=info"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.err.find("config event=loaded path=" + dir + "/config.toml"), std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("provider=local model=llama3 wire_api=responses"), std::string::npos)
      << o.err;
  EXPECT_EQ(o.err.find("hv-do-not-log"), std::string::npos) << o.err;
}

TEST(Config, the_default_path_is_codex_home_then_parley_home) {
  auto codex_home = make_temp_dir("config_codex_home");
  write_file(codex_home + "/config.toml", "model = 42\n");
  auto o = run_server({}, "CODEX_HOME=" + shell_quoted(codex_home));
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find(codex_home + "/config.toml:1:9: model: expected a string, got integer"),
            std::string::npos)
      << o.err;
  // No CODEX_HOME: the home's config.toml; missing there means defaults.
  auto home = make_temp_dir("config_parley_home");
  o = run_server({"--home", home, "--log-level=info"}, "env -u CODEX_HOME");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.err.find("config event=defaults path=" + home + "/config.toml (not found)"),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("provider=scripted model=(none)"), std::string::npos) << o.err;
  write_file(home + "/config.toml", "model_provider = \"nowhere\"\n");
  o = run_server({"--home", home}, "env -u CODEX_HOME");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find(home + "/config.toml:1:18: model_provider: no provider \"nowhere\""),
            std::string::npos)
      << o.err;
}

}  // namespace
}  // namespace parley::test
