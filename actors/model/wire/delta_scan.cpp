#include "actors/model/wire/delta_scan.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace parley::wire {

namespace {

// Deeper than any delta event nests (logprobs arrays hold small objects):
// past it, nlohmann decides.
constexpr int deepest_nesting = 16;
// Digits of an integer the scanner reads itself: any 18 fit int64, as they
// fit nlohmann's integer types. Longer ones (nlohmann may make them
// doubles) and every fraction or exponent go to nlohmann.
constexpr int longest_integer = 18;

/// One pass over a delta event's data. Every member returns false for
/// anything not fully recognised; the caller then leaves the event to
/// nlohmann, whose verdict (a value, an error) is the reference.
class delta_scanner {
 public:
  explicit delta_scanner(std::string_view text)
      : p_(text.data()), end_(text.data() + text.size()) {}

  /// The top-level object: its fields the mapping reads are kept, the rest
  /// only checked. A repeated key keeps its last value, as nlohmann does.
  bool object_with_fields() {
    skip_ws();
    if (!eat('{')) return false;
    skip_ws();
    if (eat('}')) return at_end();
    for (;;) {
      std::string_view key;
      if (!raw_key(key)) return false;
      skip_ws();
      if (!eat(':')) return false;
      skip_ws();
      if (!field(key)) return false;
      skip_ws();
      if (eat(',')) {
        skip_ws();
        continue;
      }
      if (eat('}')) return at_end();
      return false;
    }
  }

  /// The last "type" when it is a string: a view of the data when written
  /// without escapes (no copy: most events' type is longer than a short
  /// string holds), else decoded into type_decoded_.
  std::optional<std::string_view> type;
  std::optional<std::string> item_id, delta;
  std::optional<std::int64_t> summary_index, content_index;

 private:
  bool type_field() {
    if (p_ < end_ && *p_ == '"') {
      const char* start = p_ + 1;
      bool escaped = false;
      if (!string(nullptr, &escaped)) return false;
      if (!escaped) {
        type = std::string_view(start, static_cast<std::size_t>(p_ - 1 - start));
        return true;
      }
      p_ = start - 1;  // read it again, decoding it
      type_decoded_.clear();
      if (!string(&type_decoded_)) return false;
      type = std::string_view(type_decoded_);
      return true;
    }
    type.reset();
    return value(0);
  }

  bool field(std::string_view key) {
    if (key == "type") return type_field();
    if (key == "item_id") return string_or_other(item_id);
    if (key == "delta") return string_or_other(delta);
    if (key == "summary_index") return integer_or_other(summary_index);
    if (key == "content_index") return integer_or_other(content_index);
    return value(0);
  }

  /// A string value is kept; any other value clears what an earlier
  /// duplicate key gave (nlohmann keeps the last).
  bool string_or_other(std::optional<std::string>& out) {
    if (p_ < end_ && *p_ == '"') {
      std::string s;
      if (!string(&s)) return false;
      out = std::move(s);
      return true;
    }
    out.reset();
    return value(0);
  }

  bool integer_or_other(std::optional<std::int64_t>& out) {
    if (p_ < end_ && (*p_ == '-' || (*p_ >= '0' && *p_ <= '9'))) {
      std::int64_t n = 0;
      if (!integer(&n)) return false;
      out = n;
      return true;
    }
    out.reset();
    return value(0);
  }

  bool value(int depth) {
    if (p_ == end_) return false;
    switch (*p_) {
      case '"':
        return string(nullptr);
      case '{':
        return nested_object(depth + 1);
      case '[':
        return nested_array(depth + 1);
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return integer(nullptr);
    }
  }

  bool nested_object(int depth) {
    if (depth > deepest_nesting) return false;
    ++p_;  // '{'
    skip_ws();
    if (eat('}')) return true;
    for (;;) {
      if (p_ == end_ || *p_ != '"' || !string(nullptr)) return false;
      skip_ws();
      if (!eat(':')) return false;
      skip_ws();
      if (!value(depth)) return false;
      skip_ws();
      if (eat(',')) {
        skip_ws();
        continue;
      }
      return eat('}');
    }
  }

  bool nested_array(int depth) {
    if (depth > deepest_nesting) return false;
    ++p_;  // '['
    skip_ws();
    if (eat(']')) return true;
    for (;;) {
      if (!value(depth)) return false;
      skip_ws();
      if (eat(',')) {
        skip_ws();
        continue;
      }
      return eat(']');
    }
  }

  /// A key without escapes (any key with one is left to nlohmann).
  bool raw_key(std::string_view& key) {
    if (p_ == end_ || *p_ != '"') return false;
    const char* start = p_ + 1;
    bool escaped = false;
    if (!string(nullptr, &escaped) || escaped) return false;
    key = std::string_view(start, static_cast<std::size_t>(p_ - 1 - start));
    return true;
  }

