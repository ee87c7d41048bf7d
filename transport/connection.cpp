#include "transport/connection.hpp"

#include <caf/send.hpp>
#include <filesystem>
#include <system_error>
#include <utility>

#include "actors/core/handlers.hpp"
#include "actors/core/log.hpp"
#include "actors/core/telemetry.hpp"
#include "actors/mcp/messages.hpp"

namespace parley {

namespace {

using self_ptr = connection_actor::stateful_pointer<connection_state>;

constexpr auto call_timeout = std::chrono::seconds(120);

// How long the input's end waits for replies still to come (await_answers).
constexpr auto answers_grace = std::chrono::seconds(5);

// A burst is handed over early once it holds this much: what waits in the
// connection is bounded, and the writer's pressure marks (issue 22) see it soon.
constexpr size_t burst_max_lines = 256;
constexpr size_t burst_max_bytes = size_t{64} << 10;
// How many more of its mailbox's rounds a burst's flush may wait for.
constexpr int burst_max_rounds = 4;

/// Hands the burst to the transport (write_burst), in order, and gives its
/// credits back: the lines are counted in the outgoing queue from here.
void flush_burst(self_ptr self) {
  auto& st = self->state;
  if (st.burst.empty()) return;
  st.options.write_burst(st.burst);
  st.burst.clear();
  st.burst_bytes = 0;
  st.burst_credits.clear();
}

/// The burst's flush came round. CAF takes a few of a mailbox's messages
/// per round, urgent ones first: while more are waiting (a burst of the
/// client's requests, events from many threads), the hand-off waits a round
/// or a few more for their lines, never longer than burst_max_rounds and
/// never for a timer. An empty mailbox hands the burst over at once.
void on_flush(self_ptr self) {
  auto& st = self->state;
  if (!self->mailbox().empty() && st.flush_rounds < burst_max_rounds) {
    ++st.flush_rounds;
    self->send<caf::message_priority::high>(self, atom::flush::value);
    return;
  }
  st.flush_sent = false;
  st.flush_rounds = 0;
  flush_burst(self);
}

/// One line to the client, in order with every other: into the burst where
/// the transport takes bursts (write_burst), straight to the transport where
/// it takes lines (write_direct), else through the writer.
void write_out(self_ptr self, std::string line, std::shared_ptr<const void> credit) {
  auto& st = self->state;
  if (st.options.write_burst) {
    line += '\n';
    st.burst_bytes += line.size();
    st.burst.push_back(std::move(line));
    if (credit) st.burst_credits.push_back(std::move(credit));
    if (st.burst.size() >= burst_max_lines || st.burst_bytes >= burst_max_bytes) {
      flush_burst(self);
    } else if (!st.flush_sent) {
      // Urgent: it is handled once the messages taken in with this one are,
      // ahead of those that come meanwhile (CAF takes a mailbox's urgent
      // messages first in each round), so a line waits for no more than the
      // rest of the messages at hand.
      st.flush_sent = true;
      self->send<caf::message_priority::high>(self, atom::flush::value);
    }
  } else if (st.options.write_direct) {
    st.options.write_direct(std::move(line), std::move(credit));
  } else if (credit) {
    self->send(st.out, std::move(line), std::move(credit));
  } else {
    self->send(st.out, std::move(line));
  }
}

/// A thread's notification to the client: its line goes out holding the
/// event's credit (backpressure, issue 22), one line per event, batched or not.
void notify_one(self_ptr self, const outgoing_event& e) {
  self->state.writing_credit = e.credit;
  self->state.session->notify(e);
  self->state.writing_credit.reset();
}

/// The runtime as the session sees it: each call is one CAF request to the
/// thread manager, answered through the session's reply.
class thread_manager_port final : public rpc::runtime_port {
 public:
  explicit thread_manager_port(self_ptr self) : self_(self) {}

