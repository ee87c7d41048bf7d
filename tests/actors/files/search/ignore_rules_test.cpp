// .gitignore rules as git reads them (actors/files/search/ignore_rules.hpp).

#include "actors/files/search/ignore_rules.hpp"

#include <gtest/gtest.h>

namespace parley::files::search {
namespace {

std::optional<bool> verdict(const char* rules, const std::string& path, bool is_dir = false) {
  auto name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  return ignore_file::parse(rules).verdict(path, name, is_dir);
}

TEST(IgnoreRules, NamesMatchAtAnyDepth) {
  EXPECT_EQ(verdict("*.log\n", "a/b/x.log"), true);
  EXPECT_EQ(verdict("*.log\n", "x.txt"), std::nullopt);
  EXPECT_EQ(verdict("build\n", "src/build", true), true);
  EXPECT_EQ(verdict("x?.c\n", "d/xy.c"), true);
  EXPECT_EQ(verdict("x[0-9].c\n", "x5.c"), true);
  EXPECT_EQ(verdict("x[!0-9].c\n", "x5.c"), std::nullopt);
}

TEST(IgnoreRules, SlashesAnchor) {
  EXPECT_EQ(verdict("/top.txt\n", "top.txt"), true);
  EXPECT_EQ(verdict("/top.txt\n", "a/top.txt"), std::nullopt);
  EXPECT_EQ(verdict("a/*.txt\n", "a/x.txt"), true);
  EXPECT_EQ(verdict("a/*.txt\n", "a/b/x.txt"), std::nullopt);  // '*' stops at '/'
  EXPECT_EQ(verdict("b/a/x\n", "c/b/a/x"), std::nullopt);
}

TEST(IgnoreRules, DoubleStars) {
  EXPECT_EQ(verdict("**/gen\n", "gen", true), true);
  EXPECT_EQ(verdict("**/gen\n", "a/b/gen", true), true);
  EXPECT_EQ(verdict("a/**/z\n", "a/z"), true);
  EXPECT_EQ(verdict("a/**/z\n", "a/b/c/z"), true);
  EXPECT_EQ(verdict("a/**\n", "a/b/c"), true);
  EXPECT_EQ(verdict("a/**\n", "a", true), std::nullopt);
}

TEST(IgnoreRules, DirectoriesOnlyAndNegation) {
  EXPECT_EQ(verdict("out/\n", "out", false), std::nullopt);
  EXPECT_EQ(verdict("out/\n", "out", true), true);
  EXPECT_EQ(verdict("*.log\n!keep.log\n", "keep.log"), false);  // the last rule wins
  EXPECT_EQ(verdict("!keep.log\n*.log\n", "keep.log"), true);
}

TEST(IgnoreRules, CommentsBlanksAndEscapes) {
  EXPECT_EQ(verdict("# c\n\n  \nx\n", "x"), true);
  EXPECT_EQ(verdict("\\#hash\n", "#hash"), true);
  EXPECT_EQ(verdict("\\!bang\n", "!bang"), true);
  EXPECT_EQ(verdict("trail   \n", "trail"), true);
  EXPECT_EQ(verdict("crlf\r\n", "crlf"), true);
  EXPECT_EQ(verdict("[unclosed\n", "[unclosed"), true);
  EXPECT_EQ(verdict("CASE\n", "case"), std::nullopt);  // case-sensitive, as git on Linux
}

TEST(IgnoreRules, ManyStarsStayLinear) {
  // A pathological pattern must not backtrack exponentially.
  std::string path(4000, 'a');
  EXPECT_EQ(verdict("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\n", path), std::nullopt);
}

}  // namespace
}  // namespace parley::files::search
