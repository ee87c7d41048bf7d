// Rules as data: the .rules parser, prefix and path matching, and the files
// rules live in (load_dir, append_prefix_rule).

#include "actors/approval/rules/rules.hpp"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <thread>

#include "tests/support/app_server_client.hpp"

namespace parley::rules {
namespace {

using words = std::vector<std::string>;

std::string read(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const std::string& path, const std::string& content) {
  std::ofstream{path, std::ios::binary | std::ios::trunc} << content;
}

/// The verdict of `set` for argv, or "none".
std::string verdict_of(const rule_set& set, const words& argv) {
  auto m = set.check_command(argv);
  return m ? to_string(m->verdict) : "none";
}

std::string verdict_of(const rule_set& set, const words& paths, const std::string& cwd) {
  auto m = set.check_paths(paths, cwd);
  return m ? to_string(m->verdict) : "none";
}

/// Whether a lone path rule with `glob` matches `path` for a change in `cwd`.
bool glob_hits(const std::string& glob, const std::string& path, const std::string& cwd = "/w") {
  auto set = rule_set::parse("path_rule(glob = \"" + glob + "\", decision = \"deny\")", "t");
  return set.check_paths({path}, cwd).has_value();
}

// -- parsing -----------------------------------------------------------------

TEST(RulesParse, reads_every_syntax_form) {
  auto set = rule_set::parse(R"(# a comment line
prefix_rule(pattern = ["git", "push"], decision = "forbidden", justification = "pushes need a human")
prefix_rule(decision='allow', pattern=['git', ["status", 'log', "diff"]],)  # keywords in any order
prefix_rule(
    pattern = ["npm", "test"],   # spans lines
    decision = "prompt",
    match = ["npm test --watch", ["npm", "test"]],
    not_match = ["npm install"],
)
prefix_rule(pattern = ["say", "it's \"quoted\"\\\t"])
path_rule(glob = "**/.env", decision = "deny", justification = 'secrets')
path_rule(glob = "src/**", decision = "allow")
prefix_rule(pattern = ["rm"], decision = "ask")
)",
                             "dir/a.rules");
  ASSERT_EQ(set.size(), 7u);
  auto& r = set.rules();
  EXPECT_EQ(r[0].what, rule::kind::prefix);
  EXPECT_EQ(r[0].verdict, decision::deny);
  EXPECT_EQ(r[0].pattern, (std::vector<words>{{"git"}, {"push"}}));
  EXPECT_EQ(r[0].justification, "pushes need a human");
  EXPECT_EQ(r[0].source, "dir/a.rules:2");
  EXPECT_EQ(r[1].verdict, decision::allow);
  EXPECT_EQ(r[1].pattern, (std::vector<words>{{"git"}, {"status", "log", "diff"}}));
  EXPECT_EQ(r[1].source, "dir/a.rules:3");
  EXPECT_EQ(r[2].verdict, decision::ask);
  EXPECT_EQ(r[2].source, "dir/a.rules:4");
  EXPECT_EQ(r[3].verdict, decision::allow);  // Codex's default decision
  EXPECT_EQ(r[3].pattern, (std::vector<words>{{"say"}, {"it's \"quoted\"\\\t"}}));
  EXPECT_EQ(r[4].what, rule::kind::path);
  EXPECT_EQ(r[4].glob, "**/.env");
  EXPECT_EQ(r[4].verdict, decision::deny);
  EXPECT_EQ(r[4].justification, "secrets");
  EXPECT_EQ(r[5].verdict, decision::allow);
  EXPECT_EQ(r[6].verdict, decision::ask);  // parley's synonym for prompt
  EXPECT_EQ(r[6].source, "dir/a.rules:13");
}

TEST(RulesParse, an_empty_or_comment_only_file_has_no_rules) {
  EXPECT_EQ(rule_set::parse("", "t").size(), 0u);
  EXPECT_EQ(rule_set::parse("# nothing\n\n   # here\n", "t").size(), 0u);
}

TEST(RulesParse, decisions_accept_codex_names_and_parley_synonyms) {
  std::vector<std::pair<std::string, decision>> names{
      {"allow", decision::allow}, {"prompt", decision::ask},    {"ask", decision::ask},
      {"forbidden", decision::deny}, {"deny", decision::deny}};
  for (auto& [name, expected] : names) {
    auto set = rule_set::parse("prefix_rule(pattern=[\"x\"], decision=\"" + name + "\")", "t");
    EXPECT_EQ(set.rules().at(0).verdict, expected) << name;
  }
  EXPECT_STREQ(to_string(decision::allow), "allow");
  EXPECT_STREQ(to_string(decision::ask), "ask");
  EXPECT_STREQ(to_string(decision::deny), "deny");
}

TEST(RulesParse, text_is_canonical_and_reads_back_the_same) {
  auto set = rule_set::parse(R"(
prefix_rule(decision = "deny", pattern = ['git', "push"], justification = "no")
prefix_rule(pattern = ["git", ["status", "log"]], decision = "prompt")
prefix_rule(pattern = ["echo", "a \"b\" \\ c"])
path_rule(glob = "**/.env", decision = "forbidden")
)",
                             "t");
  ASSERT_EQ(set.size(), 4u);
  EXPECT_EQ(set.rules()[0].text(), R"(prefix_rule(pattern=["git","push"], decision="forbidden"))");
  EXPECT_EQ(set.rules()[1].text(),
            R"(prefix_rule(pattern=["git",["status","log"]], decision="prompt"))");
  EXPECT_EQ(set.rules()[3].text(), R"(path_rule(glob="**/.env", decision="forbidden"))");
  for (auto& r : set.rules()) {
    auto again = rule_set::parse(r.text(), "again").rules().at(0);
    EXPECT_EQ(again.what, r.what) << r.text();
    EXPECT_EQ(again.verdict, r.verdict) << r.text();
    EXPECT_EQ(again.pattern, r.pattern) << r.text();
    EXPECT_EQ(again.glob, r.glob) << r.text();
  }
}

