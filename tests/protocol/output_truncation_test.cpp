// What the model is sent of a long tool output (protocol/output_truncation):
// Codex 0.169's cut, checked at its boundaries and on multi-byte text.
#include "protocol/output_truncation.hpp"

#include <gtest/gtest.h>

namespace parley::protocol {
namespace truncation_tests {

using unit = truncation_policy::unit;
const truncation_policy ten_tokens{unit::tokens, 10};  // 40 bytes
const truncation_policy forty_bytes{unit::bytes, 40};

json text_part(const std::string& s) { return {{"type", "input_text"}, {"text", s}}; }

TEST(OutputTruncation, TheModelsBudgetIsCodexs) {
  EXPECT_EQ(tool_output_policy("mock-model").limit, 2500u);
  EXPECT_EQ(tool_output_policy("gpt-5.5").limit, 10000u);
  EXPECT_EQ(tool_output_policy("gpt-5.5", 1000).limit, 1000u);
  // 20% more for serialisation, rounded up: the 12000 bytes Codex keeps.
  auto budget = tool_output_policy("mock-model").scaled(1.2);
  EXPECT_EQ(budget.limit, 3000u);
  EXPECT_EQ(budget.byte_budget(), 12000u);
  EXPECT_EQ((truncation_policy{unit::bytes, 7}).scaled(1.2).limit, 9u);
  EXPECT_EQ((truncation_policy{unit::bytes, 10}).token_budget(), 3u);
  EXPECT_EQ(approx_token_count(""), 0u);
  EXPECT_EQ(approx_token_count("abcde"), 2u);
}

TEST(OutputTruncation, ATextThatFitsStaysWhole) {
  std::string forty(40, 'a');
  EXPECT_EQ(truncate_text(forty, ten_tokens), forty);
  EXPECT_EQ(truncate_text(forty, forty_bytes), forty);
  EXPECT_EQ(truncate_text("", ten_tokens), "");
}

TEST(OutputTruncation, OneByteOverCutsTheMiddleAndSaysHowMuch) {
  std::string s = std::string(20, 'h') + "M" + std::string(20, 't');  // 41 bytes
  EXPECT_EQ(truncate_text(s, ten_tokens),
            std::string(20, 'h') + "\u20261 tokens truncated\u2026" + std::string(20, 't'));
  EXPECT_EQ(truncate_text(s, forty_bytes),
            std::string(20, 'h') + "\u20261 chars truncated\u2026" + std::string(20, 't'));
}

TEST(OutputTruncation, HeadAndTailSplitAnOddBudget) {
  std::string s = "0123456789";
  // 5 bytes: 2 of head, 3 of tail; 5 bytes removed = 2 tokens.
  EXPECT_EQ(truncate_text(s, {unit::bytes, 5}), "01\u20265 chars truncated\u2026789");
  EXPECT_EQ(truncate_text(s, {unit::tokens, 1}), "01\u20262 tokens truncated\u202689");
}

TEST(OutputTruncation, AZeroBudgetLeavesTheMarkerAlone) {
  EXPECT_EQ(truncate_text("abcdefghi", {unit::tokens, 0}), "\u20263 tokens truncated\u2026");
  EXPECT_EQ(truncate_text("h\u00e9llo", {unit::bytes, 0}), "\u20265 chars truncated\u2026");
}

TEST(OutputTruncation, NeverCutsInsideACharacter) {
  // "é" is two bytes, "€" three, "😀" four: every budget from 0 to the
  // whole leaves valid UTF-8 around the marker, and the chars counted are
  // the characters that went.
  std::string s;
  for (int i = 0; i < 10; ++i) s += "\u00e9\u20ac\U0001F600";
  auto starts_char = [&](size_t at) {
    return at == s.size() || (static_cast<unsigned char>(s[at]) & 0xC0) != 0x80;
  };
  for (size_t budget = 1; budget < s.size(); ++budget) {
    for (auto in : {unit::bytes, unit::tokens}) {
      truncation_policy p{in, in == unit::bytes ? budget : budget / 4};
      if (p.byte_budget() >= s.size()) continue;
      auto out = truncate_text(s, p);
      auto at = out.find("\u2026");
      ASSERT_NE(at, std::string::npos) << budget;
      auto end = out.find("\u2026", at + 3);
      ASSERT_NE(end, std::string::npos) << budget;
      auto head = out.substr(0, at), tail = out.substr(end + 3);
      EXPECT_EQ(s.compare(0, head.size(), head), 0);
      EXPECT_EQ(s.compare(s.size() - tail.size(), tail.size(), tail), 0);
      EXPECT_TRUE(starts_char(head.size())) << budget;
      EXPECT_TRUE(starts_char(s.size() - tail.size())) << budget;
      EXPECT_LE(head.size() + tail.size(), p.byte_budget());
    }
  }
  // Bytes: the count is of characters (3 a group of 9 bytes).
  EXPECT_EQ(truncate_text(s, {unit::bytes, 18}),
            "\u00e9\u20ac\U0001F600\u202624 chars truncated\u2026\u00e9\u20ac\U0001F600");
}

TEST(OutputTruncation, PartsSpendOneBudgetInOrder) {
  // 10 tokens: "0123" (1), 20 bytes (5), then 40 bytes against 4 left: cut
  // to 16; the text after it is left out and counted; an image stays; an
  // empty text is dropped.
  json image = {{"type", "input_image"}, {"image_url", "data:image/png;base64,AA"}, {"detail", "high"}};
  json parts = json::array({text_part("0123"), text_part(std::string(20, 'b')), text_part(""), image,
                            text_part(std::string(40, 'c')), text_part("late"), image});
  auto out = truncate_output_parts(parts, ten_tokens);
  ASSERT_EQ(out.size(), 6u) << out.dump();
  EXPECT_EQ(out[0], parts[0]);
  EXPECT_EQ(out[1], parts[1]);
  EXPECT_EQ(out[2], image);
  EXPECT_EQ(out[3], text_part(std::string(8, 'c') + "\u20266 tokens truncated\u2026" + std::string(8, 'c')));
  EXPECT_EQ(out[4], image);
  EXPECT_EQ(out[5], text_part("[omitted 1 text items ...]"));
  // A part of another shape is kept, whatever its fields hold.
  json odd = json::array({{{"type", 5}}, {{"type", "input_text"}, {"text", 7}}, "x", text_part("ok")});
  EXPECT_EQ(truncate_output_parts(odd, ten_tokens), odd);
  // Parts that fit come back as they were.
  json small = json::array({text_part("a"), image});
  EXPECT_EQ(truncate_output_parts(small, ten_tokens), small);
}

TEST(OutputTruncation, ByteBudgetsCountBytes) {
  json parts = json::array({text_part(std::string(30, 'a')), text_part(std::string(30, 'b'))});
  auto out = truncate_output_parts(parts, forty_bytes);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1]["text"], std::string(5, 'b') + "\u202620 chars truncated\u2026" + std::string(5, 'b'));
}

}  // namespace truncation_tests
}  // namespace parley::protocol
