#pragma once
// Reading fields of untrusted JSON without exceptions: a field of the wrong
// type reads as absent. Private to the wire library.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace parley::wire::detail {

using json = nlohmann::json;

/// obj[key] if obj is an object holding key, else nullptr.
inline const json* field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

inline const std::string* string_field(const json& obj, const char* key) {
  const json* value = field(obj, key);
  return value && value->is_string() ? value->get_ptr<const std::string*>() : nullptr;
}

inline std::string string_or(const json& obj, const char* key, std::string fallback = {}) {
  const std::string* value = string_field(obj, key);
  return value ? *value : fallback;
}

/// Integers only: a float or an out-of-range number reads as absent (a cast
/// of an out-of-range double would be undefined behaviour).
inline std::optional<std::int64_t> int_field(const json& obj, const char* key) {
  const json* value = field(obj, key);
  if (!value) return std::nullopt;
  if (value->is_number_unsigned()) {
    auto u = value->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<std::int64_t>(u);
  }
  if (value->is_number_integer()) return value->get<std::int64_t>();
  return std::nullopt;
}

inline const json* object_field(const json& obj, const char* key) {
  const json* value = field(obj, key);
  return value && value->is_object() ? value : nullptr;
}

inline const json* array_field(const json& obj, const char* key) {
  const json* value = field(obj, key);
  return value && value->is_array() ? value : nullptr;
}

/// The start of a payload for an error message (payloads can be megabytes).
inline std::string preview(std::string_view text, std::size_t limit = 200) {
  if (text.size() <= limit) return std::string(text);
  return std::string(text.substr(0, limit)) + "...";
}

/// JSON text that never throws: invalid UTF-8 (say, in a command's output)
/// is replaced rather than refused.
inline std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace parley::wire::detail
