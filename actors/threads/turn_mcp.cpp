// A turn's MCP tools (issue 30): the tools of every connected MCP server,
// offered to the model with the client's (asked of the MCP hub only when
// its offer changed: a runtime without MCP servers costs a step nothing),
// and the model's calls of them as mcpToolCall items: started, the call
// through the hub with the server's tool_timeout_sec, progress as the
// server reports it, completed with the result or failed with the error;
// the model is told either, as Codex tells it, and the turn goes on.
// An interrupt fails the item and cancels the call at the server. Never
// twice: the call's start is stored before it is sent, and a turn that
// goes on after a restart finds it failed, not called again.
// A call that needs a person's approval first (the tool's annotations, its
// approval_mode, the policy: protocol/mcp_tool_approval.hpp) is asked
// through an approval actor as an mcpServer/elicitation/request, stored
// before it is asked (a restart asks again); only an explicit accept
// calls the tool, and anything else fails the item as Codex says it.
// Under the policy `never` such a call is refused unasked, as Codex does.
// Accepted "always", the hub first writes the tool's approval_mode =
// "approve" into config.toml (the session remembers it either way).

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>
#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "actors/core/action_records.hpp"
#include "actors/core/errors.hpp"
#include "actors/core/log.hpp"
#include "actors/core/passed_rpc_error.hpp"
#include "actors/threads/turn_actions.hpp"
#include "actors/threads/turn_detail.hpp"
#include "protocol/ids.hpp"
#include "protocol/mcp_tool_approval.hpp"
#include "protocol/mcp_tool_calls.hpp"

namespace parley::turn_detail {

/// What the model is told of a result that held an image, made off the
/// turn's actor (see prepare_off_actor). Local only.
struct mcp_output_prepared {
  protocol::mcp_model_output value;
};

}  // namespace parley::turn_detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(parley::turn_detail::mcp_output_prepared)

namespace parley::turn_detail {

namespace {

using protocol::item_status;
using mcp_prepare_atom = caf::atom_constant<caf::atom("mcpprep")>;

constexpr auto mcp_offer_timeout = std::chrono::seconds(2);
// How long the hub may take to write an "always" into config.toml (a
// file on a local disk; this is only a backstop).
constexpr auto mcp_persist_timeout = std::chrono::seconds(10);

/// What the model is told of a call that may have run when parley stopped.
constexpr const char* mcp_lost_text
    = "parley stopped while this MCP tool call ran; it was not called again, and whether it "
      "finished is unknown";

void take_mcp_offer(self_ptr self, uint64_t generation, const std::string& text) {
  auto& st = self->state;
  st.mcp_generation = generation;
  if (text.empty()) return;  // unchanged
  auto offer = protocol::json::parse(text, nullptr, false);
  if (!offer.is_array()) return;
  st.mcp_tools.clear();
  st.context.offered_tools = st.client_tools;
  // One namespace tool per server, as Codex offers them, in the hub's order.
  std::vector<std::string> order;
  std::map<std::string, protocol::json> namespaces;
  for (const auto& t : offer) {
    auto name = t.value("name", std::string{});
    auto ns = t.value("namespace", std::string{});
    // A client's own tool of the same name wins (it was declared first).
    bool taken = false;
    for (const auto& c : st.client_tools) taken = taken || c.value("name", "") == name;
    if (name.empty() || ns.empty() || taken) continue;
    mcp_offered_tool o;
    o.server = t.value("server", "");
    o.tool = t.value("tool", "");
    o.deadline_ms = t.value("deadlineMs", 0);
    o.annotations = t.value("annotations", protocol::json());
    o.approval_mode = t.value("approvalMode", "auto");
    o.title = t.value("title", "");
    o.description = t.value("description", "");
    st.mcp_tools[name] = std::move(o);
    auto [at, fresh] = namespaces.try_emplace(ns);
    if (fresh) {
      order.push_back(ns);
      at->second = t.value("namespaceTool", protocol::json::object());  // its tools empty
      at->second["tools"] = protocol::json::array();
    }
    at->second["tools"].push_back(t["function"]);
  }
  for (const auto& ns : order) st.context.offered_tools.push_back(std::move(namespaces[ns]));
  PARLEY_DEBUG("turn {} event=mcp_tools generation={} tools={} servers={}", st.settings.turn_id,
               generation, st.mcp_tools.size(), order.size());
}

/// Seconds since the call reached the turn.
double mcp_wall_seconds(const mcp_step& m) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - m.began).count();
}

