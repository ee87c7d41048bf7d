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
#include "actors/log.hpp"
#include "transport/app_server.hpp"
#include "transport/chat.hpp"

namespace {

constexpr const char* usage = R"(usage:
  parley app-server [--approval-timeout=DURATION] [--home=DIR] [--cwd=DIR]
                    [--output-cap=BYTES] [--threads=N] [--log-level=LEVEL]
  parley chat [--yes] [--approval-policy=POLICY] [--approval-timeout=DURATION]
  parley --version

app-server  serves the Codex app-server protocol (v2) on stdin/stdout.
  --approval-timeout  how long an approval waits for a decision (default 10m;
                      e.g. 30s, 500ms, 2m). Unanswered approvals fail closed.
  --home              reported as codexHome (default $PARLEY_HOME or ~/.parley)
  --cwd               cwd for threads that do not name one (default: current)
  --output-cap        bytes of command output kept per command (default 1048576)
  --threads           scheduler worker threads (default: one per core)
  --log-level         trace, debug, info, warn, error, off (default info; stderr)

chat        a terminal client: each input line is a turn ("\n" inside a line
            separates directives); approvals are asked at the terminal.
  --yes               accept every approval automatically
  --approval-policy   on-request (default), untrusted or never
)";

bool take(const std::string& arg, const char* name, std::string& value) {
  std::string prefix = std::string{name} + "=";
  if (arg.rfind(prefix, 0) != 0) return false;
  value = arg.substr(prefix.size());
  return true;
}

std::string default_home() {
  if (const char* h = std::getenv("PARLEY_HOME"); h && *h) return h;
  if (const char* h = std::getenv("HOME"); h && *h) return std::string{h} + "/.parley";
  return "/tmp/.parley";
}

int fail(const std::string& message) {
  std::cerr << "parley: " << message << "\n" << usage;
  return 2;
}

/// Options both subcommands accept; returns false if `arg` is not one.
bool server_option(const std::string& arg, parley::runtime_config& cfg, std::string& log_level,
                   std::string& error) {
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
  cfg.home = default_home();
  std::string log_level = "info";
  std::string error;

  if (args[0] == "app-server") {
    for (size_t i = 1; i < args.size(); ++i)
      if (!server_option(args[i], cfg, log_level, error)) return fail("unknown option " + args[i]);
    if (!error.empty()) return fail(error);
    parley::log::set_level(log_level);
    return parley::run_app_server(std::move(cfg));
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
      } else if (server_option(args[i], cfg, log_level, error)) {
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
