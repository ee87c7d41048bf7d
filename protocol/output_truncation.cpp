#include "protocol/output_truncation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace parley::protocol {

namespace {

constexpr size_t bytes_per_token = 4;

size_t tokens_of_bytes(size_t bytes) { return bytes / bytes_per_token + (bytes % bytes_per_token != 0); }

size_t bytes_of_tokens(size_t tokens) {
  return tokens > SIZE_MAX / bytes_per_token ? SIZE_MAX : tokens * bytes_per_token;
}

/// Whether byte `b` starts a character (is not a UTF-8 continuation byte):
/// cutting only there never splits a sequence, valid or not.
bool starts_char(unsigned char b) { return (b & 0xC0) != 0x80; }

size_t count_chars(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += starts_char(static_cast<unsigned char>(c));
  return n;
}

std::string marker(truncation_policy::unit in, size_t removed) {
  return "\u2026" + std::to_string(removed)
         + (in == truncation_policy::unit::tokens ? " tokens truncated" : " chars truncated")
         + "\u2026";
}

/// The head that fits `budget` bytes: whole characters only.
size_t head_end(std::string_view s, size_t budget) {
  if (budget >= s.size()) return s.size();
  size_t end = budget;
  while (end > 0 && !starts_char(static_cast<unsigned char>(s[end]))) --end;
  return end;
}

/// Where the tail of at most `budget` bytes starts: the first character
/// starting at or after size - budget.
size_t tail_start(std::string_view s, size_t budget) {
  size_t start = budget >= s.size() ? 0 : s.size() - budget;
  while (start < s.size() && !starts_char(static_cast<unsigned char>(s[start]))) ++start;
  return start;
}

std::string cut_middle(std::string_view s, size_t max_bytes, truncation_policy::unit in) {
  if (s.empty()) return {};
  if (max_bytes == 0)
    return marker(in, in == truncation_policy::unit::tokens ? tokens_of_bytes(s.size()) : count_chars(s));
  if (s.size() <= max_bytes) return std::string(s);
  size_t left = max_bytes / 2;
  size_t head = head_end(s, left);
  size_t tail = std::max(tail_start(s, max_bytes - left), head);
  size_t removed = in == truncation_policy::unit::tokens ? tokens_of_bytes(s.size() - max_bytes)
                                                         : count_chars(s.substr(head, tail - head));
  std::string out;
  out.reserve(head + 32 + (s.size() - tail));
  out.append(s.substr(0, head));
  out += marker(in, removed);
  out.append(s.substr(tail));
  return out;
}

}  // namespace

size_t truncation_policy::byte_budget() const {
  return in == unit::bytes ? limit : bytes_of_tokens(limit);
}

size_t truncation_policy::token_budget() const {
  return in == unit::tokens ? limit : tokens_of_bytes(limit);
}

truncation_policy truncation_policy::scaled(double factor) const {
  return {in, static_cast<size_t>(std::ceil(static_cast<double>(limit) * factor))};
}

size_t approx_token_count(std::string_view text) { return tokens_of_bytes(text.size()); }

truncation_policy tool_output_policy(std::string_view model, size_t token_limit) {
  // The slugs of Codex 0.169's bundled models.json: each has a token policy
  // of 10000. A model it does not know gets its fallback's 2500 (as seen
  // from the real Codex: a 12000-byte budget after the 20%).
  static constexpr std::array<std::string_view, 12> known = {
      "gpt-6-astra", "gpt-6.1-sol", "gpt-6.1-terra", "gpt-6-sol", "gpt-6-luna", "gpt-5.6-sol",
      "gpt-5.6-terra", "gpt-5.6-luna", "gpt-daybreak-blue-latest", "gpt-daybreak-red-latest",
      "gpt-5.5", "codex-auto-review"};
  if (token_limit > 0) return {truncation_policy::unit::tokens, token_limit};
  for (auto slug : known)
    if (slug == model) return {truncation_policy::unit::tokens, 10000};
  return {truncation_policy::unit::tokens, 2500};
}

std::string truncate_text(std::string_view text, const truncation_policy& policy) {
  if (policy.in == truncation_policy::unit::tokens) {
    // Codex keeps a text that fits a positive budget; a zero budget leaves
    // the marker alone.
    if (text.empty()) return {};
    if (policy.limit > 0 && text.size() <= policy.byte_budget()) return std::string(text);
  }
  return cut_middle(text, policy.byte_budget(), policy.in);
}

json truncate_output_parts(const json& parts, const truncation_policy& policy) {
  if (!parts.is_array()) return parts;
  bool tokens = policy.in == truncation_policy::unit::tokens;
  size_t remaining = tokens ? policy.token_budget() : policy.byte_budget();
  size_t omitted = 0;
  json out = json::array();
  for (const auto& part : parts) {
    // A part of another shape (a client tool's answer is the client's) is
    // kept as it is: never a reason to throw.
    bool text = part.is_object() && part.contains("type") && part["type"] == "input_text"
                && part.contains("text") && part["text"].is_string();
    if (!text) {
      out.push_back(part);
      continue;
    }
    const auto& s = part["text"].get_ref<const std::string&>();
    if (s.empty()) continue;
    if (remaining == 0) {
      ++omitted;
      continue;
    }
    size_t cost = tokens ? approx_token_count(s) : s.size();
    if (cost <= remaining) {
      out.push_back(part);
      remaining -= cost;
      continue;
    }
    auto snippet = truncate_text(s, {policy.in, remaining});
    if (snippet.empty())
      ++omitted;
    else
      out.push_back({{"type", "input_text"}, {"text", std::move(snippet)}});
    remaining = 0;
  }
  if (omitted > 0)
    out.push_back({{"type", "input_text"}, {"text", "[omitted " + std::to_string(omitted) + " text items ...]"}});
  return out;
}

}  // namespace parley::protocol
