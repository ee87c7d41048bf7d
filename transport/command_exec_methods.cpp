// command/exec and its follow-ups: params decoded and checked here (with
// the codes and words Codex 0.169 answers), the commands run by the
// runtime's command registry (actors/threads/command_exec.hpp).

#include <type_traits>
#include <utility>

#include "protocol/base64.hpp"
#include "protocol/command_exec.hpp"
#include "protocol/jsonrpc.hpp"
#include "transport/rpc_session.hpp"

namespace parley::rpc {

using protocol::json;

namespace command_exec_methods {

/// Decodes a method's params; false (after answering) when they do not.
template <class T>
bool decode_into(T& out, const json& params, const std::function<void(int, std::string)>& fail) {
  try {
    out = protocol::decode<T>(params);
    return true;
  } catch (const protocol::decode_error& e) {
    fail(protocol::rpc_code::invalid_request, std::string{"Invalid request: "} + e.what());
    return false;
  }
}

}  // namespace command_exec_methods

/// The reply to request `id` once the runtime answers: `Result` as JSON (an
/// empty object for ok), or its error; nothing once this session is gone.
template <class Result>
runtime_port::reply<Result> session::exec_reply(const protocol::request_id& id) {
  return [this, alive = std::weak_ptr<bool>(alive_), token = answer_token_,
          id](caf::expected<Result> r) {
    if (alive.expired()) return;
    if (!r)
      reply_error(id, r.error());
    else if constexpr (std::is_same_v<Result, atom::ok>)
      reply(id, json::object());
    else
      reply(id, json(*r));
    on_answered();
  };
}

void session::command_exec(const protocol::request_id& id, const json& params) {
  using namespace command_exec_methods;
  auto fail = [this, &id](int code, std::string message) { reply_error(id, code, message); };
  protocol::command_exec_params p;
  if (!decode_into(p, params, fail)) return;
  if (auto problem = protocol::command_exec_problem(p))
    return reply_error(id, problem->code, problem->message);
  runtime_.command_exec(std::move(p),
                        exec_reply<protocol::command_exec_response>(id));
}

void session::command_exec_write(const protocol::request_id& id, const json& params) {
  using namespace command_exec_methods;
  auto fail = [this, &id](int code, std::string message) { reply_error(id, code, message); };
  protocol::command_exec_write_params p;
  if (!decode_into(p, params, fail)) return;
  if (!p.delta_base64 && !p.close_stdin)
    return fail(protocol::rpc_code::invalid_params,
                "command/exec/write requires deltaBase64 or closeStdin");
  std::string bytes;
  if (p.delta_base64) {
    std::string why;
    auto decoded = protocol::base64_decode(*p.delta_base64, why);
    if (!decoded) return fail(protocol::rpc_code::invalid_params, "invalid deltaBase64: " + why);
    bytes = std::move(*decoded);
  }
  runtime_.command_exec_write(std::move(p.process_id), std::move(bytes), p.close_stdin,
                              exec_reply<atom::ok>(id));
}

void session::command_exec_terminate(const protocol::request_id& id, const json& params) {
  using namespace command_exec_methods;
  auto fail = [this, &id](int code, std::string message) { reply_error(id, code, message); };
  protocol::command_exec_terminate_params p;
  if (!decode_into(p, params, fail)) return;
  runtime_.command_exec_terminate(std::move(p.process_id), exec_reply<atom::ok>(id));
}

void session::command_exec_resize(const protocol::request_id& id, const json& params) {
  using namespace command_exec_methods;
  auto fail = [this, &id](int code, std::string message) { reply_error(id, code, message); };
  protocol::command_exec_resize_params p;
  if (!decode_into(p, params, fail)) return;
  if (auto problem = protocol::terminal_size_problem(p.size))
    return fail(problem->code, problem->message);
  runtime_.command_exec_resize(std::move(p.process_id), p.size,
                               exec_reply<atom::ok>(id));
}

}  // namespace parley::rpc
