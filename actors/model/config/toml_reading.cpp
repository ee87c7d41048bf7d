#include "actors/model/config/toml_reading.hpp"

#include <algorithm>

namespace parley::model_config::detail {

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_key(const std::string& key, const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    auto dot = key.find('.', start);
    auto part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) throw config_problem{"-c " + text + ": empty key segment in \"" + key + "\""};
    parts.push_back(std::move(part));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

}  // namespace

void fail(const toml::node* at, const std::string& key, const std::string& what) {
  if (!at) throw config_problem{key + ": " + what};
  const auto& src = at->source();
  if (!src.path || src.begin.line == 0) throw config_problem{"-c " + key + ": " + what};
  throw config_problem{*src.path + ":" + std::to_string(src.begin.line) + ":"
                       + std::to_string(src.begin.column) + ": " + key + ": " + what};
}

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "table";
    case toml::node_type::array: return "array";
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "boolean";
    case toml::node_type::date: return "date";
    case toml::node_type::time: return "time";
    case toml::node_type::date_time: return "date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

std::string read_string(const toml::node& n, const std::string& key) {
  if (auto* s = n.as_string()) return s->get();
  fail(&n, key, "expected a string, got " + type_name(n));
}

bool read_bool(const toml::node& n, const std::string& key) {
  if (auto* b = n.as_boolean()) return b->get();
  fail(&n, key, "expected true or false, got " + type_name(n));
}

uint64_t read_count(const toml::node& n, const std::string& key, uint64_t cap) {
  auto* i = n.as_integer();
  if (!i) fail(&n, key, "expected a non-negative integer, got " + type_name(n));
  if (i->get() < 0) fail(&n, key, "must not be negative (got " + std::to_string(i->get()) + ")");
  return std::min(static_cast<uint64_t>(i->get()), cap);
}

uint64_t read_positive(const toml::node& n, const std::string& key) {
  auto* i = n.as_integer();
  if (!i) fail(&n, key, "expected a positive integer, got " + type_name(n));
  if (i->get() <= 0) fail(&n, key, "must be positive (got " + std::to_string(i->get()) + ")");
  return static_cast<uint64_t>(i->get());
}

const toml::table& read_table(const toml::node& n, const std::string& key) {
  if (auto* t = n.as_table()) return *t;
  fail(&n, key, "expected a table, got " + type_name(n));
}

std::map<std::string, std::string> read_string_table(const toml::node& n, const std::string& key) {
  std::map<std::string, std::string> out;
  for (auto& [name, value] : read_table(n, key)) {
    std::string sub{name.str()};
    out[sub] = read_string(value, key + "." + sub);
  }
  return out;
}

std::vector<std::string> read_string_array(const toml::node& n, const std::string& key) {
  auto* a = n.as_array();
  if (!a) fail(&n, key, "expected an array of strings, got " + type_name(n));
  std::vector<std::string> out;
  for (size_t i = 0; i < a->size(); ++i)
    out.push_back(read_string(*a->get(i), key + "[" + std::to_string(i) + "]"));
  return out;
}

void apply_override(toml::table& root, const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos)
    throw config_problem{"-c " + text + ": expected key=value (e.g. -c model=o3)"};
  auto key = trim(text.substr(0, eq));
  auto raw = trim(text.substr(eq + 1));
  if (key.empty()) throw config_problem{"-c " + text + ": empty key"};
  auto path = split_key(key, text);
  toml::table* at = &root;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    auto* next = at->get(path[i]);
    if (!next || !next->is_table()) {
      at->insert_or_assign(path[i], toml::table{});
      next = at->get(path[i]);
    }
    at = next->as_table();
  }
  // As Codex: TOML when the value is one (42, true, "x", [..], {..}), else
  // the text itself, so `-c model=o3` needs no quotes.
  try {
    auto parsed = toml::parse("_ = " + raw);
    if (parsed.size() == 1 && parsed.contains("_")) {
      at->insert_or_assign(path.back(), parsed["_"]);
      return;
    }
  } catch (const toml::parse_error&) {
    // not TOML: a plain string
  }
  at->insert_or_assign(path.back(), raw);
}

}  // namespace parley::model_config::detail
