#include "transport/command_line.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <utility>

namespace parley {

namespace {

const char* const version_text = "parley 0.1.0";

const char* const overview = R"(Subcommands:
  app-server     serve the Codex app-server protocol (v2) on stdin/stdout
  chat           a terminal client over a child app-server
  store reindex  rebuild the SQLite index from the rollouts under the home
  store migrate  create or upgrade the PostgreSQL store's schema
  store export   write a thread of the PostgreSQL store as a Codex rollout
  store import   store a Codex rollout in the PostgreSQL store
  store check    name damaged rollouts and wrong index entries; --repair
  store prune    remove threads older than --older-than (retention)
                 salvages every readable record and rebuilds the index
  audit verify   check the approval audit log's hash chain
  rules check    what the rules in HOME/rules decide about a command or paths

Options take `--opt value` or `--opt=value`. The home is --home, else
$PARLEY_HOME, else ~/.parley. Run `parley SUBCOMMAND --help` for its options.)";

const char* const chat_footer
    = R"(Each input line is a turn ("\n" inside a line separates directives).
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
scripts are deterministic.)";

/// `--name` whose value must parse as a duration (600, 10m, 30s, 250ms, 1h).
CLI::Option* add_duration(CLI::App& app, const std::string& name, std::chrono::milliseconds& out,
                          const std::string& help) {
  return app
      .add_option_function<std::string>(
          name,
          [name, &out](const std::string& v) {
            if (!parse_duration(v, out))
              throw CLI::ValidationError(name,
                                         "bad duration: " + v + " (e.g. 30s, 500ms, 10m, 1h)");
          },
          help)
      ->type_name("DURATION");
}

/// `--name` taking one of `choices`. The option keeps the text given (chat
/// passes it on to its child), so the mapping is done here, not by CLI11.
template <typename T>
CLI::Option* add_choice(CLI::App& app, const std::string& name, T& out,
                        std::vector<std::pair<std::string, T>> choices, const std::string& help) {
  return app.add_option_function<std::string>(
      name,
      [name, &out, choices](const std::string& v) {
        std::string names;
        for (auto& [text, value] : choices) {
          if (text == v) {
            out = value;
            return;
          }
          names += (names.empty() ? "" : ", ") + text;
        }
        throw CLI::ValidationError(name, "bad value " + v + " (one of " + names + ")");
      },
      help);
}

