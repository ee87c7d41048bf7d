#include "actors/cluster/cluster_config.hpp"

#include "actors/cluster/node_tls.hpp"

#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace parley::cluster {

namespace cluster_file {

/// The one problem a cluster file has: "FILE:LINE:COL: key: what".
struct problem : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& file, const toml::node* at, const std::string& key,
                       const std::string& what) {
  std::string where = file;
  if (at && at->source().begin.line != 0)
    where += ":" + std::to_string(at->source().begin.line) + ":"
             + std::to_string(at->source().begin.column);
  throw problem{where + ": " + (key.empty() ? "" : key + ": ") + what};
}

// What toml++ calls a node's type, for "expected a string, got integer".
std::string type_of(const toml::node& n) {
  if (n.is_table()) return "table";
  if (n.is_array()) return "array";
  if (n.is_string()) return "string";
  if (n.is_integer()) return "integer";
  if (n.is_floating_point()) return "float";
  if (n.is_boolean()) return "boolean";
  return "date/time";
}

struct reader {
  std::string file;
  std::filesystem::path folder;

  std::string text(const toml::node& n, const std::string& key) const {
    auto* s = n.as_string();
    if (!s) fail(file, &n, key, "expected a string, got " + type_of(n));
    if (s->get().empty()) fail(file, &n, key, "must not be empty");
    return s->get();
  }

  std::chrono::milliseconds millis(const toml::node& n, const std::string& key) const {
    auto* i = n.as_integer();
    if (!i) fail(file, &n, key, "expected an integer (milliseconds), got " + type_of(n));
    if (i->get() <= 0 || i->get() > 3'600'000)
      fail(file, &n, key, "expected 1..3600000 milliseconds, got " + std::to_string(i->get()));
    return std::chrono::milliseconds{i->get()};
  }

  // A readable file; relative to the cluster file's folder.
  std::string readable_file(const toml::node& n, const std::string& key) const {
    std::filesystem::path p = text(n, key);
    if (p.is_relative()) p = folder / p;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec))
      fail(file, &n, key, "no such file: " + p.string());
    if (::access(p.c_str(), R_OK) != 0) fail(file, &n, key, "cannot read " + p.string());
    return p.string();
  }

  // A name as nodes, logs and the store know it.
  std::string name(const toml::node& n, const std::string& key) const {
    auto s = text(n, key);
    auto ok = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '-' || c == '_' || c == '.';
    };
    if (s.size() > 64 || !std::all_of(s.begin(), s.end(), ok))
      fail(file, &n, key, "\"" + s + "\": use up to 64 letters, digits, '-', '_' or '.'");
    return s;
  }

  // "HOST:PORT" or "[IPv6]:PORT", port 1..65535.
  member_address address(const toml::node& n, const std::string& key) const {
    auto s = text(n, key);
    auto colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == s.size())
      fail(file, &n, key, "\"" + s + "\": expected HOST:PORT");
    member_address a;
    a.host = s.substr(0, colon);
    if (a.host.front() == '[') {
      if (a.host.size() < 3 || a.host.back() != ']')
        fail(file, &n, key, "\"" + s + "\": expected [IPv6]:PORT");
      a.host = a.host.substr(1, a.host.size() - 2);
    } else if (a.host.find(':') != std::string::npos) {
      fail(file, &n, key, "\"" + s + "\": an IPv6 host goes in brackets, [::1]:PORT");
    }
    auto digits = s.substr(colon + 1);
    if (digits.size() > 5 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
      fail(file, &n, key, "\"" + s + "\": the port is not a number");
    auto port = std::stoul(digits);
    if (port == 0 || port > 65535)
      fail(file, &n, key, "\"" + s + "\": the port must be 1..65535");
    a.port = static_cast<uint16_t>(port);
    return a;
  }

  // Unknown keys are typos: refused rather than silently ignored.
  void only(const toml::table& t, const std::string& prefix,
            std::initializer_list<std::string_view> known) const {
    for (auto& [k, v] : t)
      if (std::find(known.begin(), known.end(), k.str()) == known.end())
        fail(file, &v, prefix + std::string{k.str()}, "unknown key");
  }
};

const toml::node& required(const reader& r, const toml::table& t, const toml::node& where,
                           const std::string& prefix, const std::string& key) {
  if (auto* n = t.get(key)) return *n;
  fail(r.file, &where, prefix + key, "missing");
}

