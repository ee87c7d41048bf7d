#pragma once
// Reads newline-framed input from a file descriptor on a plain thread (not an
// actor: a blocked read must not hold up shutdown) and hands each line to an
// actor as (atom::line, text), then (atom::eof) when the input ends.

#include <atomic>
#include <caf/actor.hpp>
#include <caf/send.hpp>
#include <functional>
#include <string>
#include <thread>

#include "actors/core/atoms.hpp"

namespace parley {

/// A client's answer to a server request (an approval decision) is a line
/// without a "method" key. It overtakes the requests still queued ahead of it
/// so a decision never waits behind a burst of thousands of turn/starts
/// (issue 9, defect 6). Only the order changes, never the meaning: a line
/// misjudged either way is still parsed and handled in full. Codex, too,
/// hands replies to their waiting request at once while requests run as
/// tasks of their own, so a client cannot rely on the order between them.
inline bool looks_like_reply(const std::string& line) {
  return line.find("\"method\"") == std::string::npos;
}

/// Hands one client line to its connection, replies first (every transport).
template <class Handle>
void send_line(const Handle& connection, std::string line) {
  if (looks_like_reply(line))
    caf::anon_send<caf::message_priority::high>(connection, atom::line::value, std::move(line));
  else
    caf::anon_send(connection, atom::line::value, std::move(line));
}

class line_reader {
 public:
  /// Lines longer than this are dropped with an error in the log.
  static constexpr size_t max_line_bytes = size_t{64} << 20;

  /// `stop_fd` (optional, e.g. a signalfd): when it becomes readable the
  /// input counts as ended, after `on_stop` (if any) has run on the
  /// reader's thread.
  line_reader(int fd, caf::actor sink, int stop_fd = -1, std::function<void()> on_stop = {});
  ~line_reader();  // stops within ~100 ms even if the input never ends
  line_reader(const line_reader&) = delete;
  line_reader& operator=(const line_reader&) = delete;

 private:
  void run();

  int fd_;
  int stop_fd_;
  caf::actor sink_;
  std::function<void()> on_stop_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace parley
