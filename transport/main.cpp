// parley: an actor runtime that hosts agent conversations and their approvals,
// speaking the Codex app-server JSON-RPC protocol.
//
//   parley app-server [options]   serve one client on stdin/stdout
//   parley chat [options]         a terminal client over a child app-server

#include <cstdlib>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

#include "actors/config.hpp"
#include "actors/audit/audit_log.hpp"
#include "actors/log.hpp"
#include "actors/rules/rules.hpp"
#include "actors/store/local_store.hpp"
#include "actors/store/rollout_file.hpp"
#include "transport/app_server.hpp"
#include "transport/chat.hpp"
#include "transport/rules_command.hpp"

namespace {

constexpr const char* usage = R"(usage:
  parley app-server [--store=local|memory] [--home=DIR] [--durability=turn|item|none]
                    [--approval-timeout=DURATION] [--idle-unload=DURATION] [--cwd=DIR]
                    [--model-provider=NAME]
                    [--output-cap=BYTES] [--threads=N] [--log-level=LEVEL]
  parley chat [--yes] [--approval-policy=POLICY] [app-server options]
  parley store reindex [--home=DIR]
  parley audit verify [--home=DIR | FILE]
  parley rules check [--home=DIR] [--json] -- COMMAND WORDS...
  parley rules check [--home=DIR] [--json] --path=P [--path=P...] [--cwd=DIR]
  parley --version

app-server  serves the Codex app-server protocol (v2) on stdin/stdout.
  --approval-timeout  how long an approval waits for a decision (default 10m;
                      e.g. 30s, 500ms, 2m). Unanswered approvals fail closed.
  --store             local (default): rollouts + SQLite index under --home;
                      memory: nothing outlives the process
  --home              where threads are stored, reported as codexHome
                      (default $PARLEY_HOME or ~/.parley); one process at a time
  --durability        fsync after each completed turn (default), each item, or never
  --idle-unload       unload a thread idle this long with no subscriber (default 30m)
  --model-provider    the provider recorded for new threads (default "parley")
  --audit             the approval audit log (default HOME/audit.jsonl with the
                      local store; off with --store=memory); "off" disables it
  --cwd               cwd for threads that do not name one (default: current)
  --output-cap        bytes of command output kept per command (default 1048576)
  --threads           scheduler worker threads (default: one per core)
  --log-level         trace, debug, info, warn, error, off (default info; stderr)

store reindex  rebuilds the SQLite index from the rollouts under --home.
audit verify   checks the audit log's hash chain (exit 1 and the first bad line
               if anything was edited, removed, reordered or inserted).
