#include "actors/core/action_records.hpp"

namespace parley {

namespace {

std::optional<approval_outcome::kind> kind_from(const std::string& text) {
  using kind = approval_outcome::kind;
  for (auto k : {kind::decided, kind::client_error, kind::malformed, kind::timed_out,
                 kind::transport_closed, kind::cancelled})
    if (text == to_string(k)) return k;
  return std::nullopt;
}

}  // namespace

const char* to_string(action_record::phase x) {
  switch (x) {
    case action_record::phase::asked:
      return "asked";
    case action_record::phase::decided:
      return "decided";
    case action_record::phase::started:
      return "started";
    case action_record::phase::done:
      return "done";
  }
  return "asked";
}

std::optional<action_record::phase> phase_from(const std::string& text) {
  using phase = action_record::phase;
  for (auto p : {phase::asked, phase::decided, phase::started, phase::done})
    if (text == to_string(p)) return p;
  return std::nullopt;
}

void store_outcome(action_record& record, const approval_outcome& out) {
  record.outcome = to_string(out.how);
  record.decision = nullptr;
  record.answer = nullptr;
  if (out.how == approval_outcome::kind::decided) {
    record.decision = out.decision;
    record.answer = out.decision.answer;  // a request's answer (the decision's JSON lacks it)
  }
  record.stage = out.stage;
  record.detail = out.detail;
}

approval_outcome outcome_of(const action_record& record) {
  approval_outcome out;
  out.stage = record.stage;
  out.detail = record.detail;
  auto how = kind_from(record.outcome);
  if (!how) {
    out.how = approval_outcome::kind::malformed;
    out.detail = "the stored decision cannot be read";
    return out;
  }
  out.how = *how;
  if (out.how != approval_outcome::kind::decided) return out;
  try {
    out.decision = record.decision.get<protocol::approval_decision>();
    out.decision.answer = record.answer;
  } catch (const std::exception&) {
    out.how = approval_outcome::kind::malformed;
    out.detail = "the stored decision cannot be read";
  }
  return out;
}

}  // namespace parley
