#include "actors/model/config/model_config.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <unistd.h>

namespace parley::model_config {
namespace {

// A Codex user's file: two providers of their own, and many keys parley
// does not read.
const char* const codex_file = R"(# ~/.codex/config.toml
model = "gpt-5-codex"
model_provider = "azure"
model_reasoning_effort = "high"
model_reasoning_summary = "concise"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
developer_instructions = "Prefer small commits."

[model_providers.azure]
name = "Azure"
base_url = "https://example.openai.azure.com/openai"
env_key = "AZURE_OPENAI_API_KEY"
query_params = { api-version = "2025-04-01-preview" }
request_max_retries = 2
stream_idle_timeout_ms = 60000

[model_providers.local]
name = "Local gateway"
base_url = "http://127.0.0.1:8080/v1"
wire_api = "chat"
http_headers = { "X-Team" = "parley" }
env_http_headers = { "X-Gateway-Auth" = "GATEWAY_AUTH" }
stream_max_retries = 500

[shell_environment_policy]
inherit = "core"
exclude = ["AWS_*"]
set = { CI = "1" }
include_only = ["PATH", "HOME", "CI"]

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "0"]

[tui]
notifications = true
)";

load_result parse_codex(const std::vector<std::string>& overrides = {}) {
  return parse(codex_file, "config.toml", overrides);
}

