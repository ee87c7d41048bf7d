#pragma once
// The `parley` command line (CLI11): every subcommand's options, their
// defaults and validation, and the help text. It only fills the config
// structs; transport/main.cpp runs what was asked.
//
//   parley app-server [options]      parley chat [options]
//     (both: --config FILE, -c key=value: Codex's config.toml)
//   parley store reindex [--home DIR]
//   parley store check [--home DIR] [--repair]
//   parley store migrate [--store-url URL]
//   parley store export --thread ID (--out FILE | --codex-home DIR) [--store-url URL]
//   parley store import FILE [--store-url URL]
//   parley audit verify [--home DIR | FILE]
//   parley rules check [--home DIR] [--json] (-- COMMAND WORDS... | --path P...)
//   parley cluster status [--store-url URL] [--threads] [--json]
//
// Options take `--opt value` and `--opt=value`; -h/--help works on every
// subcommand and goes to stdout; errors go to stderr with exit code 2.

#include <string>
#include <vector>

#include "actors/core/config.hpp"
#include "actors/core/command_sandbox.hpp"
#include "transport/app_server.hpp"
#include "transport/chat/chat.hpp"
#include "transport/cluster_command.hpp"
#include "transport/rules_command.hpp"
#include "transport/store_command.hpp"

namespace parley {

struct command_line {
  enum class action {
    exit,
    app_server,
    chat,
    store_reindex,
    store_check,
    store_prune,
    store_migrate,
    store_export,
    store_import,
    audit_verify,
    rules_check,
    cluster_status
  };
  action what = action::exit;
  /// With action::exit: 0 after --help or --version, 2 after a usage error
  /// (the message is already printed).
  int exit_code = 0;

  /// app-server, chat (for the child), store reindex (home only).
  runtime_config server;
  std::string log_level = "info";
  std::string log_format = "text";  // --log-format: text or json
  /// app-server --listen (stdio://, ws://HOST:PORT, unix://[PATH], repeatable)
  /// and --ws-auth with its token or secret file.
  listen_options listen;
  /// app-server --cluster FILE and --cluster-node NAME (one node of a cluster).
  std::string cluster_file;
  std::string cluster_node;
  /// --audit: a file, "off", or empty for the default (HOME/audit.jsonl with
  /// the local store).
  std::string audit;
  /// --config: Codex's config.toml; empty = the default path
  /// ($CODEX_HOME/config.toml, else HOME/config.toml), which may be missing.
  std::string config_file;
  /// -c key=value (repeatable, in order), applied on top of the file.
  std::vector<std::string> config_overrides;
  /// --sandbox-unconfined and the --command-* limits.
  bool sandbox_unconfined = false;
  bool sandbox_isolate_reads = false;
  command_limits limits;
  /// chat: its own options; `server_args` are the app-server options given,
  /// passed on to the child as `--name=value`.
  chat_options chat;
  std::vector<std::string> server_args;
  /// audit verify: the log to check.
  std::string audit_file;
  rules_check_request rules;
  store_check_request store_check;
  store_prune_request store_prune;
  cluster_status_request cluster_status;
  /// store export / import (with server.store_url).
  struct {
    std::string thread;      // export --thread
    std::string out_file;    // export --out
    std::string codex_home;  // export --codex-home
    std::string rollout;     // import FILE
  } transfer;
};

/// Parses argv; prints help, version or the usage error itself.
command_line parse_command_line(int argc, const char* const* argv);

}  // namespace parley
