#pragma once
// Decoding helpers that report problems the way the Codex app-server does
// ("missing field `threadId`", "invalid type: string \"hi\", expected a sequence"),
// so clients written against Codex see the messages they expect.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace parley::protocol {

using json = nlohmann::json;

/// A params or result object that does not match its schema. The message is
/// the part after "Invalid request: ".
class decode_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Describes a JSON value the way serde does in its error messages.
std::string describe_value(const json& j);

[[noreturn]] void throw_invalid_type(const json& j, const char* expected);
[[noreturn]] void throw_unknown_variant(const std::string& got,
                                       std::initializer_list<const char*> expected);

// -- primitive decoders ------------------------------------------------------

template <class T>
struct decoder;  // specialised below; struct types use from_json (ADL)

template <>
struct decoder<std::string> {
  static std::string decode(const json& j) {
    if (!j.is_string()) throw_invalid_type(j, "a string");
    return j.get_ref<const std::string&>();
  }
};

template <>
struct decoder<bool> {
  static bool decode(const json& j) {
    if (!j.is_boolean()) throw_invalid_type(j, "a boolean");
    return j.get<bool>();
  }
};

template <>
struct decoder<int64_t> {
  static int64_t decode(const json& j) {
    if (j.is_number_integer()) return j.get<int64_t>();
    throw_invalid_type(j, "i64");
  }
};

template <>
struct decoder<uint32_t> {
  static uint32_t decode(const json& j) {
    if (j.is_number_unsigned() && j.get<uint64_t>() <= UINT32_MAX)
      return static_cast<uint32_t>(j.get<uint64_t>());
    throw_invalid_type(j, "u32");
  }
};

template <>
struct decoder<json> {
  static json decode(const json& j) { return j; }
};

template <class T>
struct decoder<std::vector<T>> {
  static std::vector<T> decode(const json& j) {
    if (!j.is_array()) throw_invalid_type(j, "a sequence");
    std::vector<T> out;
    out.reserve(j.size());
    for (const auto& x : j) out.push_back(decoder<T>::decode(x));
    return out;
  }
};

template <class T>
struct decoder {
  static T decode(const json& j) {
    T out{};
    from_json(j, out);
    return out;
  }
};

template <class T>
T decode(const json& j) {
  return decoder<T>::decode(j);
}

/// Throws unless `j` is an object (what every params struct must be).
void require_object(const json& j);

/// A required field: missing or null is an error.
template <class T>
T required(const json& obj, const char* key) {
  auto i = obj.find(key);
  if (i == obj.end() || i->is_null())
    throw decode_error(std::string{"missing field `"} + key + "`");
  return decode<T>(*i);
}

/// An optional field: absent and null both mean "not given".
template <class T>
std::optional<T> optional(const json& obj, const char* key) {
  auto i = obj.find(key);
  if (i == obj.end() || i->is_null()) return std::nullopt;
  return decode<T>(*i);
}

// -- encoding helpers --------------------------------------------------------

/// Writes `value` or null, the shape Codex uses for `T | null` fields.
template <class T>
json or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

/// Serialises for the wire: one line, invalid UTF-8 replaced rather than thrown.
std::string dump_line(const json& j);

}  // namespace parley::protocol
