#include "actors/threads/review_prompt.hpp"

namespace parley::review {

using json = nlohmann::json;
using kind = protocol::review_target::kind;

std::string hint(const protocol::review_target& t) {
  switch (t.type) {
    case kind::uncommitted_changes:
      return "uncommitted changes";
    case kind::base_branch:
      return "changes since branch " + t.branch;
    case kind::commit: {
      auto label = "commit " + t.sha.substr(0, 7);
      return t.title && !t.title->empty() ? label + " (" + *t.title + ")" : label;
    }
    case kind::custom:
      return t.instructions;
  }
  return {};
}

const std::string& instructions() {
  static const std::string text =
      "You review a code change for its author. Report only problems that matter: bugs, "
      "security holes, data loss, broken error handling, clear performance or maintenance "
      "traps that this change introduces. Leave out style preferences and problems that were "
      "there before the change. Each finding must be specific: the file and lines, what goes "
      "wrong and when, and why you believe it. You may run read-only commands (git, grep, cat) "
      "in the repository to see more than you are shown; do not change any file.\n\n"
      "Answer with one JSON object and nothing else:\n"
      "{\"findings\": [{\"title\": \"[P0..P3] short title\", \"body\": \"what is wrong and "
      "why\", \"confidence_score\": 0.0-1.0, \"priority\": 0-3, \"code_location\": "
      "{\"absolute_file_path\": \"/abs/path\", \"line_range\": {\"start\": 1, \"end\": 1}}}], "
      "\"overall_correctness\": \"patch is correct\" or \"patch is incorrect\", "
      "\"overall_explanation\": \"a few sentences\", \"overall_confidence_score\": 0.0-1.0}\n"
      "Priority 0 is a blocker, 3 a nit. An empty findings list is a fine answer.";
  return text;
}

namespace {

std::string diff_block(const review_facts& f) {
  if (f.diff.empty()) return "git shows no differences.\n";
  std::string out = "```diff\n" + f.diff;
  if (out.back() != '\n') out += '\n';
  out += "```\n";
  if (f.diff_cut)
    out += "(The diff is longer than this and was cut here; run git yourself for the rest.)\n";
  return out;
}

}  // namespace

std::string prompt(const protocol::review_target& t, const review_facts& f) {
  switch (t.type) {
    case kind::uncommitted_changes: {
      std::string out =
          "Review the changes in this working tree that are not committed yet: staged, "
          "unstaged and new (untracked) files.\n\n";
      out += "git status --porcelain:\n```\n" + (f.status.empty() ? "(clean)\n" : f.status)
             + "```\n\nThe staged and unstaged changes:\n" + diff_block(f);
      out += "Read new files yourself: their contents are not in the diff.\n";
      return out;
    }
    case kind::base_branch:
      return "Review the changes of this branch against `" + t.branch
             + "`: everything since their merge base " + f.base_sha
             + " (git diff " + f.base_sha + ", working tree included).\n\n" + diff_block(f);
    case kind::commit:
      return "Review commit " + f.commit_sha + " (\"" + (t.title ? *t.title : f.commit_title)
             + "\"): the changes it makes to its parent.\n\n" + diff_block(f);
    case kind::custom:
      return t.instructions;
  }
  return {};
}

}  // namespace parley::review
