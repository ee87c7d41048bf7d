#include "actors/mcp/tool_names.hpp"

#include "actors/mcp/tool_schema.hpp"

#include <openssl/evp.h>

#include <cctype>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace parley::mcp {

namespace {

constexpr const char* delimiter = "__";
constexpr size_t hash_length = 12;

std::string sha1_hex(const std::string& s) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(s.data(), s.size(), digest, &size, EVP_sha1(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < size; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

std::string hash_suffix(const std::string& identity) {
  return "_" + sha1_hex(identity).substr(0, hash_length);
}

constexpr const char* namespace_prefix = "mcp__";

struct candidate {
  raw_tool raw;
  std::string namespace_identity;
  std::string tool_identity;
  std::string ns;        // mcp__server, sanitised
  std::string callable;  // the tool, sanitised
};

/// A colliding namespace keeps a trailing delimiter after the suffix.
std::string namespace_with_suffix(const std::string& ns, const std::string& identity) {
  std::string d = delimiter;
  if (ns.size() >= d.size() && ns.compare(ns.size() - d.size(), d.size(), d) == 0)
    return ns.substr(0, ns.size() - d.size()) + hash_suffix(identity) + d;
  return ns + hash_suffix(identity);
}

/// Namespace and tool cut to fit 64 bytes (with the delimiter's room) and
/// the suffix of `identity`.
std::pair<std::string, std::string> fit_with_hash(const std::string& ns, const std::string& tool,
                                                  const std::string& identity) {
  auto suffix = hash_suffix(identity);
  size_t reserved = std::string(delimiter).size();
  size_t room = max_tool_name_length > ns.size() + reserved
                    ? max_tool_name_length - ns.size() - reserved
                    : 0;
  if (room >= suffix.size()) return {ns, tool.substr(0, room - suffix.size()) + suffix};
  return {ns.substr(0, max_tool_name_length - suffix.size() - reserved), suffix};
}

std::string trimmed_description(const std::string& s) {
  const char* space = " \t\n\r\f\v";
  auto from = s.find_first_not_of(space);
  if (from == std::string::npos) return {};
  return s.substr(from, s.find_last_not_of(space) - from + 1);
}

}  // namespace

std::string sanitized_tool_name(const std::string& name) {
  std::string out;
  out.reserve(name.size());
  for (unsigned char c : name)
    out += (std::isalnum(c) && c < 128) || c == '_' ? static_cast<char>(c) : '_';
  return out.empty() ? "_" : out;
}

std::string flat_tool_name(const std::string& ns, const std::string& callable) {
  return ns + delimiter + callable;
}

std::vector<named_tool> qualify_tools(const std::vector<raw_tool>& tools) {
  std::set<std::string> seen;
  std::vector<candidate> list;
  for (const auto& t : tools) {
    candidate c;
    c.raw = t;
    // The identities Codex hashes: server, its raw namespace (the server's
    // name), connector (none); then the raw callable name and the tool's.
    c.namespace_identity = t.server + '\0' + t.server + '\0';
    c.tool_identity = c.namespace_identity + '\0' + t.tool + '\0' + t.tool;
    if (!seen.insert(c.tool_identity).second) continue;
    c.ns = sanitized_tool_name(t.server);
    if (c.ns.rfind(namespace_prefix, 0) != 0) c.ns = namespace_prefix + c.ns;
    c.callable = sanitized_tool_name(t.tool);
    list.push_back(std::move(c));
  }
  std::map<std::string, std::set<std::string>> by_namespace;
  for (const auto& c : list) by_namespace[c.ns].insert(c.namespace_identity);
  for (auto& c : list)
    if (by_namespace[c.ns].size() > 1) c.ns = namespace_with_suffix(c.ns, c.namespace_identity);
  std::map<std::pair<std::string, std::string>, std::set<std::string>> by_tool;
  for (const auto& c : list) by_tool[{c.ns, c.callable}].insert(c.tool_identity);
  for (auto& c : list)
    if (by_tool[{c.ns, c.callable}].size() > 1) c.callable += hash_suffix(c.tool_identity);
  std::sort(list.begin(), list.end(),
            [](const candidate& a, const candidate& b) { return a.tool_identity < b.tool_identity; });
  std::set<std::string> used;
  std::set<std::string> flat;
  std::vector<named_tool> out;
  size_t reserved = std::string(delimiter).size();
  for (auto& c : list) {
    auto ns = c.ns;
    auto callable = c.callable;
    if (ns.size() + callable.size() + reserved > max_tool_name_length
        || !used.insert(ns + callable).second) {
      for (unsigned attempt = 0;; ++attempt) {
        auto identity = attempt == 0 ? c.tool_identity
                                     : c.tool_identity + '\0' + std::to_string(attempt);
        std::tie(ns, callable) = fit_with_hash(c.ns, c.callable, identity);
        if (used.insert(ns + callable).second) break;
      }
    }
    auto name = flat_tool_name(ns, callable);
    if (!flat.insert(name).second) continue;
    out.push_back({c.raw.server, c.raw.tool, ns, callable, std::move(name)});
  }
  return out;
}

nlohmann::json namespace_tool(const std::string& ns, const std::string& instructions,
                              nlohmann::json functions) {
  auto description = trimmed_description(instructions);
  if (description.empty()) description = "Tools in the " + ns + " namespace.";
  return {{"type", "namespace"},
          {"name", ns},
          {"description", std::move(description)},
          {"tools", std::move(functions)}};
}

nlohmann::json function_tool(const std::string& name, const nlohmann::json& listed) {
  auto input = listed.is_object() && listed.value("inputSchema", nlohmann::json()).is_object()
                   ? listed["inputSchema"]
                   : nlohmann::json::object();
  if (!input.contains("type")) input["type"] = "object";  // MCP's inputSchema is one
  auto schema = model_input_schema(input);
  auto description = listed.is_object() && listed.value("description", nlohmann::json()).is_string()
                         ? listed["description"].get<std::string>()
                         : std::string{};
  return {{"type", "function"},
          {"name", name},
          {"description", description},
          {"strict", false},
          {"parameters", std::move(schema)}};
}

}  // namespace parley::mcp
