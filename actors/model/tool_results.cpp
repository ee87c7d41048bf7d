#include "actors/model/tool_results.hpp"

#include "actors/model/wire/tool_outcomes.hpp"

namespace parley {

namespace {

std::string declined(const step_result& r, bool patch) {
  auto text = patch ? wire::patch_declined_text() : wire::exec_declined_text();
  // Declined by policy, a rule or a hook: the model learns why.
  if (!r.detail.empty()) text += ": " + r.detail;
  return text;
}

}  // namespace

std::string tool_result_text(const step_result& r, const wire::tool_call& call) {
  using kind = step_result::kind;
  bool patch = call.kind == wire::call_kind::patch;
  switch (r.what) {
    case kind::ran:
      return wire::exec_ran_text(r.exit_code, std::chrono::milliseconds(r.duration_ms), r.output);
    case kind::failed_to_start:
      return wire::exec_failed_to_start_text(r.detail);
    case kind::declined:
      return declined(r, patch);
    case kind::timed_out:
      return wire::approval_timed_out_text();
    case kind::approval_failed:
      return "not run: the approval request failed (" + r.detail + ")";
    case kind::cancelled:
    case kind::interrupted:
      return r.output.empty() ? wire::interrupted_text()
                              : wire::interrupted_text() + "\nOutput so far:\n" + r.output;
    case kind::patch_applied: {
      std::vector<wire::changed_file> files;
      for (const auto& [change, path] : r.files) files.push_back({change, path});
      return wire::patch_applied_text(files);
    }
    case kind::patch_failed:
      return wire::patch_failed_text(r.detail);
    case kind::refused:
      return r.detail;
    case kind::lost:
      return std::string{"the server stopped while this "}
             + (patch ? "patch was being applied" : "command ran")
             + "; it was not run again, and whether it finished is unknown";
    case kind::answered:
      return r.output;
    case kind::not_answered:
      return r.detail;
    case kind::said:
      break;
  }
  return {};
}

}  // namespace parley