/// The app-server's options, also accepted by chat (which passes them on).
std::vector<CLI::Option*> add_server_options(CLI::App& app, command_line& out) {
  using store = runtime_config::store_kind;
  using durability = runtime_config::durability_kind;
  auto& cfg = out.server;
  std::vector<CLI::Option*> all;
  all.push_back(add_choice(app, "--store", cfg.store,
                           {{"local", store::local}, {"memory", store::memory},
                            {"postgres", store::postgres}},
                           "local (default): rollouts + SQLite index under --home; "
                           "memory: nothing outlives the process; postgres: a PostgreSQL "
                           "database (--store-url)")
                    ->type_name("KIND"));
  all.push_back(app.add_option("--store-url", cfg.store_url,
                               "the PostgreSQL store's database, postgresql://USER@HOST[:PORT]/DB "
                               "(default $PARLEY_STORE_URL); a password only from PGPASSWORD "
                               "or a PGPASSFILE")
                    ->type_name("URL"));
  all.push_back(app.add_option("--home", cfg.home,
                               "where threads are stored, reported as codexHome (default "
                               "$PARLEY_HOME or ~/.parley); one process at a time")
                    ->type_name("DIR"));
  all.push_back(
      add_choice(
          app, "--durability", cfg.durability,
          {{"turn", durability::turn}, {"item", durability::item}, {"none", durability::none}},
          "fsync after each completed turn (turn, default), each item, or never (none)")
          ->type_name("WHEN"));
  all.push_back(app.add_option("--store-backlog", cfg.store_backlog_bytes,
                               "bytes of records that may wait for a disk that refuses them "
                               "(full, read-only) before the turns writing them fail (default "
                               "33554432)")
                    ->check(CLI::PositiveNumber)
                    ->type_name("BYTES"));
  all.push_back(add_duration(app, "--prune-older-than", cfg.prune_older_than,
                             "local store: remove threads last updated longer ago than this, at "
                             "start and hourly (never one loaded or with work pending; default: "
                             "keep all); see `parley store prune`"));
  all.push_back(add_duration(app, "--approval-timeout", cfg.approval_timeout,
                             "how long an approval waits for a decision (default 10m); "
                             "unanswered approvals fail closed"));
  all.push_back(add_duration(app, "--idle-unload", cfg.idle_unload,
                             "unload a thread idle this long with no subscriber (default 30m)"));
  all.push_back(app.add_option("--audit", out.audit,
                               "the approval audit log (default HOME/audit.jsonl with the local "
                               "store; off with --store memory); \"off\" disables it")
                    ->type_name("FILE"));
  all.push_back(app.add_option("--config", out.config_file,
                               "Codex's config.toml: the model, its provider, the shell "
                               "environment policy (default $CODEX_HOME/config.toml, else "
                               "HOME/config.toml; a missing default file means defaults)")
                    ->type_name("FILE"));
  all.push_back(app.add_option("-c", out.config_overrides,
                               "override a config.toml key (repeatable): a dotted path and a "
                               "TOML value, else a plain string (-c model=o3, "
                               "-c model_providers.local.base_url=http://127.0.0.1:8080/v1)")
                    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                    ->allow_extra_args(false)
                    ->type_name("KEY=VALUE"));
  all.push_back(app.add_option("--cwd", cfg.default_cwd,
                               "cwd for threads that do not name one (default: current)")
                    ->type_name("DIR"));
  all.push_back(app.add_option("--model-provider", cfg.model_provider,
                               "the provider recorded for new threads (default \"parley\")")
                    ->type_name("NAME"));
  all.push_back(app.add_option("--output-cap", cfg.output_cap_bytes,
                               "bytes of command output kept per command (default 1048576)")
                    ->type_name("BYTES"));
  all.push_back(app.add_flag("--sandbox-unconfined", out.sandbox_unconfined,
                             "where this host cannot confine commands to their thread's sandbox, "
                             "run them unconfined (approvals say so) instead of refusing them"));
  all.push_back(app.add_flag("--sandbox-isolate-reads", out.sandbox_isolate_reads,
                             "confined commands read only the system's folders (/usr, /etc, "
                             "...) and their own writable roots, not other workspaces"));
  all.push_back(add_duration(app, "--command-timeout", out.limits.default_timeout,
                             "a command whose call names no timeout_ms is killed after this "
                             "(default 10m)"));
  all.push_back(add_duration(app, "--command-max-timeout", out.limits.max_timeout,
                             "the longest timeout_ms a call may ask for (default 1h)"));
  all.push_back(app.add_option("--command-max-memory", out.limits.max_memory_bytes,
                               "address space per command process, bytes (default 0: none)")
                    ->type_name("BYTES"));
  all.push_back(app.add_option("--command-max-processes", out.limits.max_processes,
                               "processes a command may have at once (default 1024; 0: none)")
                    ->type_name("N"));
  all.push_back(app.add_option("--command-max-cpu", out.limits.max_cpu_seconds,
                               "CPU seconds per command process (default 0: none)")
                    ->type_name("SECONDS"));
  all.push_back(app.add_option("--threads", cfg.scheduler_threads,
                               "scheduler worker threads (default: one per core)")
                    ->type_name("N"));
  all.push_back(app.add_option("--log-level", out.log_level,
                               "trace, debug, info, warn, error, off (default info; stderr)")
                    ->check(CLI::IsMember(
                        {"trace", "debug", "info", "warn", "warning", "error", "critical", "off"}))
                    ->type_name("LEVEL"));
  all.push_back(app.add_option("--log-format", out.log_format,
                               "text, or json: one JSON object a line on stderr (time, level, "
                               "component, message and each key=value as a field)")
                    ->check(CLI::IsMember({"text", "json"}))
                    ->type_name("FORMAT"));
  return all;
}

