#include "protocol/json_codec.hpp"

#include <gtest/gtest.h>

namespace parley::protocol {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const decode_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(json_codec, required_fields_report_missing_and_null_as_missing) {
  auto j = json::parse(R"({"a":null})");
  EXPECT_EQ(error_of([&] { required<std::string>(j, "threadId"); }), "missing field `threadId`");
  EXPECT_EQ(error_of([&] { required<std::string>(j, "a"); }), "missing field `a`");
}

TEST(json_codec, type_errors_read_like_serde) {
  EXPECT_EQ(error_of([] { decode<std::vector<std::string>>(json("hi")); }),
            "invalid type: string \"hi\", expected a sequence");
  EXPECT_EQ(error_of([] { decode<std::string>(json(3)); }),
            "invalid type: integer `3`, expected a string");
  EXPECT_EQ(error_of([] { decode<bool>(json::object()); }), "invalid type: map, expected a boolean");
  EXPECT_EQ(error_of([] { decode<int64_t>(json(1.5)); }),
            "invalid type: floating point `1.5`, expected i64");
  EXPECT_EQ(error_of([] { decode<uint32_t>(json(-1)); }), "invalid type: integer `-1`, expected u32");
}

TEST(json_codec, optional_fields_accept_absent_and_null) {
  auto j = json::parse(R"({"a":null,"b":"x"})");
  EXPECT_FALSE(optional<std::string>(j, "a"));
  EXPECT_FALSE(optional<std::string>(j, "missing"));
  EXPECT_EQ(optional<std::string>(j, "b"), "x");
}

TEST(json_codec, unknown_variant_lists_what_is_expected) {
  EXPECT_EQ(error_of([] { throw_unknown_variant("x", {"a", "b"}); }),
            "unknown variant `x`, expected `a` or `b`");
  EXPECT_EQ(error_of([] { throw_unknown_variant("x", {"a", "b", "c"}); }),
            "unknown variant `x`, expected one of `a`, `b`, `c`");
}

TEST(json_codec, dump_line_replaces_invalid_utf8) {
  json j = std::string("ok\xff");
  EXPECT_EQ(dump_line(j), "\"ok\xEF\xBF\xBD\"");
}

}  // namespace
}  // namespace parley::protocol
