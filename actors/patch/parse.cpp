// The patch grammar: reads Codex's apply_patch text into a parsed_patch.

#include "actors/patch/apply_patch.hpp"
#include "actors/patch/detail.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::patch {
namespace {

using detail::rtrim;
using detail::trim;
using std::string_view;

bool starts_with(string_view s, string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool ends_with(string_view s, string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Quotes a patch line for an error message; long lines are cut so one bad
// line cannot flood the reply.
std::string quote(string_view line) {
  constexpr size_t limit = 80;
  if (line.size() <= limit) return "'" + std::string(line) + "'";
  return "'" + std::string(line.substr(0, limit)) + "...'";
}

// -- parsing ------------------------------------------------------------------

constexpr string_view begin_marker = "*** Begin Patch";
constexpr string_view end_marker = "*** End Patch";
constexpr string_view add_marker = "*** Add File:";
constexpr string_view update_marker = "*** Update File:";
constexpr string_view delete_marker = "*** Delete File:";
constexpr string_view move_marker = "*** Move to:";
constexpr string_view eof_marker = "*** End of File";

error parse_error(size_t line, const std::string& what) {
  return {"invalid patch: line " + std::to_string(line) + ": " + what};
}

std::string unexpected_line(string_view line) {
  return "unexpected line " + quote(line)
         + ": hunk lines start with ' ' (context), '+' (added) or '-' (removed),"
           " and a new hunk starts with '@@'";
}

// Splits on '\n' and drops one '\r' before it, so CRLF patches parse too.
std::vector<string_view> split_patch_lines(const std::string& text) {
  std::vector<string_view> lines;
  size_t pos = 0;
  while (pos <= text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    string_view line(text.data() + pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    pos = nl + 1;
  }
  return lines;
}

bool is_heredoc_start(string_view line) {
  return line == "<<EOF" || line == "<<'EOF'" || line == "<<\"EOF\"";
}

// A recursive-descent reader over the lines between the Begin and End markers.
// Indices are 0-based; messages use index + 1.
class parser {
 public:
  explicit parser(const std::string& text) : lines_(split_patch_lines(text)) {}

  result<parsed_patch> run() {
    if (auto err = find_envelope()) return *err;
    parsed_patch out;
    while (pos_ < end_) {
      auto header = trim(lines_[pos_]);
      if (header.empty()) {
        ++pos_;
        continue;
      }
      std::optional<error> err;
      if (starts_with(header, add_marker))
        err = add_file(header, out);
      else if (starts_with(header, update_marker))
        err = update_file(header, out);
      else if (starts_with(header, delete_marker))
        err = delete_file(header, out);
      else
        err = parse_error(pos_ + 1, quote(lines_[pos_])
                                        + " is not a file header; expected '*** Add File: <path>',"
                                          " '*** Update File: <path>' or '*** Delete File: <path>'");
      if (err) return *err;
    }
    if (out.files.empty())
      return error{"invalid patch: nothing between '*** Begin Patch' and '*** End Patch'"};
    return out;
  }

 private:
  // Locates "*** Begin Patch" ... "*** End Patch", ignoring blank lines around
  // them and, as Codex does for models that send shell syntax, a heredoc
  // wrapper (<<'EOF' ... EOF).
  std::optional<error> find_envelope() {
    auto blank = [&](size_t i) { return trim(lines_[i]).empty(); };
    size_t first = 0;
    while (first < lines_.size() && blank(first)) ++first;
    if (first == lines_.size()) return error{"invalid patch: the patch is empty"};
    size_t last = lines_.size() - 1;
    while (blank(last)) --last;
    if (last - first >= 3 && is_heredoc_start(trim(lines_[first]))
        && ends_with(trim(lines_[last]), "EOF")) {
      ++first;
      --last;
      while (first < last && blank(first)) ++first;
      while (last > first && blank(last)) --last;
    }
    if (trim(lines_[first]) != begin_marker)
      return parse_error(first + 1, "the patch must start with '*** Begin Patch', found "
                                        + quote(trim(lines_[first])));
    if (last == first || trim(lines_[last]) != end_marker)
      return parse_error(
          last + 1, "the patch must end with '*** End Patch', found " + quote(trim(lines_[last])));
    pos_ = first + 1;
    end_ = last;
    return std::nullopt;
  }

  // The path after a marker, or an error naming the marker.
  std::optional<std::string> path_after(string_view header, string_view marker,
                                        std::optional<error>& err) const {
    auto path = trim(header.substr(marker.size()));
    if (path.empty()) {
      err = parse_error(pos_ + 1, "missing path after '" + std::string(marker) + "'");
      return std::nullopt;
    }
    return std::string(path);
  }

  // The section a file header opens (moving past the header), or nullopt
  // with `err` set.
  std::optional<file_patch> start_file(string_view header, string_view marker, change_kind kind,
                                       std::optional<error>& err) {
    auto path = path_after(header, marker, err);
    if (!path) return std::nullopt;
    file_patch f;
    f.kind = kind;
    f.path = std::move(*path);
    f.line = ++pos_;
    return f;
  }

  std::optional<error> add_file(string_view header, parsed_patch& out) {
    std::optional<error> err;
    auto f = start_file(header, add_marker, change_kind::add, err);
    if (!f) return err;
    // Every following '+' line is content; the first other line ends the file.
    for (; pos_ < end_ && starts_with(lines_[pos_], "+"); ++pos_) {
      f->content.append(lines_[pos_].substr(1));
      f->content += '\n';
    }
    out.files.push_back(std::move(*f));
    return std::nullopt;
  }

  std::optional<error> delete_file(string_view header, parsed_patch& out) {
    std::optional<error> err;
    auto f = start_file(header, delete_marker, change_kind::remove, err);
    if (!f) return err;
    out.files.push_back(std::move(*f));
    return std::nullopt;
  }

  std::optional<error> update_file(string_view header, parsed_patch& out) {
    std::optional<error> err;
    auto started = start_file(header, update_marker, change_kind::update, err);
    if (!started) return err;
    auto& f = *started;
    if (pos_ < end_ && starts_with(trim(lines_[pos_]), move_marker)) {
      auto to = path_after(trim(lines_[pos_]), move_marker, err);
      if (!to) return err;
      f.move_to = std::move(*to);
      ++pos_;
    }
    while (pos_ < end_) {
      auto line = lines_[pos_];
      if (trim(line).empty()) {  // blank lines between hunks
        ++pos_;
        continue;
      }
      if (starts_with(line, "*")) break;  // the next file header (or garbage)
      hunk h;
      if (auto hunk_err = read_hunk(f.hunks.empty(), h)) return hunk_err;
      f.hunks.push_back(std::move(h));
    }
    if (f.hunks.empty())
      return parse_error(f.line, "'*** Update File: " + f.path + "' has no hunks");
    out.files.push_back(std::move(f));
    return std::nullopt;
  }

  // One hunk: "@@" header lines, then ' ', '+', '-' lines, then an optional
  // "*** End of File". Codex lets the first hunk of a file omit its "@@".
  std::optional<error> read_hunk(bool first, hunk& h) {
    h.line = pos_ + 1;
    bool has_header = false;
    for (; pos_ < end_; ++pos_) {
      auto line = lines_[pos_];
      if (rtrim(line) == "@@") {
        has_header = true;
      } else if (starts_with(line, "@@ ")) {
        has_header = true;
        // Several "@@ <anchor>" lines narrow the search step by step (class,
        // then method), as Codex's tool instructions describe.
        if (!trim(line.substr(3)).empty()) h.anchors.emplace_back(line.substr(3));
      } else {
        break;
      }
    }
    if (!has_header && !first) return parse_error(pos_ + 1, unexpected_line(lines_[pos_]));
    size_t body = 0;
    for (; pos_ < end_; ++pos_, ++body) {
      auto line = lines_[pos_];
      if (rtrim(line) == eof_marker) {
        if (body == 0) return parse_error(pos_ + 1, "'*** End of File' ends an empty hunk");
        h.end_of_file = true;
        ++pos_;
        break;
      }
      if (line.empty()) {  // an editor stripped the ' ' of an empty context line
        h.lines.push_back({' ', ""});
        continue;
      }
      if (line[0] != ' ' && line[0] != '-' && line[0] != '+') break;
      h.lines.push_back({line[0], std::string(line.substr(1))});
    }
    if (body == 0) {
      if (pos_ < end_ && !starts_with(lines_[pos_], "*"))
        return parse_error(pos_ + 1, unexpected_line(lines_[pos_]));
      return parse_error(h.line, "empty hunk");
    }
    return std::nullopt;
  }

  std::vector<string_view> lines_;
  size_t pos_ = 0;  // next line to read
  size_t end_ = 0;  // index of "*** End Patch"
};

}  // namespace

std::vector<std::string> hunk::old_lines() const {
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (l.kind != '+') out.push_back(l.text);
  return out;
}

std::vector<std::string> hunk::new_lines() const {
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (l.kind != '-') out.push_back(l.text);
  return out;
}

result<parsed_patch> parse(const std::string& text) {
  return parser(text).run();
}

}  // namespace parley::patch
