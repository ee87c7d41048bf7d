#include "actors/cluster/node_tls.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <memory>

namespace parley::cluster {

namespace node_tls {

std::string openssl_errors() {
  std::string out;
  while (auto code = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    out += (out.empty() ? "" : "; ") + std::string{buf};
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

// Refuses to prompt: an encrypted key fails to load instead.
int no_passphrase(char*, int, int, void*) { return 0; }

}  // namespace node_tls

std::string check_tls_files(const std::string& ca, const std::string& cert,
                            const std::string& key) {
  ERR_clear_error();
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx{SSL_CTX_new(TLS_method()), SSL_CTX_free};
  if (!ctx) return "cannot create an OpenSSL context: " + node_tls::openssl_errors();
  SSL_CTX_set_default_passwd_cb(ctx.get(), node_tls::no_passphrase);
  if (SSL_CTX_load_verify_locations(ctx.get(), ca.c_str(), nullptr) != 1)
    return "tls.ca: no CA certificate in " + ca + ": " + node_tls::openssl_errors();
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), cert.c_str()) != 1)
    return "tls.cert: no certificate in " + cert + ": " + node_tls::openssl_errors();
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), key.c_str(), SSL_FILETYPE_PEM) != 1) {
    // OpenSSL 3 checks the pair while loading the key.
    auto why = node_tls::openssl_errors();
    if (why.find("key values mismatch") != std::string::npos)
      return "tls.key: " + key + " is not the key of " + cert;
    return "tls.key: no usable private key in " + key +
           " (an encrypted key is not supported): " + why;
  }
  if (SSL_CTX_check_private_key(ctx.get()) != 1)
    return "tls.key: " + key + " is not the key of " + cert + ": " + node_tls::openssl_errors();
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> verify{X509_STORE_CTX_new(),
                                                                         X509_STORE_CTX_free};
  STACK_OF(X509)* chain = nullptr;
  SSL_CTX_get0_chain_certs(ctx.get(), &chain);
  if (!verify || X509_STORE_CTX_init(verify.get(), SSL_CTX_get_cert_store(ctx.get()),
                                     SSL_CTX_get0_certificate(ctx.get()), chain) != 1)
    return "cannot verify " + cert + ": " + node_tls::openssl_errors();
  if (X509_verify_cert(verify.get()) != 1)
    return "tls.cert: " + cert + " is not signed by the cluster CA " + ca + ": " +
           X509_verify_cert_error_string(X509_STORE_CTX_get_error(verify.get()));
  return {};
}

}  // namespace parley::cluster