  void thread_start(protocol::thread_start_params p,
                    reply<protocol::thread_session_response> done) override {
    forward(std::move(done), atom::open::value, std::move(p), client());
  }
  void thread_resume(protocol::thread_resume_params p,
                     reply<protocol::thread_session_response> done) override {
    forward(std::move(done), atom::resume::value, std::move(p), client());
  }
  void thread_fork(protocol::thread_fork_params p,
                   reply<protocol::thread_session_response> done) override {
    forward(std::move(done), atom::fork::value, std::move(p), client());
  }
  void thread_read(protocol::thread_read_params p,
                   reply<protocol::thread_read_response> done) override {
    forward(std::move(done), atom::read::value, std::move(p));
  }
  void thread_loaded_list(protocol::thread_loaded_list_params p,
                          reply<protocol::thread_loaded_list_response> done) override {
    forward(std::move(done), atom::loaded::value, std::move(p));
  }
  void thread_list(protocol::thread_list_params p,
                   reply<protocol::thread_list_response> done) override {
    forward(std::move(done), atom::list::value, std::move(p));
  }
  void thread_tenant(std::string thread_id, reply<std::string> done) override {
    forward(std::move(done), atom::tenant::value, std::move(thread_id));
  }
  void thread_archive(protocol::thread_id_params p, bool archive,
                      reply<protocol::thread> done) override {
    forward(std::move(done), atom::archive::value, std::move(p), archive, client());
  }
  void thread_goal(goal_request r, reply<goal_answer> done) override {
    forward(std::move(done), atom::goal::value, std::move(r), client());
  }
  void thread_edit(parley::thread_edit e, reply<thread_edit_answer> done) override {
    forward(std::move(done), atom::edit::value, std::move(e), client());
  }
  void thread_delete(protocol::thread_id_params p, reply<atom::ok> done) override {
    forward(std::move(done), atom::erase::value, std::move(p), client());
  }
  void thread_name_set(protocol::thread_name_set_params p, reply<atom::ok> done) override {
    forward(std::move(done), atom::rename::value, std::move(p), client());
  }
  void thread_unsubscribe(protocol::thread_id_params p,
                          reply<protocol::thread_unsubscribe_response> done) override {
    forward(std::move(done), atom::unsub::value, std::move(p), client());
  }
  void turn_start(protocol::turn_start_params p,
                  reply<protocol::turn_start_response> done) override {
    forward(std::move(done), atom::turn_start::value, std::move(p), client());
  }
  void turn_interrupt(protocol::turn_interrupt_params p, reply<atom::ok> done) override {
    forward(std::move(done), atom::interrupt::value, std::move(p));
  }
  void thread_shell_command(protocol::thread_shell_command_params p,
                            reply<atom::ok> done) override {
    forward(std::move(done), atom::shell::value, std::move(p), client());
  }
  void thread_compact(protocol::thread_id_params p, reply<atom::ok> done) override {
    forward(std::move(done), atom::compact::value, std::move(p), client());
  }
  void review_start(protocol::review_start_params p,
                    reply<protocol::review_start_response> done) override {
    forward(std::move(done), atom::review::value, std::move(p), client());
  }
  void turn_steer(protocol::turn_steer_params p,
                  reply<protocol::turn_steer_response> done) override {
    forward(std::move(done), atom::steer::value, std::move(p), client());
  }
  void command_exec(protocol::command_exec_params p,
                    reply<protocol::command_exec_response> done) override {
    // No deadline here: the command's own timeout ends it, and the thread
    // manager (or the command) answers even when it fails.
    self_->request(self_->state.threads, caf::infinite, atom::exec_start::value, std::move(p),
                   client())
        .then([done](protocol::command_exec_response& r) { done(std::move(r)); },
              [done](caf::error& err) { done(std::move(err)); });
  }
  void command_exec_write(std::string process_id, std::string bytes, bool close_stdin,
                          reply<atom::ok> done) override {
    forward(std::move(done), atom::exec_write::value, std::move(process_id), std::move(bytes),
            close_stdin, client());
  }
  void command_exec_terminate(std::string process_id, reply<atom::ok> done) override {
    forward(std::move(done), atom::exec_kill::value, std::move(process_id), client());
  }
  void command_exec_resize(std::string process_id, protocol::terminal_size size,
                           reply<atom::ok> done) override {
    forward(std::move(done), atom::exec_resize::value, std::move(process_id), size, client());
  }
  void debug_counts(reply<runtime_counts> done) override {
    forward(std::move(done), atom::stats::value);
  }
  void mcp(std::string method, protocol::json params, reply<protocol::json> done) override {
    const auto& hub = self_->state.options.mcp_hub;
    if (!hub) return rpc::runtime_port::mcp(std::move(method), std::move(params), std::move(done));
    // A tool call ends by its own tool_timeout_sec (at most a day); the
    // server's actor answers every call, this deadline is only a backstop.
    std::chrono::seconds deadline = call_timeout;
    if (method == "mcpServer/tool/call" || method == "mcpServer/resource/read")
      deadline = std::chrono::hours(25);
    self_->request(hub, deadline, mcp::atom::call::value, std::move(method),
                   params.dump(-1, ' ', false, protocol::json::error_handler_t::replace))
        .then(
            [done](std::string& text) {
              auto r = protocol::json::parse(text, nullptr, false);
              if (r.is_discarded())
                return done(make_error(errc::internal, "the MCP hub answered malformed JSON"));
              done(std::move(r));
            },
            [done](caf::error& err) { done(std::move(err)); });
  }
  protocol::json approval_stats() override {
    return self_->state.options.telemetry->approvals.snapshot();
  }

