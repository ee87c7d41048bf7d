#pragma once
// What of a streamed text a client has seen, so that a retried model
// attempt, which streams its answer again from the start, shows the client
// only what it has not seen: each delta once. The retry's text is held back
// until it passes what the broken attempt had sent; the item's completed
// text is the retry's whole text either way.

#include <cstddef>
#include <string>

namespace parley {

class replay_cursor {
 public:
  /// `text` is the attempt's whole text so far; returns the part of it past
  /// what the client has (empty while a retry repeats what was sent), and
  /// counts it as sent. Never starts inside a UTF-8 sequence: if a retry's
  /// text differs from what was sent, the client's text is off until the
  /// item completes, but it stays valid UTF-8.
  std::string take(const std::string& text) {
    if (text.size() <= sent_) return {};
    auto from = sent_;
    while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
    sent_ = text.size();
    return text.substr(from);
  }
  /// The same, where `piece` is what was just appended to `text`: when the
  /// client has everything before it (every delta but a retry's), the piece
  /// itself is passed on, moved rather than copied.
  std::string take(const std::string& text, std::string&& piece) {
    if (!piece.empty() && text.size() == sent_ + piece.size()) {
      sent_ = text.size();
      return std::move(piece);
    }
    return take(text);
  }
  std::size_t sent() const { return sent_; }

 private:
  std::size_t sent_ = 0;
};

}  // namespace parley
