#include "protocol/review.hpp"

namespace parley::protocol {

void from_json(const json& j, review_target& x) {
  require_object(j);
  auto type = required<std::string>(j, "type");
  if (type == "uncommittedChanges") {
    x.type = review_target::kind::uncommitted_changes;
  } else if (type == "baseBranch") {
    x.type = review_target::kind::base_branch;
    x.branch = required<std::string>(j, "branch");
  } else if (type == "commit") {
    x.type = review_target::kind::commit;
    x.sha = required<std::string>(j, "sha");
    x.title = optional<std::string>(j, "title");
  } else if (type == "custom") {
    x.type = review_target::kind::custom;
    x.instructions = required<std::string>(j, "instructions");
  } else {
    throw_unknown_variant(type, {"uncommittedChanges", "baseBranch", "commit", "custom"});
  }
}

void to_json(json& j, const review_target& x) {
  switch (x.type) {
    case review_target::kind::uncommitted_changes:
      j = json{{"type", "uncommittedChanges"}};
      return;
    case review_target::kind::base_branch:
      j = json{{"type", "baseBranch"}, {"branch", x.branch}};
      return;
    case review_target::kind::commit:
      j = json{{"type", "commit"}, {"sha", x.sha}, {"title", or_null(x.title)}};
      return;
    case review_target::kind::custom:
      j = json{{"type", "custom"}, {"instructions", x.instructions}};
      return;
  }
}

void from_json(const json& j, review_start_params& x) {
  require_object(j);
  x.thread_id = required<std::string>(j, "threadId");
  x.target = required<review_target>(j, "target");
  if (auto delivery = optional<std::string>(j, "delivery"); delivery && *delivery != "inline")
    throw_unknown_variant(*delivery, {"inline"});
}

namespace {

bool blank(const std::string& s) {
  return s.find_first_not_of(" \t\r\n") == std::string::npos;
}

}  // namespace

std::optional<std::string> review_target_refusal(const review_target& x) {
  switch (x.type) {
    case review_target::kind::uncommitted_changes:
      return std::nullopt;
    case review_target::kind::base_branch:
      if (blank(x.branch)) return "branch must not be empty";
      // git would read it as an option: nothing of the request reaches git so.
      if (x.branch.front() == '-') return "branch must not start with '-'";
      return std::nullopt;
    case review_target::kind::commit:
      if (blank(x.sha)) return "sha must not be empty";
      if (x.sha.front() == '-') return "sha must not start with '-'";
      return std::nullopt;
    case review_target::kind::custom:
      if (blank(x.instructions)) return "instructions must not be empty";
      return std::nullopt;
  }
  return std::nullopt;
}

void to_json(json& j, const review_start_response& x) {
  j = json{{"turn", x.turn_}, {"reviewThreadId", x.review_thread_id}};
}

namespace review_detail {

/// The JSON object in an answer: all of it, or from the first '{' to the
/// last '}' (a model may fence it).
json object_in(const std::string& answer) {
  auto whole = json::parse(answer, nullptr, false);
  if (whole.is_object()) return whole;
  auto b = answer.find('{');
  auto e = answer.rfind('}');
  if (b == std::string::npos || e == std::string::npos || e < b) return json();
  auto inner = json::parse(answer.substr(b, e - b + 1), nullptr, false);
  return inner.is_object() ? inner : json();
}

std::string str(const json& j, const char* key) {
  auto i = j.find(key);
  return i != j.end() && i->is_string() ? i->get<std::string>() : std::string{};
}

double num(const json& j, const char* key) {
  auto i = j.find(key);
  return i != j.end() && i->is_number() ? i->get<double>() : 0.0;
}

}  // namespace review_detail


std::string render_review(const json& output) {
  if (!output.is_object()) return {};
  std::string text = review_detail::str(output, "overall_explanation");
  auto findings = output.find("findings");
  if (findings == output.end() || !findings->is_array() || findings->empty()) return text;
  if (!text.empty()) text += "\n\n";
  text += "Findings:";
  for (const auto& f : *findings) {
    if (!f.is_object()) continue;
    text += "\n\n* " + review_detail::str(f, "title");
    auto loc = f.find("code_location");
    if (loc != f.end() && loc->is_object()) {
      auto path = review_detail::str(*loc, "absolute_file_path");
      auto range = loc->find("line_range");
      if (!path.empty()) {
        text += " (" + path;
        if (range != loc->end() && range->is_object() && (*range)["start"].is_number())
          text += ", lines " + std::to_string((*range)["start"].get<int64_t>()) + "-"
                  + std::to_string((*range).value("end", (*range)["start"].get<int64_t>()));
        text += ")";
      }
    }
    auto body = review_detail::str(f, "body");
    if (!body.empty()) text += "\n  " + body;
  }
  return text;
}

review_verdict read_review_answer(const std::string& answer) {
  review_verdict v;
  auto j = review_detail::object_in(answer);
  if (j.is_object() && (j.contains("findings") || j.contains("overall_explanation"))) {
    json findings = json::array();
    if (auto f = j.find("findings"); f != j.end() && f->is_array()) findings = *f;
    v.output = json{{"findings", std::move(findings)},
                    {"overall_correctness", review_detail::str(j, "overall_correctness")},
                    {"overall_explanation", review_detail::str(j, "overall_explanation")},
                    {"overall_confidence_score", review_detail::num(j, "overall_confidence_score")}};
    v.text = render_review(v.output);
    return v;
  }
  v.output = json{{"findings", json::array()},
                  {"overall_correctness", ""},
                  {"overall_explanation", answer},
                  {"overall_confidence_score", 0.0}};
  v.text = answer;
  return v;
}

}  // namespace parley::protocol