void add_rules_check(CLI::App& rules, command_line& out) {
  auto* check = rules.add_subcommand(
      "check",
      "What the rules in HOME/rules/*.rules decide about a command or about changing files "
      "(relative paths and globs against --cwd, default: current). Exit 1 if the rules don't "
      "load.");
  check->footer(
      "Give either a command or paths:\n"
      "  parley rules check [--home DIR] [--json] -- COMMAND WORDS...\n"
      "  parley rules check [--home DIR] [--json] --path P [--path P...] [--cwd DIR]");
  auto& req = out.rules;
  check->add_option("--home", req.home, "the home whose rules are checked")->type_name("DIR");
  check->add_flag("--json", req.json, "one JSON object instead of a sentence");
  check->add_option("--path", req.paths, "a path (or glob) to be changed; repeatable")
      ->allow_extra_args(false)
      ->type_name("P");
  check->add_option("--cwd", req.cwd, "what relative --path values are relative to")
      ->type_name("DIR");
  check->add_option("command", req.command, "the command, after `--`")->type_name("COMMAND WORDS");
  check->callback([&out] { out.what = command_line::action::rules_check; });
}

/// "app-server", "store reindex": the subcommands selected before an error.
std::string selected_path(const CLI::App& app) {
  std::string path;
  for (auto* sub = &app; !sub->get_subcommands().empty();) {
    sub = sub->get_subcommands().front();
    path += (path.empty() ? "" : " ") + sub->get_name();
  }
  return path;
}

/// Everything of the command line but the parse itself.
struct parser {
  CLI::App app{
      "parley: an actor runtime that hosts agent conversations and their approvals, "
      "speaking the Codex app-server JSON-RPC protocol.",
      "parley"};
  std::vector<CLI::Option*> chat_server_options;

