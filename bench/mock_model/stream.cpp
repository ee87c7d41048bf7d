#include "bench/mock_model/stream.hpp"

#include <algorithm>

namespace parley::mock_model {

namespace {

bool is_continuation_byte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// The largest cut at or before `at` that does not split a UTF-8 sequence (past `from`).
std::size_t cut_before(std::string_view text, std::size_t from, std::size_t at) {
  if (at >= text.size()) return text.size();
  std::size_t cut = at;
  while (cut > from + 1 && is_continuation_byte(text[cut])) --cut;
  // A single sequence longer than the piece: take it whole.
  while (cut < text.size() && is_continuation_byte(text[cut])) ++cut;
  return cut;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }

}  // namespace

std::vector<std::string> word_pieces(std::string_view text, std::size_t max_bytes) {
  std::vector<std::string> pieces;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = start;
    while (end < text.size() && !is_space(text[end])) ++end;
    while (end < text.size() && is_space(text[end])) ++end;
    end = cut_before(text, start, std::min(end, start + max_bytes));
    pieces.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return pieces;
}

std::vector<std::string> even_pieces(std::string_view text, std::size_t parts) {
  std::vector<std::string> pieces;
  if (parts == 0) parts = 1;
  std::size_t size = (text.size() + parts - 1) / parts;
  if (size == 0) size = 1;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = cut_before(text, start, start + size);
    pieces.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return pieces;
}

}  // namespace parley::mock_model
