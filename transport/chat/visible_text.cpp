#include "transport/chat/visible_text.hpp"

#include <cstdio>
#include <utility>

namespace parley {

namespace {

/// The code point at the start of `s` (not empty) and its length in bytes,
/// or a length of 0 when `s` does not start with valid UTF-8: a stray or
/// missing continuation byte, an overlong form, a surrogate, or a value past
/// U+10FFFF.
std::pair<char32_t, size_t> decode_utf8(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  auto lead = byte(0);
  if (lead < 0x80) return {lead, 1};
  // The lead byte tells the length, and the smallest value of that length
  // (anything below it is an overlong form).
  size_t length = 0;
  char32_t smallest = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    smallest = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    smallest = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    smallest = 0x10000;
  } else {
    return {0, 0};
  }
  char32_t c = lead & (0x7Fu >> length);
  if (s.size() < length) return {0, 0};
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return {0, 0};
    c = (c << 6) | (byte(i) & 0x3Fu);
  }
  if (c < smallest || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return {0, 0};
  return {c, length};
}

/// Code points past ASCII that act on the terminal, reorder the text around
/// them, or show nothing at all. Emoji variation selectors are not among
/// them: they only pick a glyph's presentation.
bool is_disguising(char32_t c) {
  struct range {
    char32_t first;
    char32_t last;
  };
  static constexpr range ranges[] = {
      {0x0080, 0x009F},    // C1 controls (U+009B is CSI to some terminals)
      {0x00AD, 0x00AD},    // soft hyphen
      {0x034F, 0x034F},    // combining grapheme joiner
      {0x061C, 0x061C},    // Arabic letter mark
      {0x115F, 0x1160},    // Hangul fillers (blank)
      {0x180E, 0x180E},    // Mongolian vowel separator
      {0x200B, 0x200F},    // zero width space, non-joiner, joiner; LRM, RLM
      {0x2028, 0x202E},    // line and paragraph separators; LRE, RLE, PDF, LRO, RLO
      {0x2060, 0x206F},    // word joiner, invisible operators; LRI, RLI, FSI, PDI; deprecated
      {0x3164, 0x3164},    // Hangul filler
      {0xFEFF, 0xFEFF},    // zero width no-break space (byte order mark)
      {0xFFA0, 0xFFA0},    // halfwidth Hangul filler
      {0xFFF9, 0xFFFB},    // interlinear annotation
      {0xE0000, 0xE007F},  // tags: invisible copies of ASCII
  };
  for (const auto& r : ranges)
    if (c >= r.first && c <= r.last) return true;
  return false;
}

/// The escape of a C0 control or DEL.
std::string control_escape(char32_t c) {
  switch (c) {
    case 0x07: return "\\a";
    case 0x08: return "\\b";
    case 0x09: return "\\t";
    case 0x0A: return "\\n";
    case 0x0B: return "\\v";
    case 0x0C: return "\\f";
    case 0x0D: return "\\r";
    case 0x1B: return "\\e";
    default: break;
  }
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
  return buf;
}

std::string byte_escape(char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(b)));
  return buf;
}

std::string code_point_escape(char32_t c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "<U+%04X>", static_cast<unsigned>(c));
  return buf;
}

void append_escape(std::string& out, const std::string& escape, escape_style style) {
  if (style == escape_style::highlighted) out += "\x1b[7m";  // reverse video
  out += escape;
  if (style == escape_style::highlighted) out += "\x1b[27m";
}

}  // namespace

std::string visible_text(std::string_view text, text_layout layout, escape_style style) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    auto [c, length] = decode_utf8(text.substr(i));
    if (length == 0) {
      append_escape(out, byte_escape(text[i]), style);
      ++i;
      continue;
    }
    bool kept_layout = layout == text_layout::lines && (c == '\n' || c == '\t');
    if ((c < 0x20 || c == 0x7F) && !kept_layout)
      append_escape(out, control_escape(c), style);
    else if (is_disguising(c))
      append_escape(out, code_point_escape(c), style);
    else
      out.append(text, i, length);
    i += length;
  }
  return out;
}

}  // namespace parley