  explicit parser(command_line& out) {
    using action = command_line::action;
    app.set_version_flag("--version", version_text);
    app.footer(overview);
    app.require_subcommand(1);
    // Today's behaviour: an option given twice counts once, the last wins.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

    auto* server = app.add_subcommand(
        "app-server",
        "Serves the Codex app-server protocol (v2) on stdin/stdout, WebSocket or a Unix socket.");
    add_server_options(*server, out);
    server
        ->add_option("--listen", out.listen.listen,
                     "where to serve (repeatable): stdio:// (default), ws://HOST:PORT "
                     "(loopback), wss://HOST:PORT (TLS: --tls-cert, --tls-key), unix://PATH "
                     "or unix:// (HOME/app-server.sock)")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->type_name("URL");
    add_duration(*server, "--drain-timeout", out.listen.drain_timeout,
                 "on SIGTERM/SIGINT with listeners: stop accepting and starting turns, let "
                 "running turns finish or reach an approval (it stays pending on disk) for at "
                 "most this long, then stop; a second signal stops at once (default 30s; 0: "
                 "stop at once)");
    server
        ->add_option("--metrics-listen", out.listen.metrics_listen,
                     "also answer GET /metrics (Prometheus text), /healthz and /readyz on "
                     "this HOST:PORT, plain HTTP and nothing else (loopback unless --ws-auth; "
                     "a stdio server too)")
        ->type_name("HOST:PORT");
    server
        ->add_option("--ws-auth", out.listen.ws_auth,
                     "who may open a WebSocket session: capability-token (--ws-token-file) or "
                     "signed-bearer-token (--ws-shared-secret-file, an HS256 JWT with exp, its tenant "
                     "in --ws-tenant-claim); "
                     "required for a non-loopback address")
        ->check(CLI::IsMember({"none", "capability-token", "signed-bearer-token"}))
        ->type_name("MODE");
    server
        ->add_option("--ws-token-file", out.listen.ws_token_file,
                     "the capability token clients send as `Authorization: Bearer`")
        ->type_name("FILE");
    server
        ->add_option("--ws-shared-secret-file", out.listen.ws_shared_secret_file,
                     "the secret signed bearer tokens are signed with (HMAC-SHA256)")
        ->type_name("FILE");
    server
        ->add_option("--ws-tenant-claim", out.listen.ws_tenant_claim,
                     "signed bearer tokens: the claim that names the client's tenant (default "
                     "tenant; a token without it is the default tenant's)")
        ->type_name("CLAIM");
    server
        ->add_option("--ws-issuer", out.listen.ws_issuer,
                     "signed bearer tokens: the `iss` a token must carry (unchecked when unset)")
        ->type_name("ISS");
    server
        ->add_option("--ws-audience", out.listen.ws_audience,
                     "signed bearer tokens: the `aud` a token must carry (unchecked when unset)")
        ->type_name("AUD");
    server
        ->add_option("--ws-leeway", out.listen.ws_leeway_seconds,
                     "signed bearer tokens: seconds of clock difference `exp` and `nbf` allow "
                     "(default 0)")
        ->type_name("SECONDS");
    server
        ->add_option("--local-tenant", out.listen.local_tenant,
                     "the tenant of stdio and Unix socket clients, the local operator "
                     "(default: default)")
        ->type_name("NAME");
    server
        ->add_option("--ws-max-queue", out.listen.ws_max_queue,
                     "bytes a WebSocket client may fall behind in reading before it is "
                     "disconnected; past half of it its requests get -32001 (default 67108864)")
        ->type_name("BYTES");
    server
        ->add_option("--stdio-max-queue", out.listen.stdio_max_queue,
                     "bytes the stdio client may fall behind in reading: past an eighth of it "
                     "the model streams of its threads pause until it is under a sixteenth; past "
                     "it the server gives up on the client: its input ends and its requests not "
                     "yet run are dropped (default 67108864)")
        ->type_name("BYTES");
    add_duration(*server, "--ws-handshake-timeout", out.listen.ws_handshake_timeout,
                 "the deadline of each phase before a WebSocket session: the HTTP request "
                 "(headers complete), the TLS handshake, the WebSocket handshake, a health "
                 "check's answer (default 10s, at most 30s)")
        ->check([](const std::string& v) {
          std::chrono::milliseconds d{};
          if (parse_duration(v, d) && (d.count() <= 0 || d > std::chrono::seconds(30)))
            return std::string("must be more than 0 and at most 30s");
          return std::string();
        });
    add_duration(*server, "--ws-idle-timeout", out.listen.ws_idle_timeout,
                 "an established WebSocket peer silent for half of this is pinged, and "
                 "closed when nothing came back by its end (default 60s)")
        ->check([](const std::string& v) {
          std::chrono::milliseconds d{};
          if (parse_duration(v, d) && d < std::chrono::seconds(1))
            return std::string("must be at least 1s");
          return std::string();
        });
    server
        ->add_option("--tls-cert", out.listen.tls_cert,
                     "wss:// listeners: the certificate, PEM (a chain allowed); read again on "
                     "SIGHUP for new connections")
        ->type_name("FILE");
    server
        ->add_option("--tls-key", out.listen.tls_key,
                     "wss:// listeners: the certificate's private key, PEM; read again on SIGHUP")
        ->type_name("FILE");
    server
        ->add_option("--ws-max-connections", out.listen.ws_max_connections,
                     "connections the listeners hold in all; past it a new one gets 503 "
                     "(default: half the open-files limit)")
        ->type_name("N");
    server
        ->add_option("--ws-max-pending", out.listen.ws_max_pending,
                     "connections that have not completed their upgrade (no credentials "
                     "needed to hold one); past it 503 (default: half of --ws-max-connections)")
        ->type_name("N");
    server
        ->add_option("--ws-max-pending-per-address", out.listen.ws_max_pending_per_address,
                     "of those, from one peer address; past it 503 (default: half of "
                     "--ws-max-pending; behind a reverse proxy every client has its address)")
        ->type_name("N");
    auto* cluster = server
        ->add_option("--cluster", out.cluster_file,
                     "serve as one node of a cluster (TOML: the members, their addresses, "
                     "the TLS files of the node links, the PostgreSQL store, which replaces "
                     "--store and --store-url)")
        ->type_name("FILE");
    server
        ->add_option("--cluster-node", out.cluster_node,
                     "this node's name in the cluster file (default: the file's `node`)")
        ->needs(cluster)
        ->type_name("NAME");
    server->callback([&out] { out.what = action::app_server; });

    auto* chat = app.add_subcommand(
        "chat", "A terminal client over a child app-server; approvals are asked at the terminal.");
    chat->add_flag("-y,--yes", out.chat.auto_accept, "accept every approval automatically");
    chat->add_option("--approval-policy", out.chat.approval_policy,
                     "on-request (default), untrusted or never")
        ->type_name("POLICY");
    chat_server_options = add_server_options(*chat, out);
    chat->footer(chat_footer);
    chat->callback([&out] { out.what = action::chat; });

    auto* store = app.add_subcommand("store", "The thread store.")->require_subcommand(1);
    auto* reindex = store->add_subcommand(
        "reindex", "Rebuilds the SQLite index from the rollouts under --home.");
    reindex->add_option("--home", out.server.home, "the home to reindex")->type_name("DIR");
    reindex->callback([&out] { out.what = action::store_reindex; });
    auto* check = store->add_subcommand(
        "check",
        "Names every rollout under --home that is unreadable or damaged (with its line) and "
        "every index entry that disagrees with the rollouts. Exit 0 when all is sound, 1 "
        "otherwise.");
    check->add_option("--home", out.store_check.home, "the home to check")->type_name("DIR");
    check->add_flag("--repair", out.store_check.repair,
                    "salvage every readable record into a valid rollout (the damaged original "
                    "is kept beside it as NAME.damaged-TIME), then rebuild the index; exit 0 "
                    "once everything found was repaired");
    check->callback([&out] { out.what = action::store_check; });
    auto* prune = store->add_subcommand(
        "prune",
        "Removes the threads last updated more than --older-than ago (rollout and index entry), "
        "except those with work pending. Only beside no server on --home (a running server "
        "prunes by its own --prune-older-than).");
    prune->add_option("--home", out.store_prune.home, "the home to prune")->type_name("DIR");
    prune->add_option("--older-than", out.store_prune.older_than,
                      "how long since a thread's last update (90d, 2w, 12h)")
        ->required()
        ->type_name("DURATION");
    prune->add_flag("--archived-only", out.store_prune.archived_only,
                    "only archived threads");
    prune->add_option("--tenant", out.store_prune.tenant,
                      "only this tenant's threads (threads stored before tenants are the "
                      "tenant `default`'s)")
        ->type_name("TENANT");
    prune->add_flag("--dry-run", out.store_prune.dry_run, "name them, remove nothing");
    prune->callback([&out] { out.what = action::store_prune; });
    auto* migrate = store->add_subcommand(
        "migrate",
        "Creates the PostgreSQL store's schema in --store-url's database, or upgrades it to "
        "this parley's version. Exit 0 when it is current, 1 otherwise.");
    migrate->add_option("--store-url", out.server.store_url,
                        "the database (default $PARLEY_STORE_URL)")
        ->type_name("URL");
    migrate->callback([&out] { out.what = action::store_migrate; });
    auto* exporter = store->add_subcommand(
        "export",
        "Writes a thread of the PostgreSQL store as a Codex rollout file (the real Codex "
        "resumes it). Exit 0 when written, 1 otherwise.");
    exporter->add_option("--thread", out.transfer.thread, "the thread's id")
        ->type_name("ID")
        ->required();
    auto* out_file = exporter->add_option("--out", out.transfer.out_file, "the file to write")
                         ->type_name("FILE");
    exporter
        ->add_option("--codex-home", out.transfer.codex_home,
                     "write it where a Codex with this CODEX_HOME finds it (sessions/...)")
        ->type_name("DIR")
        ->excludes(out_file);
    exporter->add_option("--store-url", out.server.store_url,
                         "the database (default $PARLEY_STORE_URL)")
        ->type_name("URL");
    exporter->callback([&out] { out.what = action::store_export; });
    auto* importer = store->add_subcommand(
        "import",
        "Stores a rollout file (Codex's or parley's, plain or .zst) as a thread of the "
        "PostgreSQL store. Exit 0 when stored, 1 otherwise (a thread already there is refused).");
    importer->add_option("file", out.transfer.rollout, "the rollout")
        ->type_name("FILE")
        ->required();
    importer->add_option("--store-url", out.server.store_url,
                         "the database (default $PARLEY_STORE_URL)")
        ->type_name("URL");
    importer->callback([&out] { out.what = action::store_import; });

    auto* audit = app.add_subcommand("audit", "The approval audit log.")->require_subcommand(1);
    auto* verify = audit->add_subcommand(
        "verify",
        "Checks the audit log's hash chain (exit 1 and the first bad line if anything "
        "was edited, removed, reordered or inserted).");
    auto* home = verify->add_option("--home", out.server.home, "checks HOME/audit.jsonl")
                     ->type_name("DIR");
    verify->add_option("file", out.audit_file, "the log file to check")
        ->type_name("FILE")
        ->excludes(home);
    verify->callback([&out] { out.what = action::audit_verify; });

    auto* cluster_command = app.add_subcommand("cluster", "A cluster of parley nodes.")->require_subcommand(1);
    auto* status = cluster_command->add_subcommand(
        "status",
        "The cluster as its shared PostgreSQL store sees it: every node (address, incarnation, "
        "alive, threads, lease left) and, with --threads, every thread lease (node, epoch). "
        "Exit 0 once read, 1 otherwise.");
    status->add_option("--store-url", out.cluster_status.store_url,
                       "the cluster's database (default $PARLEY_STORE_URL)")
        ->type_name("URL");
    status->add_option("--cluster", out.cluster_status.cluster_file,
                       "the cluster file (its `postgres` is the database)")
        ->type_name("FILE")
        ->check(CLI::ExistingFile);
    status->add_flag("--threads", out.cluster_status.threads, "list every thread lease");
    status->add_flag("--json", out.cluster_status.json, "one JSON object");
    status->callback([&out] { out.what = action::cluster_status; });

    auto* rules = app.add_subcommand("rules", "The approval rules.")->require_subcommand(1);
    add_rules_check(*rules, out);
  }
};

}  // namespace

