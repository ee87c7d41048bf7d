#include "transport/listen_address.hpp"

#include <charconv>

namespace parley::ws {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::optional<listen_address> parse_tcp(const std::string& text, bool tls, std::string& error) {
  auto rest = text.substr(tls ? 6 : 5);  // after ws:// or wss://
  auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
    error = std::string("expected ") + (tls ? "wss" : "ws") + "://HOST:PORT, got " + text;
    return std::nullopt;
  }
  listen_address a;
  a.what = listen_address::kind::tcp;
  a.tls = tls;
  a.host = rest.substr(0, colon);
  if (a.host.size() > 2 && a.host.front() == '[' && a.host.back() == ']')
    a.host = a.host.substr(1, a.host.size() - 2);  // [::1]
  auto port = rest.substr(colon + 1);
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc{} || end != port.data() + port.size() || value > 65535) {
    error = "bad port in " + text;
    return std::nullopt;
  }
  a.port = static_cast<uint16_t>(value);
  a.text = text;
  return a;
}

}  // namespace

bool listen_address::loopback() const {
  if (what != kind::tcp) return true;  // stdio and Unix sockets never leave the host
  return host == "localhost" || host == "::1" || starts_with(host, "127.");
}

std::optional<listen_address> parse_listen_address(const std::string& text, const std::string& home,
                                                   std::string& error) {
  if (text == "stdio://" || text == "stdio") {
    listen_address a;
    a.text = "stdio://";
    return a;
  }
  if (starts_with(text, "ws://")) return parse_tcp(text, false, error);
  if (starts_with(text, "wss://")) return parse_tcp(text, true, error);
  if (starts_with(text, "unix://")) {
    listen_address a;
    a.what = listen_address::kind::unix_socket;
    a.path = text.substr(7);
    if (a.path.empty()) a.path = home + "/app-server.sock";
    a.text = "unix://" + a.path;
    return a;
  }
  error = "unknown listen address " + text
          + " (stdio://, ws://HOST:PORT, wss://HOST:PORT or unix://[PATH])";
  return std::nullopt;
}

}  // namespace parley::ws
