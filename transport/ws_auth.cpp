#include "transport/ws_auth.hpp"

#include <openssl/crypto.h>

#include <fstream>
#include <jwt/jwt.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>
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

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream in{line};
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

/// A capability-token file: one token alone (the old format: the default
/// tenant's), or lines `TOKEN TENANT [SUBJECT] [operator]`.
bool parse_tokens(const std::string& text, const std::string& path, auth_config& cfg,
                  std::string& error) {
  std::vector<std::string> lines;
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    lines.push_back(line);
  }
  if (lines.size() == 1 && words_of(lines[0]).size() == 1) {
    tenant_identity who;
    who.tenant = cfg.default_tenant;
    who.subject = "capability-token";
    cfg.tokens.push_back({words_of(lines[0])[0], who});
    return true;
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    auto w = words_of(lines[i]);
    bool op = w.size() >= 3 && w.back() == "operator";
    if (op) w.pop_back();
    if (w.size() < 2 || w.size() > 3) {
      error = path + ":" + std::to_string(i + 1)
              + ": expected TOKEN TENANT [SUBJECT] [operator]";
      return false;
    }
    tenant_identity who;
    who.tenant = w[1];
    who.subject = w.size() == 3 ? w[2] : "capability-token";
    who.is_operator = op;
    cfg.tokens.push_back({w[0], who});
  }
  if (cfg.tokens.empty()) {
    error = path + " names no token";
    return false;
  }
  return true;
}

/// Refusals in today's words, whichever check of the library's failed.
std::string refusal_of(const std::error_code& ec) {
  if (ec == jwt::VerificationErrc::InvalidAlgorithm) return "the token is not signed with HS256";
  if (ec == jwt::VerificationErrc::InvalidSignature) return "the token's signature does not match";
  if (ec == jwt::VerificationErrc::TokenExpired) return "the token has expired";
  if (ec == jwt::VerificationErrc::ImmatureSignature) return "the token is not valid yet";
  if (ec == jwt::VerificationErrc::InvalidIssuer) return "the token's issuer is not the one expected";
  if (ec == jwt::VerificationErrc::InvalidAudience) return "the token's audience is not this server";
  if (ec == jwt::VerificationErrc::TypeConversionError) return "the token's claims have wrong types";
  return "not a signed token";
}

/// Whether the `scope` claim (OAuth's space-separated string, or an array)
/// holds the operator scope.
bool has_operator_scope(const nlohmann::json& claims) {
  auto s = claims.find("scope");
  if (s == claims.end()) return false;
  std::vector<std::string> scopes;
  if (s->is_string()) scopes = words_of(s->get<std::string>());
  if (s->is_array())
    for (const auto& x : *s)
      if (x.is_string()) scopes.push_back(x.get<std::string>());
  for (const auto& x : scopes)
    if (x == tenant_identity::operator_scope) return true;
  return false;
}

/// A JWT signed with HS256 by the secret, not expired (`exp` required),
/// already valid (`nbf`, if given), of the configured issuer and audience.
/// cpp-jwt checks the signature, the algorithm, `iss` and `aud` (and the
/// times against the system clock); the times are checked again at `now`
/// (the caller's clock) with the same leeway.
std::optional<std::string> jwt_refusal(const auth_config& cfg, std::string_view token,
                                       int64_t now, tenant_identity& who) {
  using namespace jwt::params;
  std::error_code ec;
  nlohmann::json claims;
  try {
    auto decode = [&](auto&&... checks) {
      return jwt::decode(jwt::string_view{token.data(), token.size()}, algorithms({"HS256"}), ec,
                         secret(cfg.secret), verify(true), leeway(cfg.leeway_seconds),
                         checks...);
    };
    jwt::jwt_object obj;
    if (!cfg.issuer.empty() && !cfg.audience.empty())
      obj = decode(issuer(cfg.issuer), aud(cfg.audience));
    else if (!cfg.issuer.empty())
      obj = decode(issuer(cfg.issuer));
    else if (!cfg.audience.empty())
      obj = decode(aud(cfg.audience));
    else
      obj = decode();
    if (ec) return refusal_of(ec);
    claims = obj.payload().create_json_obj();
  } catch (const std::exception&) {
    return "not a signed token";
  }
  if (!claims.is_object()) return "the token's claims are not an object";
  auto leeway_s = static_cast<double>(cfg.leeway_seconds);
  auto exp = claims.find("exp");
  if (exp == claims.end() || !exp->is_number()) return "the token has no expiry";
  if (exp->get<double>() + leeway_s <= static_cast<double>(now)) return "the token has expired";
  auto nbf = claims.find("nbf");
  if (nbf != claims.end()
      && (!nbf->is_number() || nbf->get<double>() - leeway_s > static_cast<double>(now)))
    return "the token is not valid yet";
  auto tenant = claims.find(cfg.tenant_claim);
  if (tenant != claims.end() && (!tenant->is_string() || tenant->get<std::string>().empty()))
    return "the token's " + cfg.tenant_claim + " claim is not a name";
  who.tenant = tenant == claims.end() ? cfg.default_tenant : tenant->get<std::string>();
  auto sub = claims.find("sub");
  who.subject = sub != claims.end() && sub->is_string() ? sub->get<std::string>() : "";
  who.is_operator = has_operator_scope(claims);
  return std::nullopt;
}

}  // namespace

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<auth_config> load_auth(const std::string& mode, const std::string& token_file,
                                     const std::string& secret_file, std::string& error,
                                     const auth_claims& claims) {
  auth_config cfg;
  cfg.tenant_claim = claims.tenant_claim.empty() ? "tenant" : claims.tenant_claim;
  cfg.issuer = claims.issuer;
  cfg.audience = claims.audience;
  cfg.leeway_seconds = claims.leeway_seconds;
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
  if (cfg.what == auth_config::mode::capability_token) {
    if (!parse_tokens(*secret, *file, cfg, error)) return std::nullopt;
  } else {
    cfg.secret = std::move(*secret);
  }
  return cfg;
}

std::optional<std::string> authenticate(const auth_config& cfg, std::string_view authorization,
                                        int64_t now, tenant_identity& who) {
  if (cfg.what == auth_config::mode::none) {
    who = tenant_identity{};
    who.tenant = cfg.default_tenant;
    return std::nullopt;
  }
  constexpr std::string_view scheme = "Bearer ";
  if (authorization.substr(0, scheme.size()) != scheme) return "no bearer token";
  auto token = authorization.substr(scheme.size());
  if (cfg.what == auth_config::mode::capability_token) {
    // Every token is compared, so the time taken says nothing of which matched.
    const auth_config::token_entry* match = nullptr;
    for (const auto& e : cfg.tokens)
      if (constant_time_equal(token, e.token) && !match) match = &e;
    if (match) {
      who = match->who;
      return std::nullopt;
    }
    // A config made in code with the token as its secret: the default tenant's.
    if (cfg.tokens.empty() && !cfg.secret.empty() && constant_time_equal(token, cfg.secret)) {
      who = tenant_identity{};
      who.tenant = cfg.default_tenant;
      who.subject = "capability-token";
      return std::nullopt;
    }
    return "wrong token";
  }
  return jwt_refusal(cfg, token, now, who);
}

std::optional<std::string> refusal(const auth_config& cfg, std::string_view authorization,
                                   int64_t now) {
  tenant_identity ignored;
  return authenticate(cfg, authorization, now, ignored);
}

}  // namespace parley::ws
