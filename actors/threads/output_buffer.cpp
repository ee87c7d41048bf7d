#include "actors/threads/output_buffer.hpp"

namespace parley {

size_t utf8_complete_prefix(const std::string& s) {
  // Look back at most 3 bytes for a lead byte whose sequence is cut off.
  size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    auto c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking
    size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    return need > back ? n - back : n;
  }
  return n;
}

std::string output_buffer::accept(std::string text) {
  if (text.empty()) return text;
  size_t room = kept_.size() < cap_ ? cap_ - kept_.size() : 0;
  if (text.size() > room) {
    // Cut at a character boundary so kept output stays valid UTF-8.
    size_t cut = utf8_complete_prefix(text.substr(0, room));
    dropped_ += text.size() - cut;
    text.resize(cut);
  }
  kept_ += text;
  return text;
}

std::string output_buffer::add(const std::string& bytes) {
  pending_ += bytes;
  size_t complete = utf8_complete_prefix(pending_);
  std::string ready = pending_.substr(0, complete);
  pending_.erase(0, complete);
  return accept(std::move(ready));
}

std::string output_buffer::finish() {
  std::string rest;
  rest.swap(pending_);
  return accept(std::move(rest));
}

std::string output_buffer::aggregated() const {
  if (dropped_ == 0) return kept_;
  return kept_ + "\n[parley: output truncated, " + std::to_string(dropped_)
         + " more bytes dropped]\n";
}

}  // namespace parley
