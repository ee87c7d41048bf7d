#pragma once
// Private to the config library: typed reads of toml++ nodes that fail with
// a message naming the key and, for nodes read from the file, where it is.

#include <toml++/toml.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "actors/model/config/mcp_servers.hpp"

namespace parley::model_config::detail {

/// The one problem a config has; parse() turns it into load_result::error.
struct config_problem : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Throws a config_problem: "FILE:LINE:COL: KEY: what" for a node from the
/// file, "-c KEY: what" for one a -c override made (those carry no source),
/// "KEY: what" without a node.
[[noreturn]] void fail(const toml::node* at, const std::string& key, const std::string& what);

/// "string", "integer", "table", ...
std::string type_name(const toml::node& n);

std::string read_string(const toml::node& n, const std::string& key);
bool read_bool(const toml::node& n, const std::string& key);
/// A non-negative integer, capped at `cap`.
uint64_t read_count(const toml::node& n, const std::string& key, uint64_t cap);
/// A positive integer.
uint64_t read_positive(const toml::node& n, const std::string& key);
const toml::table& read_table(const toml::node& n, const std::string& key);
/// A table whose values are all strings.
std::map<std::string, std::string> read_string_table(const toml::node& n, const std::string& key);
std::vector<std::string> read_string_array(const toml::node& n, const std::string& key);

/// One of `choices` (by name), else a problem listing them.
template <class T>
T read_choice(const toml::node& n, const std::string& key,
              const std::vector<std::pair<std::string, T>>& choices) {
  auto text = read_string(n, key);
  std::string names;
  for (auto& [name, value] : choices) {
    if (name == text) return value;
    names += (names.empty() ? "" : ", ") + name;
  }
  fail(&n, key, "unknown value \"" + text + "\" (one of " + names + ")");
}

/// Applies one `-c key=value` text to `root`: the key is a dotted path
/// (intermediate tables are made, a non-table in the way is replaced), the
/// value is TOML when it parses as one, else the text itself as a string.
void apply_override(toml::table& root, const std::string& text);

/// `[mcp_servers]` (mcp_servers.cpp).
mcp_servers read_mcp_servers(const toml::node& node);

}  // namespace parley::model_config::detail
