#pragma once
// The TLS side of a `wss://` listener (issue 25): a server context of TLS
// 1.2 and later with the operator's certificate (PEM, a chain allowed) and
// key. Made again on SIGHUP for the connections that come after; a
// connection keeps the context it started with.

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

namespace parley::ws {

/// Reads `cert_file` and `key_file`. Throws std::runtime_error naming the
/// file when either cannot be read or the key does not fit the certificate.
std::shared_ptr<boost::asio::ssl::context> load_tls_context(const std::string& cert_file,
                                                            const std::string& key_file);

}  // namespace parley::ws