/// The step's result for the model, from the server's result or an error.
step_result mcp_told(const protocol::mcp_model_output& out) {
  auto r = outcome(step_result::kind::answered);
  r.output = out.text;
  r.success = out.success;
  if (out.content_items.is_array()) r.content_items = out.content_items;
  return r;
}

void fail_mcp_call(self_ptr self, const std::string& why) {
  auto& st = self->state;
  st.mcp->item.error = why;
  auto told = mcp_told(protocol::mcp_output_of_error(why, mcp_wall_seconds(*st.mcp)));
  complete_current(self, item_status::failed, std::move(told));
}

/// Whether a result may hold an image block (a text that merely says
/// "image" only costs a thread).
bool may_hold_image(const std::string& result_text) {
  return result_text.find("\"image\"") != std::string::npos;
}

/// Decoding and scaling a tool's image takes up to a second of CPU (a
/// 4000x3000 PNG: ~0.6 s): done on a thread of its own, so no scheduler
/// worker, and no other conversation, waits for it. The item completes
/// when the output is ready; a turn interrupted meanwhile has failed the
/// item already, and the answer is dropped.
void prepare_off_actor(self_ptr self, const std::string& token, const std::string& text,
                       double wall, item_status status) {
  self->state.mcp->preparing = true;
  auto preparer = self->spawn<caf::detached>([](caf::event_based_actor* worker) -> caf::behavior {
    return {[worker](mcp_prepare_atom, const std::string& result_text, double seconds) {
      worker->quit();
      return mcp_output_prepared{protocol::mcp_output_of_result_text(result_text, seconds)};
    }};
  });
  // No timeout: the preparer answers or dies, and CAF answers for the dead.
  self->request(preparer, caf::infinite, mcp_prepare_atom::value, text, wall)
      .then(
          [self, token, status](mcp_output_prepared& prepared) {
            auto& st = self->state;
            if (st.finished || !st.mcp || st.mcp->token != token) return;
            complete_current(self, status, mcp_told(prepared.value));
            next_step(self);
          },
          [self, token](caf::error& err) {
            auto& st = self->state;
            if (st.finished || !st.mcp || st.mcp->token != token) return;
            fail_mcp_call(self, "the tool's result could not be made ready for the model: "
                                    + message_of(err));
            next_step(self);
          });
}

void on_mcp_result(self_ptr self, const std::string& token, const std::string& text) {
  auto& st = self->state;
  if (st.finished || !st.mcp || st.mcp->token != token) return;
  auto result = protocol::json::parse(text, nullptr, false);
  if (!result.is_object()) {
    fail_mcp_call(self, "the MCP server's result was not an object");
    return next_step(self);
  }
  st.mcp->item.result = protocol::mcp_item_result(result);
  bool error = protocol::mcp_result_is_error(result);
  PARLEY_INFO("turn {} event=mcp_call_done item={} server={} tool={} is_error={}",
              st.settings.turn_id, st.mcp->item.id, st.mcp->item.server, st.mcp->item.tool, error);
  auto status = error ? item_status::failed : item_status::completed;
  auto wall = mcp_wall_seconds(*st.mcp);
  if (may_hold_image(text)) return prepare_off_actor(self, token, text, wall, status);
  complete_current(self, status, mcp_told(protocol::mcp_output_of_result_text(text, wall)));
  next_step(self);
}

