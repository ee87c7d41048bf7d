// The fuzzy matcher's scores and positions, against figures the real Codex
// 0.169 answered for the same query and path (tests/transport/
// fuzzy_file_search_test.py compares the two servers end to end).

#include "actors/files/search/fuzzy_match.hpp"

#include <gtest/gtest.h>

#include "actors/files/search/file_search.hpp"

namespace parley::files::search {
namespace {

match must_match(const std::string& query, const std::string& path) {
  auto m = match_path(parse_pattern(query), path);
  EXPECT_TRUE(m.has_value()) << query << " vs " << path;
  return m.value_or(match{});
}

TEST(FuzzyMatch, ScoresAsCodexDoes) {
  // (query, path, Codex's score without the name bonus, its indices)
  struct row {
    const char* query;
    const char* path;
    uint32_t score;
    std::vector<uint32_t> indices;
  };
  for (const auto& r : std::vector<row>{
           {"main", "Main.java", 109, {0, 1, 2, 3}},
           {"main", "src/main.rs", 109, {4, 5, 6, 7}},
           {"mod", "node_modules/pkg/index.js", 80, {5, 6, 7}},
           {"log", "keep.log", 80, {5, 6, 7}},
           {"mn", "src/mn.txt", 59, {4, 5}},
           {"mn", "m_n.rs", 55, {0, 2}},
           {"mn", "main.c", 46, {0, 3}},
           {"ain", "a/main", 65, {0, 4, 5}},
           {"a", "Main.java", 16, {1}},
           {"a", "sub/a.txt", 34, {4}},
           {"makefile", "Makefile", 209, {0, 1, 2, 3, 4, 5, 6, 7}},
           {"m r", "README.md", 66, {0, 7}},
           {"mai n", "MAIN.md", 100, {0, 1, 2, 3}},
           {"l main", "lib/main", 143, {0, 4, 5, 6, 7}},
           {"lib/main", "lib2/main", 197, {0, 1, 2, 4, 5, 6, 7, 8}},
           {"^mai", "MAIN.md", 84, {0, 1, 2}},
           {"main$", "my_main", 104, {3, 4, 5, 6}},
           {"'ain", "main", 56, {1, 2, 3}},
           {"secret", ".hidden/secret.txt", 159, {8, 9, 10, 11, 12, 13}},
           {"cc", "CamelCase.txt", 49, {0, 5}},
           {"api g", "docs/API Guide.md", 116, {5, 6, 7, 9}},
           {"dmd", "docs/API Guide.md", 66, {0, 15, 16}},  // the optimum over the path
       }) {
    auto m = must_match(r.query, r.path);
    EXPECT_EQ(m.score, r.score) << r.query << " vs " << r.path;
    EXPECT_EQ(m.indices, r.indices) << r.query << " vs " << r.path;
  }
}

TEST(FuzzyMatch, RefusesWhatDoesNotMatch) {
  EXPECT_FALSE(match_path(parse_pattern("xyz"), "src/main.rs"));
  EXPECT_FALSE(match_path(parse_pattern("nm"), "mn"));  // order matters
  EXPECT_FALSE(match_path(parse_pattern("^ain"), "main"));
  EXPECT_FALSE(match_path(parse_pattern("mai$"), "main"));
  EXPECT_FALSE(match_path(parse_pattern("^mai$"), "main"));
  EXPECT_FALSE(match_path(parse_pattern("main !src"), "src/main.rs"));
  EXPECT_FALSE(match_path(parse_pattern(""), "anything"));
  EXPECT_FALSE(match_path(parse_pattern("   "), "anything"));
}

TEST(FuzzyMatch, NegatedAtomsScoreNothing) {
  auto m = must_match("!main", "README.md");
  EXPECT_EQ(m.score, 0u);
  EXPECT_TRUE(m.indices.empty());
  EXPECT_EQ(must_match("read !main", "README.md").score, must_match("read", "README.md").score);
}

TEST(FuzzyMatch, PrefersWordStartsAndRuns) {
  // A match at a word start beats one inside a word; a run beats a scatter.
  EXPECT_GT(must_match("ma", "x/main").score, must_match("ma", "xmain").score);
  EXPECT_GT(must_match("abc", "abc_x").score, must_match("abc", "a_b_c").score);
  EXPECT_GT(must_match("fb", "FooBar").score, must_match("fb", "foobar").score);
}

TEST(FuzzyMatch, IndicesCountCodePoints) {
  auto m = must_match("b", "\xC3\xA9/b");  // "é/b": é is one character
  EXPECT_EQ(m.indices, std::vector<uint32_t>{2});
  // Invalid UTF-8 never throws; each bad byte is one character.
  auto bad = must_match("z", "\xFF\xFEz");
  EXPECT_EQ(bad.indices, std::vector<uint32_t>{2});
}

TEST(FuzzyMatch, EscapesKeepSyntaxCharactersLiteral) {
  EXPECT_TRUE(match_path(parse_pattern("\\!x"), "a!x"));
  EXPECT_TRUE(match_path(parse_pattern("x\\$"), "x$y"));
  EXPECT_TRUE(match_path(parse_pattern("'.md$"), "a.md$"));  // quoted: '$' is a character
  EXPECT_FALSE(match_path(parse_pattern("'.md$"), "a.md"));
  EXPECT_TRUE(match_path(parse_pattern("a\\ b"), "a b"));
  EXPECT_FALSE(match_path(parse_pattern("a\\ b"), "ab"));
}

uint32_t ranked(const std::string& query, const std::string& path, bool is_dir = false) {
  auto at = path.rfind('/');
  auto m = ranker(query).rank(path, at == std::string::npos ? 0 : at + 1, is_dir);
  EXPECT_TRUE(m.has_value()) << query << " vs " << path;
  return m ? m->score : 0;
}

TEST(Ranker, RanksNamesAsCodexDoes) {
  EXPECT_EQ(ranked("main", "docs/main_guide.md"), 65536u + 109);
  EXPECT_EQ(ranked("mn", "m_n.rs"), 65536u + 55);  // in order, not adjacent
  EXPECT_EQ(ranked("makefile", "Makefile"), 3 * 65536u + 209);
  EXPECT_EQ(ranked("main", "a/main", true), 2 * 65536u + 109);
  EXPECT_EQ(ranked("main", "mainframe", true), 109u);  // directories: exact names only
  EXPECT_EQ(ranked("main", "mainframe/x.c"), 109u);    // not in the file's name
  EXPECT_EQ(ranked("m r", "README.md"), 66u);          // several words: the path only
  EXPECT_EQ(ranked("^mai", "MAIN.md"), 84u);           // syntax: the path only
  // A name match is scored on the name, even below the path's best.
  auto m = ranker("dmd").rank("docs/API Guide.md", 5, false);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->score, 65536u + 60);
  EXPECT_EQ(m->indices, (std::vector<uint32_t>{12, 15, 16}));
  auto e = ranker("e").rank("node_modules/pkg/index.js", 17, false);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->indices, std::vector<uint32_t>{20});
}

}  // namespace
}  // namespace parley::files::search
