#include "actors/model/scripted_model.hpp"

#include "actors/core/handlers.hpp"
#include "actors/model/wire/compaction.hpp"

namespace parley {

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

/// `run[...]`'s options, comma-separated: `escalate` (asks to run outside
/// the sandbox, as a model's sandbox_permissions "require_escalated" does)
/// and `timeout_ms=N`. false: not options the script understands.
bool read_run_options(const std::string& text, model_step& s) {
  size_t pos = 0;
  while (pos <= text.size()) {
    auto end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    auto option = trim(text.substr(pos, end - pos));
    if (option == "escalate") {
      s.escalate = true;
      s.justification = "the script asks to run this outside the sandbox";
    } else if (starts_with(option, "timeout_ms=")) {
      try {
        size_t used = 0;
        auto ms = std::stoll(option.substr(11), &used);
        if (used != option.size() - 11 || ms <= 0) return false;
        s.timeout_ms = ms;
      } catch (const std::exception&) {
        return false;
      }
    } else if (!option.empty()) {
      return false;
    }
    pos = end + 1;
  }
  return true;
}

}  // namespace

const std::string& scripted_model_help() {
  static const std::string text =
      "I am parley's scripted model. Write one directive per line: "
      "`run: <command>` runs a shell command in the sandbox (asking only as the approval "
      "policy says), "
      "`run[timeout_ms=N]: <command>` with a timeout, `run[escalate]: <command>` asks to run it "
      "outside the sandbox, "
      "`say: <text>` makes me say the text, "
      "`ask: <question>` asks the user (or `ask: {\"questions\": [...]}` as "
      "request_user_input's arguments), "
      "`call[NAME]: {json}` calls a tool the client declared, "
      "`permissions: {json}` asks for more sandbox permissions (request_permissions's "
      "arguments: {\"permissions\": {\"file_system\": {\"write\": [...]}, \"network\": "
      "{\"enabled\": true}}}), "
      "`patch:` followed by an apply_patch patch (through `*** End Patch`) changes files "
      "(after approval).";
  return text;
}

std::vector<std::string> split_into_deltas(const std::string& text) {
  // Three words per delta, spaces kept, so the concatenation is the text.
  std::vector<std::string> out;
  std::string current;
  int words = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    current += text[i];
    bool word_end = text[i] == ' ' && (i + 1 == text.size() || text[i + 1] != ' ');
    if (word_end && ++words == 3) {
      out.push_back(std::move(current));
      current.clear();
      words = 0;
    }
  }
  if (!current.empty() || out.empty()) out.push_back(std::move(current));
  return out;
}

std::vector<model_step> plan_steps(const std::string& user_text) {
  std::vector<std::string> lines;
  for (size_t pos = 0; pos <= user_text.size();) {
    auto end = user_text.find('\n', pos);
    if (end == std::string::npos) end = user_text.size();
    auto line = user_text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    pos = end + 1;
  }
  std::vector<model_step> steps;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto line = trim(lines[i]);
    if (starts_with(line, "run:") || starts_with(line, "run[")) {
      model_step s;
      s.what = model_step::kind::run;
      auto colon = line.find(':');
      if (line[3] == '[') {
        auto close = line.find("]:");
        if (close == std::string::npos) continue;
        if (!read_run_options(line.substr(4, close - 4), s)) continue;
        colon = close + 1;
      }
      s.command = trim(line.substr(colon + 1));
      if (s.command.empty()) continue;
      steps.push_back(std::move(s));
    } else if (starts_with(line, "ask:")) {
      // A question for the user: plain text is one question (id "q1"); a
      // JSON object is request_user_input's arguments as a model sends them.
      model_step s;
      s.what = model_step::kind::ask_user;
      auto text = trim(line.substr(4));
      if (!text.empty() && text[0] == '{') {
        s.arguments = nlohmann::json::parse(text, nullptr, false);  // discarded: the turn says so
      } else {
        s.arguments = {{"questions",
                        nlohmann::json::array(
                            {{{"id", "q1"}, {"header", "Question"}, {"question", text}}})}};
      }
      steps.push_back(std::move(s));
    } else if (starts_with(line, "call[")) {
      // A tool the client declared: `call[NAME]: {json arguments}` (a
      // namespaced tool as the model names it, NAMESPACE__NAME).
      auto close = line.find("]:");
      if (close == std::string::npos || close == 5) continue;
      model_step s;
      s.what = model_step::kind::call_tool;
      s.tool = trim(line.substr(5, close - 5));
      auto text = trim(line.substr(close + 2));
      s.arguments = text.empty() ? nlohmann::json::object()
                                 : nlohmann::json::parse(text, nullptr, false);
      steps.push_back(std::move(s));
    } else if (starts_with(line, "permissions:")) {
      // More sandbox permissions: request_permissions's arguments as a
      // model sends them (a text that is no JSON: the turn says so).
      model_step s;
      s.what = model_step::kind::request_permissions;
      s.arguments = nlohmann::json::parse(trim(line.substr(12)), nullptr, false);
      steps.push_back(std::move(s));
    } else if (starts_with(line, "say:")) {
      model_step s;
      s.what = model_step::kind::say;
      s.deltas = split_into_deltas(trim(line.substr(4)));
      steps.push_back(std::move(s));
    } else if (starts_with(line, "patch:")) {
      // The patch's lines are taken verbatim (a hunk's context lines start
      // with a space) through "*** End Patch", or to the end of the text.
      model_step s;
      s.what = model_step::kind::patch;
      auto first = trim(line.substr(6));
      if (!first.empty()) s.patch = first + "\n";
      bool ended = trim(first) == "*** End Patch";
      while (!ended && i + 1 < lines.size()) {
        const auto& body = lines[++i];
        s.patch += body + "\n";
        ended = trim(body) == "*** End Patch";
      }
      steps.push_back(std::move(s));
    }
  }
  if (steps.empty()) {
    model_step s;
    s.what = model_step::kind::say;
    s.deltas = split_into_deltas(scripted_model_help());
    steps.push_back(std::move(s));
  }
  return steps;
}