/// 1-based line and column of the first `marker` in `text`; the end of the
/// text for an empty marker.
std::pair<size_t, size_t> position_of(const std::string& text, const std::string& marker) {
  auto at = marker.empty() ? text.size() : text.find(marker);
  EXPECT_NE(at, std::string::npos) << marker;
  auto line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
  line_start = (line_start == std::string::npos || at == 0) ? 0 : line_start + 1;
  size_t line = 1;
  for (size_t i = 0; i < at; ++i) line += text[i] == '\n';
  return {line, at - line_start + 1};
}

TEST(RulesParse, reports_every_error_at_its_line_and_column) {
  struct error_case {
    std::string text;
    std::string marker;   // where the error must point
    std::string message;  // part of what()
  };
  std::vector<error_case> cases{
      {"foo(pattern = [\"a\"])", "foo", "unknown function `foo`"},
      {"# c\n\nprefix_rule(pattern=[\"a\"], colour=\"red\")", "colour", "unknown keyword `colour`"},
      {"\n  prefix_rule(decision=\"allow\")", "prefix_rule", "needs a `pattern`"},
      {"prefix_rule(pattern=[\"a\"], decision=\"maybe\")", "\"maybe\"", "bad decision \"maybe\""},
      {"prefix_rule(pattern=[\"a\"], decision=[\"allow\"])", "[\"allow\"]", "must be a string"},
      {"prefix_rule(pattern=[])", "[]", "empty pattern"},
      {"prefix_rule(pattern=\"git\")", "\"git\"", "must be a list"},
      {"prefix_rule(pattern=[\"a\", []])", "[]", "empty list of alternatives"},
      {"prefix_rule(pattern=[\"a\", [[\"b\"]]])", "[\"b\"]", "must be a string"},
      {"prefix_rule(pattern=[\"a\"]", "", "expected `,` between arguments"},
      {"prefix_rule(pattern=[\"a\" \"b\"])", "\"b\"", "expected `,` between list elements"},
      {"prefix_rule pattern", "pattern", "expected `(` after prefix_rule"},
      {"prefix_rule(pattern=[\"a\n\"])", "\"a", "unterminated string"},
      {"prefix_rule(pattern=[\"a\\q\"])", "\\q", "unknown escape `\\q`"},
      {"prefix_rule([\"a\"])", "[", "keyword arguments only"},
      {"prefix_rule(pattern=[\"a\"], pattern=[\"b\"])", "pattern=[\"b", "`pattern` given twice"},
      {"prefix_rule(pattern=[\"a\"])\n  @", "@", "unexpected character `@`"},
      {"prefix_rule(pattern=[[[[[[[[[[\"a\"]]]]]]]]]])", "[[\"a", "nested too deeply"},
      {"path_rule(glob=\"src/[ab\", decision=\"deny\")", "[ab", "bad glob"},
      {"path_rule(glob=\"\", decision=\"deny\")", "\"\"", "the glob is empty"},
      {"path_rule(glob=\"x\")", "path_rule", "needs a `decision`"},
      {"path_rule(decision=\"deny\")", "path_rule", "needs a `glob`"},
      {"path_rule(pattern=[\"a\"], decision=\"deny\")", "pattern", "unknown keyword `pattern`"},
      {"prefix_rule(pattern=[\"npm\", \"test\"],\n  match=[\"npm test\", \"npm tset\"])",
       "\"npm tset\"", "match example \"npm tset\" does not match"},
      {"prefix_rule(pattern=[\"npm\", \"test\"], match=[[\"npm\"]])", "[\"npm\"]]",
       "match example \"npm\" does not match"},
      {"prefix_rule(pattern=[\"npm\", [\"test\", \"ci\"]],\n  not_match=[\"npm install\", "
       "[\"npm\", \"ci\", \"-q\"]])",
       "[\"npm\", \"ci\"", "not_match example \"npm ci -q\" matches"},
      {"prefix_rule(pattern=[\"a\"], match=[\"  \"])", "\"  \"", "empty `match` example"},
      {"prefix_rule(pattern=[\"a\"], match=\"a\")", "\"a\")", "must be a list of examples"},
  };
  for (auto& c : cases) {
    auto [line, column] = position_of(c.text, c.marker);
    try {
      rule_set::parse(c.text, "my.rules");
      ADD_FAILURE() << "no error for: " << c.text;
    } catch (const load_error& e) {
      std::string what = e.what();
      auto where = "my.rules:" + std::to_string(line) + ":" + std::to_string(column) + ": ";
      EXPECT_EQ(what.rfind(where, 0), 0u) << what << "\n  expected at " << where << "\n  for "
                                          << c.text;
      EXPECT_NE(what.find(c.message), std::string::npos) << what << "\n  for " << c.text;
      EXPECT_EQ(e.source(), "my.rules");
      EXPECT_EQ(e.line(), line);
      EXPECT_EQ(e.column(), column);
    }
  }
}