/// What the item and the model are told of the server's JSON-RPC error, in
/// Codex 0.169's words: its code, its message and its data (a -32042 names
/// the URL the user must open). Codex's text goes on with a stack
/// backtrace of its own, which tells the model nothing: left out.
std::string server_error_text(const mcp_step& m, const passed_rpc_error& e) {
  auto text = "tool call error: tool call failed for `" + m.item.server + "/" + m.item.tool
              + "`\n\nCaused by:\n    Mcp error: " + std::to_string(e.code) + ": " + e.message;
  if (!e.data.empty()) text += "(" + e.data + ")";
  return text;
}

void on_mcp_failure(self_ptr self, const std::string& token, const caf::error& err) {
  auto& st = self->state;
  if (st.finished || !st.mcp || st.mcp->token != token) return;
  auto passed = passed_rpc_error_of(err);
  auto why = err == caf::sec::request_timeout ? "parley's MCP hub did not answer the call in time"
             : passed                         ? server_error_text(*st.mcp, *passed)
                                              : message_of(err);
  PARLEY_INFO("turn {} event=mcp_call_failed item={} server={} tool={} error=\"{}\"",
              st.settings.turn_id, st.mcp->item.id, st.mcp->item.server, st.mcp->item.tool, why);
  fail_mcp_call(self, why);
  next_step(self);
}

/// Its start is stored: the call goes to the server through the hub.
void send_mcp_call(self_ptr self) {
  auto& st = self->state;
  auto& m = *st.mcp;
  protocol::json params = {{"server", m.item.server},
                 {"tool", m.item.tool},
                 {"arguments", m.item.arguments},
                 {"progressToken", m.token},
                 // Where the server's elicitations during the call go.
                 {"threadId", st.settings.thread_id},
                 {"turnId", st.settings.turn_id}};
  PARLEY_INFO("turn {} event=mcp_call item={} server={} tool={}", st.settings.turn_id, m.item.id,
              m.item.server, m.item.tool);
  auto token = m.token;
  self->request(st.svc.mcp.hub, std::chrono::milliseconds(std::max<int64_t>(m.deadline_ms, 1000)),
                atom::mcp_call::value, std::string{"mcpToolCall"},
                params.dump(-1, ' ', false, protocol::json::error_handler_t::replace))
      .then([self, token](std::string& result) { on_mcp_result(self, token, result); },
            [self, token](caf::error& err) { on_mcp_failure(self, token, err); });
}

protocol::mcp_approval_mode mode_of(const std::string& text) {
  return protocol::mcp_approval_mode_of(text).value_or(protocol::mcp_approval_mode::automatic);
}

/// What becomes of the call: as Codex decides, and run when the tool's
/// calls were accepted for the session already (even under `never`, as
/// Codex lets a remembered approval stand).
protocol::mcp_call_gate gate_of(self_ptr self, const mcp_offered_tool& offered) {
  auto& st = self->state;
  auto mode = mode_of(offered.approval_mode);
  auto gate = protocol::mcp_call_gate_of(offered.annotations, mode, st.settings.policy,
                                         st.settings.sandbox);
  if (gate == protocol::mcp_call_gate::run) return gate;
  if (protocol::mcp_session_approval_offered(mode)
      && st.settings.grants.mcp_tools.count(mcp_tool_key(offered.server, offered.tool))) {
    PARLEY_INFO("turn {} event=mcp_call_approved_for_session item={} server={} tool={}",
                st.settings.turn_id, st.mcp->item.id, offered.server, offered.tool);
    return protocol::mcp_call_gate::run;
  }
  return gate;
}

/// The question to the clients, from the call's stored approval params.
approval_ask mcp_ask(const turn_state& st) {
  const auto& s = st.settings;
  approval_ask ask;
  ask.thread_id = s.thread_id;
  ask.tenant = s.tenant;
  ask.request = client_request::mcp_approval;
  ask.request_turn = s.turn_id;
  ask.request_item = st.mcp->item.id;
  ask.cwd = s.cwd;
  ask.digest = st.action.digest;
  ask.request_params = st.mcp->approval;
  return ask;
}