model_step next_step(const model_context& ctx) {
  // The turn's script, then each message steered into it, in order (a
  // steered message without directives is answered with the help).
  auto steps = plan_steps(ctx.user_text);
  for (const auto& text : ctx.steered) {
    auto more = plan_steps(text);
    steps.insert(steps.end(), std::make_move_iterator(more.begin()),
                 std::make_move_iterator(more.end()));
  }
  if (ctx.step_results.size() < steps.size()) return steps[ctx.step_results.size()];
  return model_step{};
}

/// A review: the custom target's directives when it has any, else a
/// deterministic review naming the files git said changed.
model_step scripted_review(const model_context& ctx) {
  if (!ctx.review_script.empty()) {
    auto steps = plan_steps(ctx.review_script);
    if (ctx.step_results.size() < steps.size()) return steps[ctx.step_results.size()];
    return model_step{};
  }
  if (!ctx.step_results.empty()) return model_step{};
  std::string files;
  for (const auto& f : ctx.review_files) files += (files.empty() ? "" : ", ") + f;
  nlohmann::json answer{
      {"findings", nlohmann::json::array()},
      {"overall_correctness", "patch is correct"},
      {"overall_explanation",
       "The scripted model read " + std::to_string(ctx.review_files.size()) + " changed file(s)"
           + (files.empty() ? std::string{} : ": " + files) + ". It has nothing to report."},
      {"overall_confidence_score", 0.5}};
  model_step s;
  s.what = model_step::kind::say;
  s.deltas = {answer.dump()};
  return s;
}

compaction_result scripted_compaction(const model_context& ctx) {
  std::string directed;            // the latest `summary:` line
  std::vector<std::string> asked;  // each user message's first line
  for (const auto& item : ctx.history) {
    if (!item.is_object() || item.value("role", std::string{}) != "user") continue;
    auto content = item.find("content");
    if (content == item.end() || !content->is_array()) continue;
    for (const auto& part : *content) {
      auto text = part.is_object() ? part.value("text", std::string{}) : std::string{};
      if (text.empty() || wire::is_summary_message(text)) continue;
      asked.push_back(trim(text.substr(0, text.find('\n'))));
      for (size_t pos = 0; pos < text.size();) {
        auto end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        auto line = trim(text.substr(pos, end - pos));
        if (starts_with(line, "summary:")) directed = trim(line.substr(8));
        pos = end + 1;
      }
    }
  }
  compaction_result out;
  if (!directed.empty()) {
    out.summary = directed;
  } else {
    out.summary = "The user wrote " + std::to_string(asked.size()) + " message(s)";
    for (size_t i = 0; i < asked.size(); ++i) out.summary += (i ? "; " : ": ") + asked[i];
    out.summary += ".";
  }
  out.message = wire::summary_message_text(out.summary);
  out.replacement = wire::compacted_history(ctx.history, out.summary);
  return out;
}

model_actor::behavior_type scripted_model(model_actor::pointer self,
                                          std::shared_ptr<const runtime_config>) {
  install_default_handlers(self, "model");
  return {
      [](atom::step, const model_context& ctx) {
        if (!ctx.review_instructions.empty()) return scripted_review(ctx);
        if (!ctx.compact) return next_step(ctx);
        model_step done;
        done.compacted = scripted_compaction(ctx);
        return done;
      },
      // Its answer is a whole step, no stream: nothing to hold back.
      [](atom::pressure, bool) {},
  };
}

}  // namespace parley