// -- commands ----------------------------------------------------------------

TEST(RulesMatch, a_prefix_matches_longer_commands_but_not_shorter_or_different_ones) {
  auto set = rule_set::parse(R"(prefix_rule(pattern=["git", "push"], decision="deny"))", "t");
  EXPECT_EQ(verdict_of(set, {"git", "push"}), "deny");
  EXPECT_EQ(verdict_of(set, {"git", "push", "origin", "main"}), "deny");
  EXPECT_EQ(verdict_of(set, {"git"}), "none");
  EXPECT_EQ(verdict_of(set, {"git", "pull"}), "none");
  EXPECT_EQ(verdict_of(set, {"git", "pushx"}), "none");
  EXPECT_EQ(verdict_of(set, {"sudo", "git", "push"}), "none");
  EXPECT_EQ(verdict_of(set, {}), "none");
}

TEST(RulesMatch, a_list_in_the_pattern_is_alternatives_at_that_position) {
  auto set = rule_set::parse(
      R"(prefix_rule(pattern=[["git", "hg"], ["status", "log"], "-v"], decision="allow"))", "t");
  EXPECT_EQ(verdict_of(set, {"git", "status", "-v"}), "allow");
  EXPECT_EQ(verdict_of(set, {"hg", "log", "-v", "x"}), "allow");
  EXPECT_EQ(verdict_of(set, {"hg", "status", "-q"}), "none");
  EXPECT_EQ(verdict_of(set, {"git", "-v", "status"}), "none");
  EXPECT_EQ(verdict_of(set, {"svn", "log", "-v"}), "none");
}