/// Asks a person whether the call may run; stored before it is asked.
void ask_mcp_approval(self_ptr self, const mcp_offered_tool& offered) {
  auto& st = self->state;
  auto& m = *st.mcp;
  protocol::mcp_approval_subject subject;
  subject.thread_id = st.settings.thread_id;
  subject.turn_id = st.settings.turn_id;
  subject.call_id = m.item.id;
  subject.server = m.item.server;
  subject.tool = m.item.tool;
  subject.arguments = m.item.arguments;
  subject.title = offered.title;
  subject.description = offered.description;
  subject.annotations = offered.annotations;
  subject.mode = mode_of(offered.approval_mode);
  m.approval = protocol::mcp_approval_request_params(subject);
  st.action = action_of(st, m);
  PARLEY_INFO("turn {} event=mcp_approval_asked item={} server={} tool={} mode={}",
              st.settings.turn_id, m.item.id, m.item.server, m.item.tool, offered.approval_mode);
  // The item has started already: the approval asks after it.
  ask_approval(self, mcp_ask(st), approval_plan{}, nullptr, false);
}

/// The call's item again from its stored action (a restart).
protocol::mcp_tool_call_item mcp_item_of(const action_record& a) {
  protocol::mcp_tool_call_item item;
  item.id = a.item_id;
  item.server = a.request_params.value("server", "");
  item.tool = a.request_params.value("tool", "");
  item.arguments = a.request_params.value("arguments", protocol::json(nullptr));
  if (auto h = a.request_params.find("readOnlyHint"); h != a.request_params.end() && h->is_boolean())
    item.read_only_hint = h->get<bool>();
  return item;
}

}  // namespace

void with_mcp_tools(self_ptr self, std::function<void()> then) {
  auto& st = self->state;
  const auto& port = st.svc.mcp;
  // The hub's offer is what the turn has: nothing to ask.
  if (!port.hub || !port.tools_generation || port.tools_generation->load() == st.mcp_generation)
    return then();
  self->request(port.hub, mcp_offer_timeout, atom::mcp_tools::value, st.mcp_generation)
      .then(
          [self, then](uint64_t generation, std::string& text) {
            take_mcp_offer(self, generation, text);
            if (!self->state.finished) then();
          },
          [self, then](caf::error& err) {
            // The model asks without them (or with the ones it had).
            PARLEY_WARN("turn {} event=mcp_tools_unavailable error=\"{}\"",
                        self->state.settings.turn_id, message_of(err));
            if (!self->state.finished) then();
          });
}

bool is_mcp_tool(self_ptr self, const std::string& name) {
  return self->state.mcp_tools.count(name) > 0;
}

void call_mcp_tool(self_ptr self, const model_step& step, const std::string& call_id) {
  auto& st = self->state;
  const auto& offered = st.mcp_tools.at(step.tool);
  mcp_step m;
  m.item.id = call_id;
  m.item.server = offered.server;
  m.item.tool = offered.tool;
  m.item.arguments = step.arguments.is_discarded() ? protocol::json(nullptr) : step.arguments;
  if (offered.annotations.is_object()) {
    auto hint = offered.annotations.value("readOnlyHint", protocol::json());
    if (hint.is_boolean()) m.item.read_only_hint = hint.get<bool>();
  }
  m.started_ms = protocol::unix_ms();
  m.began = std::chrono::steady_clock::now();
  m.token = "parley-" + call_id;
  m.deadline_ms = offered.deadline_ms;
  item_started(self, m.item, m.started_ms);
  st.mcp = std::move(m);
  if (step.arguments.is_discarded()) {
    fail_mcp_call(self, "the arguments of `" + step.tool + "` are not JSON");
    return next_step(self);
  }
  if (!st.mcp->item.arguments.is_object() && !st.mcp->item.arguments.is_null()) {
    fail_mcp_call(self, "the arguments of `" + step.tool + "` are not a JSON object");
    return next_step(self);
  }
  st.mcp->approval_mode = offered.approval_mode;
  st.action = action_of(st, *st.mcp);
  switch (gate_of(self, offered)) {
    case protocol::mcp_call_gate::ask:
      return ask_mcp_approval(self, offered);
    case protocol::mcp_call_gate::refuse:
      // Nobody may be asked: not called, and the model is told why.
      PARLEY_INFO("turn {} event=mcp_call_refused item={} server={} tool={} policy=never",
                  st.settings.turn_id, st.mcp->item.id, offered.server, offered.tool);
      fail_mcp_call(self, protocol::mcp_refused_by_policy_text);
      return next_step(self);
    case protocol::mcp_call_gate::run:
      break;
  }
  // Stored before it is sent: a restart never calls it again.
  record_started(self, [self] { send_mcp_call(self); });
}

