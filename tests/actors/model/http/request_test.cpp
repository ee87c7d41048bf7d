// The pure parts of the HTTP client: query strings, header lookup, and the
// redaction that keeps an API key out of every error message.

#include "actors/model/http/request.hpp"

#include <gtest/gtest.h>

namespace parley::http {
namespace {

TEST(http_request, with_query_encodes_names_and_values) {
  EXPECT_EQ(with_query("https://h/v1/models", {{"api-version", "2024-10-21"}, {"q", "a b&c=d/é"}}),
            "https://h/v1/models?api-version=2024-10-21&q=a%20b%26c%3Dd%2F%C3%A9");
  EXPECT_EQ(with_query("https://h/p?x=1", {{"y", "~._-"}}), "https://h/p?x=1&y=~._-");
  EXPECT_EQ(with_query("https://h/p?", {{"y", "2"}}), "https://h/p?y=2");
  EXPECT_EQ(with_query("https://h/p#top", {{"y", "2"}}), "https://h/p?y=2#top");
  EXPECT_EQ(with_query("https://h/p", {}), "https://h/p");
}

TEST(http_request, find_header_ignores_case) {
  header_list headers = {{"Content-Type", "text/event-stream"}, {"retry-after", "7"},
                         {"Retry-After", "8"}};
  ASSERT_NE(find_header(headers, "RETRY-AFTER"), nullptr);
  EXPECT_EQ(*find_header(headers, "Retry-After"), "7");
  EXPECT_EQ(*find_header(headers, "content-type"), "text/event-stream");
  EXPECT_EQ(find_header(headers, "x-request-id"), nullptr);
}

TEST(http_request, redact_removes_a_value_and_its_key_word) {
  header_list headers = {{"Authorization", "Bearer sk-abcdef0123456789"},
                         {"Content-Type", "json"}, {"X-Flag", "1"}};
  EXPECT_EQ(redact("sent Bearer sk-abcdef0123456789 twice: Bearer sk-abcdef0123456789", headers),
            "sent [redacted] twice: [redacted]");
  EXPECT_EQ(redact("host sk-abcdef0123456789.example not found", headers),
            "host [redacted].example not found");
  // Short values are no secret; replacing every "1" would garble the text.
  EXPECT_EQ(redact("Bearer failed after 1 try (json)", headers), "Bearer failed after 1 try ([redacted])");
  EXPECT_EQ(redact("nothing to hide", {}), "nothing to hide");
}

}  // namespace
}  // namespace parley::http
