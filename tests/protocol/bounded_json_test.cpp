// parse_bounded: the same values as nlohmann's parser, containers past the
// bound left out with their key, and a long line of small objects parsed in
// one pass (the callback parser it replaced was quadratic there).

#include "protocol/bounded_json.hpp"

#include <gtest/gtest.h>

namespace parley::protocol {
namespace {

TEST(bounded_json, builds_what_the_plain_parser_builds) {
  for (const char* text :
       {"null", "true", "-12", "18446744073709551615", "1.5e3", R"("a\u00e9\n")", "[]", "{}",
        R"({"a":[1,{"b":null,"c":[true,false]}],"d":"x","e":{"f":{}}})",
        R"([{"a":[0,1]},{"a":[2,3]},[],[[]],{"k":"v","k2":[{}]}])"}) {
    auto got = parse_bounded(text);
    EXPECT_FALSE(got.too_deep) << text;
    EXPECT_EQ(got.value, json::parse(text)) << text;
  }
}

TEST(bounded_json, containers_past_the_bound_are_left_out_with_their_key) {
  auto got = parse_bounded(R"({"a":[[1],2],"b":{"c":{"d":1}},"e":3})", 2);
  EXPECT_TRUE(got.too_deep);
  EXPECT_EQ(got.value, json::parse(R"({"a":[2],"b":{},"e":3})"));
  auto at_bound = parse_bounded(R"({"a":[1]})", 2);
  EXPECT_FALSE(at_bound.too_deep);
  EXPECT_EQ(at_bound.value, json::parse(R"({"a":[1]})"));
}

TEST(bounded_json, what_is_not_json_is_discarded) {
  for (const char* text : {"", "{", R"({"a":1}x)", "[1,]", "nul", R"({"a" 1})"})
    EXPECT_TRUE(parse_bounded(text).value.is_discarded()) << text;
}

TEST(bounded_json, a_16_mib_line_of_small_objects_is_parsed_whole) {
  std::string text = "[";
  size_t n = 0;
  while (text.size() < (size_t{16} << 20)) {
    if (n++) text += ',';
    text += R"({"a":[0,1]})";
  }
  text += ']';
  auto got = parse_bounded(text);
  ASSERT_TRUE(got.value.is_array());
  EXPECT_EQ(got.value.size(), n);
  EXPECT_EQ(got.value.back(), json::parse(R"({"a":[0,1]})"));
}

}  // namespace
}  // namespace parley::protocol
