#pragma once
// One client's JSON-RPC session, without any transport or actor: lines in,
// lines out. It binds method names to typed handlers, gates them
// (initialize first, experimental fields, params present), hands each typed
// call to the runtime through a runtime_port, and keeps the table of
// server->client requests (approvals) in flight with what each was about, so
// a reply bound to another thread, turn, item or action is refused.
//
// The connection actor is a thin shell around it (transport/connection.cpp);
// every transport (stdio today, sockets next) reuses it unchanged, and
// tests drive it in memory (tests/transport/rpc_session_test.cpp).

#include <caf/expected.hpp>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "actors/core/messages.hpp"
#include "actors/core/config.hpp"
#include "actors/core/tenant.hpp"
#include "actors/core/telemetry.hpp"
#include "actors/model/config/config_write.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/methods.hpp"
#include "protocol/notifications.hpp"
#include "actors/files/roots.hpp"
#include "transport/file_port.hpp"
#include "transport/runtime_port.hpp"
#include "transport/session_router.hpp"
#include <deque>

namespace parley::rpc {

struct session_config {
  std::string cli_version;
  std::string codex_home;
  std::string model_id;
  /// Server->client request ids (unique wherever replies could be confused).
  std::function<int64_t()> next_request_id;
  /// Called for each reply that is not applied (late, duplicate, foreign).
  std::function<void()> on_refused_reply = [] {};
  /// Names this connection in the trace of every line in and out
  /// (`--log-level trace`), e.g. "stdio".
  std::string label = "stdio";
  /// Where requests in flight are counted (the runtime's); null: not counted.
  std::shared_ptr<runtime_telemetry> telemetry;
  /// The server's --cwd: a root of fs/* before any thread names one.
  std::string default_cwd;
  /// Runs fs/* jobs and watches (the connection's); null: fs/* unavailable.
  file_port* files = nullptr;
  /// What the configuration and discovery methods answer from (its config
  /// file, model providers, hooks); null: built-in defaults only.
  std::shared_ptr<const runtime_config> runtime;
  /// A cluster node's: requests naming a thread that lives on another node
  /// go there (transport/session_router.hpp). Null: everything runs here.
  std::shared_ptr<session_router> router;
  /// This session speaks on this node for a client of another node's: the
  /// lines come from a peer (TLS-authenticated), which may assign the id of
  /// a thread it placed here ("parley.threadId" in thread/start's params).
  bool cluster_peer = false;
  /// Who the client is (issue 22): it sees and acts only on its tenant's
  /// threads, unless it is an operator.
  tenant_identity identity;
  /// The id its runtime knows this connection by (its actor's): whose
  /// usage parley/stats shows under "connection". 0: none.
  uint64_t connection_id = 0;
};

/// A method's params need no check beyond decoding.
struct no_check {
  template <class T>
  caf::error operator()(const protocol::initialize_capabilities&, const T&) const {
    return {};
  }
};

/// Where a server->client request's answer goes, exactly once.
using decision_sink = std::function<void(caf::expected<protocol::approval_decision>)>;

class session {
 public:
  using line_sink = std::function<void(std::string)>;

  session(session_config config, runtime_port& runtime, line_sink out);

  // -- client -> server --------------------------------------------------------

  /// One line from the client: a request, a notification or a response.
  void on_line(std::string_view line);

  /// A remote session's replay of its client's initialize: the session
  /// learns the client's capabilities; the answer is not sent.
  void replay_initialize(std::string_view line);

  /// The client's input ended: every pending server request fails closed
  /// (transport_closed) after its prompt is resolved.
  void on_eof();

  /// Runs `then` once no line waits behind a router's or the tenant gate's
  /// answer, or for room under max_unanswered (at once if none does). The input's end comes after the lines
  /// before it: every request the client sent is dispatched, and answered,
  /// before the connection ends.
  void after_held(std::function<void()> then);

  /// The server gave up on the client (it fell too far behind in reading):
  /// nothing it sent is handled from here on, neither the requests still
  /// held nor a held one's lookup when it answers, nor any later line; no
  /// reply could reach it. Returns how many held requests were dropped. The
  /// caller ends the input (on_eof), which resolves its pending approvals.
  size_t give_up();
  bool given_up() const { return given_up_; }

  // -- runtime -> client -------------------------------------------------------

