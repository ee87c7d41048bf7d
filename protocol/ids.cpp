#include "protocol/ids.hpp"

#include <chrono>
#include <random>

namespace parley::protocol {

namespace {

std::mt19937_64& rng() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen;
}

constexpr char hex_digits[] = "0123456789abcdef";

void append_hex(std::string& out, uint64_t value, int digits) {
  for (int i = digits - 1; i >= 0; --i) out += hex_digits[(value >> (4 * i)) & 0xF];
}

}  // namespace

int64_t unix_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int64_t unix_seconds() { return unix_ms() / 1000; }

std::string new_uuid_v7() {
  // RFC 9562: 48-bit unix ms | version 7 | 12 random bits | variant 10 | 62 random bits
  auto ms = static_cast<uint64_t>(unix_ms()) & 0xFFFFFFFFFFFFull;
  uint64_t r1 = rng()();
  uint64_t r2 = rng()();
  uint64_t rand_a = r1 & 0xFFF;
  uint64_t rand_b = (r2 & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;
  std::string s;
  s.reserve(36);
  append_hex(s, ms >> 16, 8);
  s += '-';
  append_hex(s, ms & 0xFFFF, 4);
  s += '-';
  append_hex(s, 0x7000 | rand_a, 4);
  s += '-';
  append_hex(s, rand_b >> 48, 4);
  s += '-';
  append_hex(s, rand_b & 0xFFFFFFFFFFFFull, 12);
  return s;
}

bool is_uuid(const std::string& s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

std::string new_call_id() {
  std::string s = "call_";
  append_hex(s, rng()(), 16);
  append_hex(s, rng()() & 0xFFFFFFFFull, 8);
  return s;
}

}  // namespace parley::protocol
