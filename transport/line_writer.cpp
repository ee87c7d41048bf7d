#include "transport/line_writer.hpp"

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "actors/core/handlers.hpp"

namespace parley {

namespace {

// Above this much queued output, write at once rather than wait for flush.
constexpr size_t eager_write_bytes = size_t{1} << 20;

void write_out(line_writer_actor::stateful_pointer<line_writer_state> self) {
  auto& st = self->state;
  st.flush_pending = false;
  if (st.broken) {
    st.buffer.clear();
    return;
  }
  size_t done = 0;
  while (done < st.buffer.size()) {
    auto n = ::write(st.fd, st.buffer.data() + done, st.buffer.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) continue;  // a non-blocking peer: retry
    if (n <= 0) {
      PARLEY_WARN("line_writer event=write_failed error={} dropped_bytes={}", std::strerror(errno),
                  st.buffer.size() - done);
      st.broken = true;
      break;
    }
    done += static_cast<size_t>(n);
  }
  st.buffer.clear();
}

}  // namespace

line_writer_actor::behavior_type line_writer(line_writer_actor::stateful_pointer<line_writer_state> self,
                                             int fd) {
  install_default_handlers(self, "line_writer");
  self->state.fd = fd;
  return {
      [self](std::string& line) {
        auto& st = self->state;
        st.buffer += line;
        st.buffer += '\n';
        if (st.buffer.size() >= eager_write_bytes) {
          write_out(self);
        } else if (!st.flush_pending) {
          // Goes behind every line already queued: one write for the batch.
          st.flush_pending = true;
          self->send(self, atom::flush::value);
        }
      },
      [self](atom::flush) {
        if (self->state.flush_pending) write_out(self);
      },
      [self](atom::close) {
        write_out(self);
        self->quit();
        return atom::ok::value;
      },
  };
}

}  // namespace parley
