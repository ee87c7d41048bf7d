#pragma once
// Rules as data: the approval pipeline's first stage. Rules live in
// HOME/rules/*.rules, written in the Starlark subset of Codex's execpolicy
// files, plus a path rule of parley's own:
//
//   # comments
//   prefix_rule(pattern = ["git", "push"], decision = "forbidden",
//               justification = "pushes need a human")
//   prefix_rule(pattern = ["git", ["status", "log"]])      # decision: allow
//   prefix_rule(pattern = ["npm", "test"], decision = "prompt",
//               match = ["npm test --watch"], not_match = [["npm", "install"]])
//   path_rule(glob = "**/.env", decision = "forbidden", justification = "secrets")
//
// Parsing and matching are pure (no I/O, no logging); only load_dir() and
// append_prefix_rule() touch the file system.

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace parley::rules {

/// What a rule says about a command or a change. Ordered from least to most
/// restrictive: when several rules match, the greatest one wins.
enum class decision { allow, ask, deny };

/// "allow" | "ask" | "deny".
const char* to_string(decision x);

/// A rules file that does not parse or whose examples disagree with its rules.
/// what() is "source:line:col: message" (just "source: message" when the
/// problem has no position, e.g. an unreadable file).
class load_error : public std::runtime_error {
 public:
  load_error(const std::string& source, size_t line, size_t column, const std::string& message);

  const std::string& source() const { return source_; }
  /// 1-based; 0 when the error has no position.
  size_t line() const { return line_; }
  size_t column() const { return column_; }
  /// The message without its position.
  const std::string& message() const { return message_; }

 private:
  std::string source_;
  size_t line_;
  size_t column_;
  std::string message_;
};

struct rule {
  enum class kind { prefix, path };
  kind what = kind::prefix;
  decision verdict = decision::allow;
  /// prefix rules: the alternatives allowed at each argv position.
  std::vector<std::vector<std::string>> pattern;
  /// path rules: the glob (see check_paths).
  std::string glob;
  /// Why the rule exists; may be empty.
  std::string justification;
  /// Where the rule was written: "file:line".
  std::string source;

  /// The rule in canonical form, e.g.
  ///   prefix_rule(pattern=["git",["status","log"]], decision="allow")
  ///   path_rule(glob="**/.env", decision="forbidden")
  /// Decisions use Codex's names so the text can go back into a .rules file
  /// Codex reads too. The justification is left out (callers show it apart).
  std::string text() const;

  /// prefix rules: argv has at least pattern.size() words and word i is one
  /// of the alternatives at position i. Always false for path rules.
  bool matches_command(const std::vector<std::string>& argv) const;

  /// path rules: whether the glob matches `path`, an absolute, lexically
  /// normal path, for a change made in `cwd` (absolute, lexically normal).
  /// Always false for prefix rules.
  bool matches_path(const std::string& path, const std::string& cwd) const;
};

/// The outcome of a check: the deciding rule and a sentence for humans.
struct match {
  decision verdict = decision::ask;
  /// The rule that decided. For a change asked about because one of its paths
  /// matches no rule, the rule that allowed the other paths.
  rule matched;
  /// Which rule decided and why, e.g.
  ///   prefix_rule(pattern=["git","push"], decision="forbidden") at
  ///   /h/rules/default.rules:3 matches "git push origin": pushes need a human
  std::string explanation;
};

class rule_set {
 public:
  /// Parses one rules file; `source_name` names it in rule sources and errors.
  /// Throws load_error with the line and column of the first problem.
  static rule_set parse(const std::string& text, const std::string& source_name);

  /// Every *.rules file in `rules_dir`, in name order; a missing directory is
  /// an empty set. Throws load_error for a file that can't be read or parsed.
  static rule_set load_dir(const std::string& rules_dir);

  /// The most restrictive prefix rule matching `argv` (the first one written
  /// among equals); nullopt when none matches.
  std::optional<match> check_command(const std::vector<std::string>& argv) const;

  /// A change to several files: every path must be decided.
  ///   deny   if any path matches a deny rule;
  ///   ask    if any path matches an ask rule, or matches no rule while
  ///          another path does;
  ///   allow  only if every path is allowed;
  ///   nullopt if no path matches any rule (or there are no paths).
  /// Each path takes the most restrictive path rule matching it. Relative
  /// paths are taken relative to `cwd`; `.` and `..` are resolved lexically.
  /// A glob starting with `/` is matched against the absolute path; any other
  /// glob against the path relative to `cwd` when the path is under `cwd`,
  /// and, if it starts with `**/`, against the absolute path as well.
  /// Globs: `*` any run of characters but `/`, `?` one character but `/`,
  /// `[abc]`, `[a-z]`, `[!abc]` a character class, and a whole `**` segment
  /// any number of segments (zero included).
  std::optional<match> check_paths(const std::vector<std::string>& paths,
                                   const std::string& cwd) const;

  /// These rules, then `more`'s (a tenant's own after the shared ones).
  void append(const rule_set& more) {
    rules_.insert(rules_.end(), more.rules_.begin(), more.rules_.end());
  }

  /// In file order (load_dir: files in name order).
  const std::vector<rule>& rules() const { return rules_; }
  size_t size() const { return rules_.size(); }

 private:
  std::vector<rule> rules_;
};

/// Appends `prefix_rule(pattern=[...], decision="allow")` to
/// rules_dir/default.rules, creating the directory and the file if missing,
/// and returns true; returns false, writing nothing, if an identical allow
/// rule is already there. The file is replaced atomically (a temp file in the
/// same directory, fsync'ed, renamed over it, then the directory fsync'ed),
/// so a reader sees the old or the new content, never a torn one; the old
/// content is kept byte for byte. Appends from threads of one process are
/// serialised. Throws std::invalid_argument for an empty prefix and
/// std::system_error when the file system refuses.
bool append_prefix_rule(const std::string& rules_dir, const std::vector<std::string>& prefix);

/// Where a home's rules live: HOME/rules (Codex keeps its amendments in
/// ~/.codex/rules/default.rules).
std::string rules_dir_of(const std::string& home);

}  // namespace parley::rules