TEST(model_config, reads_a_codex_file_with_two_providers) {
  auto r = parse_codex();
  ASSERT_TRUE(r) << r.error;
  const auto& s = *r.config;
  EXPECT_EQ(s.source, "config.toml");
  EXPECT_EQ(s.model, "gpt-5-codex");
  EXPECT_EQ(s.model_provider, "azure");
  EXPECT_EQ(s.model_reasoning_effort, "high");
  EXPECT_EQ(s.model_reasoning_summary, "concise");
  EXPECT_EQ(s.developer_instructions, "Prefer small commits.");
  EXPECT_TRUE(s.instructions.empty());

  const auto& azure = s.active_provider();
  EXPECT_EQ(azure.id, "azure");
  EXPECT_EQ(azure.name, "Azure");
  EXPECT_EQ(azure.how, provider::kind::http);
  EXPECT_EQ(azure.base_url, "https://example.openai.azure.com/openai");
  EXPECT_EQ(azure.env_key, "AZURE_OPENAI_API_KEY");
  EXPECT_EQ(azure.wire, wire_api::responses);  // not given
  EXPECT_EQ(azure.query_params.at("api-version"), "2025-04-01-preview");
  EXPECT_EQ(azure.request_max_retries, 2u);
  EXPECT_EQ(azure.stream_max_retries, 5u);
  EXPECT_EQ(azure.stream_idle_timeout, std::chrono::milliseconds(60'000));

  const auto& local = s.providers.at("local");
  EXPECT_EQ(local.wire, wire_api::chat);
  EXPECT_EQ(local.http_headers.at("X-Team"), "parley");
  EXPECT_EQ(local.env_http_headers.at("X-Gateway-Auth"), "GATEWAY_AUTH");
  EXPECT_EQ(local.stream_max_retries, 100u);  // capped, as Codex does
  EXPECT_EQ(local.request_max_retries, 4u);
  EXPECT_TRUE(local.env_key.empty());

  const auto& p = s.shell_environment;
  EXPECT_EQ(p.inherit, inherit_kind::core);
  EXPECT_FALSE(p.ignore_default_excludes);
  EXPECT_EQ(p.exclude, (std::vector<std::string>{"AWS_*"}));
  EXPECT_EQ(p.set.at("CI"), "1");
  EXPECT_EQ(p.include_only, (std::vector<std::string>{"PATH", "HOME", "CI"}));
  // The built-ins are still there.
  EXPECT_EQ(s.providers.count("openai"), 1u);
  EXPECT_EQ(s.providers.count("scripted"), 1u);
}

TEST(model_config, no_file_means_the_scripted_model_and_defaults) {
  auto r = parse("", "");
  ASSERT_TRUE(r) << r.error;
  const auto& s = *r.config;
  EXPECT_EQ(s.model_provider, "scripted");
  EXPECT_EQ(s.active_provider().how, provider::kind::scripted);
  EXPECT_TRUE(s.model.empty());
  EXPECT_EQ(s.shell_environment.inherit, inherit_kind::all);
  EXPECT_FALSE(s.shell_environment.ignore_default_excludes);
  EXPECT_TRUE(s.shell_environment.exclude.empty());
}

TEST(model_config, max_concurrent_requests_defaults_by_where_the_provider_is) {
  auto r = parse("[model_providers.local]\nbase_url = \"http://127.0.0.1:8080/v1\"\n"
                 "[model_providers.remote]\nbase_url = \"https://gateway.example/v1\"\n"
                 "[model_providers.capped]\nbase_url = \"https://gateway.example/v1\"\n"
                 "max_concurrent_requests = 3\n"
                 "[model_providers.open]\nbase_url = \"http://localhost:1/v1\"\n"
                 "max_concurrent_requests = 0\n",
                 "c.toml");
  ASSERT_TRUE(r) << r.error;
  const auto& all = r.config->providers;
  EXPECT_EQ(request_cap(all.at("local")), default_local_request_cap);
  EXPECT_EQ(request_cap(all.at("ollama")), default_local_request_cap);
  EXPECT_EQ(request_cap(all.at("openai")), default_remote_request_cap);
  EXPECT_EQ(request_cap(all.at("remote")), default_remote_request_cap);
  EXPECT_EQ(request_cap(all.at("capped")), 3u);
  EXPECT_EQ(request_cap(all.at("open")), 0u);  // no cap
  EXPECT_TRUE(is_loopback_url("http://[::1]:8080/v1"));
  EXPECT_TRUE(is_loopback_url("https://user@localhost/v1"));
  EXPECT_TRUE(is_loopback_url("http://127.3.4.5"));
  EXPECT_FALSE(is_loopback_url("http://localhost.example.com/v1"));
  EXPECT_FALSE(is_loopback_url("http://1270.0.0.1/v1"));
  auto bad = parse("[model_providers.x]\nmax_concurrent_requests = -1\n", "c.toml");
  EXPECT_FALSE(bad);
}

TEST(model_config, stream_hold_release_ms_defaults_to_a_few_seconds) {
  auto r = parse("[model_providers.local]\nbase_url = \"http://127.0.0.1:8080/v1\"\n"
                 "[model_providers.quick]\nstream_hold_release_ms = 250\n"
                 "[model_providers.never]\nstream_hold_release_ms = 0\n",
                 "c.toml");
  ASSERT_TRUE(r) << r.error;
  const auto& all = r.config->providers;
  EXPECT_EQ(all.at("local").stream_hold_release, std::chrono::milliseconds(5'000));
  EXPECT_EQ(all.at("quick").stream_hold_release, std::chrono::milliseconds(250));
  EXPECT_EQ(all.at("never").stream_hold_release, std::chrono::milliseconds(0));
  EXPECT_FALSE(parse("[model_providers.x]\nstream_hold_release_ms = -1\n", "c.toml"));
}

TEST(model_config, built_in_providers_have_codex_defaults) {
  auto all = built_in_providers();
  const auto& openai = all.at("openai");
  EXPECT_EQ(openai.base_url, "https://api.openai.com/v1");
  EXPECT_EQ(openai.env_key, "OPENAI_API_KEY");
  EXPECT_EQ(openai.wire, wire_api::responses);
  EXPECT_EQ(openai.request_max_retries, 4u);
  EXPECT_EQ(openai.stream_max_retries, 5u);
  EXPECT_EQ(openai.stream_idle_timeout, std::chrono::milliseconds(300'000));
  EXPECT_EQ(all.at("ollama").base_url, "http://localhost:11434/v1");
  EXPECT_EQ(all.at("ollama").wire, wire_api::chat);
  EXPECT_EQ(all.at("lmstudio").base_url, "http://localhost:1234/v1");
  EXPECT_EQ(all.at("scripted").how, provider::kind::scripted);
}

TEST(model_config, default_provider_rule) {
  // A model and no provider: a Codex user's file, so OpenAI.
  auto r = parse("model = \"o3\"\n", "c.toml");
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.config->model_provider, "openai");
  // model_provider wins.
  r = parse("model = \"llama3\"\nmodel_provider = \"ollama\"\n", "c.toml");
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.config->model_provider, "ollama");
  // Scripted explicitly, with or without a model.
  r = parse("model_provider = \"scripted\"\n", "c.toml");
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.config->model_provider, "scripted");
}

TEST(model_config, a_table_for_a_built_in_changes_only_what_it_gives) {
  auto r = parse("model = \"m\"\n[model_providers.openai]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
                 "c.toml");
  ASSERT_TRUE(r) << r.error;
  const auto& openai = r.config->active_provider();
  EXPECT_EQ(openai.base_url, "http://127.0.0.1:9/v1");
  EXPECT_EQ(openai.env_key, "OPENAI_API_KEY");
  EXPECT_EQ(openai.name, "OpenAI");
}

TEST(model_config, a_new_provider_gets_codex_defaults) {
  auto r = parse("model = \"m\"\nmodel_provider = \"p\"\n[model_providers.p]\n", "c.toml");
  ASSERT_TRUE(r) << r.error;
  const auto& p = r.config->active_provider();
  EXPECT_EQ(p.name, "p");
  EXPECT_EQ(p.base_url, "https://api.openai.com/v1");
  EXPECT_EQ(p.wire, wire_api::responses);
}

// -- -c overrides -------------------------------------------------------------

TEST(model_config_overrides, a_bare_word_is_a_string) {
  auto r = parse_codex({"model=o3", "model_provider = local"});
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.config->model, "o3");
  EXPECT_EQ(r.config->model_provider, "local");
  // Not TOML either (a dash): still the text itself.
  r = parse("", "", {"model=gpt-5.1-codex-max"});
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.config->model, "gpt-5.1-codex-max");
  EXPECT_EQ(r.config->model_provider, "openai");
}

TEST(model_config_overrides, a_quoted_string_is_toml) {
  auto r = parse("", "", {"model=\"with spaces = and equals\""});
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.config->model, "with spaces = and equals");
}

