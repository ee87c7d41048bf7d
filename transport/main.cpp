// parley: an actor runtime that hosts agent conversations and their approvals,
// speaking the Codex app-server JSON-RPC protocol. The options are defined in
// transport/command_line.cpp; this file runs what they ask for.

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "actors/approval/audit/audit_log.hpp"
#include "actors/approval/hooks/external_hook.hpp"
#include "actors/approval/rules/rules.hpp"
#include "actors/cluster/cluster_config.hpp"
#include "actors/core/log.hpp"
#include "actors/model/config/model_config.hpp"
#include "actors/store/local_store.hpp"
#include "actors/store/pg_client.hpp"
#include "actors/store/postgres_schema.hpp"
#include "actors/store/postgres_transfer.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/core/command_sandbox.hpp"
#include "transport/app_server.hpp"
#include "transport/chat/chat.hpp"
#include "transport/command_line.hpp"
#include "transport/rules_command.hpp"
#include "transport/store_command.hpp"

namespace {

/// Codex's config.toml (--config, else the default path) with the -c
/// overrides; null after printing why it cannot be used.
std::shared_ptr<const parley::model_config::settings> load_config(const parley::command_line& cl) {
  namespace mc = parley::model_config;
  mc::load_request req;
  req.explicit_path = !cl.config_file.empty();
  req.path = req.explicit_path ? cl.config_file
                               : mc::default_config_path(std::getenv("CODEX_HOME"), cl.server.home);
  req.overrides = cl.config_overrides;
  auto loaded = mc::load(req);
  if (!loaded) {
    std::cerr << "parley: " << loaded.error << "\n";
    // Codex's --config is the long form of -c; parley's takes a file.
    if (req.explicit_path && cl.config_file.find('=') != std::string::npos)
      std::cerr << "parley: --config takes a file; to set a key use -c " << cl.config_file << "\n";
    return nullptr;
  }
  const auto& s = *loaded.config;
  // Names only: never a header value, a key or the environment.
  if (s.source.empty())
    PARLEY_INFO("config event=defaults path={} (not found)", req.path);
  else
    PARLEY_INFO("config event=loaded path={} overrides={}", s.source, req.overrides.size());
  PARLEY_INFO("config event=model provider={} model={} wire_api={}", s.model_provider,
              s.model.empty() ? "(none)" : s.model,
              s.active_provider().how == mc::provider::kind::scripted
                  ? "none"
                  : mc::to_string(s.active_provider().wire));
  return std::make_shared<const mc::settings>(std::move(*loaded.config));
}

/// How commands are confined: the launcher beside parley, what it says this
/// host can enforce (logged), the limits, and what no command may reach.
std::shared_ptr<const parley::sandbox_settings> sandbox_of(const parley::command_line& cl) {
  auto s = std::make_shared<parley::sandbox_settings>();
  s->launcher = parley::default_sandbox_launcher();
  s->unconfined_ok = cl.sandbox_unconfined;
  s->isolate_reads = cl.sandbox_isolate_reads;
  s->limits = cl.limits;
  parley::probe_sandbox(*s);
  // parley's own home (the store, rules, hooks, secrets) and its audit log.
  const auto& cfg = cl.server;
  for (const auto& path : {cfg.home, cfg.audit_path})
    if (!path.empty()) s->hidden.push_back(parley::absolute_path(path));
  if (s->confines())
    PARLEY_INFO("sandbox event=ready launcher={} network=off_unless_allowed hidden={}",
                s->launcher, s->hidden.size());
  else
    PARLEY_WARN("sandbox event=unavailable {}", parley::describe_sandbox(*s));
  if (!s->limits_dropped.empty())
    PARLEY_WARN("sandbox event=limit_dropped {}", s->limits_dropped);
  return s;
}

/// The PostgreSQL store's database, checked before anything starts: a URL
/// that cannot be used, a database that cannot be reached or whose schema is
/// missing or another version stops the start (exit 2) with the reason.
bool postgres_usable(const parley::runtime_config& cfg) {
  if (cfg.store != parley::runtime_config::store_kind::postgres) return true;
  if (cfg.store_url.empty()) {
    std::cerr << "parley: --store=postgres needs --store-url (or PARLEY_STORE_URL)\n";
    return false;
  }
  if (auto problem = parley::pg::conninfo_problem(cfg.store_url)) {
    std::cerr << "parley: " << *problem << "\n";
    return false;
  }
  if (auto problem = parley::pg::schema_problem(cfg.store_url)) {
    std::cerr << "parley: " << *problem << "\n";
    return false;
  }
  PARLEY_INFO("store event=postgres target={} schema_version={}",
              parley::pg::describe_target(cfg.store_url), parley::pg::schema_version);
  return true;
}

int store_migrate(const std::string& url) {
  if (url.empty()) {
    std::cerr << "parley: store migrate needs --store-url (or PARLEY_STORE_URL)\n";
    return 2;
  }
  auto report = parley::pg::migrate(url);
  (report.ok ? std::cout : std::cerr) << (report.ok ? "" : "parley: ") << report.message << "\n";
  return report.ok ? 0 : 1;
}

int store_transfer(const parley::command_line& cl) {
  const auto& url = cl.server.store_url;
  if (url.empty()) {
    std::cerr << "parley: the store's transfers need --store-url (or PARLEY_STORE_URL)\n";
    return 2;
  }
  const auto& t = cl.transfer;
  if (cl.what == parley::command_line::action::store_export && t.out_file.empty()
      && t.codex_home.empty()) {
    std::cerr << "parley: store export needs --out FILE or --codex-home DIR\n";
    return 2;
  }
  auto report = cl.what == parley::command_line::action::store_export
                    ? parley::pg::export_thread(url, t.thread, t.out_file, t.codex_home)
                    : parley::pg::import_rollout(url, t.rollout);
  (report.ok ? std::cout : std::cerr) << (report.ok ? "" : "parley: ") << report.message << "\n";
  return report.ok ? 0 : 1;
}

int app_server(parley::command_line& cl) {
  auto& cfg = cl.server;
  parley::log::set_level(cl.log_level);
  parley::log::set_format(cl.log_format);
  if (!cl.cluster_file.empty()) {
    // A cluster node's threads live in the cluster's PostgreSQL store.
    std::string problem;
    auto cluster = parley::cluster::load_cluster_config(cl.cluster_file, cl.cluster_node, problem);
    if (!cluster) {
      std::cerr << "parley: " << problem << "\n";
      return 2;
    }
    cfg.store = parley::runtime_config::store_kind::postgres;
    cfg.store_url = cluster->postgres;
    cfg.cluster = std::make_shared<const parley::cluster::cluster_config>(std::move(*cluster));
  }
  if (!postgres_usable(cfg)) return 2;
  // The approval audit log lives in the home of a local store by default.
  if (cl.audit.empty() && cfg.store == parley::runtime_config::store_kind::local)
    cfg.audit_path = cfg.home + "/audit.jsonl";
  else if (cl.audit != "off")
    cfg.audit_path = cl.audit;
  // Rules and hook programs are configured in the home (HOME/rules/*.rules).
  cfg.rules_dir = parley::rules::rules_dir_of(cfg.home);
  try {
    cfg.external_hooks = parley::hooks::load_external_hooks(cfg.home);
  } catch (const std::exception& e) {
    // A configured reviewer that cannot be read must not be skipped.
    std::cerr << "parley: " << e.what() << "\n";
    return 1;
  }
  parley::log::set_level(cl.log_level);
  parley::log::set_format(cl.log_format);
  cfg.sandbox = sandbox_of(cl);
  // A config that cannot be used stops the start (exit 2, as a usage error):
  // serving with another provider or policy than the one written is worse.
  cfg.config_file = cl.config_file.empty() ? parley::model_config::default_config_path(
                                                 std::getenv("CODEX_HOME"), cfg.home)
                                           : cl.config_file;
  cfg.config_file_given = !cl.config_file.empty();
  cfg.config_overrides = cl.config_overrides;
  cfg.model_settings = load_config(cl);
  if (!cfg.model_settings) return 2;
  for (const auto& [key, value] : cfg.model_settings->limits) {
    if (cfg.limits.set(key, static_cast<int64_t>(value))) continue;
    std::cerr << "parley: parley.limits." << key << ": unknown limit (one of "
              << parley::usage_limits::keys() << ")\n";
    return 2;
  }
  const auto& l = cfg.limits;
  PARLEY_INFO("config event=limits tenant_loaded_threads={} tenant_running_turns={} "
              "tenant_pending_approvals={} connection_loaded_threads={} "
              "connection_running_turns={} connection_pending_approvals={} (0: none)",
              l.tenant_loaded_threads, l.tenant_running_turns, l.tenant_pending_approvals,
              l.connection_loaded_threads, l.connection_running_turns,
              l.connection_pending_approvals);
  // Threads name the model that answers them (thread/start, model/list).
  if (cfg.model_settings->active_provider().how == parley::model_config::provider::kind::http) {
    cfg.model_id = cfg.model_settings->model;
    cfg.model_provider = cfg.model_settings->model_provider;
  }
  return parley::run_app_server(std::move(cfg), cl.listen);
}

int audit_verify(const std::string& path) {
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

int store_reindex(const std::string& home) {
  auto lock = parley::store::home_lock::acquire(home);
  if (!lock) {
    std::cerr << "parley: " << parley::message_of(lock.error()) << "\n";
    return 1;
  }
  auto n = parley::store::rebuild_index(home);
  if (!n) {
    std::cerr << "parley: " << parley::message_of(n.error()) << "\n";
    return 1;
  }
  std::cout << "indexed " << *n << " thread(s) under " << home << "\n";
  return 0;
}

int chat(parley::command_line& cl) {
  // The child is this very executable, with the app-server options given.
  char self[4096];
  auto n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    std::cerr << "parley: cannot find the parley executable\n";
    return 1;
  }
  self[n] = '\0';
  auto& server = cl.chat.server;
  server = {self, "app-server"};
  bool has_level = false;
  for (auto& a : cl.server_args) has_level = has_level || a.rfind("--log-level=", 0) == 0;
  if (!has_level) server.push_back("--log-level=warn");
  server.insert(server.end(), cl.server_args.begin(), cl.server_args.end());
  return parley::run_chat(cl.chat);
}

}  // namespace

int main(int argc, char** argv) {
  auto cl = parley::parse_command_line(argc, argv);
  using action = parley::command_line::action;
  switch (cl.what) {
    case action::exit: return cl.exit_code;
    case action::app_server: return app_server(cl);
    case action::chat: return chat(cl);
    case action::store_reindex: return store_reindex(cl.server.home);
    case action::store_check: return parley::run_store_check(cl.store_check);
    case action::store_prune: return parley::run_store_prune(cl.store_prune);
    case action::store_migrate: return store_migrate(cl.server.store_url);
    case action::store_export:
    case action::store_import: return store_transfer(cl);
    case action::audit_verify: return audit_verify(cl.audit_file);
    case action::rules_check: return parley::run_rules_check(cl.rules);
    case action::cluster_status: return parley::run_cluster_status(cl.cluster_status);
  }
  return 2;
}
