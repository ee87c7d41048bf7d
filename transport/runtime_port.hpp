#pragma once
// What a client session asks of the runtime: one typed call per client method
// the runtime answers. Each call answers exactly once through its reply.
// The connection actor implements it with CAF requests to the thread manager;
// tests implement it with canned answers.

#include <caf/expected.hpp>
#include <functional>

#include "actors/core/atoms.hpp"
#include "actors/core/errors.hpp"
#include "actors/core/messages.hpp"
#include "actors/core/tenant.hpp"
#include "protocol/methods.hpp"

namespace parley::rpc {

class runtime_port {
 public:
  template <class T>
  using reply = std::function<void(caf::expected<T>)>;

  virtual ~runtime_port() = default;

  virtual void thread_start(protocol::thread_start_params p,
                            reply<protocol::thread_session_response> done) = 0;
  virtual void thread_resume(protocol::thread_resume_params p,
                             reply<protocol::thread_session_response> done) = 0;
  virtual void thread_fork(protocol::thread_fork_params p,
                           reply<protocol::thread_session_response> done) = 0;
  virtual void thread_read(protocol::thread_read_params p,
                           reply<protocol::thread_read_response> done) = 0;
  virtual void thread_loaded_list(protocol::thread_loaded_list_params p,
                                  reply<protocol::thread_loaded_list_response> done) = 0;
  virtual void thread_list(protocol::thread_list_params p,
                           reply<protocol::thread_list_response> done) = 0;
  /// The tenant a thread belongs to, "" when nobody has it, or an error when
  /// it cannot be said. A port without tenants knows only the default one.
  virtual void thread_tenant(std::string thread_id, reply<std::string> done) {
    (void)thread_id;
    done(std::string{tenant_identity::default_tenant});
  }
  /// thread/archive (archive = true) and thread/unarchive.
  virtual void thread_archive(protocol::thread_id_params p, bool archive,
                              reply<protocol::thread> done) = 0;
  /// thread/goal/get, /set, /clear.
  virtual void thread_goal(goal_request r, reply<goal_answer> done) = 0;
  /// thread/metadata/update, thread/revert, thread/inject_items (checked).
  virtual void thread_edit(parley::thread_edit e, reply<parley::thread_edit_answer> done) = 0;
  /// thread/delete: ok once its rollout and index entry are gone.
  virtual void thread_delete(protocol::thread_id_params p, reply<parley::atom::ok> done) = 0;
  virtual void thread_name_set(protocol::thread_name_set_params p, reply<parley::atom::ok> done) = 0;
  virtual void thread_unsubscribe(protocol::thread_id_params p,
                                  reply<protocol::thread_unsubscribe_response> done) = 0;
  virtual void turn_start(protocol::turn_start_params p,
                          reply<protocol::turn_start_response> done) = 0;
  virtual void turn_interrupt(protocol::turn_interrupt_params p, reply<parley::atom::ok> done) = 0;
  /// thread/shellCommand: ok once the command's turn has started.
  virtual void thread_shell_command(protocol::thread_shell_command_params p,
                                    reply<parley::atom::ok> done) = 0;
  /// thread/compact/start: ok once the compaction's turn has started.
  virtual void thread_compact(protocol::thread_id_params p, reply<parley::atom::ok> done) = 0;
  /// review/start: the review's turn once it has started.
  virtual void review_start(protocol::review_start_params p,
                            reply<protocol::review_start_response> done) = 0;
  virtual void turn_steer(protocol::turn_steer_params p,
                          reply<protocol::turn_steer_response> done) = 0;
  /// command/exec: answered when the process has ended (after its deltas).
  virtual void command_exec(protocol::command_exec_params p,
                            reply<protocol::command_exec_response> done) = 0;
  /// command/exec/write: `bytes` (decoded) to the process's stdin, then
  /// maybe close it.
  virtual void command_exec_write(std::string process_id, std::string bytes, bool close_stdin,
                                  reply<parley::atom::ok> done) = 0;
  virtual void command_exec_terminate(std::string process_id, reply<parley::atom::ok> done) = 0;
  virtual void command_exec_resize(std::string process_id, protocol::terminal_size size,
                                   reply<parley::atom::ok> done) = 0;
  virtual void debug_counts(reply<runtime_counts> done) = 0;
  /// mcpServerStatus/list, mcpServer/tool/call, mcpServer/resource/read,
  /// config/mcpServer/reload: the MCP hub's answer (actors/mcp/mcp_hub.hpp).
  /// A port without MCP servers (tests, a cluster peer's session) says so.
  virtual void mcp(std::string method, protocol::json params, reply<protocol::json> done) {
    (void)params;
    done(make_error(errc::invalid_request, "`" + method + "`: no MCP servers here"));
  }
  /// parley/stats: the approval counters, as JSON.
  virtual protocol::json approval_stats() = 0;
};

}  // namespace parley::rpc