 private:
  client_actor client() const { return caf::actor_cast<client_actor>(self_); }

  template <class Result, class... Ts>
  void forward(reply<Result> done, Ts&&... xs) {
    self_->request(self_->state.threads, call_timeout, std::forward<Ts>(xs)...)
        .then([done](Result& r) { done(std::move(r)); },
              [done](caf::error& err) { done(std::move(err)); });
  }

  self_ptr self_;
};

/// fs/* for the session: a detached worker runs the blocking jobs, a second
/// one the fuzzyFileSearch walks, a watcher owns the inotify watches; all
/// spawned on first use, linked to the connection and stopped with it.
class connection_file_port final : public rpc::file_port {
 public:
  explicit connection_file_port(self_ptr self) : self_(self) {}

  void run(files::file_job job, reply done) override {
    if (!worker_) {
      worker_ = self_->spawn<caf::detached + caf::linked>(files::file_worker, 0);
      stop_with_connection(worker_);
    }
    self_->request(worker_, job_timeout, atom::fs_job::value, std::move(job))
        .then([done](files::file_answer& a) { done(std::move(a.value)); },
              [done](caf::error& err) { done(failed(err)); });
  }

  void search(files::file_job job, reply done) override {
    if (!searcher_) {
      searcher_ = self_->spawn<caf::detached + caf::linked>(files::file_worker, 0);
      stop_with_connection(searcher_);
    }
    self_->request(searcher_, job_timeout, atom::fs_job::value, std::move(job))
        .then([done](files::file_answer& a) { done(std::move(a.value)); },
              [done](caf::error& err) { done(failed(err)); });
  }

  void watch(std::string id, files::root_set roots, std::string path, reply done) override {
    if (!watcher_) {
      watcher_ = self_->spawn<caf::linked>(files::fs_watcher,
                                           caf::actor_cast<files::fs_change_sink>(self_));
      stop_with_connection(watcher_);
    }
    self_->request(watcher_, job_timeout, atom::fs_watch::value, std::move(id), std::move(roots),
                   std::move(path))
        .then([done](files::file_answer& a) { done(std::move(a.value)); },
              [done](caf::error& err) { done(failed(err)); });
  }

  void unwatch(std::string id, reply done) override {
    if (!watcher_) return done(files::json::object());
    self_->request(watcher_, job_timeout, atom::fs_unwatch::value, std::move(id))
        .then([done](files::file_answer& a) { done(std::move(a.value)); },
              [done](caf::error& err) { done(failed(err)); });
  }

 private:
  static constexpr auto job_timeout = std::chrono::minutes(10);

  static files::failure failed(const caf::error& err) {
    return {files::internal_error, "file operation failed: " + caf::to_string(err)};
  }

  /// A normal exit does not travel along links: stop it explicitly.
  template <class Handle>
  void stop_with_connection(const Handle& h) {
    self_->attach_functor([h] { caf::anon_send_exit(h, caf::exit_reason::user_shutdown); });
  }

  self_ptr self_;
  files::file_worker_actor worker_;
  files::file_worker_actor searcher_;  // fuzzyFileSearch's walks
  files::fs_watcher_actor watcher_;
};

/// What the cluster_session needs of its connection actor.
class connection_cluster_link final : public connection_link {
 public:
  explicit connection_cluster_link(self_ptr self) : self_(self) {}

