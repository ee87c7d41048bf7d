#include "actors/threads/replay_cursor.hpp"

#include <gtest/gtest.h>

namespace parley {
namespace {

TEST(replay_cursor, passes_a_first_attempt_through) {
  replay_cursor c;
  EXPECT_EQ(c.take("ab"), "ab");
  EXPECT_EQ(c.take("abcd"), "cd");
  EXPECT_EQ(c.sent(), 4u);
}

TEST(replay_cursor, holds_a_retry_back_until_it_passes_what_was_sent) {
  replay_cursor c;
  EXPECT_EQ(c.take("the quick"), "the quick");
  // The retry streams from the start again.
  EXPECT_EQ(c.take("the"), "");
  EXPECT_EQ(c.take("the qu"), "");
  EXPECT_EQ(c.take("the quick br"), " br");
  EXPECT_EQ(c.take("the quick brown"), "own");
}

TEST(replay_cursor, never_starts_inside_a_utf8_sequence) {
  replay_cursor c;
  EXPECT_EQ(c.take("ab"), "ab");
  // A retry whose text differs: "€" spans the old end.
  EXPECT_EQ(c.take("a\xE2\x82\xAC" "c"), "c");
}

TEST(replay_cursor, a_piece_is_passed_on_when_the_client_has_what_precedes_it) {
  replay_cursor c;
  std::string text = "ab";
  EXPECT_EQ(c.take(text, std::string{"ab"}), "ab");
  text += "cd";
  EXPECT_EQ(c.take(text, std::string{"cd"}), "cd");
  // A retry's pieces: held back until they pass what was sent, then only the rest.
  EXPECT_EQ(c.take("abc", std::string{"abc"}), "");
  EXPECT_EQ(c.take("abcdef", std::string{"def"}), "ef");
  EXPECT_EQ(c.sent(), 6u);
}

}  // namespace
}  // namespace parley
