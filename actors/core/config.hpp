#pragma once
// Runtime settings shared (immutably) by every actor of one runtime.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "actors/core/approval_types.hpp"
#include "actors/core/usage_limits.hpp"

namespace parley {

// Held by pointer only: a host that registers hooks or reads config.toml
// includes their headers.
namespace hooks {
class approval_hook;  // actors/approval/hooks/approval_hook.hpp
}
namespace model_config {
struct settings;  // actors/model/config/model_config.hpp
}
namespace store {
class file_ops;  // actors/store/file_ops.hpp
}
namespace cluster {
struct cluster_config;  // actors/cluster/cluster_config.hpp
}
struct sandbox_settings;  // actors/core/command_sandbox.hpp

struct runtime_config {
  /// How long an approval waits for a decision before it counts as declined.
  std::chrono::milliseconds approval_timeout = std::chrono::minutes(10);
  /// Bytes of command output kept per command; the rest is dropped with a note.
  size_t output_cap_bytes = size_t{1} << 20;
  /// Reported as `codexHome`; the store lives here (later).
  std::string home;
  /// cwd for threads that do not name one; empty = the process's cwd.
  std::string default_cwd;
  /// The scripted model's name, as model/list and thread/start report it.
  std::string model_id = "parley-scripted";
  std::string model_provider = "parley";
  std::string cli_version = "0.1.0";
  /// Scheduler worker threads; 0 = one per core.
  size_t scheduler_threads = 0;
  /// Where threads are stored: in this process only, under `home`, or in a
  /// PostgreSQL database (`store_url`).
  enum class store_kind { memory, local, postgres };
  store_kind store = store_kind::memory;
  /// The PostgreSQL store's database: a postgresql:// URL or libpq key=value
  /// pairs, never with a password (PGPASSWORD or a PGPASSFILE give it).
  std::string store_url;
  /// One node of a cluster (`--cluster FILE`): the store is the cluster's
  /// PostgreSQL database, threads are leased to one node at a time. Null:
  /// a single process.
  std::shared_ptr<const cluster::cluster_config> cluster;
  /// When appended records are fsync'ed (local store): after every record,
  /// after each completed turn, or never (the OS decides).
  enum class durability_kind { item, turn, none };
  durability_kind durability = durability_kind::turn;
  /// Bytes of records that may wait for a disk that refuses them (full,
  /// read-only, failing) before the turns writing them fail.
  size_t store_backlog_bytes = size_t{32} << 20;
  /// Retention (local store): threads last updated longer ago than this
  /// are removed, at start and then hourly, except those this process has
  /// touched (loaded, written) and those with work pending; 0 keeps all.
  std::chrono::milliseconds prune_older_than{0};
  /// The system calls under the local store's rollout writer; null = the
  /// real ones (tests put a fault-injecting layer here).
  std::shared_ptr<store::file_ops> store_file_ops;
  /// The approval audit log (JSONL, hash-chained); empty = no audit.
  std::string audit_path;
  /// Encode event params where events are made (spread over many actors):
  /// on when JSON clients are served (stdio), off for in-process hosts.
  bool encode_events = false;
  /// A loaded thread with no subscriber and no active turn is unloaded after this.
  std::chrono::milliseconds idle_unload = std::chrono::minutes(30);
  /// The rules directory (*.rules, Codex execpolicy syntax plus path_rule);
  /// empty = no rules stage. `parley app-server` uses HOME/rules.
  std::string rules_dir;
  /// In-process approval hooks, asked in order after the rules and session
  /// grants and before the client (see hooks/approval_hook.hpp).
  std::vector<std::shared_ptr<hooks::approval_hook>> hooks;
  /// External hook programs (HOME/hooks.json for `parley app-server`, read by
  /// hooks/external_hook.hpp), asked after the in-process hooks.
  std::vector<hooks::external_hook_spec> external_hooks;
  /// config.toml with the -c overrides (model provider, shell environment
  /// policy); null = the built-in defaults.
  std::shared_ptr<const model_config::settings> model_settings;
  /// The config.toml parley read at start (or would have read: the default
  /// path when none exists yet); config/value/write writes it. Empty: none.
  std::string config_file;
  /// Whether config_file was named (--config: it must exist) and the -c
  /// overrides on top of it: what config/mcpServer/reload reads again.
  bool config_file_given = false;
  std::vector<std::string> config_overrides;
  /// The whole environment ("NAME=value") of every command a turn runs. The
  /// runtime makes it as it starts, from the shell environment policy and
  /// its own environment, unless the host set it; null (services built
  /// without a runtime, as in some tests) = parley's own environment.
  std::shared_ptr<const std::vector<std::string>> command_environment;
  /// How commands are confined and limited. Null: the runtime looks for
  /// `parley-sandbox` beside its executable (or at $PARLEY_SANDBOX_LAUNCHER),
  /// asks it what this host can enforce, and hides `home` and `audit_path`
  /// from commands.
  std::shared_ptr<const sandbox_settings> sandbox;
  /// What each tenant and each connection may hold at once (config.toml's
  /// [parley.limits]); past one, the request gets -32001 naming it.
  usage_limits limits;
};

/// Parses durations such as "600", "10m", "30s", "250ms", "1h", "30d", "2w"
/// (plain numbers are seconds). Returns false on anything else.
bool parse_duration(const std::string& text, std::chrono::milliseconds& out);

/// The home when --home is not given: $PARLEY_HOME, else ~/.parley. Every
/// subcommand that reads or writes the home resolves it here.
std::string default_home();

}  // namespace parley
