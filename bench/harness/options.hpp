#pragma once
// parley-bench's command line: what to run against, how hard, and how the
// approvals are answered.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace parley::bench {

/// Where the harness talks to the server: its stdin/stdout, or WebSocket
/// connections to a listener the server opens (`--connect`).
struct endpoint {
  enum class kind { stdio, tcp, unix_socket };
  kind what = kind::stdio;
  std::string host;        // tcp
  uint16_t port = 0;       // tcp
  std::string target = "/";  // the HTTP target of the WebSocket handshake
  std::string path;        // unix_socket: the socket file
  bool tls = false;        // tcp: wss:// (the server's certificate is not verified: a bench)

  /// "stdio", "ws", "wss" or "unix", as reported.
  std::string transport() const;
};

/// Parses `ws://HOST:PORT[/path]`, `wss://...` or `unix://PATH`; nullopt otherwise.
std::optional<endpoint> parse_endpoint(const std::string& url);

struct options {
  std::string server;
  endpoint connect;  // stdio unless --connect
  int connections = 1;
  int clients_per_thread = 1;
  int idle_connections = 0;
  int threads = 100;
  int turns = 1;
  int approvals = 1;
  int concurrency = 0;
  std::map<std::string, int> mix{{"accept", 1}};
  double think_ms = 0;
  double late_ms = 2000;
  bool plain = false;
  /// --confined: the turn's commands are plain `run:` lines, which run
  /// confined without asking (on-request); default: escalations, each asked.
  bool confined = false;
  std::string command = "true";
  std::string sandbox;  // --sandbox: thread/start's sandbox mode; empty: the server's default
  std::string prompt;  // --prompt: every turn's text, verbatim (overrides --text)
  double timeout_s = 300;
  std::string json_path, plot_path, server_log = "/dev/null";
  unsigned seed = 1;
  bool quiet = false;
};

extern const char* const usage;

/// Fills `o` from the command line; false (usage) when it does not parse or
/// does not make sense (several connections without --connect, say).
/// Throws std::logic_error from std::stoi and kin on a bad number.
bool parse_options(int argc, char** argv, options& o);

}  // namespace parley::bench
