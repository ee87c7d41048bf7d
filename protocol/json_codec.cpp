#include "protocol/json_codec.hpp"

namespace parley::protocol {

std::string describe_value(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return std::string{"boolean `"} + (j.get<bool>() ? "true" : "false") + "`";
    case json::value_t::string:
      return "string " + dump_line(j);
    case json::value_t::number_integer:
      return "integer `" + j.dump() + "`";
    case json::value_t::number_unsigned:
      return "integer `" + j.dump() + "`";
    case json::value_t::number_float:
      return "floating point `" + j.dump() + "`";
    case json::value_t::array:
      return "sequence";
    case json::value_t::object:
      return "map";
    default:
      return "value";
  }
}

void throw_invalid_type(const json& j, const char* expected) {
  throw decode_error("invalid type: " + describe_value(j) + ", expected " + expected);
}

void throw_unknown_variant(const std::string& got, std::initializer_list<const char*> expected) {
  // serde's wording: "expected `a`" / "expected `a` or `b`" / "expected one of `a`, `b`, `c`"
  std::string msg = "unknown variant `" + got + "`, expected ";
  if (expected.size() > 2) msg += "one of ";
  size_t n = 0;
  for (auto* e : expected) {
    if (n > 0) msg += expected.size() > 2 ? ", " : " or ";
    msg += std::string{"`"} + e + "`";
    ++n;
  }
  throw decode_error(msg);
}

void require_object(const json& j) {
  if (!j.is_object()) throw_invalid_type(j, "a map");
}

std::string dump_line(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace parley::protocol