  /// A notification, unless the client opted out of its method.
  void notify(const protocol::notification& n);
  /// The same with params encoded ahead (wire_params non-empty).
  void notify(const outgoing_event& e);
  /// A notification of the process's rather than a thread's (params as
  /// JSON text): only once the client has initialized, unless it opted out.
  void notify_json(const char* method, const std::string& params_json);

  /// Asks the client to decide (v2, or v1 for legacy clients); the sink gets
  /// the decision or why there is none.
  void ask(const approval_ask& ask, decision_sink sink);

  /// The runtime no longer needs the answer for `key`: resolves the prompt.
  void withdraw(uint64_t key);

  /// An fs/watch's batch of changed paths: sent as fs/changed.
  void on_fs_changed(const std::string& watch_id, std::vector<std::string> paths);

  /// The roots fs/* may reach: the server's cwd and the cwds and writable
  /// roots of the threads this session started, resumed or forked.
  const files::root_set& file_roots() const { return roots_; }

  bool initialized() const { return initialized_; }
  bool closed() const { return closed_; }
  /// Client requests whose reply is still to come from another actor (a
  /// reply callback alive somewhere): the input's end waits for them, so a
  /// request read before it is answered (every request gets one reply).
  long unanswered() const { return answer_token_.use_count() - 1; }
  /// How many of them may be waiting before the next request waits too
  /// (on_line says why).
  static constexpr long max_unanswered = 1024;
  size_t pending_requests() const { return outgoing_.size(); }

 private:
  struct call;
  struct outgoing_request;
  using handler = std::function<void(session&, const call&)>;

  /// A handler that decodes Params, checks them, calls the runtime and sends
  /// its Result back as JSON: the shape most methods share.
  template <class Params, class Result, class Check = no_check>
  static handler forwarded(void (runtime_port::*call_runtime)(Params, runtime_port::reply<Result>),
                           Check check = {});

  static const std::map<std::string, handler>& methods();

  void on_request(const protocol::incoming_message& m);
  void dispatch(const protocol::incoming_message& m);
  /// Cluster: sends a request naming a thread that lives elsewhere there
  /// (true), holding later lines until the router has answered.
  bool route(const protocol::incoming_message& m);
  /// Runs a request here: first through the tenant gate, then its method.
  void run_here(const protocol::incoming_message& m);
  /// Tenants (issue 22): a request naming a thread waits (true) until the
  /// runtime says whose the thread is. Another tenant's thread is asked for
  /// under a fresh id nobody knows, so its answer is exactly an unknown
  /// thread's; the id in the answer is put back (unmask).
  bool gate(const protocol::incoming_message& m);
  void unmask(const protocol::request_id& id, std::string& line);
  /// Handles the held lines, in order, while nothing holds them; `answering`:
  /// the tokens of answers being given now, which no longer count.
  void release_held(long answering = 0);
  /// on_line without the holding: the line is handled now.
  void handle_line(std::string_view line);
  bool at_capacity() const { return unanswered() >= max_unanswered; }
  /// An answer was written: requests held for capacity may go on.
  void on_answered();
  void thread_start(const call& c);
  void on_response(const protocol::incoming_message& m);

  void reply(const protocol::request_id& id, const protocol::json& result);
  /// The same with the result already written as JSON text.
  void reply_text(const protocol::request_id& id, const std::string& result_json);
  void reply_error(const protocol::request_id& id, const caf::error& err);
  void reply_error(const protocol::request_id& id, int code, const std::string& message);
  void write(std::string line);

  /// A typed runtime call whose result is sent back as JSON.
  template <class Result, class Encode>
  runtime_port::reply<Result> reply_with(const protocol::request_id& id, Encode encode);
  template <class Result>
  runtime_port::reply<Result> reply_as_json(const protocol::request_id& id);