TEST(RulesMatch, the_most_restrictive_matching_rule_wins_whatever_the_order) {
  std::vector<std::string> lines{
      R"(prefix_rule(pattern=["git"], decision="allow"))",
      R"(prefix_rule(pattern=["git", "push"], decision="prompt"))",
      R"(prefix_rule(pattern=["git", "push", "--force"], decision="forbidden"))",
  };
  for (int order = 0; order < 3; ++order) {
    std::string text;
    for (int i = 0; i < 3; ++i) text += lines[static_cast<size_t>((i + order) % 3)] + "\n";
    auto set = rule_set::parse(text, "t");
    EXPECT_EQ(verdict_of(set, {"git", "status"}), "allow") << text;
    EXPECT_EQ(verdict_of(set, {"git", "push", "origin"}), "ask") << text;
    EXPECT_EQ(verdict_of(set, {"git", "push", "--force", "origin"}), "deny") << text;
  }
}

TEST(RulesMatch, among_equally_restrictive_rules_the_first_written_decides) {
  auto set = rule_set::parse(R"(prefix_rule(pattern=["git"], decision="deny", justification="one")
prefix_rule(pattern=["git", "push"], decision="deny", justification="two"))",
                             "t");
  auto m = set.check_command({"git", "push"});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->matched.source, "t:1");
  EXPECT_EQ(m->matched.justification, "one");
}

TEST(RulesMatch, the_explanation_names_the_rule_where_it_is_written_and_why) {
  auto set = rule_set::parse(R"(# first
# second
prefix_rule(pattern=["git", "push"], decision="forbidden", justification="pushes need a human")
prefix_rule(pattern=["ls"], decision="allow"))",
                             "/h/rules/default.rules");
  auto m = set.check_command({"git", "push", "origin"});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->verdict, decision::deny);
  EXPECT_EQ(m->matched.source, "/h/rules/default.rules:3");
  EXPECT_EQ(m->explanation,
            R"(prefix_rule(pattern=["git","push"], decision="forbidden") at )"
            R"(/h/rules/default.rules:3 matches "git push origin": pushes need a human)");
  auto quiet = set.check_command({"ls", "my file"});
  ASSERT_TRUE(quiet);
  EXPECT_EQ(quiet->explanation, R"(prefix_rule(pattern=["ls"], decision="allow") at )"
                                R"(/h/rules/default.rules:4 matches "ls 'my file'")");
}

TEST(RulesMatch, consistent_match_and_not_match_examples_load) {
  auto set = rule_set::parse(R"(prefix_rule(
  pattern = ["gh", "pr", ["view", "list"]],
  decision = "prompt",
  match = ["gh pr view 7888", ["gh", "pr", "list", "--json", "a b"]],
  not_match = ["gh pr --repo x view 7888", "gh  pr", ["gh", "pr", "merge"]],
))",
                             "t");
  EXPECT_EQ(set.size(), 1u);
  EXPECT_EQ(verdict_of(set, {"gh", "pr", "list"}), "ask");
}

// -- paths -------------------------------------------------------------------

TEST(RulesPaths, star_and_question_mark_stay_inside_one_segment) {
  EXPECT_TRUE(glob_hits("src/*.cpp", "/w/src/main.cpp"));
  EXPECT_TRUE(glob_hits("src/*.cpp", "/w/src/.cpp"));
  EXPECT_FALSE(glob_hits("src/*.cpp", "/w/src/a/main.cpp"));
  EXPECT_FALSE(glob_hits("src/*.cpp", "/w/src/main.hpp"));
  EXPECT_TRUE(glob_hits("*", "/w/README"));
  EXPECT_FALSE(glob_hits("*", "/w/a/README"));
  EXPECT_TRUE(glob_hits("a*b*c", "/w/aXbYbZc"));
  EXPECT_FALSE(glob_hits("a*b*c", "/w/aXbYbZ"));
  EXPECT_TRUE(glob_hits("file?.txt", "/w/file1.txt"));
  EXPECT_FALSE(glob_hits("file?.txt", "/w/file.txt"));
  EXPECT_FALSE(glob_hits("a?b", "/w/a/b"));
}

TEST(RulesPaths, double_star_is_any_number_of_whole_segments) {
  EXPECT_TRUE(glob_hits("src/**", "/w/src/a.cpp"));
  EXPECT_TRUE(glob_hits("src/**", "/w/src/a/b/c.cpp"));
  EXPECT_FALSE(glob_hits("src/**", "/w/srcx/a.cpp"));
  EXPECT_TRUE(glob_hits("src/**/test_*.cpp", "/w/src/test_a.cpp"));  // zero segments
  EXPECT_TRUE(glob_hits("src/**/test_*.cpp", "/w/src/x/y/test_a.cpp"));
  EXPECT_FALSE(glob_hits("src/**/test_*.cpp", "/w/src/x/y/a_test.cpp"));
  EXPECT_TRUE(glob_hits("**/.env", "/w/.env"));
  EXPECT_TRUE(glob_hits("**/.env", "/w/deep/er/.env"));
  EXPECT_FALSE(glob_hits("**/.env", "/w/.envrc"));
  EXPECT_TRUE(glob_hits("**/**/x", "/w/x"));
}

