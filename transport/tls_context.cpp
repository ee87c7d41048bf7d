#include "transport/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ssl.hpp>
#include <stdexcept>

namespace parley::ws {

namespace ssl = boost::asio::ssl;

std::shared_ptr<ssl::context> load_tls_context(const std::string& cert_file,
                                               const std::string& key_file) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2
                   | ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1
                   | ssl::context::single_dh_use);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  boost::system::error_code ec;
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec) throw std::runtime_error("--tls-cert " + cert_file + ": " + ec.message());
  ctx->use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) throw std::runtime_error("--tls-key " + key_file + ": " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
    throw std::runtime_error("--tls-key " + key_file + " does not match --tls-cert " + cert_file);
  return ctx;
}

}  // namespace parley::ws
