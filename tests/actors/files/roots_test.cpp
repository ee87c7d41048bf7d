#include "actors/files/roots.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "protocol/base64.hpp"

namespace parley::files {
namespace roots_test {

located must_locate(const root_set& roots, const std::string& path) {
  auto r = roots.locate(path);
  if (auto* f = std::get_if<failure>(&r)) ADD_FAILURE() << path << ": " << f->message;
  auto* l = std::get_if<located>(&r);
  return l ? *l : located{};
}

failure must_refuse(const root_set& roots, const std::string& path) {
  auto r = roots.locate(path);
  auto* f = std::get_if<failure>(&r);
  EXPECT_NE(f, nullptr) << path << " was not refused";
  return f ? *f : failure{};
}

}  // namespace roots_test

TEST(files_roots, normal_paths) {
  EXPECT_EQ(normal_path("/a/b/../c/./d/"), "/a/c/d");
  EXPECT_EQ(normal_path("/.."), "/");
  EXPECT_EQ(normal_path("a/b"), std::nullopt);
  EXPECT_EQ(normal_path(""), std::nullopt);
  EXPECT_TRUE(is_within("/a/b", "/a"));
  EXPECT_TRUE(is_within("/a", "/a"));
  EXPECT_FALSE(is_within("/ab", "/a"));
  EXPECT_TRUE(is_within("/x", "/"));
}

TEST(files_roots, locate_picks_the_deepest_root) {
  root_set roots("/nonexistent-home");
  roots.add("/nonexistent-w");
  roots.add("/nonexistent-w/sub");
  auto at = roots_test::must_locate(roots, "/nonexistent-w/sub/x/../y");
  EXPECT_EQ(at.root, "/nonexistent-w/sub");
  EXPECT_EQ(at.relative, "y");
  EXPECT_EQ(at.shown, "/nonexistent-w/sub/y");
  EXPECT_EQ(roots_test::must_locate(roots, "/nonexistent-w").relative, "");
}

TEST(files_roots, locate_refuses_outside_relative_and_home) {
  root_set roots("/nonexistent-w/home");
  roots.add("/nonexistent-w");
  auto out = roots_test::must_refuse(roots, "/nonexistent-w/../etc/passwd");
  EXPECT_EQ(out.code, invalid_request);
  EXPECT_NE(out.message.find("outside the roots"), std::string::npos);
  EXPECT_NE(roots_test::must_refuse(roots, "rel/path").message.find("not an absolute path"),
            std::string::npos);
  EXPECT_NE(roots_test::must_refuse(roots, "/nonexistent-w/home/x").message.find("parley's home"),
            std::string::npos);
  EXPECT_NE(roots_test::must_refuse(roots, "/nonexistent-w/a/../home").message.find("home"),
            std::string::npos);
  EXPECT_TRUE(roots.holds_home("/nonexistent-w"));
  EXPECT_FALSE(roots.holds_home("/nonexistent-w/other"));
}

TEST(files_roots, a_root_inside_the_home_is_never_added) {
  root_set roots("/nonexistent-h");
  roots.add("/nonexistent-h/threads");
  EXPECT_TRUE(roots.roots().empty());
  roots_test::must_refuse(roots, "/nonexistent-h/threads/x");
}

TEST(files_base64, round_trips_and_names_the_bad_symbol) {
  EXPECT_EQ(protocol::base64_encode(""), "");
  EXPECT_EQ(protocol::base64_encode("f"), "Zg==");
  EXPECT_EQ(protocol::base64_encode("fo"), "Zm8=");
  EXPECT_EQ(protocol::base64_encode("foo"), "Zm9v");
  std::string why;
  EXPECT_EQ(protocol::base64_decode("Zm9vYg==", why), "foob");
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  EXPECT_EQ(protocol::base64_decode(protocol::base64_encode(bytes), why), bytes);
  EXPECT_EQ(protocol::base64_decode("!!!", why), std::nullopt);
  EXPECT_EQ(why, "Invalid symbol 33, offset 0.");
  EXPECT_EQ(protocol::base64_decode("Zm9", why), std::nullopt);
}

}  // namespace parley::files
