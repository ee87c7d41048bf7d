#include "actors/threads/output_buffer.hpp"

#include <gtest/gtest.h>

namespace parley {
namespace {

TEST(output_buffer, never_splits_a_utf8_sequence) {
  output_buffer out{1024};
  std::string euro = "\xE2\x82\xAC";  // €
  EXPECT_EQ(out.add("a" + euro.substr(0, 1)), "a");
  EXPECT_EQ(out.add(euro.substr(1, 1)), "");
  EXPECT_EQ(out.add(euro.substr(2) + "b"), euro + "b");
  EXPECT_EQ(out.aggregated(), "a" + euro + "b");
}

TEST(output_buffer, flushes_a_dangling_tail_at_the_end) {
  output_buffer out{1024};
  EXPECT_EQ(out.add("x\xE2\x82"), "x");
  EXPECT_EQ(out.finish(), "\xE2\x82");
}

TEST(output_buffer, caps_what_it_keeps_and_says_so) {
  output_buffer out{10};
  EXPECT_EQ(out.add("0123456789abc"), "0123456789");
  EXPECT_EQ(out.add("more"), "");
  EXPECT_EQ(out.dropped(), 7u);
  EXPECT_EQ(out.aggregated(), "0123456789\n[parley: output truncated, 7 more bytes dropped]\n");
}

TEST(output_buffer, cap_cuts_at_a_character_boundary) {
  output_buffer out{2};
  EXPECT_EQ(out.add("a\xE2\x82\xAC"), "a");
  EXPECT_EQ(out.dropped(), 3u);
}

TEST(output_buffer, complete_prefix) {
  EXPECT_EQ(utf8_complete_prefix("abc"), 3u);
  EXPECT_EQ(utf8_complete_prefix("ab\xC3"), 2u);
  EXPECT_EQ(utf8_complete_prefix("ab\xC3\xA9"), 4u);
  EXPECT_EQ(utf8_complete_prefix("\xF0\x9F\x98"), 0u);
  EXPECT_EQ(utf8_complete_prefix("\xff"), 1u) << "invalid bytes pass through";
}

}  // namespace
}  // namespace parley