void settle_mcp_approval(self_ptr self, const approval_outcome& out) {
  auto& st = self->state;
  auto& m = *st.mcp;
  using kind = approval_outcome::kind;
  if (out.how == kind::transport_closed || out.how == kind::cancelled) {
    // As any approval: nobody can answer any more, or the turn is cancelled.
    PARLEY_INFO("turn {} event=mcp_approval_cancelled item={} how={}", st.settings.turn_id,
                m.item.id, to_string(out.how));
    fail_mcp_call(self, protocol::mcp_cancelled_text);
    return end_turn(self, protocol::turn_status::interrupted);
  }
  auto mode = mode_of(m.approval_mode);
  auto answer = protocol::mcp_approval_answer::decline;  // a timeout, an error: fail closed
  if (out.how == kind::decided && out.decision.allows_run())
    answer = protocol::decode_mcp_approval_answer(out.decision.answer, m.item.id, mode);
  else if (out.how == kind::decided && out.decision.value == protocol::approval_decision::kind::cancel)
    answer = protocol::mcp_approval_answer::cancel;
  PARLEY_INFO("turn {} event=mcp_approval_settled item={} server={} tool={} how={} answer={}",
              st.settings.turn_id, m.item.id, m.item.server, m.item.tool, to_string(out.how),
              to_string(answer));
  switch (answer) {
    case protocol::mcp_approval_answer::decline:
      fail_mcp_call(self, protocol::mcp_rejected_text);
      return next_step(self);
    case protocol::mcp_approval_answer::cancel:
      fail_mcp_call(self, protocol::mcp_cancelled_text);
      return next_step(self);
    case protocol::mcp_approval_answer::accept_for_session:
    case protocol::mcp_approval_answer::accept_always: {
      // Later calls of the tool in this thread run unasked (in memory, as
      // Codex keeps them: gone when the thread unloads).
      mcp_tool_grant g{m.item.server, m.item.tool};
      st.settings.grants.mcp_tools.insert(mcp_tool_key(g.server, g.tool));
      self->send(st.conversation, atom::grant::value, std::move(g));
      if (answer == protocol::mcp_approval_answer::accept_always) return persist_mcp_approval(self);
      break;
    }
    case protocol::mcp_approval_answer::accept:
      break;
  }
  // Accepted: stored as started before it is sent (never twice).
  record_started(self, [self] { send_mcp_call(self); });
}