  // -- method handlers (one per client method) ---------------------------------
  void initialize(const call& c);
  void turn_interrupt(const call& c);
  void thread_shell_command(const call& c);
  // command/exec and its follow-ups (transport/command_exec_methods.cpp).
  void command_exec(const protocol::request_id& id, const protocol::json& params);
  void command_exec_write(const protocol::request_id& id, const protocol::json& params);
  void command_exec_terminate(const protocol::request_id& id, const protocol::json& params);
  void command_exec_resize(const protocol::request_id& id, const protocol::json& params);
  template <class Result>
  runtime_port::reply<Result> exec_reply(const protocol::request_id& id);
  void thread_compact_start(const call& c);
  void thread_archive(const call& c);
  void thread_unarchive(const call& c);
  void thread_delete(const call& c);
  void thread_items_list(const call& c);
  template <class Params, class Pager>
  void page_of_thread(const call& c, Pager pager);
  void thread_goal_get(const call& c);
  void thread_goal_set(const call& c);
  void thread_goal_clear(const call& c);
  void thread_name_set(const call& c);
  void thread_metadata_update(const call& c);
  void thread_revert(const call& c);
  void thread_inject_items(const call& c);
  void thread_turns_list(const call& c);
  void skills_list(const call& c);
  void plugin_installed(const call& c);
  void account_read(const call& c);
  void model_list(const call& c);
  void config_read(const call& c);
  void config_requirements_read(const call& c);
  void debug_counts(const call& c);
  void stats(const call& c);
  // config/*, modelProvider/*, permissionProfile/list, experimentalFeature/*,
  // hooks/list (config_methods.cpp)
  void config_method(const std::string& method, const protocol::request_id& id,
                     const protocol::json& params);
  void hooks_list(const protocol::request_id& id, const protocol::json& p);
  void provider_config_write(const protocol::request_id& id, const protocol::json& p);
  /// Writes config.toml by a job off the scheduler; answers the write's
  /// ConfigWriteResponse, or runs `then` with the new version instead.
  void write_config(const protocol::request_id& id, std::vector<model_config::config_edit> edits,
                    std::optional<std::string> expected, std::optional<std::string> file,
                    std::function<void(const std::string& version)> then = {});
  void reply_config_error(const protocol::request_id& id, const std::string& code,
                          const std::string& message);
  // fs/* (file_methods.cpp)
  void file_method(const std::string& method, const protocol::request_id& id,
                   const protocol::json& p);
  void learn_roots(const protocol::thread_session_response& r);
  // fuzzyFileSearch (file_search_method.cpp)
  void fuzzy_file_search(const protocol::request_id& id, const protocol::json& p);
  void search_session(const std::string& method, const protocol::request_id& id,
                      const protocol::json& p);
  void run_session_query(const std::string& session_id, std::string query);
  static files::answer files_unavailable();

  session_config config_;
  runtime_port& runtime_;
  line_sink out_;
  bool initialized_ = false;
  bool closed_ = false;
  protocol::initialize_capabilities capabilities_;
  // Notification methods this client does not want; std::less<> so that a
  // method name (a const char*) is looked up without a std::string made per
  // notification (one allocation a delta: "item/agentMessage/delta" is past SSO).
  std::set<std::string, std::less<>> opted_out_;
  std::unordered_map<int64_t, std::unique_ptr<outgoing_request>> outgoing_;
  std::unordered_map<uint64_t, int64_t> request_of_key_;
  files::root_set roots_;
  /// The running fuzzyFileSearch of each cancellationToken: a new search
  /// with the same token cancels it.
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> search_tokens_;
  /// Every search still running: cancelled when the connection goes.
  std::set<std::shared_ptr<std::atomic<bool>>> searches_;
  /// fuzzyFileSearch/session*: each session's roots and its running query.
  struct search_session_state {
    std::vector<std::string> roots;
    std::shared_ptr<std::atomic<bool>> running;  // set: that query's answer is dropped
  };
  std::map<std::string, search_session_state> search_sessions_;
  /// Guards callbacks from the runtime that arrive after the session is gone.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  /// Held by every reply callback (reply_with, exec_reply): unanswered().
  std::shared_ptr<const char> answer_token_ = std::make_shared<const char>('\0');
  /// Cluster: a request waits for the router (or the tenant gate, or room
  /// under max_unanswered); lines after it wait here, so the client's order
  /// holds across nodes.
  bool holding_ = false;
  std::deque<std::string> held_;
  bool releasing_ = false;  // release_held is running
  std::function<void()> after_held_;
  /// The line being handled (its text is forwarded as it is).
  std::string_view current_line_;
  /// The id the router placed the next local thread/start at.
  std::string assigned_thread_id_;
  bool muted_ = false;  // replay_initialize: its answer is not sent
  bool given_up_ = false;  // give_up(): nothing more of the client's is run
  /// Threads the gate found to be this client's tenant's (tenants never
  /// change): asked once.
  std::set<std::string> own_threads_;
  /// Requests asked under a fresh id (by their id as JSON): the fresh id and
  /// the one the client named.
  std::map<std::string, std::pair<std::string, std::string>> masked_;

 public:
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;
};

}  // namespace parley::rpc