command_line parse_command_line(int argc, const char* const* argv) {
  command_line out;
  out.server.home = default_home();
  out.server.store = runtime_config::store_kind::local;
  if (const char* url = std::getenv("PARLEY_STORE_URL")) out.server.store_url = url;
  out.cluster_status.store_url = out.server.store_url;
  out.rules.home = out.server.home;
  out.store_check.home = out.server.home;
  out.store_prune.home = out.server.home;
  // `rules check -- WORDS`: whether `--` was given at all (then no words is an error).
  out.rules.has_command
      = std::any_of(argv + 1, argv + argc, [](const char* a) { return std::string{a} == "--"; });
  parser p{out};
  try {
    p.app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    out.what = command_line::action::exit;
    if (e.get_exit_code() == 0) {  // --help, --version: asked for, so stdout
      out.exit_code = p.app.exit(e, std::cout, std::cerr);
      return out;
    }
    auto path = selected_path(p.app);
    // CLI11 says "A subcommand is required" for `parley frobnicate`: name it.
    std::string what = path.empty() && argc > 1 && argv[1][0] != '-'
                           ? std::string{"unknown command "} + argv[1]
                           : e.what();
    std::cerr << "parley: " << what << "\nusage: parley " << (path.empty() ? "SUBCOMMAND" : path)
              << " [options]; see `parley " << (path.empty() ? "" : path + " ") << "--help`\n";
    out.exit_code = 2;
    return out;
  }
  if (out.what == command_line::action::chat)
    for (auto* opt : p.chat_server_options) {
      if (opt->count() == 0) continue;
      if (opt->get_name() == "-c") {  // every one, in order; a short option takes no `=`
        for (const auto& v : opt->results()) {
          out.server_args.push_back("-c");
          out.server_args.push_back(v);
        }
      } else {
        out.server_args.push_back(opt->get_name() + "=" + opt->results().back());
      }
    }
  if (out.what == command_line::action::audit_verify && out.audit_file.empty())
    out.audit_file = out.server.home + "/audit.jsonl";
  return out;
}

}  // namespace parley