void persist_mcp_approval(self_ptr self) {
  auto& st = self->state;
  const auto& m = *st.mcp;
  auto item = m.item.id;
  // Then the call, whether it was written or not (Codex's order: the
  // session remembers the tool either way).
  auto then = [self, item](const std::string& outcome) {
    auto& state = self->state;
    if (state.finished || !state.mcp || state.mcp->item.id != item) return;  // interrupted
    PARLEY_INFO("turn {} event=mcp_approval_persisted item={} server={} tool={} outcome=\"{}\"",
                state.settings.turn_id, item, state.mcp->item.server, state.mcp->item.tool,
                outcome);
    record_started(self, [self] { send_mcp_call(self); });
  };
  if (!st.svc.mcp.hub) return then("no MCP hub: remembered for the session only");
  // The hub writes `[mcp_servers.S.tools.T] approval_mode = "approve"` into
  // config.toml and offers the tool as `approve` from then on: the next
  // thread and the next start do not ask.
  protocol::json params = {{"server", m.item.server}, {"tool", m.item.tool}};
  self->request(st.svc.mcp.hub, mcp_persist_timeout, atom::mcp_call::value,
                std::string{"mcpToolApproval/persist"}, params.dump())
      .then([then](std::string&) { then("written to config.toml"); },
            [then](caf::error& err) {
              then("not written (remembered for the session only): " + message_of(err));
            });
}

void cancel_mcp_call(self_ptr self) {
  auto& st = self->state;
  if (!st.mcp) return;
  PARLEY_INFO("turn {} event=mcp_call_interrupted item={} server={} tool={}", st.settings.turn_id,
              st.mcp->item.id, st.mcp->item.server, st.mcp->item.tool);
  // (A typed actor may not send() to the untyped hub: anonymously.) A
  // result being made ready for the model has ended the call already.
  if (st.svc.mcp.hub && !st.mcp->preparing)
    caf::anon_send(st.svc.mcp.hub, atom::mcp_cancel::value, st.mcp->item.server, st.mcp->token);
  st.mcp->item.error = "the turn was interrupted";
  auto r = mcp_told(protocol::mcp_output_of_error("the turn was interrupted; the call was cancelled",
                                                  mcp_wall_seconds(*st.mcp)));
  complete_current(self, item_status::failed, std::move(r));
}

void on_mcp_progress(self_ptr self, const std::string& token, const std::string& params) {
  auto& st = self->state;
  if (st.finished || !st.mcp || st.mcp->token != token) return;
  auto message = protocol::mcp_progress_message(protocol::json::parse(params, nullptr, false));
  auto& s = st.settings;
  emit(self, protocol::mcp_tool_call_progress{s.thread_id, s.turn_id, st.mcp->item.id,
                                              std::move(message)});
}

void resume_mcp_call(self_ptr self, const action_record& a) {
  auto& st = self->state;
  mcp_step m;
  m.item = mcp_item_of(a);
  m.started_ms = a.item_started_ms;
  // Its time goes on from the stored start, across the restart.
  m.began = std::chrono::steady_clock::now()
            - std::chrono::milliseconds(std::max<int64_t>(protocol::unix_ms() - m.started_ms, 0));
  m.token = "parley-" + a.item_id;
  m.deadline_ms = a.request_params.value("deadlineMs", int64_t{75'000});
  m.approval_mode = a.request_params.value("approvalMode", "auto");
  m.approval = a.request_params.value("approval", protocol::json());
  item_started(self, m.item, m.started_ms);
  st.mcp = std::move(m);
  bool asked_of_a_person = !st.mcp->approval.is_null();
  if (asked_of_a_person && a.at == action_record::phase::asked) {
    // Asked again as it was: the same question, what is left of its deadline.
    PARLEY_INFO("turn {} event=resumed phase=asked request=mcpToolCall item={}",
                st.settings.turn_id, a.item_id);
    return ask_approval(self, mcp_ask(st), approval_plan{}, nullptr, true);
  }
  if (asked_of_a_person && a.at == action_record::phase::decided) {
    // Decided before the server stopped, not called: the decision, once.
    PARLEY_INFO("turn {} event=resumed phase=decided request=mcpToolCall item={}",
                st.settings.turn_id, a.item_id);
    return settle_mcp_approval(self, outcome_of(a));
  }
  PARLEY_INFO("turn {} event=resumed phase={} request=mcpToolCall item={} not_called_again",
              st.settings.turn_id, to_string(a.at), a.item_id);
  fail_mcp_call(self, mcp_lost_text);
  next_step(self);
}

}  // namespace parley::turn_detail