TEST(RulesPaths, character_classes_ranges_and_negation) {
  EXPECT_TRUE(glob_hits("[abc].txt", "/w/b.txt"));
  EXPECT_FALSE(glob_hits("[abc].txt", "/w/d.txt"));
  EXPECT_TRUE(glob_hits("v[0-9].log", "/w/v7.log"));
  EXPECT_FALSE(glob_hits("v[0-9].log", "/w/vx.log"));
  EXPECT_TRUE(glob_hits("[!a]*", "/w/bcd"));
  EXPECT_FALSE(glob_hits("[!a]*", "/w/abc"));
  EXPECT_TRUE(glob_hits("[^a]*", "/w/bcd"));
  EXPECT_TRUE(glob_hits("x[-_]y", "/w/x-y"));
  EXPECT_TRUE(glob_hits("x[]]y", "/w/x]y"));
}

TEST(RulesPaths, absolute_globs_match_absolute_paths_and_relative_ones_the_path_under_cwd) {
  EXPECT_TRUE(glob_hits("/etc/*", "/etc/passwd"));
  EXPECT_FALSE(glob_hits("/etc/*", "/w/etc/passwd"));
  EXPECT_TRUE(glob_hits("etc/*", "/w/etc/passwd"));
  EXPECT_FALSE(glob_hits("etc/*", "/etc/passwd"));
  // A relative path is taken relative to cwd.
  EXPECT_TRUE(glob_hits("src/*.cpp", "src/a.cpp"));
  EXPECT_TRUE(glob_hits("/w/src/*.cpp", "src/a.cpp"));
  // cwd itself may come unnormalised.
  EXPECT_TRUE(glob_hits("src/*.cpp", "/w/src/a.cpp", "/w/./x/../"));
  EXPECT_TRUE(glob_hits("w/src/*", "/w/src/a", "/"));
}

TEST(RulesPaths, paths_outside_cwd_only_meet_absolute_and_double_star_globs) {
  EXPECT_FALSE(glob_hits("src/**", "/other/src/a.cpp"));
  EXPECT_FALSE(glob_hits("*", "/other"));
  EXPECT_TRUE(glob_hits("**/.env", "/other/.env"));
  EXPECT_TRUE(glob_hits("**/.env", "/.env"));
  EXPECT_TRUE(glob_hits("/other/**", "/other/src/a.cpp"));
  // /wx is not under /w.
  EXPECT_FALSE(glob_hits("*", "/wx"));
}

TEST(RulesPaths, dot_and_dot_dot_are_resolved_before_matching) {
  EXPECT_TRUE(glob_hits(".env", "/w/src/../.env"));
  EXPECT_TRUE(glob_hits("src/a.cpp", "/w/./src//a.cpp"));
  EXPECT_FALSE(glob_hits("src/**", "/w/src/../lib/a.cpp"));
  // Climbing out of cwd leaves its relative globs behind.
  EXPECT_FALSE(glob_hits("etc/passwd", "/w/../etc/passwd"));
  EXPECT_TRUE(glob_hits("/etc/passwd", "/w/../etc/passwd"));
  EXPECT_TRUE(glob_hits("/etc/passwd", "../../../../etc/passwd"));
  EXPECT_TRUE(glob_hits("**/.env", "src/../../x/.env"));
}

