#include "transport/chat/chat_render.hpp"

#include <sstream>

#include "protocol/approvals.hpp"

namespace parley::chat_render {

namespace {

using protocol::json;

std::string text_of(const json& j, const char* key, const char* fallback = "?") {
  if (j.is_object() && j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  return fallback;
}

/// Shows texts of a request through visible_text() and remembers whether
/// one of them needed an escape.
class shown_texts {
 public:
  explicit shown_texts(escape_style style) : style_(style) {}

  std::string operator()(const std::string& text, text_layout layout = text_layout::one_line) {
    auto shown = visible_text(text, layout, style_);
    if (shown != text) escaped_ = true;
    return shown;
  }

  bool escaped() const { return escaped_; }

 private:
  escape_style style_;
  bool escaped_ = false;
};

/// Every line of `text` behind `prefix` (a trailing newline adds no line).
void indent(std::ostringstream& out, const std::string& text, const std::string& prefix,
            shown_texts& shown) {
  size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out << prefix << shown(text.substr(start, end - start), text_layout::lines) << "\n";
    start = end + 1;
  }
}

double number_of(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

void render_changes(std::ostringstream& out, const json& list, shown_texts& shown) {
  if (!list.is_array() || list.empty()) {
    // The item/started was not seen (or had no changes): say so rather than
    // let an empty prompt look like "nothing changes".
    out << "  (the changes were not announced)\n";
    return;
  }
  for (const auto& c : list) {
    auto kind = c.contains("kind") ? text_of(c["kind"], "type") : std::string{"?"};
    out << "  " << shown(kind) << " " << shown(text_of(c, "path"));
    if (c.contains("kind") && c["kind"].contains("move_path") && c["kind"]["move_path"].is_string())
      out << " -> " << shown(c["kind"]["move_path"].get<std::string>());
    out << "\n";
    auto diff = text_of(c, "diff", "");
    // For add and delete the diff is the file's content; mark it as such.
    std::string prefix = kind == "add" ? "    +" : kind == "delete" ? "    -" : "    ";
    indent(out, diff, prefix, shown);
  }
}

/// Under a request whose text needed an escape. A newline escaped in a
/// command (`\n`) reads like the two characters a shell would pass along,
/// and no colour marks it when the output is a pipe: this line does.
constexpr const char* escaped_note =
    "  ! control or invisible characters are shown escaped (\\e, \\r, \\n, \\xNN, <U+XXXX>)\n";

}  // namespace

std::string changes(const json& list, escape_style style) {
  std::ostringstream out;
  shown_texts shown{style};
  render_changes(out, list, shown);
  return out.str();
}

std::string approval(const queued_approval& q, size_t position, size_t total, escape_style style) {
  std::ostringstream out;
  shown_texts shown{style};
  out << "[approval " << position << " of " << total << "] thread " << shown(q.thread_id) << ": ";
  if (q.method == protocol::file_change_approval_method) {
    auto n = q.context.is_array() ? q.context.size() : 0;
    out << "change " << n << " file(s)";
    if (q.params.contains("reason") && q.params["reason"].is_string())
      out << " (" << shown(q.params["reason"].get<std::string>()) << ")";
    out << "\n";
    render_changes(out, q.context, shown);
  } else {
    out << "run `" << shown(text_of(q.params, "command")) << "` in "
        << shown(text_of(q.params, "cwd"));
    if (q.params.contains("reason") && q.params["reason"].is_string())
      out << " (" << shown(q.params["reason"].get<std::string>()) << ")";
    out << "\n";
  }
  if (shown.escaped()) out << escaped_note;
  return out.str();
}

const char* choices() {
  return "  [y] accept, [s] accept for session, [n] decline, [c] cancel turn, [a] abort all? ";
}

std::string stats(const json& result) {
  auto a = result.contains("approvals") ? result["approvals"] : json::object();
  auto n = [&](const char* key) { return static_cast<long long>(number_of(a, key)); };
  auto t = a.contains("timeToDecisionMs") ? a["timeToDecisionMs"] : json::object();
  std::ostringstream out;
  out << "[stats] approvals: " << n("requested") << " requested, " << n("pending") << " pending, "
      << n("decided") << " decided (" << n("allowed") << " allowed, " << n("denied")
      << " denied), " << n("timedOut") << " timed out, " << n("cancelled") << " cancelled, "
      << n("failed") << " failed\n";
  out << "[stats] time to decision: p50 " << number_of(t, "p50") << " ms, p99 "
      << number_of(t, "p99") << " ms\n";
  return out.str();
}

}  // namespace parley::chat_render
