// A turn's actions as the store keeps them. Each action of a turn (a command
// or a file change) is recorded before anything happens that a restart must
// not repeat or forget: asked (by its approval, before any client is asked),
// decided (by its approval, before the action runs) and started (here,
// before the process is spawned or a file is written). A turn loaded again
// after a restart goes on from the last of them (resume): an ask is asked
// again, a decision is applied exactly once, and a start that may have
// happened is never repeated: its item fails and the model is told so.

#include "actors/approval/action_digest.hpp"
#include "actors/approval/approval.hpp"
#include "actors/core/action_records.hpp"
#include "actors/core/log.hpp"
#include "actors/threads/turn_actions.hpp"
#include "actors/threads/turn_detail.hpp"

namespace parley::turn_detail {

namespace {

using protocol::item_status;

/// What says, on the item and to the model, that the action was cut short
/// by the server stopping.
constexpr const char* lost_text
    = "parley stopped while this ran; it was not run again, and whether it finished is unknown";

action_record action_base(const turn_state& st, const std::string& item_id,
                          const std::string& digest, int64_t started_ms) {
  const auto& s = st.settings;
  action_record r;
  r.turn_id = s.turn_id;
  r.item_id = item_id;
  r.digest = digest;
  r.item_started_ms = started_ms;
  r.step = static_cast<int64_t>(st.context.step_results.size());
  r.thread_cwd = s.cwd;
  r.policy = s.policy;
  r.writable_roots = s.writable_roots;
  r.sandbox = s.sandbox;
  return r;
}

/// Goes on from the stored phase of the action in progress (its item is
/// rebuilt in st.command or st.patch).
void go_on(self_ptr self, const action_record& a, approval_ask ask, notification_ptr started) {
  auto& st = self->state;
  bool file = a.file_change;
  switch (a.at) {
    case action_record::phase::asked: {
      // Asked again as it was: the same item and action; the stages before
      // the client's had passed, and the deadline is the stored one.
      ask.digest = a.digest;
      approval_plan plan;
      plan.what = approval_plan::route::decide;
      PARLEY_INFO("turn {} event=resumed phase=asked item={}", st.settings.turn_id, a.item_id);
      return ask_approval(self, std::move(ask), std::move(plan), std::move(started), true);
    }
    case action_record::phase::decided: {
      send_event(self, std::move(started));
      auto out = outcome_of(a);
      PARLEY_INFO("turn {} event=resumed phase=decided item={} outcome={} runs={}",
                  st.settings.turn_id, a.item_id, to_string(out.how),
                  out.how == approval_outcome::kind::decided && out.decision.allows_run());
      if (file)
        return settle(self, out, item_status::declined,
                      [&] { apply_accepted(self, out.decision); });
      return settle(self, out, item_status::failed, [&] { run_accepted(self, out.decision); });
    }
    case action_record::phase::started:
    case action_record::phase::done: {  // (done names requests only: never pending)
      send_event(self, std::move(started));
      PARLEY_INFO("turn {} event=resumed phase=started item={} not_run_again", st.settings.turn_id,
                  a.item_id);
      if (st.command) st.command->item.aggregated_output = lost_text;
      complete_current(self, item_status::failed, outcome(step_result::kind::lost, lost_text));
      return next_step(self);
    }
  }
}

void resume_command(self_ptr self, const action_record& a) {
  auto& st = self->state;
  command_step cmd;
  cmd.item.id = a.item_id;
  cmd.item.command = display_command(a.command);
  cmd.item.cwd = a.cwd;
  cmd.item.command_actions = describe_command(a.command);
  cmd.raw = a.command;
  cmd.escalated = a.escalated;
  cmd.justification = a.justification;
  cmd.timeout_ms = a.timeout_ms;
  cmd.started_ms = a.item_started_ms;
  auto started = started_event(self, cmd.item, cmd.started_ms);
  auto ask = command_ask(st.settings, cmd);
  st.command = std::move(cmd);
  go_on(self, a, std::move(ask), std::move(started));
}

void resume_patch(self_ptr self, const action_record& a) {
  auto& st = self->state;
  patch_step p;
  p.item.id = a.item_id;
  p.started_ms = a.item_started_ms;
  auto refusal = prepare_patch(st.settings, a.patch, p);
  approval_ask ask;
  if (!refusal) {
    ask = file_change_ask(st.settings, p);
    // What was shown is what would be written, or nothing is.
    if (ask.digest != a.digest)
      refusal = patch_refusal{"the files changed while the server was stopped", false};
  }
  // A change that may have been written is never written again, whatever
  // the files look like now.
  if (refusal && a.at != action_record::phase::started) {
    item_started(self, p.item, p.started_ms);
    st.patch = std::move(p);
    PARLEY_INFO("turn {} event=resumed_patch_refused reason=\"{}\"", st.settings.turn_id,
                refusal->reason);
    complete_current(self, item_status::failed,
                     outcome(step_result::kind::patch_failed, refusal->reason));
    say(self, {"apply_patch failed: " + refusal->reason}, "commentary");
    return next_step(self);
  }
  auto started = started_event(self, p.item, p.started_ms);
  st.patch = std::move(p);
  go_on(self, a, std::move(ask), std::move(started));
}

}  // namespace

action_record action_of(const turn_state& st, const command_step& cmd, const std::string& digest) {
  auto r = action_base(st, cmd.item.id, digest, cmd.started_ms);
  r.command = cmd.raw;
  r.cwd = cmd.item.cwd;
  r.escalated = cmd.escalated;
  r.justification = cmd.justification;
  r.timeout_ms = cmd.timeout_ms;
  return r;
}

action_record action_of(const turn_state& st, const request_step& r, const std::string& digest) {
  auto a = action_base(st, r.call_id, digest, r.started_ms);
  a.request = r.what == client_request::dynamic_tool ? "dynamicToolCall" : "userInput";
  a.request_params = r.params;
  return a;
}

action_record action_of(const turn_state& st, const mcp_step& m) {
  auto a = action_base(st, m.item.id, "", m.started_ms);
  a.request = "mcpToolCall";
  a.request_params = {{"server", m.item.server},
                      {"tool", m.item.tool},
                      {"arguments", m.item.arguments}};
  a.digest = request_digest(a.request, a.request_params.dump());
  // The item shows it again after a restart (not part of the digest).
  if (m.item.read_only_hint) a.request_params["readOnlyHint"] = *m.item.read_only_hint;
  // Asked of a person: the question again after a restart (the digest
  // stays the call's).
  if (!m.approval.is_null()) {
    a.request_params["approval"] = m.approval;
    a.request_params["approvalMode"] = m.approval_mode;
    a.request_params["deadlineMs"] = m.deadline_ms;
  }
  return a;
}

void record_done(self_ptr self, std::function<void()> then) {
  auto& st = self->state;
  auto r = st.action;
  r.at = action_record::phase::done;
  // Stored or not, the turn goes on: one that cannot be stored leaves the
  // store refusing this thread's later records too, so a restart finds the
  // answer still pending and nothing the model did after it.
  self->request(st.conversation, caf::infinite, atom::append::value, std::move(r))
      .then([self, then](atom::ok) { if (!self->state.finished) then(); },
            [self, then](caf::error& err) {
              PARLEY_WARN("turn {} event=request_done_not_stored error=\"{}\"",
                          self->state.settings.turn_id, message_of(err));
              if (!self->state.finished) then();
            });
}

action_record action_of(const turn_state& st, const patch_step& p, const std::string& patch,
                        const std::string& digest) {
  auto r = action_base(st, p.item.id, digest, p.started_ms);
  r.file_change = true;
  r.patch = patch;
  return r;
}

void record_started(self_ptr self, std::function<void()> start) {
  auto& st = self->state;
  auto r = st.action;
  r.at = action_record::phase::started;
  self->request(st.conversation, caf::infinite, atom::append::value, std::move(r))
      .then(
          [self, start](atom::ok) {
            if (!self->state.finished) start();
          },
          [self](caf::error& err) {
            auto& s = self->state;
            if (s.finished || (!s.command && !s.patch && !s.mcp)) return;
            auto why = "not run: its start could not be stored (" + message_of(err) + ")";
            PARLEY_WARN("turn {} event=start_not_stored item={} error=\"{}\"", s.settings.turn_id,
                        s.action.item_id, message_of(err));
            complete_current(self, item_status::failed,
                             outcome(step_result::kind::failed_to_start, why));
            next_step(self);
          });
}

void resume(self_ptr self, const action_record& a) {
  auto& st = self->state;
  // The model goes on after the steps that had finished; this action's
  // outcome is the next one it hears.
  st.context.step_results.resize(static_cast<size_t>(std::max<int64_t>(a.step, 0)));
  st.context.resumed = true;
  st.context.resumed_call = a.item_id;
  st.action = a;
  if (a.request == "mcpToolCall")
    resume_mcp_call(self, a);
  else if (!a.request.empty())
    resume_request(self, a);
  else if (a.file_change)
    resume_patch(self, a);
  else
    resume_command(self, a);
}

}  // namespace parley::turn_detail
