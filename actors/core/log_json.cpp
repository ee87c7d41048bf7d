#include "actors/core/log_json.hpp"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

namespace parley::log {

namespace {

bool is_key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

/// Integers become JSON numbers (a collector can compare them); anything
/// else stays a string.
nlohmann::ordered_json value_of(const std::string& text) {
  if (text.empty() || text.size() > 18) return text;
  size_t start = text[0] == '-' ? 1 : 0;
  if (start == text.size()) return text;
  for (size_t i = start; i < text.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return text;
  if (text.size() - start > 1 && text[start] == '0') return text;  // an id like 007
  return std::stoll(text);
}

std::string utc_time(std::chrono::system_clock::time_point t) {
  auto seconds = std::chrono::system_clock::to_time_t(t);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[40];
  auto n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(buf + n, sizeof(buf) - n, ".%03dZ", static_cast<int>(millis));
  return buf;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> parse_fields(std::string_view m) {
  std::vector<std::pair<std::string, std::string>> fields;
  size_t i = 0;
  while (i < m.size()) {
    while (i < m.size() && m[i] == ' ') ++i;
    size_t key_start = i;
    while (i < m.size() && is_key_char(m[i])) ++i;
    if (i < m.size() && m[i] == '=' && i > key_start) {
      std::string key(m.substr(key_start, i - key_start));
      ++i;
      std::string value;
      if (i < m.size() && m[i] == '"') {
        ++i;
        while (i < m.size() && m[i] != '"') {
          if (m[i] == '\\' && i + 1 < m.size()) ++i;
          value += m[i++];
        }
        if (i < m.size()) ++i;  // the closing quote
      } else {
        while (i < m.size() && m[i] != ' ') value += m[i++];
      }
      fields.emplace_back(std::move(key), std::move(value));
    } else {
      // Not a pair (the component, or words of prose): skip the word.
      while (i < m.size() && m[i] != ' ') {
        if (m[i] == '"') {  // a quoted run belongs to the word
          ++i;
          while (i < m.size() && m[i] != '"') ++i;
        }
        if (i < m.size()) ++i;
      }
    }
  }
  return fields;
}

void json_formatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  std::string_view text(msg.payload.data(), msg.payload.size());
  nlohmann::ordered_json line;
  line["time"] = utc_time(msg.time);
  auto level = spdlog::level::to_string_view(msg.level);
  line["level"] = std::string(level.data(), level.size());
  auto space = text.find(' ');
  auto first = text.substr(0, space);
  if (!first.empty() && first.find('=') == std::string_view::npos)
    line["component"] = std::string(first);
  line["message"] = std::string(text);
  for (auto& [key, value] : parse_fields(text)) {
    // A pair never overwrites the line's own fields (a `message=` pair
    // becomes `message_field`).
    auto name = line.contains(key) ? key + "_field" : key;
    line[name] = value_of(value);
  }
  auto out = line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  out += '\n';
  dest.append(out.data(), out.data() + out.size());
}

std::unique_ptr<spdlog::formatter> json_formatter::clone() const {
  return std::make_unique<json_formatter>();
}

}  // namespace parley::log