  /// A string at p_ (its opening quote), decoded into `out` when given. The
  /// simple escapes are decoded; \u is left to nlohmann (surrogates). Bytes
  /// past ASCII must be well-formed UTF-8 (RFC 3629), as nlohmann requires.
  bool string(std::string* out, bool* escaped = nullptr) {
    ++p_;  // '"'
    const char* run = p_;  // bytes not yet copied to out
    while (p_ < end_) {
      auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        if (out) out->append(run, p_);
        ++p_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (out) out->append(run, p_);
        if (escaped) *escaped = true;
        if (++p_ == end_) return false;
        char decoded;
        switch (*p_) {
          case '"': decoded = '"'; break;
          case '\\': decoded = '\\'; break;
          case '/': decoded = '/'; break;
          case 'b': decoded = '\b'; break;
          case 'f': decoded = '\f'; break;
          case 'n': decoded = '\n'; break;
          case 'r': decoded = '\r'; break;
          case 't': decoded = '\t'; break;
          default: return false;  // \u, or no escape at all
        }
        if (out) out->push_back(decoded);
        run = ++p_;
        continue;
      }
      if (c < 0x80) {
        ++p_;
        continue;
      }
      if (!utf8_sequence()) return false;
    }
    return false;  // no closing quote
  }

  /// One multi-byte UTF-8 sequence at p_ (Unicode's table of well-formed
  /// sequences: no overlong forms, no surrogates, nothing past U+10FFFF).
  bool utf8_sequence() {
    auto lead = static_cast<unsigned char>(*p_);
    unsigned char lo = 0x80, hi = 0xBF;
    int follow = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
      follow = 1;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      follow = 2;
      if (lead == 0xE0) lo = 0xA0;
      if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      follow = 3;
      if (lead == 0xF0) lo = 0x90;
      if (lead == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (end_ - p_ <= follow) return false;
    for (int i = 1; i <= follow; ++i) {
      auto c = static_cast<unsigned char>(p_[i]);
      // Only the first continuation byte has the narrowed range.
      if (i == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) return false;
    }
    p_ += follow + 1;
    return true;
  }

  /// -?(0|[1-9][0-9]*) with at most longest_integer digits, nothing after it
  /// that would make it a fraction or an exponent.
  bool integer(std::int64_t* out) {
    bool negative = eat('-');
    const char* digits = p_;
    std::int64_t n = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      // Counted before it is added: a digit past the 18th would overflow n.
      if (p_ - digits == longest_integer) return false;
      n = n * 10 + (*p_ - '0');
      ++p_;
    }
    auto count = p_ - digits;
    if (count == 0 || (count > 1 && *digits == '0')) return false;
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    if (out) *out = negative ? -n : n;
    return true;
  }

  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size()) return false;
    if (std::string_view(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  void skip_ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  bool eat(char c) {
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }

  bool at_end() {
    skip_ws();
    return p_ == end_;
  }

  const char* p_;
  const char* end_;
  std::string type_decoded_;
};

enum class delta_kind { none, text, summary, raw };

delta_kind kind_of(std::string_view type) {
  if (type == "response.output_text.delta") return delta_kind::text;
  if (type == "response.reasoning_summary_text.delta") return delta_kind::summary;
  if (type == "response.reasoning_text.delta") return delta_kind::raw;
  return delta_kind::none;
}

/// The event's type as the mapping takes it: the data's "type" when that
/// is a string, else the SSE event's name.
std::string_view type_of(const delta_scanner& s, const sse_event& event) {
  return s.type ? *s.type : std::string_view(event.event);
}

}  // namespace

std::optional<stream_event> scan_delta_event(const sse_event& event) {
  // Cheap refusals first: a named event of another type whose data cannot
  // name one of ours costs no scan.
  if (event.data.find(".delta\"") == std::string::npos
      && kind_of(event.event) == delta_kind::none) {
    return std::nullopt;
  }
  delta_scanner s(event.data);
  if (!s.object_with_fields()) return std::nullopt;
  auto kind = kind_of(type_of(s, event));
  // A delta without its text is an error nlohmann's path words.
  if (kind == delta_kind::none || !s.delta) return std::nullopt;
  std::string item_id = s.item_id ? std::move(*s.item_id) : std::string();
  if (kind == delta_kind::text) return text_delta{std::move(item_id), std::move(*s.delta)};
  bool summary = kind == delta_kind::summary;
  auto index = summary ? s.summary_index : s.content_index;
  return reasoning_delta{std::move(item_id), std::move(*s.delta), summary, index.value_or(0)};
}

std::optional<std::string> scanned_type(const sse_event& event) {
  delta_scanner s(event.data);
  if (!s.object_with_fields()) return std::nullopt;
  return std::string(type_of(s, event));
}

}  // namespace parley::wire
