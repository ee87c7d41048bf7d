// A turn's requests to a client that are no approvals of an action: the
// model's question to the user (item/tool/requestUserInput), its call of
// a tool the client declared (item/tool/call, shown as a dynamicToolCall
// item) and its request for more sandbox permissions
// (item/permissions/requestApproval: what is granted, and only what was
// asked, widens the turn's sandbox, or the thread's for the session). Each is asked
// through an approval actor, the one owner every request to a client has:
// every subscribed client is asked, the first answer wins, the deadline and
// any error or malformed answer fail closed (the model is told it was not
// answered), and an interrupt cancels it (serverRequest/resolved).

#include <algorithm>

#include "actors/approval/action_digest.hpp"
#include "actors/core/action_records.hpp"
#include "actors/core/log.hpp"
#include "actors/threads/turn_actions.hpp"
#include "actors/threads/turn_detail.hpp"
#include "protocol/client_requests.hpp"
#include "protocol/ids.hpp"

namespace parley::turn_detail {

namespace {

/// What the model called the request (its tool's name), for what it is told.
const char* tool_name_of(client_request what) {
  switch (what) {
    case client_request::user_input:
      return "request_user_input";
    case client_request::dynamic_tool:
      return "the client's tool";
    case client_request::permissions:
      return "request_permissions";
    case client_request::none:
    case client_request::elicitation:  // an MCP server's, never a turn's step
    case client_request::mcp_approval:  // the turn's MCP call (turn_mcp.cpp)
      break;
  }
  return "the request";
}

/// A call the turn cannot ask about (malformed arguments, nothing to ask):
/// the model is told why, nobody is asked, and the turn goes on.
void refuse_request(self_ptr self, client_request what, const std::string& why) {
  PARLEY_INFO("turn {} event=request_refused kind={} reason=\"{}\"",
              self->state.settings.turn_id, to_string(what), why);
  self->state.context.step_results.push_back(
      outcome(step_result::kind::not_answered, std::string{tool_name_of(what)} + ": " + why));
  next_step(self);
}

/// The ask an approval actor carries to the clients.
approval_ask request_ask(const turn_settings& s, client_request what, const std::string& call_id,
                         protocol::json params) {
  approval_ask ask;
  ask.thread_id = s.thread_id;
  ask.tenant = s.tenant;
  ask.request = what;
  ask.request_turn = s.turn_id;
  ask.request_item = call_id;
  ask.cwd = s.cwd;
  ask.digest = request_digest(to_string(what), params.dump());
  ask.request_params = std::move(params);
  return ask;
}

void ask_user_input(self_ptr self, const model_step& step, const std::string& call_id) {
  auto& st = self->state;
  protocol::json questions;
  try {
    questions = protocol::checked_questions(step.arguments);
  } catch (const protocol::decode_error& e) {
    return refuse_request(self, client_request::user_input, e.what());
  }
  auto params = protocol::user_input_params(st.settings.thread_id, st.settings.turn_id, call_id,
                                            questions);
  st.request = request_step{client_request::user_input, call_id, protocol::unix_ms(), params, std::nullopt};
  auto ask = request_ask(st.settings, client_request::user_input, call_id, std::move(params));
  st.action = action_of(st, *st.request, ask.digest);
  ask_approval(self, std::move(ask), approval_plan{}, nullptr, false);
}

void call_client_tool(self_ptr self, const model_step& step, const std::string& call_id) {
  auto& st = self->state;
  const protocol::dynamic_tool* tool = nullptr;
  for (const auto& t : st.settings.dynamic_tools)
    if (protocol::model_tool_name(t) == step.tool) tool = &t;
  if (!tool)
    return refuse_request(self, client_request::dynamic_tool,
                          "no tool named `" + step.tool + "` was declared by the client");
  if (step.arguments.is_discarded())
    return refuse_request(self, client_request::dynamic_tool,
                          "the arguments of `" + step.tool + "` are not JSON");
  auto now = protocol::unix_ms();
  protocol::dynamic_tool_call_item item;
  item.id = call_id;
  item.tool = tool->name;
  item.ns = tool->ns;
  item.arguments = step.arguments;
  auto started = started_event(self, item, now);
  auto params = protocol::dynamic_tool_call_params(st.settings.thread_id, st.settings.turn_id,
                                                   call_id, *tool, step.arguments);
  st.request = request_step{client_request::dynamic_tool, call_id, now, params, std::move(item)};
  auto ask = request_ask(st.settings, client_request::dynamic_tool, call_id, std::move(params));
  st.action = action_of(st, *st.request, ask.digest);
  ask_approval(self, std::move(ask), approval_plan{}, std::move(started), false);
}

void ask_permissions(self_ptr self, const model_step& step, const std::string& call_id) {
  auto& st = self->state;
  if (step.arguments.is_discarded())
    return refuse_request(self, client_request::permissions, "the arguments are not JSON");
  protocol::json asked;
  try {
    asked = protocol::checked_permission_request(step.arguments, st.settings.cwd);
  } catch (const protocol::decode_error& e) {
    return refuse_request(self, client_request::permissions, e.what());
  }
  auto now = protocol::unix_ms();
  std::optional<std::string> reason;
  if (asked.contains("reason")) reason = asked["reason"].get<std::string>();
  auto params = protocol::permissions_params(st.settings.thread_id, st.settings.turn_id, call_id,
                                             st.settings.cwd, asked["permissions"], reason, now);
  st.request = request_step{client_request::permissions, call_id, now, params, std::nullopt};
  ask_approval(self, request_ask(st.settings, client_request::permissions, call_id, std::move(params)),
               approval_plan{}, nullptr, false);
}

/// The grant as the sandbox applies it.
sandbox_grant permission_grant_of(const protocol::json& granted) {
  sandbox_grant g;
  const auto& p = granted.value("permissions", protocol::json::object());
  if (auto fs = p.find("fileSystem"); fs != p.end()) {
    for (const auto& path : fs->value("read", protocol::json::array())) g.read.push_back(path);
    for (const auto& path : fs->value("write", protocol::json::array())) g.write.push_back(path);
  }
  g.network = p.value("network", protocol::json::object()).value("enabled", false);
  return g;
}

/// Widens the turn's sandbox by what was granted (checked against what was
/// asked), and the thread's for the session when so scoped: the next
/// commands run with it. Returns what the model is told.
std::string widen_by_grant(self_ptr self, const protocol::json& granted) {
  auto& st = self->state;
  auto g = permission_grant_of(granted);
  bool session = granted.value("scope", "") == "session";
  PARLEY_INFO("turn {} event=permissions_granted call={} scope={} read={} write={} network={}",
              st.settings.turn_id, st.request->call_id, session ? "session" : "turn", g.read.size(),
              g.write.size(), g.network);
  if (!g.empty()) {
    st.settings.granted.merge(g);
    for (const auto& path : g.write)
      if (std::find(st.settings.writable_roots.begin(), st.settings.writable_roots.end(), path)
          == st.settings.writable_roots.end())
        st.settings.writable_roots.push_back(path);
    if (session) self->send(st.conversation, atom::grant::value, std::move(g));
  }
  return protocol::model_grant_output(granted);
}

/// Why a request that was not cancelled got no answer, for the model.
std::string unanswered_reason(const approval_outcome& out) {
  using kind = approval_outcome::kind;
  switch (out.how) {
    case kind::timed_out:
      return "nobody answered before the request's deadline";
    case kind::client_error:
      return "the client answered with an error (" + out.detail + ")";
    case kind::malformed:
      return "the client's answer was malformed (" + out.detail + ")";
    case kind::decided:
      return "the client declined to answer";
    case kind::transport_closed:
    case kind::cancelled:
      break;
  }
  return "the request was cancelled";
}

/// The answer, checked again here: whichever client answered (a JSON-RPC
/// one or an embedder), only a well-formed answer reaches the model. A
/// client tool's answer also fills its item.
std::optional<step_result> checked_answer(request_step& r, const protocol::json& answer,
                                          std::string& why) {
  try {
    auto told = outcome(step_result::kind::answered);
    if (r.what == client_request::permissions) {
      // Only what was asked can be granted, whatever the answer says.
      told.output = protocol::granted_within(r.params["permissions"],
                                             protocol::decode_permissions_answer(answer),
                                             r.params.value("cwd", std::string{}))
                        .dump();
      return told;
    }
    if (r.what == client_request::user_input) {
      told.output = protocol::decode_user_input_answer(
                        answer, r.params.value("questions", protocol::json::array()))
                        .dump();
      return told;
    }
    auto a = protocol::decode_dynamic_tool_answer(answer);
    told.success = a["success"].get<bool>();
    told.content_items = protocol::model_tool_output(a["contentItems"]);
    for (const auto& c : a["contentItems"])
      if (c.value("type", "") == "inputText") told.output += c.value("text", "");
    if (r.item) {
      r.item->content_items = a["contentItems"];
      r.item->success = told.success;
    }
    return told;
  } catch (const protocol::decode_error& e) {
    why = "the client's answer was malformed (" + std::string{e.what()} + ")";
    return std::nullopt;
  }
}

/// A permission request's outcome (not cancelled): what was granted of what
/// was asked widens the sandbox; a decline, a timeout, an error or a
/// malformed answer grants nothing. The model is told the grant either way,
/// as Codex tells it (an empty grant for the turn when there is none).
void settle_permissions(self_ptr self, const approval_outcome& out) {
  auto& st = self->state;
  auto& r = *st.request;
  using kind = approval_outcome::kind;
  std::string why;
  protocol::json granted = {{"permissions", protocol::json::object()}, {"scope", "turn"}};
  if (out.how == kind::decided && out.decision.allows_run()) {
    if (auto told = checked_answer(r, out.decision.answer, why))
      granted = protocol::json::parse(told->output);
  } else {
    why = unanswered_reason(out);
  }
  if (!why.empty())
    PARLEY_INFO("turn {} event=request_unanswered kind={} call={} reason=\"{}\" granted=none",
                st.settings.turn_id, to_string(r.what), r.call_id, why);
  auto told = outcome(step_result::kind::answered);
  told.output = widen_by_grant(self, granted);
  complete_current(self, protocol::item_status::completed, std::move(told));
  next_step(self);
}

}  // namespace

void ask_client(self_ptr self, const model_step& step) {
  auto call_id = step.call_id.empty() ? protocol::new_call_id() : step.call_id;
  switch (step.what) {
    case model_step::kind::ask_user:
      return ask_user_input(self, step, call_id);
    case model_step::kind::call_tool:
      return call_client_tool(self, step, call_id);
    default:
      return ask_permissions(self, step, call_id);
  }
}

void settle_request(self_ptr self, const approval_outcome& out) {
  auto& st = self->state;
  auto& r = *st.request;
  using kind = approval_outcome::kind;
  auto name = r.item ? "the client's tool " + r.item->tool : std::string{tool_name_of(r.what)};
  if (out.how == kind::transport_closed || out.how == kind::cancelled) {
    // As an approval: nobody can answer any more, or the turn is cancelled.
    complete_current(self, protocol::item_status::declined,
                     outcome(step_result::kind::not_answered, name + " was cancelled"));
    return end_turn(self, protocol::turn_status::interrupted);
  }
  if (r.what == client_request::permissions) return settle_permissions(self, out);
  std::string why;
  if (out.how == kind::decided && out.decision.allows_run()) {
    if (auto told = checked_answer(r, out.decision.answer, why)) {
      // A client tool that says it failed ends its item failed; the model
      // gets its content all the same.
      auto status = told->success ? protocol::item_status::completed : protocol::item_status::failed;
      complete_current(self, status, std::move(*told));
      return record_done(self, [self] { next_step(self); });
    }
  } else {
    why = unanswered_reason(out);
  }
  PARLEY_INFO("turn {} event=request_unanswered kind={} call={} reason=\"{}\"", st.settings.turn_id,
              to_string(r.what), r.call_id, why);
  if (r.item) r.item->success = false;
  complete_current(self, protocol::item_status::failed,
                   outcome(step_result::kind::not_answered, name + " was not answered: " + why));
  record_done(self, [self] { next_step(self); });
}

void resume_request(self_ptr self, const action_record& a) {
  auto& st = self->state;
  auto what = a.request == "dynamicToolCall" ? client_request::dynamic_tool
                                             : client_request::user_input;
  const auto& params = a.request_params;
  request_step r{what, a.item_id, a.item_started_ms, params, std::nullopt};
  notification_ptr started;
  if (what == client_request::dynamic_tool) {
    // Its item again, as it was shown (ids, tool, arguments).
    protocol::dynamic_tool_call_item item;
    item.id = a.item_id;
    item.tool = params.value("tool", "");
    if (auto ns = params.find("namespace"); ns != params.end() && ns->is_string())
      item.ns = ns->get<std::string>();
    item.arguments = params.value("arguments", protocol::json(nullptr));
    started = started_event(self, item, a.item_started_ms);
    r.item = std::move(item);
  }
  st.request = std::move(r);
  if (a.at == action_record::phase::asked) {
    // Asked again, the same call (a client tool's result that never came
    // is asked for again: the client performs it; its callId says which).
    auto ask = request_ask(st.settings, what, a.item_id, params);
    ask.digest = a.digest;
    PARLEY_INFO("turn {} event=resumed phase=asked request={} call={}", st.settings.turn_id,
                a.request, a.item_id);
    return ask_approval(self, std::move(ask), approval_plan{}, std::move(started), true);
  }
  // Answered before the server stopped: the model gets that answer, once.
  if (started) send_event(self, std::move(started));
  PARLEY_INFO("turn {} event=resumed phase={} request={} call={}", st.settings.turn_id,
              to_string(a.at), a.request, a.item_id);
  settle_request(self, outcome_of(a));
}

}  // namespace parley::turn_detail
