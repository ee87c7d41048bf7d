#include "actors/model/http/request.hpp"

#include <algorithm>
#include <cctype>

namespace parley::http {

namespace {

bool unreserved(unsigned char c) {
  return std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~';
}

void append_encoded(std::string& out, std::string_view text) {
  static constexpr char hex[] = "0123456789ABCDEF";
  for (unsigned char c : text) {
    if (unreserved(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 0xF];
    }
  }
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto x = static_cast<unsigned char>(a[i]);
    auto y = static_cast<unsigned char>(b[i]);
    if (std::tolower(x) != std::tolower(y)) return false;
  }
  return true;
}

void replace_all(std::string& text, std::string_view secret) {
  static constexpr std::string_view mark = "[redacted]";
  if (secret.empty()) return;
  for (auto at = text.find(secret); at != std::string::npos;
       at = text.find(secret, at + mark.size()))
    text.replace(at, secret.size(), mark);
}

// The value itself and its long words: a message could quote the key alone.
// Shorter ones are no secret, and replacing every "1" would garble the text.
std::vector<std::string_view> secrets_of(std::string_view value) {
  constexpr size_t min_value = 4;
  constexpr size_t min_word = 8;
  std::vector<std::string_view> out;
  if (value.size() >= min_value) out.push_back(value);
  size_t i = 0;
  while (i < value.size()) {
    while (i < value.size() && std::isspace(static_cast<unsigned char>(value[i])) != 0) ++i;
    size_t start = i;
    while (i < value.size() && std::isspace(static_cast<unsigned char>(value[i])) == 0) ++i;
    if (i - start >= min_word && i - start < value.size()) out.push_back(value.substr(start, i - start));
  }
  return out;
}

}  // namespace

std::string with_query(std::string url, const header_list& params) {
  if (params.empty()) return url;
  std::string fragment;
  if (auto hash = url.find('#'); hash != std::string::npos) {
    fragment = url.substr(hash);
    url.erase(hash);
  }
  char separator = url.find('?') == std::string::npos ? '?' : '&';
  if (!url.empty() && (url.back() == '?' || url.back() == '&')) separator = '\0';
  for (const auto& [name, value] : params) {
    if (separator != '\0') url += separator;
    separator = '&';
    append_encoded(url, name);
    url += '=';
    append_encoded(url, value);
  }
  return url + fragment;
}

const std::string* find_header(const header_list& headers, std::string_view name) {
  for (const auto& [key, value] : headers)
    if (iequals(key, name)) return &value;
  return nullptr;
}

std::string redact(std::string message, const header_list& headers) {
  // The longest secrets first, so that a word is not replaced inside a value
  // that would then no longer match as a whole.
  std::vector<std::string_view> secrets;
  for (const auto& header : headers)
    for (auto s : secrets_of(header.second)) secrets.push_back(s);
  std::sort(secrets.begin(), secrets.end(),
            [](std::string_view a, std::string_view b) { return a.size() > b.size(); });
  for (auto s : secrets) replace_all(message, s);
  return message;
}

}  // namespace parley::http