  void ask_owner(const std::string& thread_id,
                 std::function<void(caf::expected<std::string>)> done) override {
    self_->request(router(), call_timeout, atom::owner::value, thread_id)
        .then([done](std::string& node) { done(std::move(node)); },
              [done](caf::error& err) { done(std::move(err)); });
  }
  void ask_placement(
      std::function<void(caf::expected<std::pair<std::string, std::string>>)> done) override {
    self_->request(router(), call_timeout, atom::open::value)
        .then([done](std::string& id, std::string& node) {
                done(std::make_pair(std::move(id), std::move(node)));
              },
              [done](caf::error& err) { done(std::move(err)); });
  }
  void ask_cluster_stats(std::function<void(caf::expected<std::string>)> done) override {
    self_->request(router(), call_timeout, atom::stats::value, atom::members::value)
        .then([done](std::string& text) { done(std::move(text)); },
              [done](caf::error& err) { done(std::move(err)); });
  }
  void open_remote(const std::string& node, const cluster::session_open& open,
                   std::function<void(caf::expected<cluster::remote_session_actor>)> done) override {
    // Every request to another node has a deadline: CAF 0.17 may never
    // answer one whose receiver quit (actor-framework #1466).
    auto self = self_;
    self_->request(router(), call_timeout, atom::get::value, node)
        .then(
            [self, node, open, done](cluster::node_actor& peer) {
              // A handle, never the raw pointer: a line may reach the relay
              // after the connection is gone (then it is dropped).
              auto me = caf::actor_cast<connection_actor>(self);
              auto relay = self->spawn([me, node]() -> cluster::session_relay_actor::behavior_type {
                return {
                    [me, node](atom::line, std::string& line) {
                      caf::anon_send(me, atom::relay::value, node, std::move(line));
                    },
                    [me, node](atom::close) { caf::anon_send(me, atom::relay::value, node); },
                };
              });
              self->attach_functor(
                  [relay] { caf::anon_send_exit(relay, caf::exit_reason::user_shutdown); });
              self->request(peer, std::chrono::seconds(10), atom::open::value, open, relay)
                  .then(
                      [self, done](cluster::remote_session_actor& session) {
                        self->monitor(session);
                        done(std::move(session));
                      },
                      [done](caf::error& err) { done(std::move(err)); });
            },
            [done](caf::error& err) { done(std::move(err)); });
  }
  void send_line(const cluster::remote_session_actor& to, std::string line) override {
    self_->send(to, atom::line::value, std::move(line));
  }
  void send_eof(const cluster::remote_session_actor& to) override {
    self_->send(to, atom::eof::value);
  }
  void write_client(std::string line) override { write_out(self_, std::move(line), nullptr); }
  void after(std::chrono::milliseconds delay, std::function<void()> f) override {
    auto token = ++self_->state.next_timer;
    self_->state.timers.emplace(token, std::move(f));
    self_->delayed_send(self_, delay, atom::timeout::value, token);
  }
  void resume_here(const std::string& thread_id, std::function<void(bool)> done) override {
    protocol::thread_resume_params p;
    p.thread_id = thread_id;
    p.exclude_turns = true;
    self_->request(self_->state.threads, call_timeout, atom::resume::value, std::move(p),
                   caf::actor_cast<client_actor>(self_))
        .then([done](protocol::thread_session_response&) { done(true); },
              [done](caf::error&) { done(false); });
  }

