#pragma once
// Where `parley app-server --listen` serves, as Codex spells it:
//   stdio://            stdin/stdout (the default)
//   ws://HOST:PORT      WebSocket over TCP (port 0: any free port)
//   wss://HOST:PORT     the same over TLS (--tls-cert, --tls-key)
//   unix://PATH         WebSocket over a Unix domain socket
//   unix://             the same at HOME/app-server.sock

#include <cstdint>
#include <optional>
#include <string>

namespace parley::ws {

struct listen_address {
  enum class kind { stdio, tcp, unix_socket };
  kind what = kind::stdio;
  std::string host;   // tcp
  uint16_t port = 0;  // tcp
  bool tls = false;   // tcp: wss://
  std::string path;   // unix_socket
  /// As given, for messages.
  std::string text;

  bool loopback() const;
};

/// Parses one --listen value; `home` gives unix://'s default path. nullopt
/// and `error` set when it is not one of the forms above.
std::optional<listen_address> parse_listen_address(const std::string& text, const std::string& home,
                                                   std::string& error);

}  // namespace parley::ws
