#include "actors/threads/command_exec.hpp"

#include "actors/core/handlers.hpp"
#include "actors/core/log.hpp"
#include "protocol/base64.hpp"
#include "actors/threads/process_reactor.hpp"

namespace parley {

namespace command_exec_detail {

using exec_self = command_exec_actor::stateful_pointer<command_exec_state>;

// Codex's exit code for a command/exec that ran out of time (timeout(1)'s).
constexpr int timed_out_code = 124;

/// A chunk of one stream: streamed (a delta to the client, ahead of the
/// reply) or kept, up to the cap.
void on_chunk(exec_self self, captured_stream& c, const char* stream, std::string chunk) {
  auto& st = self->state;
  if (c.cap_reached) return;
  c.seen += chunk.size();
  if (st.setup.cap && c.seen >= *st.setup.cap) {
    // Codex marks the stream's last chunk; output that fits exactly is not cut.
    auto over = c.seen - *st.setup.cap;
    chunk.resize(chunk.size() - static_cast<size_t>(over));
    c.cap_reached = over > 0;
    if (over == 0 && chunk.empty()) return;
  }
  if (!st.setup.stream_output) {
    c.kept += chunk;
    return;
  }
  protocol::command_exec_output_delta d{"", st.setup.process_id, stream,
                                        protocol::base64_encode(chunk), c.cap_reached};
  self->send(st.setup.client, atom::event::value, make_notification(std::move(d), false));
}

void on_exited(exec_self self, exit_info& info) {
  auto& st = self->state;
  *st.reaped = true;
  // The processId is free again before the client hears the reply.
  if (!st.setup.process_id.empty())
    self->send(st.setup.registry, atom::exec_gone::value, self->address());
  // Killed by its timeout before it even started (timeoutMs 0): a timeout.
  if (!info.not_started.empty() && !st.timed_out) {
    PARLEY_INFO("command_exec event=not_started process_id=\"{}\" why=\"{}\"", st.setup.process_id,
                info.not_started);
    auto err = make_error(errc::internal, "failed to spawn command: " + info.not_started);
    if (st.asked)
      st.reply.deliver(std::move(err));
    else
      st.failed = std::move(err);
    // A normal exit: an error would travel the link and stop the registry.
    if (st.asked) self->quit();
    return;
  }
  protocol::command_exec_response r;
  r.exit_code = st.timed_out ? timed_out_code : info.exit_code;
  r.stdout_text = std::move(st.out.kept);
  r.stderr_text = std::move(st.err.kept);
  PARLEY_DEBUG("command_exec event=exited process_id=\"{}\" exit_code={} timed_out={} ms={}",
               st.setup.process_id, r.exit_code, st.timed_out, info.duration_ms);
  if (st.asked) {
    st.reply.deliver(std::move(r));
    self->quit();
  } else {
    st.result = std::move(r);  // answered when asked (the request is on its way)
  }
}

}  // namespace command_exec_detail

command_exec_actor::behavior_type command_exec(
    command_exec_actor::stateful_pointer<command_exec_state> self, command_exec_setup setup,
    spawn_spec spec, runtime_services svc) {
  using namespace command_exec_detail;
  install_default_handlers(self, "command_exec");
  auto& init = self->state;
  init.setup = std::move(setup);
  init.live = count_live(svc.telemetry, &live_counters::execs);
  init.reactor = svc.reactor;
  // The client gone: nobody can read the output or end the command.
  self->monitor(init.setup.client);
  self->set_down_handler([self](caf::down_msg&) { self->quit(); });
  init.process = init.reactor->spawn(std::move(spec), caf::actor_cast<process_sink_actor>(self));
  // However this actor ends, the process group does not outlive it.
  self->attach_functor([reactor = init.reactor, reaped = init.reaped, id = init.process] {
    if (!*reaped) reactor->kill(id);
  });
  self->delayed_send(self, init.setup.timeout, atom::timeout::value);
  return {
      [self](atom::output, std::string& chunk) {
        on_chunk(self, self->state.out, "stdout", std::move(chunk));
      },
      [self](atom::err_output, std::string& chunk) {
        on_chunk(self, self->state.err, "stderr", std::move(chunk));
      },
      [self](atom::exited, exit_info& info) { on_exited(self, info); },
      [](atom::pressure, const client_actor&, bool) {},
      [self](atom::timeout) {
        auto& st = self->state;
        if (*st.reaped || st.timed_out) return;
        st.timed_out = true;
        PARLEY_INFO("command_exec event=timed_out process_id=\"{}\" after_ms={}",
                    st.setup.process_id, st.setup.timeout.count());
        st.reactor->kill(st.process);
      },
      [self](atom::exec_start) -> caf::result<protocol::command_exec_response> {
        auto& st = self->state;
        if (st.failed) {
          auto err = std::move(st.failed);
          self->quit();
          return err;
        }
        if (st.result) {
          auto r = std::move(*st.result);
          self->quit();
          return r;
        }
        st.asked = true;
        st.reply = self->make_response_promise<protocol::command_exec_response>();
        return st.reply;
      },
      [self](atom::exec_write, std::string& bytes, bool close) -> caf::result<atom::ok> {
        auto& st = self->state;
        if (!st.setup.stream_stdin)
          return make_error(errc::invalid_request,
                            "stdin streaming is not enabled for this command/exec");
        if (st.stdin_closed) {
          if (bytes.empty() && close) return atom::ok::value;  // closing twice is fine
          return make_error(errc::invalid_request, "stdin is already closed");
        }
        st.stdin_closed = close;
        st.reactor->write_stdin(st.process, std::move(bytes), close);
        return atom::ok::value;
      },
      [self](atom::exec_kill) -> caf::result<atom::ok> {
        auto& st = self->state;
        if (!*st.reaped) st.reactor->kill(st.process);
        return atom::ok::value;
      },
      [self](atom::exec_resize, const protocol::terminal_size& size) -> caf::result<atom::ok> {
        auto& st = self->state;
        if (!st.setup.tty)
          return make_error(errc::invalid_request,
                            "failed to resize PTY: process is not attached to a PTY");
        st.reactor->resize(st.process, size.rows, size.cols);
        return atom::ok::value;
      },
  };
}

}  // namespace parley
