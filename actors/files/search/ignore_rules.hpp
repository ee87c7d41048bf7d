#pragma once
// .gitignore (and .ignore) files as fuzzyFileSearch honours them: as git
// does, whether or not the tree is a git repository (Codex 0.169 does the
// same). One ignore_file is the rules of one file; which file wins for a
// path is the walker's business (the deepest first, .ignore before
// .gitignore in one directory).
//
// Supported: comments, blank lines, "\#" and "\!" escapes, trailing spaces,
// "!" re-including, a trailing "/" for directories only, a "/" anywhere
// else anchoring the pattern to the file's directory (otherwise it matches
// a name at any depth), "*", "?", "[a-z]" / "[!a-z]", and "**" as a whole
// path segment ("**/x", "x/**", "a/**/b"). Matching is case-sensitive.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::files::search {

class ignore_file {
 public:
  /// The rules of a file's text (at most `max_rules` are kept).
  static ignore_file parse(std::string_view text);

  /// What the last rule matching the entry says: true = ignored, false =
  /// re-included, nullopt = no rule matches. `relative` is the entry's path
  /// from the file's directory, `name` its last component.
  std::optional<bool> verdict(std::string_view relative, std::string_view name,
                              bool is_dir) const;

  bool empty() const { return rules_.empty(); }

  static constexpr size_t max_rules = 10000;

 private:
  struct token {
    enum class op : unsigned char { literal, any_char, star, any_path, any_dirs, char_class };
    op what = op::literal;
    char c = 0;
    bool negated_class = false;
    std::string ranges;  // pairs lo,hi for char_class
  };
  struct rule {
    std::vector<token> tokens;
    std::string literal;  // the pattern when it has no wildcard
    bool plain = false;   // tokens are all literals
    bool negated = false;
    bool dir_only = false;
    bool anchored = false;  // matched against the path, not the name
  };
  static bool glob_match(const std::vector<token>& tokens, std::string_view s);
  static std::optional<rule> parse_line(std::string_view line);

  std::vector<rule> rules_;
};

}  // namespace parley::files::search
