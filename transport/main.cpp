// parley: an actor runtime that hosts agent conversations and their approvals,
// speaking the Codex app-server JSON-RPC protocol. The options are defined in
// transport/command_line.cpp; this file runs what they ask for.

#include <iostream>
#include <string>
#include <unistd.h>

#include "actors/approval/audit/audit_log.hpp"
#include "actors/core/log.hpp"
#include "actors/approval/rules/rules.hpp"
#include "actors/store/local_store.hpp"
#include "actors/store/rollout_file.hpp"
#include "transport/app_server.hpp"
#include "transport/chat/chat.hpp"
#include "transport/command_line.hpp"
#include "transport/rules_command.hpp"

namespace {

int app_server(parley::command_line& cl) {
  auto& cfg = cl.server;
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
    case action::audit_verify: return audit_verify(cl.audit_file);
    case action::rules_check: return parley::run_rules_check(cl.rules);
  }
  return 2;
}