cluster_config parse(const reader& r, const toml::table& root, const std::string& node_override) {
  r.only(root, "", {"cluster", "node", "postgres", "lease_ttl_ms", "heartbeat_ms",
                    "connection_timeout_ms", "tls", "members"});
  cluster_config c;
  c.cluster = r.name(required(r, root, root, "", "cluster"), "cluster");
  if (auto* n = root.get("node")) c.node = r.name(*n, "node");
  if (!node_override.empty()) c.node = node_override;
  if (c.node.empty()) fail(r.file, nullptr, "node", "missing (in the file or --cluster-node)");
  const auto& pg = required(r, root, root, "", "postgres");
  c.postgres = r.text(pg, "postgres");
  if (c.postgres.rfind("postgresql://", 0) != 0 && c.postgres.rfind("postgres://", 0) != 0)
    fail(r.file, &pg, "postgres", "expected a postgresql:// URL");
  if (auto* n = root.get("lease_ttl_ms")) c.lease_ttl = r.millis(*n, "lease_ttl_ms");
  if (auto* n = root.get("heartbeat_ms")) c.heartbeat = r.millis(*n, "heartbeat_ms");
  if (auto* n = root.get("connection_timeout_ms"))
    c.connection_timeout = r.millis(*n, "connection_timeout_ms");
  if (!(c.heartbeat < c.connection_timeout))
    fail(r.file, root.get("heartbeat_ms"), "heartbeat_ms",
         "must be shorter than connection_timeout_ms (" +
             std::to_string(c.connection_timeout.count()) + ")");
  if (!(c.connection_timeout < c.lease_ttl))
    fail(r.file, root.get("connection_timeout_ms"), "connection_timeout_ms",
         "must be shorter than lease_ttl_ms (" + std::to_string(c.lease_ttl.count()) + ")");

  const auto& tls_node = required(r, root, root, "", "tls");
  auto* tls = tls_node.as_table();
  if (!tls) fail(r.file, &tls_node, "tls", "expected a table, got " + type_of(tls_node));
  r.only(*tls, "tls.", {"ca", "cert", "key"});
  c.ca_file = r.readable_file(required(r, *tls, tls_node, "tls.", "ca"), "tls.ca");
  c.cert_file = r.readable_file(required(r, *tls, tls_node, "tls.", "cert"), "tls.cert");
  c.key_file = r.readable_file(required(r, *tls, tls_node, "tls.", "key"), "tls.key");
  if (auto problem = check_tls_files(c.ca_file, c.cert_file, c.key_file); !problem.empty())
    fail(r.file, &tls_node, "", problem);  // the problem names its key

  const auto& members_node = required(r, root, root, "", "members");
  auto* members = members_node.as_array();
  if (!members || members->empty())
    fail(r.file, &members_node, "members", "expected [[members]] tables (at least one)");
  std::set<std::string> names;
  std::set<std::pair<std::string, uint16_t>> addresses;
  for (size_t i = 0; i < members->size(); ++i) {
    const auto& m = *members->get(i);
    auto key = "members[" + std::to_string(i) + "]";
    auto* t = m.as_table();
    if (!t) fail(r.file, &m, key, "expected a table, got " + type_of(m));
    r.only(*t, key + ".", {"name", "address"});
    auto name = r.name(required(r, *t, m, key + ".", "name"), key + ".name");
    const auto& address_node = required(r, *t, m, key + ".", "address");
    auto address = r.address(address_node, key + ".address");
    address.name = name;
    if (!names.insert(name).second)
      fail(r.file, t->get("name"), key + ".name", "\"" + name + "\" is named twice");
    if (!addresses.emplace(address.host, address.port).second)
      fail(r.file, &address_node, key + ".address", "the same address as another member");
    c.members.push_back(std::move(address));
  }
  if (!names.count(c.node))
    fail(r.file, root.get("node"), "node", "\"" + c.node + "\" is not one of the members");
  std::sort(c.members.begin(), c.members.end(),
            [](const member_address& a, const member_address& b) { return a.name < b.name; });
  return c;
}

}  // namespace cluster_file

std::optional<cluster_config> load_cluster_config(const std::string& path,
                                                  const std::string& node_override,
                                                  std::string& error) {
  cluster_file::reader r{path, std::filesystem::path{path}.parent_path()};
  try {
    toml::table root;
    try {
      root = toml::parse_file(path);
    } catch (const toml::parse_error& e) {
      auto& at = e.source().begin;
      throw cluster_file::problem{path + ":" + std::to_string(at.line) + ":" +
                                  std::to_string(at.column) + ": " +
                                  std::string{e.description()}};
    }
    return cluster_file::parse(r, root, node_override);
  } catch (const cluster_file::problem& p) {
    error = p.what();
  } catch (const std::exception& e) {
    error = path + ": " + e.what();
  }
  return std::nullopt;
}

std::optional<cluster_config> load_cluster_config(const std::string& path, std::string& error) {
  return load_cluster_config(path, {}, error);
}

}  // namespace parley::cluster