 private:
  const cluster::thread_router_actor& router() const { return self_->state.options.cluster_router; }
  self_ptr self_;
};

void end_input(self_ptr self);
void await_answers(self_ptr self);

void on_eof(self_ptr self) {
  auto& st = self->state;
  if (st.answers_due) return await_answers(self);  // our own reminder (below)
  if (st.session->closed() || st.eof_seen) return;
  st.eof_seen = true;
  // Lines held behind a router's or the tenant gate's answer came before the
  // end: they are dispatched first (a request the client sent is answered).
  st.session->after_held([self] {
    self->state.answers_due = std::chrono::steady_clock::now() + answers_grace;
    await_answers(self);
  });
}

/// The transport gave up on a client too far behind in reading: unlike an
/// input's end, nothing it sent and the connection has not run yet is run
/// (no reply could reach it, and a turn it asked for would run for nobody);
/// nor does the end wait for answers it cannot read.
void on_given_up(self_ptr self) {
  auto& st = self->state;
  if (st.session->closed()) return;
  st.eof_seen = true;
  auto dropped = st.session->give_up();
  PARLEY_WARN("connection event=client_given_up client={} dropped_requests={} unanswered={}",
              st.options.label, dropped, st.session->unanswered());
  end_input(self);
}

/// Requests read before the input's end whose replies come from other
/// actors (the MCP hub, the file workers) are answered before the session
/// ends, for answers_grace at most; looked at again every 10 ms.
void await_answers(self_ptr self) {
  auto& st = self->state;
  auto left = st.session->unanswered();
  if (left > 0 && std::chrono::steady_clock::now() < *st.answers_due) {
    self->delayed_send(self, std::chrono::milliseconds(10), atom::eof::value);
    return;
  }
  if (left > 0)
    PARLEY_WARN("connection event=input_closed unanswered={} (not answered within {} s)", left,
                std::chrono::duration_cast<std::chrono::seconds>(answers_grace).count());
  end_input(self);
}

void end_input(self_ptr self) {
  auto& st = self->state;
  if (st.session->closed()) return;
  st.session->on_eof();
  auto finish = [self] {
    flush_burst(self);  // every line written so far, before the output closes
    self->request(self->state.out, call_timeout, atom::close::value)
        .then([self](atom::ok) { self->quit(); }, [self](caf::error&) { self->quit(); });
  };
  if (!st.options.shutdown_on_close) {
    self->send(st.threads, atom::gone::value, caf::actor_cast<client_actor>(self));
    finish();
    return;
  }
  self->request(st.threads, std::chrono::seconds(90), atom::shutdown::value)
      .then([finish](atom::ok) { finish(); },
            [finish](caf::error& err) {
              PARLEY_WARN("connection event=shutdown_failed error={}", caf::to_string(err));
              finish();
            });
}

/// Tells one event source whether this client is behind.
void tell_pressure(self_ptr self, const caf::actor_addr& source, bool on) {
  // Untyped: a conversation or a command's actor (anon_send: a typed
  // actor's send() takes typed receivers only). High priority: it must not
  // wait behind the events already on their way (nor may a later one
  // overtake it: every pressure message is high).
  auto to = caf::actor_cast<caf::actor>(source);
  if (to)
    caf::anon_send<caf::message_priority::high>(to, atom::pressure::value,
                                                caf::actor_cast<client_actor>(self), on);
}

/// An event came: its source is remembered (the thread manager's own
/// events, a thread's start or a goal, hold no stream and are not).
void note_event_source(self_ptr self) {
  auto& st = self->state;
  auto source = caf::actor_cast<caf::actor_addr>(self->current_sender());
  if (!source || source == st.threads.address()) return;
  if (st.event_sources.insert(source).second && st.pressing) tell_pressure(self, source, true);
}

/// The writer says the client went past the high-water mark (true) or back
/// under the low-water mark (false): every source hears it.
void on_pressure(self_ptr self, bool on) {
  auto& st = self->state;
  if (st.pressing == on) return;
  st.pressing = on;
  PARLEY_INFO("connection event=pressure client={} behind={} sources={}", st.options.label, on,
              st.event_sources.size());
  for (auto i = st.event_sources.begin(); i != st.event_sources.end();) {
    if (!caf::actor_cast<caf::actor>(*i)) {
      i = st.event_sources.erase(i);  // gone (an unloaded thread, an ended command)
      continue;
    }
    tell_pressure(self, *i, on);
    ++i;
  }
}

rpc::session_config session_config_of(const connection_options& options) {
  auto& cfg = *options.config;
  rpc::session_config sc;
  sc.cli_version = cfg.cli_version;
  sc.codex_home = cfg.home;
  sc.model_id = cfg.model_id;
  // Ids come from the runtime, not the connection: a reply meant for another
  // connection's request never matches one of this connection's.
  sc.next_request_id = [t = options.telemetry] { return t->next_request_id(); };
  sc.on_refused_reply = [t = options.telemetry] { t->approvals.on_refused_reply(); };
  sc.telemetry = options.telemetry;
  sc.label = options.label;
  sc.identity = options.identity;
  sc.runtime = options.config;
  sc.default_cwd = cfg.default_cwd;
  if (sc.default_cwd.empty()) {
    std::error_code ec;
    sc.default_cwd = std::filesystem::current_path(ec).native();
  }
  return sc;
}

}  // namespace

connection_actor::behavior_type connection(connection_actor::stateful_pointer<connection_state> self,
                                           thread_manager_actor threads, line_writer_actor out,
                                           connection_options options) {
  install_default_handlers(self, "connection");
  auto& st = self->state;
  st.threads = std::move(threads);
  st.out = std::move(out);
  st.options = std::move(options);
  st.runtime = std::make_unique<thread_manager_port>(self);
  st.files = std::make_unique<connection_file_port>(self);
  auto sc = session_config_of(st.options);
  sc.connection_id = self->id();
  sc.files = st.files.get();
  sc.cluster_peer = st.options.cluster_peer;
  if (st.options.cluster_router) {
    st.cluster_link = std::make_unique<connection_cluster_link>(self);
    st.cluster = std::make_shared<cluster_session>(st.options.config->cluster, st.options.label,
                                                   st.options.shutdown_on_close,
                                                   *st.cluster_link);
    st.cluster->identity = st.options.identity;
    sc.router = st.cluster;
  }
  st.session = std::make_unique<rpc::session>(
      std::move(sc), *st.runtime,
      [self](std::string line) {
        write_out(self, std::move(line), std::move(self->state.writing_credit));
      });
  if (!st.options.replay_initialize.empty())
    st.session->replay_initialize(st.options.replay_initialize);
  // The process's MCP servers' startup states, for this node's own clients.
  if (st.options.mcp_hub && !st.options.cluster_peer)
    caf::anon_send(st.options.mcp_hub, mcp::atom::subscribe::value,
                   caf::actor_cast<caf::actor>(self));
  // A session for a client of another node: that node gone is the client gone.
  if (st.options.peer_relay) self->monitor(st.options.peer_relay);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& s = self->state;
    if (s.options.peer_relay && dm.source == s.options.peer_relay.address()) {
      PARLEY_WARN("connection event=origin_lost client={} reason={}", s.options.label,
                  caf::to_string(dm.reason));
      on_eof(self);
      return;
    }
    if (s.cluster) {
      auto node = s.cluster->node_of(dm.source);
      if (!node.empty()) s.cluster->on_remote_lost(node, caf::to_string(dm.reason));
    }
  });
  return {
      [self](atom::line, const std::string& line) { self->state.session->on_line(line); },
      [self](atom::eof) { on_eof(self); },
      [self](atom::eof, atom::gone) { on_given_up(self); },
      [self](atom::event, const notification_ptr& n) {
        note_event_source(self);
        notify_one(self, *n);
      },
      [self](atom::event, const notification_batch& batch) {
        note_event_source(self);
        for (const auto& n : batch) notify_one(self, *n);
      },
      [self](atom::pressure, bool on) { on_pressure(self, on); },
      [self](atom::flush) { on_flush(self); },
      [self](mcp::atom::startup, const std::string& params) {
        self->state.session->notify_json("mcpServer/startupStatus/updated", params);
      },
      [self](atom::ask, const approval_ask& ask) -> caf::result<protocol::approval_decision> {
        auto rp = self->make_response_promise<protocol::approval_decision>();
        self->state.session->ask(ask, [self, rp](
                                          caf::expected<protocol::approval_decision> d) mutable {
          if (d) {
            const auto& who = self->state.options.identity;
            d->tenant = who.tenant;
            d->subject = who.subject;
            d->as_operator = who.is_operator;
            rp.deliver(std::move(*d));
          } else {
            rp.deliver(std::move(d.error()));
          }
        });
        return rp;
      },
      [self](atom::withdraw, uint64_t key) { self->state.session->withdraw(key); },
      [self](atom::fs_changed, const std::string& id, std::vector<std::string>& paths) {
        self->state.session->on_fs_changed(id, std::move(paths));
      },
      [self](atom::relay, const std::string& node, std::string& line) {
        if (self->state.cluster) self->state.cluster->on_remote_line(node, std::move(line));
      },
      [self](atom::relay, const std::string& node) {
        if (self->state.cluster) self->state.cluster->on_remote_lost(node, "its session ended");
      },
      [self](atom::timeout, uint64_t token) {
        auto i = self->state.timers.find(token);
        if (i == self->state.timers.end()) return;
        auto f = std::move(i->second);
        self->state.timers.erase(i);
        f();
      },
  };
}

}  // namespace parley