TEST(RulesPaths, a_change_is_decided_only_when_every_path_is) {
  auto set = rule_set::parse(R"(path_rule(glob="**/.env", decision="forbidden", justification="secrets")
path_rule(glob="src/**", decision="allow")
path_rule(glob="docs/**", decision="allow")
path_rule(glob="src/gen/**", decision="prompt"))",
                             "p.rules");
  EXPECT_EQ(verdict_of(set, {"/w/src/a.cpp"}, "/w"), "allow");
  EXPECT_EQ(verdict_of(set, {"/w/src/a.cpp", "/w/docs/x.md"}, "/w"), "allow");
  EXPECT_EQ(verdict_of(set, {"/w/src/a.cpp", "/w/src/gen/x.cpp"}, "/w"), "ask");
  EXPECT_EQ(verdict_of(set, {"/w/src/a.cpp", "/w/src/gen/x", "/w/src/.env"}, "/w"), "deny");
  // One path no rule speaks for: the change asks.
  EXPECT_EQ(verdict_of(set, {"/w/src/a.cpp", "/w/README.md"}, "/w"), "ask");
  // No path matches any rule: the rules have nothing to say.
  EXPECT_EQ(verdict_of(set, {"/w/README.md", "/w/Makefile"}, "/w"), "none");
  EXPECT_EQ(verdict_of(set, {}, "/w"), "none");

  auto denied = set.check_paths({"/w/src/a.cpp", "/w/src/../.env"}, "/w");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->matched.source, "p.rules:1");
  EXPECT_EQ(denied->explanation,
            R"(path_rule(glob="**/.env", decision="forbidden") at p.rules:1 matches "/w/.env": )"
            "secrets");
  auto unmatched = set.check_paths({"/w/src/a.cpp", "/w/README.md"}, "/w");
  ASSERT_TRUE(unmatched);
  EXPECT_NE(unmatched->explanation.find("no rule matches \"/w/README.md\""), std::string::npos)
      << unmatched->explanation;
  auto allowed = set.check_paths({"/w/src/a.cpp"}, "/w");
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->matched.source, "p.rules:2");
  EXPECT_EQ(allowed->explanation,
            R"(path_rule(glob="src/**", decision="allow") at p.rules:2 matches "/w/src/a.cpp")");
}

TEST(RulesPaths, prefix_and_path_rules_do_not_answer_for_each_other) {
  auto set = rule_set::parse(R"(prefix_rule(pattern=["src"], decision="deny")
path_rule(glob="git", decision="deny"))",
                             "t");
  EXPECT_EQ(verdict_of(set, {"git"}), "none");
  EXPECT_EQ(verdict_of(set, {"/w/src"}, "/w"), "none");
}

// -- files -------------------------------------------------------------------

TEST(RulesFiles, rules_live_in_the_home_rules_directory) {
  EXPECT_EQ(rules_dir_of("/h"), "/h/rules");
}

TEST(RulesFiles, load_dir_reads_every_rules_file_in_name_order) {
  auto dir = test::make_temp_dir("rules_load_dir");
  write(dir + "/b.rules", "prefix_rule(pattern=[\"b\"], decision=\"deny\")\n");
  write(dir + "/a.rules", "# a\nprefix_rule(pattern=[\"a\"])\npath_rule(glob=\"x\", decision=\"ask\")\n");
  write(dir + "/c.rules.bak", "this is not read(");
  write(dir + "/notes.txt", "nor this(");
  std::filesystem::create_directories(dir + "/sub.rules");
  auto set = rule_set::load_dir(dir);
  ASSERT_EQ(set.size(), 3u);
  EXPECT_EQ(set.rules()[0].source, dir + "/a.rules:2");
  EXPECT_EQ(set.rules()[1].source, dir + "/a.rules:3");
  EXPECT_EQ(set.rules()[2].source, dir + "/b.rules:1");
  EXPECT_EQ(verdict_of(set, {"b", "x"}), "deny");
}

TEST(RulesFiles, load_dir_of_a_missing_directory_is_empty) {
  auto dir = test::make_temp_dir("rules_missing");
  EXPECT_EQ(rule_set::load_dir(dir + "/nope").size(), 0u);
}

TEST(RulesFiles, load_dir_reports_the_broken_file_line_and_column) {
  auto dir = test::make_temp_dir("rules_broken");
  write(dir + "/a.rules", "prefix_rule(pattern=[\"a\"])\n");
  write(dir + "/b.rules", "\n\nprefix_rule(pattern=[\"a\"], decision=\"perhaps\")\n");
  try {
    rule_set::load_dir(dir);
    ADD_FAILURE() << "loaded a broken file";
  } catch (const load_error& e) {
    EXPECT_EQ(std::string{e.what()}.rfind(dir + "/b.rules:3:37: bad decision", 0), 0u) << e.what();
  }
}

TEST(RulesFiles, append_creates_the_directory_and_a_file_that_parses) {
  auto dir = test::make_temp_dir("rules_append_new") + "/home/rules";
  EXPECT_TRUE(append_prefix_rule(dir, {"git", "pull"}));
  EXPECT_EQ(read(dir + "/default.rules"),
            "prefix_rule(pattern=[\"git\",\"pull\"], decision=\"allow\")\n");
  auto set = rule_set::load_dir(dir);
  ASSERT_EQ(set.size(), 1u);
  EXPECT_EQ(verdict_of(set, {"git", "pull", "--rebase"}), "allow");
  EXPECT_EQ(verdict_of(set, {"git", "push"}), "none");
}

TEST(RulesFiles, append_keeps_the_old_content_byte_for_byte) {
  auto dir = test::make_temp_dir("rules_append_keep");
  // No final newline, odd spacing, a comment: all of it must survive.
  std::string old = "# mine\r\nprefix_rule( pattern = ['rm'] ,decision='deny' )  # keep";
  write(dir + "/default.rules", old);
  ::chmod((dir + "/default.rules").c_str(), 0640);
  EXPECT_TRUE(append_prefix_rule(dir, {"make", "test"}));
  auto now = read(dir + "/default.rules");
  EXPECT_EQ(now.substr(0, old.size()), old);
  EXPECT_EQ(now.substr(old.size()),
            "\nprefix_rule(pattern=[\"make\",\"test\"], decision=\"allow\")\n");
  EXPECT_TRUE(append_prefix_rule(dir, {"say", "\"hi\" \\ there"}));
  auto set = rule_set::load_dir(dir);
  ASSERT_EQ(set.size(), 3u);
  EXPECT_EQ(verdict_of(set, {"rm", "-rf"}), "deny");
  EXPECT_EQ(verdict_of(set, {"say", "\"hi\" \\ there"}), "allow");
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/default.rules").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  // Nothing but the rules file is left in the directory.
  size_t entries = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST(RulesFiles, append_skips_an_allow_rule_that_is_already_there) {
  auto dir = test::make_temp_dir("rules_append_idempotent");
  // Written by hand: another spelling of the same allow rule.
  write(dir + "/default.rules", "prefix_rule(pattern = ['git', 'pull'])\n");
  EXPECT_FALSE(append_prefix_rule(dir, {"git", "pull"}));
  EXPECT_EQ(read(dir + "/default.rules"), "prefix_rule(pattern = ['git', 'pull'])\n");
  EXPECT_TRUE(append_prefix_rule(dir, {"git", "fetch"}));
  auto once = read(dir + "/default.rules");
  EXPECT_FALSE(append_prefix_rule(dir, {"git", "fetch"}));
  EXPECT_EQ(read(dir + "/default.rules"), once);
  // A shorter or longer prefix, or a deny rule, is not the same rule.
  write(dir + "/default.rules", "prefix_rule(pattern=['git'], decision='deny')\n");
  EXPECT_TRUE(append_prefix_rule(dir, {"git"}));
  EXPECT_TRUE(append_prefix_rule(dir, {"git", "pull", "-q"}));
  EXPECT_EQ(rule_set::load_dir(dir).size(), 3u);
}

TEST(RulesFiles, append_refuses_an_empty_prefix) {
  auto dir = test::make_temp_dir("rules_append_empty");
  EXPECT_THROW(append_prefix_rule(dir, {}), std::invalid_argument);
  EXPECT_FALSE(test::file_exists(dir + "/default.rules"));
}

TEST(RulesFiles, concurrent_appends_all_land) {
  auto dir = test::make_temp_dir("rules_append_concurrent");
  constexpr int threads = 8;
  constexpr int per_thread = 20;
  std::atomic<int> shared_written{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i)
        append_prefix_rule(dir, {"tool" + std::to_string(t), "sub" + std::to_string(i)});
      if (append_prefix_rule(dir, {"everyone", "wants", "this"})) ++shared_written;
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(shared_written.load(), 1);
  auto set = rule_set::load_dir(dir);
  EXPECT_EQ(set.size(), static_cast<size_t>(threads * per_thread + 1));
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < per_thread; ++i)
      EXPECT_EQ(verdict_of(set, {"tool" + std::to_string(t), "sub" + std::to_string(i)}), "allow");
}

}  // namespace
}  // namespace parley::rules
