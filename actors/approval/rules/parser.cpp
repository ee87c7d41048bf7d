// The .rules parser: the Starlark subset Codex's execpolicy files use
// (calls with keyword arguments whose values are strings and lists), read
// into rules, with every error at its line and column.

#include <set>

#include "actors/approval/rules/glob.hpp"
#include "actors/approval/rules/rules.hpp"

namespace parley::rules {

namespace {

struct position {
  size_t line = 1;
  size_t column = 1;
};

struct token {
  enum class type { name, string, open_paren, close_paren, open_bracket, close_bracket, comma,
                    equals, end };
  type what = type::end;
  std::string text;  // names: the name; strings: the value, escapes resolved
  position at;
};

const char* describe(token::type x) {
  switch (x) {
    case token::type::name: return "a name";
    case token::type::string: return "a string";
    case token::type::open_paren: return "`(`";
    case token::type::close_paren: return "`)`";
    case token::type::open_bracket: return "`[`";
    case token::type::close_bracket: return "`]`";
    case token::type::comma: return "`,`";
    case token::type::equals: return "`=`";
    case token::type::end: return "the end of the file";
  }
  return "?";
}

class lexer {
 public:
  lexer(const std::string& text, const std::string& source) : text_(text), source_(source) {}

  token next() {
    skip_blanks_and_comments();
    token t;
    t.at = at_;
    if (i_ == text_.size()) return t;
    char c = text_[i_];
    if (c == '"' || c == '\'') {
      t.what = token::type::string;
      t.text = read_string(c);
      return t;
    }
    if (is_name_start(c)) {
      t.what = token::type::name;
      while (i_ < text_.size() && (is_name_start(text_[i_]) || is_digit(text_[i_])))
        t.text += take();
      return t;
    }
    switch (c) {
      case '(': t.what = token::type::open_paren; break;
      case ')': t.what = token::type::close_paren; break;
      case '[': t.what = token::type::open_bracket; break;
      case ']': t.what = token::type::close_bracket; break;
      case ',': t.what = token::type::comma; break;
      case '=': t.what = token::type::equals; break;
      default: throw load_error(source_, at_.line, at_.column,
                                std::string{"unexpected character `"} + c + "`");
    }
    take();
    return t;
  }

 private:
  static bool is_name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  char take() {
    char c = text_[i_++];
    if (c == '\n') {
      ++at_.line;
      at_.column = 1;
    } else {
      ++at_.column;
    }
    return c;
  }

  void skip_blanks_and_comments() {
    while (i_ < text_.size()) {
      char c = text_[i_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        take();
      } else if (c == '#') {
        while (i_ < text_.size() && text_[i_] != '\n') take();
      } else {
        return;
      }
    }
  }

  std::string read_string(char quote) {
    auto start = at_;
    take();
    std::string value;
    while (true) {
      if (i_ == text_.size() || text_[i_] == '\n')
        throw load_error(source_, start.line, start.column, "unterminated string");
      auto escape_at = at_;
      char c = take();
      if (c == quote) return value;
      if (c != '\\') {
        value += c;
        continue;
      }
      char e = i_ < text_.size() ? take() : '\0';
      switch (e) {
        case '\\': value += '\\'; break;
        case '"': value += '"'; break;
        case '\'': value += '\''; break;
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        default:
          throw load_error(source_, escape_at.line, escape_at.column,
                           std::string{"unknown escape `\\"} + e + "` in a string");
      }
    }
  }

  const std::string& text_;
  const std::string& source_;
  size_t i_ = 0;
  position at_;
};

/// A keyword argument's value: a string or a list of values.
struct value {
  position at;
  bool is_list = false;
  std::string text;
  std::vector<value> items;
};

/// A match / not_match example.
struct example {
  position at;
  std::vector<std::string> argv;
};

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> words;
  std::string word;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

class parser {
 public:
  parser(const std::string& text, const std::string& source)
      : source_(source), lexer_(text, source), next_(lexer_.next()) {}

  std::vector<rule> parse_file() {
    std::vector<rule> rules;
    while (next_.what != token::type::end) rules.push_back(parse_call());
    return rules;
  }

 private:
  // Deep enough for any rule (a pattern is a list of lists); shallow enough
  // that `[[[[...` can't exhaust the stack.
  static constexpr size_t max_nesting = 8;

  [[noreturn]] void fail(position at, const std::string& message) const {
    throw load_error(source_, at.line, at.column, message);
  }

  token take() {
    token t = std::move(next_);
    next_ = lexer_.next();
    return t;
  }

  token expect(token::type what, const std::string& context) {
    if (next_.what != what)
      fail(next_.at, std::string{"expected "} + describe(what) + " " + context + ", found "
                         + describe(next_.what));
    return take();
  }

  value parse_value(size_t depth) {
    value v;
    v.at = next_.at;
    if (next_.what == token::type::string) {
      v.text = take().text;
      return v;
    }
    if (next_.what != token::type::open_bracket)
      fail(next_.at, std::string{"expected a string or a list, found "} + describe(next_.what));
    if (depth == max_nesting) fail(next_.at, "lists nested too deeply");
    take();
    v.is_list = true;
    while (next_.what != token::type::close_bracket) {
      v.items.push_back(parse_value(depth + 1));
      if (next_.what != token::type::close_bracket)
        expect(token::type::comma, "between list elements");
    }
    take();
    return v;
  }