TEST(model_config_overrides, numbers_bools_and_nested_paths) {
  auto r = parse_codex({"model_providers.local.base_url=http://10.0.0.2:1234/v1",
                        "model_providers.local.request_max_retries=7",
                        "shell_environment_policy.ignore_default_excludes=true",
                        "shell_environment_policy.include_only=[]"});
  ASSERT_TRUE(r) << r.error;
  const auto& local = r.config->providers.at("local");
  EXPECT_EQ(local.base_url, "http://10.0.0.2:1234/v1");
  EXPECT_EQ(local.request_max_retries, 7u);
  EXPECT_EQ(local.name, "Local gateway");  // the rest of the file's table stays
  EXPECT_TRUE(r.config->shell_environment.ignore_default_excludes);
  EXPECT_TRUE(r.config->shell_environment.include_only.empty());
}

TEST(model_config_overrides, make_a_provider_from_nothing) {
  auto r = parse("", "",
                 {"model_providers.mock={ base_url = \"http://127.0.0.1:5/v1\", wire_api = \"chat\" }",
                  "model_provider=mock", "model=m"});
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.config->active_provider().base_url, "http://127.0.0.1:5/v1");
  EXPECT_EQ(r.config->active_provider().wire, wire_api::chat);
  // A path through a non-table replaces it with a table.
  r = parse("model_providers = 3\n", "c.toml", {"model_providers.x.env_key=X_KEY"});
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.config->providers.at("x").env_key, "X_KEY");
}

