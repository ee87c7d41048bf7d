#pragma once
// Reading rollout JSON as Codex does: a field of the wrong type is skipped
// (json::value() would throw on it and take the store's I/O actor with it).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace parley::store::rollout_json {

using json = nlohmann::json;

inline std::string str_of(const json& o, const char* key, const std::string& fallback = "") {
  if (!o.is_object()) return fallback;
  auto i = o.find(key);
  return i != o.end() && i->is_string() ? i->get<std::string>() : fallback;
}

inline json list_of(const json& o, const char* key) {
  auto i = o.is_object() ? o.find(key) : o.end();
  return i != o.end() && i->is_array() ? *i : json::array();
}

inline json object_of(const json& o, const char* key) {
  auto i = o.is_object() ? o.find(key) : o.end();
  return i != o.end() && i->is_object() ? *i : json::object();
}

inline std::optional<int64_t> opt_int(const json& p, const char* key) {
  auto i = p.is_object() ? p.find(key) : p.end();
  if (i != p.end() && i->is_number_integer()) return i->get<int64_t>();
  return std::nullopt;
}

inline std::optional<std::string> opt_str(const json& p, const char* key) {
  auto i = p.is_object() ? p.find(key) : p.end();
  if (i != p.end() && i->is_string()) return i->get<std::string>();
  return std::nullopt;
}

}  // namespace parley::store::rollout_json