  rule parse_call() {
    auto name = expect(token::type::name, "(a rule such as prefix_rule(...))");
    rule r;
    std::set<std::string> allowed;
    if (name.text == "prefix_rule") {
      r.what = rule::kind::prefix;
      allowed = {"pattern", "decision", "justification", "match", "not_match"};
    } else if (name.text == "path_rule") {
      r.what = rule::kind::path;
      allowed = {"glob", "decision", "justification"};
    } else {
      fail(name.at, "unknown function `" + name.text + "` (expected prefix_rule or path_rule)");
    }
    r.source = source_ + ":" + std::to_string(name.at.line);
    expect(token::type::open_paren, "after " + name.text);

    std::set<std::string> seen;
    std::vector<example> matches, not_matches;
    while (next_.what != token::type::close_paren) {
      if (next_.what != token::type::name)
        fail(next_.at, name.text + " takes keyword arguments only (`name = value`), found "
                           + describe(next_.what));
      auto keyword = take();
      if (!allowed.count(keyword.text))
        fail(keyword.at, "unknown keyword `" + keyword.text + "` for " + name.text);
      if (!seen.insert(keyword.text).second)
        fail(keyword.at, "`" + keyword.text + "` given twice");
      expect(token::type::equals, "after `" + keyword.text + "`");
      auto v = parse_value(0);
      if (keyword.text == "pattern")
        r.pattern = pattern_of(v);
      else if (keyword.text == "decision")
        r.verdict = decision_of(v);
      else if (keyword.text == "justification")
        r.justification = string_of(v, "justification");
      else if (keyword.text == "glob")
        r.glob = glob_of(v);
      else if (keyword.text == "match")
        matches = examples_of(v, "match");
      else
        not_matches = examples_of(v, "not_match");
      if (next_.what != token::type::close_paren)
        expect(token::type::comma, "between arguments");
    }
    take();

    if (r.what == rule::kind::prefix && !seen.count("pattern"))
      fail(name.at, "prefix_rule needs a `pattern`");
    if (r.what == rule::kind::path && !seen.count("glob"))
      fail(name.at, "path_rule needs a `glob`");
    // Codex defaults a prefix rule to allow; a path rule is ours, and one
    // that allows must say so.
    if (r.what == rule::kind::path && !seen.count("decision"))
      fail(name.at, "path_rule needs a `decision`");
    for (auto& e : matches)
      if (!r.matches_command(e.argv))
        fail(e.at, "match example \"" + joined(e.argv) + "\" does not match " + r.text());
    for (auto& e : not_matches)
      if (r.matches_command(e.argv))
        fail(e.at, "not_match example \"" + joined(e.argv) + "\" matches " + r.text());
    return r;
  }

  std::string string_of(const value& v, const std::string& keyword) const {
    if (v.is_list) fail(v.at, "`" + keyword + "` must be a string");
    return v.text;
  }

  decision decision_of(const value& v) const {
    auto name = string_of(v, "decision");
    if (name == "allow") return decision::allow;
    if (name == "prompt" || name == "ask") return decision::ask;
    if (name == "forbidden" || name == "deny") return decision::deny;
    fail(v.at, "bad decision \"" + name + "\" (expected allow, prompt, forbidden, ask or deny)");
  }

  std::vector<std::vector<std::string>> pattern_of(const value& v) const {
    if (!v.is_list) fail(v.at, "`pattern` must be a list, e.g. [\"git\", \"push\"]");
    if (v.items.empty()) fail(v.at, "empty pattern");
    std::vector<std::vector<std::string>> pattern;
    for (auto& element : v.items) {
      if (!element.is_list) {
        pattern.push_back({element.text});
        continue;
      }
      if (element.items.empty()) fail(element.at, "empty list of alternatives in `pattern`");
      std::vector<std::string> alternatives;
      for (auto& alternative : element.items) {
        if (alternative.is_list)
          fail(alternative.at, "an alternative in `pattern` must be a string");
        alternatives.push_back(alternative.text);
      }
      pattern.push_back(std::move(alternatives));
    }
    return pattern;
  }

  std::string glob_of(const value& v) const {
    auto glob = string_of(v, "glob");
    if (glob.empty()) fail(v.at, "bad glob: the glob is empty");
    if (auto problem = check_glob(glob)) {
      // Point into the string; +1 skips the opening quote (exact for globs
      // without escapes, which is every sensible glob).
      fail({v.at.line, v.at.column + 1 + problem->offset}, "bad glob: " + problem->message);
    }
    return glob;
  }

  std::vector<example> examples_of(const value& v, const std::string& keyword) const {
    if (!v.is_list)
      fail(v.at, "`" + keyword + "` must be a list of examples (strings or lists of strings)");
    std::vector<example> examples;
    for (auto& item : v.items) {
      example e{item.at, {}};
      if (item.is_list) {
        for (auto& word : item.items) {
          if (word.is_list) fail(word.at, "a word of a `" + keyword + "` example must be a string");
          e.argv.push_back(word.text);
        }
      } else {
        e.argv = split_words(item.text);
      }
      if (e.argv.empty()) fail(item.at, "empty `" + keyword + "` example");
      examples.push_back(std::move(e));
    }
    return examples;
  }

  const std::string& source_;
  lexer lexer_;
  token next_;
};

}  // namespace

rule_set rule_set::parse(const std::string& text, const std::string& source_name) {
  rule_set set;
  set.rules_ = parser{text, source_name}.parse_file();
  return set;
}

}  // namespace parley::rules
