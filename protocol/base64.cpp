#include "protocol/base64.hpp"

#include <array>
#include <cstdint>

namespace parley::protocol {
namespace base64_detail {

constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> decoding_table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
  return t;
}

constexpr auto table = decoding_table();

}  // namespace base64_detail

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto at = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(bytes[k])); };
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t n = at(i) << 16 | at(i + 1) << 8 | at(i + 2);
    out += base64_detail::alphabet[n >> 18 & 63];
    out += base64_detail::alphabet[n >> 12 & 63];
    out += base64_detail::alphabet[n >> 6 & 63];
    out += base64_detail::alphabet[n & 63];
  }
  if (auto rest = bytes.size() - i; rest > 0) {
    uint32_t n = at(i) << 16 | (rest == 2 ? at(i + 1) << 8 : 0);
    out += base64_detail::alphabet[n >> 18 & 63];
    out += base64_detail::alphabet[n >> 12 & 63];
    out += rest == 2 ? base64_detail::alphabet[n >> 6 & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text, std::string& why) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  size_t padding = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<uint8_t>(text[i]);
    if (c == '=') {
      ++padding;
      continue;
    }
    int8_t v = base64_detail::table[c];
    if (v < 0 || padding > 0) {
      why = "Invalid symbol " + std::to_string(c) + ", offset " + std::to_string(i) + ".";
      return std::nullopt;
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>(acc >> bits & 0xff);
    }
  }
  if (text.size() % 4 != 0 || padding > 2) {
    why = "Invalid input length " + std::to_string(text.size()) + ".";
    return std::nullopt;
  }
  return out;
}

}  // namespace parley::protocol
