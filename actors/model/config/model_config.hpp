#pragma once
// Codex's config.toml, as far as parley uses it: the model, its provider
// ([model_providers.ID]), and the shell environment policy. Pure: reads one
// file, logs nothing; toml++ stays inside the library.
//
// Which provider is active:
//   1. `model_provider` when the file (or a -c override) sets it;
//   2. else `openai` when `model` is set (a Codex user's file);
//   3. else `scripted`, parley's built-in deterministic model (no HTTP), so
//      a parley without any config still runs its demo.
// Built-in providers: openai, ollama, lmstudio (as Codex has them) and
// scripted. A [model_providers.ID] table for a built-in ID replaces the
// fields it gives and keeps the others (Codex ignores such tables).
//
// Keys parley does not use are ignored: a Codex config has many.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/model/config/environment_policy.hpp"
#include "actors/model/config/mcp_servers.hpp"

namespace parley::model_config {

/// The HTTP API a provider speaks: OpenAI's Responses API (/responses) or
/// Chat Completions (/chat/completions).
enum class wire_api { responses, chat };

/// "responses", "chat".
const char* to_string(wire_api w);

struct provider {
  /// Where the model's steps come from: an HTTP API, or parley's scripted
  /// model (then every HTTP field below is unused).
  enum class kind { http, scripted };
  kind how = kind::http;
  /// The key under [model_providers] (e.g. "openai").
  std::string id;
  /// Display name (`name`; the id when not given).
  std::string name;
  /// e.g. https://api.openai.com/v1 (the default for a provider without one,
  /// as in Codex).
  std::string base_url;
  /// The environment variable holding the API key; empty = none sent.
  std::string env_key;
  /// A provider defined without `wire_api` speaks responses (Codex's
  /// default today; older Codex defaulted to chat).
  wire_api wire = wire_api::responses;
  /// Header -> value, sent as given.
  std::map<std::string, std::string> http_headers;
  /// Header -> environment variable; sent when the variable is set and not
  /// empty.
  std::map<std::string, std::string> env_http_headers;
  /// Appended to every request URL.
  std::map<std::string, std::string> query_params;
  /// Retries of a failed request, and reconnects of a dropped stream (both
  /// capped at 100, as in Codex).
  uint64_t request_max_retries = 4;
  uint64_t stream_max_retries = 5;
  /// A stream silent this long counts as lost.
  std::chrono::milliseconds stream_idle_timeout{300'000};
  /// `max_concurrent_requests` (parley's; Codex has none): at most this many
  /// of the provider's requests run at once, the rest wait, round-robin over
  /// threads. Not set: request_cap() picks by where the provider is. 0: no cap.
  std::optional<uint64_t> max_concurrent_requests;
  /// `stream_hold_release_ms` (parley's): a stream held this long because
  /// its client is behind (backpressure) gives its slot of the cap to a
  /// request waiting for one, and is asked again once its client has caught
  /// up. A held stream keeps its slot while nobody waits. 0: never.
  std::chrono::milliseconds stream_hold_release{5'000};
};

/// The cap when the config sets none: a local server (localhost, 127.0.0.0/8,
/// [::1]) serves a few requests at a time and has a small accept backlog.
constexpr uint64_t default_local_request_cap = 8;
/// A remote API serves many; the cap only keeps a burst of threads from
/// opening thousands of connections at once.
constexpr uint64_t default_remote_request_cap = 256;

/// `max_concurrent_requests`, or the default for the provider's base_url
/// (0: no cap).
uint64_t request_cap(const provider& p);

/// True for http(s)://localhost, 127.x.y.z and [::1] URLs.
bool is_loopback_url(std::string_view url);

struct settings {
  /// The file read; empty when none was (defaults only).
  std::string source;
  /// `model`; empty when not set (the scripted provider needs none).
  std::string model;
  /// The id of the active provider; always a key of `providers`.
  std::string model_provider;
  /// Built-ins and the file's, by id.
  std::map<std::string, provider> providers;
  /// `model_reasoning_effort` (none, minimal, low, medium, high, xhigh) and
  /// `model_reasoning_summary` (auto, concise, detailed, none); empty = not set.
  std::string model_reasoning_effort;
  std::string model_reasoning_summary;
  /// `instructions` (replace the base instructions) and
  /// `developer_instructions` (added as a developer message); empty = not set.
  std::string instructions;
  std::string developer_instructions;
  /// `model_auto_compact_token_limit`: a thread whose last model request
  /// used this many tokens or more is compacted before its next request;
  /// 0 = not set (parley then never compacts by itself).
  uint64_t auto_compact_token_limit = 0;
  /// `tool_output_token_limit`: the tokens of a tool's output the model is
  /// sent (before Codex's 20%), in place of the model's own limit; 0 = not set.
  uint64_t tool_output_token_limit = 0;
  shell_environment_policy shell_environment;
  /// `[features]` that offer a model more tools, as Codex names them (both
  /// off by default, as in Codex 0.169): `default_mode_request_user_input`
  /// offers request_user_input (item/tool/requestUserInput), and
  /// `request_permissions_tool` offers request_permissions
  /// (item/permissions/requestApproval).
  bool request_user_input_tool = false;
  bool request_permissions_tool = false;
  /// parley's own `[parley.limits]` (Codex has no such table): each key
  /// set, a non-negative integer (0 = no limit). The runtime knows the
  /// names (actors/core/usage_limits.hpp) and refuses an unknown one.
  std::map<std::string, uint64_t> limits;
  /// `[mcp_servers.NAME]`: the MCP servers parley runs (mcp_servers.hpp).
  mcp_servers mcp;

  const provider& active_provider() const { return providers.at(model_provider); }
};

/// The providers every config starts with: openai, ollama, lmstudio, scripted.
std::map<std::string, provider> built_in_providers();

/// What to read. An explicit path (`--config FILE`) must exist; a missing
/// file at the default path means defaults.
struct load_request {
  std::string path;
  bool explicit_path = false;
  /// `-c key=value` texts, applied in order on top of the file.
  std::vector<std::string> overrides;
};

/// Either settings or one error message (with `file:line:column:` or `-c
/// KEY:` in front when the problem has a place).
struct load_result {
  std::optional<settings> config;
  std::string error;
  explicit operator bool() const { return config.has_value(); }
};

/// Reads, overrides, then validates.
load_result load(const load_request& request);

/// The same on text already read; `source_name` names it in errors and in
/// `settings::source` (empty: no file, defaults plus overrides).
load_result parse(std::string_view toml_text, const std::string& source_name,
                  const std::vector<std::string>& overrides = {});

/// $CODEX_HOME/config.toml when `codex_home` is set and not empty, else
/// PARLEY_HOME/config.toml.
std::string default_config_path(const char* codex_home, const std::string& parley_home);

}  // namespace parley::model_config