rules check    what the rules in HOME/rules/*.rules decide about a command or
               about changing files (relative paths and globs against --cwd,
               default: current); exit 1 if the rules don't load.

chat        a terminal client: each input line is a turn ("\n" inside a line
            separates directives); approvals are asked at the terminal.
  --yes               accept every approval automatically
  --approval-policy   on-request (default), untrusted or never
  Approvals of all threads wait in one queue and are asked one at a time
  ("[approval 1 of 3] thread T: ..."; file changes show each path, kind and
  diff). Answers: y accept, s accept for the session, n decline, c cancel the
  turn, a abort all (cancel every pending approval, of every thread). At the
  end of input whatever is still asked is declined.
  Lines starting with '/' are commands, also while an approval is asked:
    /new [TEXT]   start another thread; following lines (and TEXT, at once)
                  are turns of it, while earlier threads keep running
    /stats        approval counters (parley/stats); also printed at exit
  Piped input is read only when every running turn waits on an answer, so
  scripts are deterministic.
)";

bool take(const std::string& arg, const char* name, std::string& value) {
  std::string prefix = std::string{name} + "=";
  if (arg.rfind(prefix, 0) != 0) return false;
  value = arg.substr(prefix.size());
  return true;
}

int fail(const std::string& message) {
  std::cerr << "parley: " << message << "\n" << usage;
  return 2;
}

/// Options both subcommands accept; returns false if `arg` is not one.
bool server_option(const std::string& arg, parley::runtime_config& cfg, std::string& log_level,
                   std::string& audit, std::string& error) {
  std::string v;
  if (take(arg, "--approval-timeout", v)) {
    if (!parley::parse_duration(v, cfg.approval_timeout)) error = "bad --approval-timeout: " + v;
  } else if (take(arg, "--home", v)) {
    cfg.home = v;
  } else if (take(arg, "--cwd", v)) {
    cfg.default_cwd = v;
  } else if (take(arg, "--output-cap", v)) {
    cfg.output_cap_bytes = std::strtoull(v.c_str(), nullptr, 10);
  } else if (take(arg, "--threads", v)) {
    cfg.scheduler_threads = std::strtoull(v.c_str(), nullptr, 10);
  } else if (take(arg, "--log-level", v)) {
    log_level = v;
  } else if (take(arg, "--audit", v)) {
    audit = v;
  } else if (take(arg, "--model-provider", v)) {
    cfg.model_provider = v;
  } else if (take(arg, "--store", v)) {
    if (v == "memory")
      cfg.store = parley::runtime_config::store_kind::memory;
    else if (v == "local")
      cfg.store = parley::runtime_config::store_kind::local;
    else
      error = "bad --store (memory or local): " + v;
  } else if (take(arg, "--durability", v)) {
    using d = parley::runtime_config::durability_kind;
    if (v == "turn")
      cfg.durability = d::turn;
    else if (v == "item")
      cfg.durability = d::item;
    else if (v == "none")
      cfg.durability = d::none;
    else
      error = "bad --durability (turn, item or none): " + v;
  } else if (take(arg, "--idle-unload", v)) {
    if (!parley::parse_duration(v, cfg.idle_unload)) error = "bad --idle-unload: " + v;
  } else {
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << usage;
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "parley 0.1.0\n";
    return 0;
  }
  parley::runtime_config cfg;
  std::string audit;  // --audit: a file, "off", or empty for the default
  cfg.home = parley::default_home();
  cfg.store = parley::runtime_config::store_kind::local;
  std::string log_level = "info";
  std::string error;

  if (args[0] == "app-server") {
    for (size_t i = 1; i < args.size(); ++i)
      if (!server_option(args[i], cfg, log_level, audit, error))
        return fail("unknown option " + args[i]);
    if (!error.empty()) return fail(error);
    // The approval audit log lives in the home of a local store by default.
    if (audit.empty() && cfg.store == parley::runtime_config::store_kind::local)
      cfg.audit_path = cfg.home + "/audit.jsonl";
    else if (audit != "off")
      cfg.audit_path = audit;
    // Rules and hook programs are configured in the home (HOME/rules/*.rules).
    cfg.rules_dir = parley::rules::rules_dir_of(cfg.home);
    try {
      cfg.external_hooks = parley::hooks::load_external_hooks(cfg.home);
    } catch (const std::exception& e) {
      // A configured reviewer that cannot be read must not be skipped.
      std::cerr << "parley: " << e.what() << "\n";
      return 1;
    }
    parley::log::set_level(log_level);
    return parley::run_app_server(std::move(cfg));
  }

  if (args[0] == "audit") {
    if (args.size() < 2 || args[1] != "verify")
      return fail("usage: parley audit verify [--home=DIR | FILE]");
    std::string path = cfg.home + "/audit.jsonl";
    for (size_t i = 2; i < args.size(); ++i) {
      std::string v;
      if (take(args[i], "--home", v))
        path = v + "/audit.jsonl";
      else if (args[i].rfind("--", 0) != 0)
        path = args[i];
      else
        return fail("unknown option " + args[i]);
    }
    auto report = parley::audit::verify(path);
    if (report.ok) {
      std::cout << "ok: " << report.lines << " line(s), chain intact, head " << report.head << "\n";
      return 0;
    }
    std::cout << "TAMPERED or damaged: " << path;
    if (report.first_bad_line) std::cout << " line " << *report.first_bad_line;
    std::cout << ": " << report.reason << "\n";
    return 1;
  }

  if (args[0] == "rules") return parley::run_rules_command({args.begin() + 1, args.end()});

  if (args[0] == "store") {
    if (args.size() < 2 || args[1] != "reindex") return fail("usage: parley store reindex [--home=DIR]");
    for (size_t i = 2; i < args.size(); ++i) {
      std::string v;
      if (take(args[i], "--home", v))
        cfg.home = v;
      else
        return fail("unknown option " + args[i]);
    }
    auto lock = parley::store::home_lock::acquire(cfg.home);
    if (!lock) {
      std::cerr << "parley: " << parley::message_of(lock.error()) << "\n";
      return 1;
    }
    auto n = parley::store::rebuild_index(cfg.home);
    if (!n) {
      std::cerr << "parley: " << parley::message_of(n.error()) << "\n";
      return 1;
    }
    std::cout << "indexed " << *n << " thread(s) under " << cfg.home << "\n";
    return 0;
  }

  if (args[0] == "chat") {
    parley::chat_options options;
    std::vector<std::string> server_args;
    for (size_t i = 1; i < args.size(); ++i) {
      std::string v;
      if (args[i] == "--yes" || args[i] == "-y") {
        options.auto_accept = true;
      } else if (take(args[i], "--approval-policy", v)) {
        options.approval_policy = v;
      } else if (server_option(args[i], cfg, log_level, audit, error)) {
        server_args.push_back(args[i]);  // passed on to the child app-server
      } else {
        return fail("unknown option " + args[i]);
      }
    }
    if (!error.empty()) return fail(error);
    // The child is this very executable.
    char self[4096];
    auto n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return fail("cannot find the parley executable");
    self[n] = '\0';
    options.server = {self, "app-server"};
    bool has_level = false;
    for (auto& a : server_args) has_level = has_level || a.rfind("--log-level=", 0) == 0;
    if (!has_level) options.server.push_back("--log-level=warn");
    options.server.insert(options.server.end(), server_args.begin(), server_args.end());
    return parley::run_chat(options);
  }
  return fail("unknown command " + args[0]);
}
