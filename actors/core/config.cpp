#include "actors/core/config.hpp"

#include <cctype>
#include <cstdint>
#include <cstdlib>

namespace parley {

bool parse_duration(const std::string& text, std::chrono::milliseconds& out) {
  size_t i = 0;
  uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    value = value * 10 + static_cast<uint64_t>(text[i] - '0');
    if (value > (uint64_t{1} << 40)) return false;
    ++i;
  }
  if (i == 0) return false;
  auto unit = text.substr(i);
  uint64_t ms_per_unit = 0;
  if (unit.empty() || unit == "s")
    ms_per_unit = 1000;
  else if (unit == "ms")
    ms_per_unit = 1;
  else if (unit == "m")
    ms_per_unit = 60'000;
  else if (unit == "h")
    ms_per_unit = 3'600'000;
  else if (unit == "d")
    ms_per_unit = 86'400'000;
  else if (unit == "w")
    ms_per_unit = 604'800'000;
  else
    return false;
  out = std::chrono::milliseconds(static_cast<int64_t>(value * ms_per_unit));
  return true;
}

std::string default_home() {
  if (const char* h = std::getenv("PARLEY_HOME"); h && *h) return h;
  if (const char* h = std::getenv("HOME"); h && *h) return std::string{h} + "/.parley";
  return "/tmp/.parley";
}

}  // namespace parley