TEST(model_config_overrides, malformed_overrides) {
  auto r = parse("", "", {"model"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error, "-c model: expected key=value (e.g. -c model=o3)");
  r = parse("", "", {"=x"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error, "-c =x: empty key");
  r = parse("", "", {"model_providers..x=1"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error.find("empty key segment"), std::string::npos) << r.error;
}

// -- validation ---------------------------------------------------------------

void expect_error(const std::string& text, const std::vector<std::string>& overrides,
                  const std::string& expected) {
  auto r = parse(text, "cfg.toml", overrides);
  ASSERT_FALSE(r) << "accepted: " << text;
  EXPECT_EQ(r.error, expected);
}

TEST(model_config, tool_output_token_limit_is_read_and_zero_means_unset) {
  auto none = parse("", "");
  ASSERT_TRUE(none) << none.error;
  EXPECT_EQ(none.config->tool_output_token_limit, 0u);
  auto set = parse("tool_output_token_limit = 1000\n", "cfg.toml", {});
  ASSERT_TRUE(set) << set.error;
  EXPECT_EQ(set.config->tool_output_token_limit, 1000u);
  auto overridden = parse("tool_output_token_limit = 1000\n", "cfg.toml", {"tool_output_token_limit=64"});
  ASSERT_TRUE(overridden) << overridden.error;
  EXPECT_EQ(overridden.config->tool_output_token_limit, 64u);
  expect_error("tool_output_token_limit = -5\n", {},
               "cfg.toml:1:27: tool_output_token_limit: must not be negative (got -5)");
}

TEST(model_config_validation, unknown_wire_api_with_its_place) {
  expect_error("model = \"m\"\n[model_providers.x]\nwire_api = \"grpc\"\n", {},
               "cfg.toml:3:12: model_providers.x.wire_api: unknown value \"grpc\" (one of "
               "responses, chat)");
  expect_error("", {"model_providers.local.wire_api=soap"},
               "-c model_providers.local.wire_api: unknown value \"soap\" (one of responses, chat)");
}

TEST(model_config_validation, provider_not_defined) {
  expect_error("model = \"m\"\nmodel_provider = \"nope\"\n", {},
               "cfg.toml:2:18: model_provider: no provider \"nope\" (defined: lmstudio, ollama, "
               "openai, scripted; add [model_providers.nope])");
}

TEST(model_config_validation, negative_retries_and_bad_timeouts) {
  expect_error("[model_providers.x]\nrequest_max_retries = -1\n", {},
               "cfg.toml:2:23: model_providers.x.request_max_retries: must not be negative (got -1)");
  expect_error("[model_providers.x]\nstream_max_retries = 1.5\n", {},
               "cfg.toml:2:22: model_providers.x.stream_max_retries: expected a non-negative "
               "integer, got float");
  expect_error("[model_providers.x]\nstream_idle_timeout_ms = 0\n", {},
               "cfg.toml:2:26: model_providers.x.stream_idle_timeout_ms: must be positive (got 0)");
}

TEST(model_config_validation, wrong_types) {
  expect_error("model = 5\n", {}, "cfg.toml:1:9: model: expected a string, got integer");
  expect_error("", {"model=5"}, "-c model: expected a string, got integer");
  expect_error("model_providers = \"x\"\n", {},
               "cfg.toml:1:19: model_providers: expected a table, got string");
  expect_error("[model_providers]\nx = 1\n", {},
               "cfg.toml:2:5: model_providers.x: expected a table, got integer");
  expect_error("[model_providers.x]\nhttp_headers = { A = 1 }\n", {},
               "cfg.toml:2:22: model_providers.x.http_headers.A: expected a string, got integer");
  expect_error("[shell_environment_policy]\nexclude = [\"A\", 2]\n", {},
               "cfg.toml:2:17: shell_environment_policy.exclude[1]: expected a string, got integer");
  expect_error("[shell_environment_policy]\nignore_default_excludes = \"yes\"\n", {},
               "cfg.toml:2:27: shell_environment_policy.ignore_default_excludes: expected true or "
               "false, got string");
  expect_error("[shell_environment_policy]\ninherit = \"some\"\n", {},
               "cfg.toml:2:11: shell_environment_policy.inherit: unknown value \"some\" (one of "
               "all, core, none)");
  expect_error("model_reasoning_effort = \"max\"\n", {},
               "cfg.toml:1:26: model_reasoning_effort: unknown value \"max\" (one of none, "
               "minimal, low, medium, high, xhigh)");
}

TEST(model_config_validation, bad_base_url_and_a_model_missing_for_http) {
  expect_error("[model_providers.x]\nbase_url = \"localhost:8080\"\n", {},
               "cfg.toml:2:12: model_providers.x.base_url: expected an http:// or https:// URL, "
               "got \"localhost:8080\"");
  expect_error("model_provider = \"ollama\"\n", {},
               "model: not set; provider \"ollama\" needs the name of the model to ask");
}

TEST(model_config_validation, toml_syntax_errors_name_the_line) {
  auto r = parse("model = \"m\"\nmodel_provider = \n", "cfg.toml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error.rfind("cfg.toml:2:", 0), 0u) << r.error;
}

// -- files --------------------------------------------------------------------

struct temp_dir {
  std::string path;
  temp_dir() {
    char tmpl[] = "/tmp/parley-config-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() {
    std::remove((path + "/config.toml").c_str());
    ::rmdir(path.c_str());
  }
};

TEST(model_config_files, missing_default_file_means_defaults_missing_explicit_file_fails) {
  temp_dir dir;
  auto path = dir.path + "/config.toml";
  auto r = load({path, false, {"model=o3"}});
  ASSERT_TRUE(r) << r.error;
  EXPECT_TRUE(r.config->source.empty());
  EXPECT_EQ(r.config->model, "o3");
  r = load({path, true, {}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error, "cannot read config file " + path + ": No such file or directory");
}

TEST(model_config_files, a_file_is_read_and_named_in_errors) {
  temp_dir dir;
  auto path = dir.path + "/config.toml";
  std::ofstream{path} << "model = \"o3\"\n[model_providers.openai]\nwire_api = \"x\"\n";
  auto r = load({path, true, {}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error.rfind(path + ":3:12: model_providers.openai.wire_api:", 0), 0u) << r.error;
  std::ofstream{path} << "model = \"o3\"\n";
  r = load({path, false, {}});
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.config->source, path);
  EXPECT_EQ(r.config->model_provider, "openai");
}

TEST(model_config_files, default_path) {
  EXPECT_EQ(default_config_path("/c", "/p"), "/c/config.toml");
  EXPECT_EQ(default_config_path("", "/p"), "/p/config.toml");
  EXPECT_EQ(default_config_path(nullptr, "/p"), "/p/config.toml");
}

}  // namespace
}  // namespace parley::model_config
