#include "transport/ws_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

namespace parley::ws {

namespace {

std::optional<std::string> read_secret(const std::string& path, std::string& error) {
  std::ifstream in{path, std::ios::binary};
  if (!in) {
    error = "cannot read " + path;
    return std::nullopt;
  }
  std::ostringstream s;
  s << in.rdbuf();
  auto text = s.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.empty()) {
    error = path + " is empty";
    return std::nullopt;
  }
  return text;
}

/// base64url without padding (RFC 7515); nullopt for anything else.
std::optional<std::string> base64url_decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
  };
  if (in.size() % 4 == 1) return std::nullopt;
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : in) {
    int v = value(c);
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  return out;
}

std::string hmac_sha256(const std::string& key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len);
  return std::string(reinterpret_cast<char*>(mac), len);
}

/// A JWT (header.payload.signature) signed with HS256 by `secret`, not
/// expired (`exp` required) and already valid (`nbf`, if given).
std::optional<std::string> jwt_refusal(const std::string& secret, std::string_view token,
                                       int64_t now) {
  auto first = token.find('.');
  auto second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos)
    return "not a signed token";
  auto header = base64url_decode(token.substr(0, first));
  auto payload = base64url_decode(token.substr(first + 1, second - first - 1));
  auto signature = base64url_decode(token.substr(second + 1));
  if (!header || !payload || !signature) return "not a signed token";
  auto h = nlohmann::json::parse(*header, nullptr, false);
  if (!h.is_object() || h.value("alg", nlohmann::json()) != "HS256")
    return "the token is not signed with HS256";
  if (!constant_time_equal(hmac_sha256(secret, token.substr(0, second)), *signature))
    return "the token's signature does not match";
  auto p = nlohmann::json::parse(*payload, nullptr, false);
  if (!p.is_object()) return "the token's claims are not an object";
  auto exp = p.find("exp");
  if (exp == p.end() || !exp->is_number()) return "the token has no expiry";
  if (exp->get<double>() <= static_cast<double>(now)) return "the token has expired";
  auto nbf = p.find("nbf");
  if (nbf != p.end() && (!nbf->is_number() || nbf->get<double>() > static_cast<double>(now)))
    return "the token is not valid yet";
  return std::nullopt;
}

}  // namespace

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<auth_config> load_auth(const std::string& mode, const std::string& token_file,
                                     const std::string& secret_file, std::string& error) {
  auth_config cfg;
  if (mode.empty() || mode == "none") {
    if (!token_file.empty() || !secret_file.empty()) {
      error = "a token or secret file needs --ws-auth";
      return std::nullopt;
    }
    return cfg;
  }
  const std::string* file = nullptr;
  if (mode == "capability-token") {
    cfg.what = auth_config::mode::capability_token;
    file = &token_file;
  } else if (mode == "signed-bearer-token") {
    cfg.what = auth_config::mode::signed_bearer_token;
    file = &secret_file;
  } else {
    error = "unknown --ws-auth " + mode + " (capability-token, signed-bearer-token)";
    return std::nullopt;
  }
  if (file->empty()) {
    error = "--ws-auth " + mode + " needs "
            + (cfg.what == auth_config::mode::capability_token ? "--ws-token-file"
                                                               : "--ws-shared-secret-file");
    return std::nullopt;
  }
  auto secret = read_secret(*file, error);
  if (!secret) return std::nullopt;
  cfg.secret = std::move(*secret);
  return cfg;
}

std::optional<std::string> refusal(const auth_config& cfg, std::string_view authorization,
                                   int64_t now) {
  if (cfg.what == auth_config::mode::none) return std::nullopt;
  constexpr std::string_view scheme = "Bearer ";
  if (authorization.substr(0, scheme.size()) != scheme) return "no bearer token";
  auto token = authorization.substr(scheme.size());
  if (cfg.what == auth_config::mode::capability_token)
    return constant_time_equal(token, cfg.secret) ? std::nullopt
                                                  : std::optional<std::string>{"wrong token"};
  return jwt_refusal(cfg.secret, token, now);
}

}  // namespace parley::ws
