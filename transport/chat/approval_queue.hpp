#pragma once
// The chat's queue of pending approvals, across threads (after the TUI's
// ApprovalOverlay, seed 002). The server may ask several approvals at once
// (one per thread at most), but a terminal asks one question at a time: the
// first request is "current", the rest wait in arrival order. Pure: no I/O,
// the chat decides what to print and what to answer.

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "protocol/json_codec.hpp"
#include "protocol/jsonrpc.hpp"

namespace parley {

struct queued_approval {
  protocol::request_id id;
  std::string method;        // item/commandExecution/requestApproval, item/fileChange/...
  protocol::json params;     // the request's params, as received
  protocol::json context;    // what the request refers to (a fileChange item's changes)
  std::string thread_id;     // params.threadId, kept apart for per-thread questions
};

class approval_queue {
 public:
  /// Adds a request behind the others. A request id already queued is
  /// ignored (returns false): a duplicate must not be asked twice.
  bool enqueue(protocol::request_id id, std::string method, protocol::json params,
               protocol::json context = nullptr);

  /// The request being asked, or nullptr when nothing is pending.
  const queued_approval* current() const;

  /// Removes the current request once it has been answered and returns it;
  /// the next one becomes current.
  std::optional<queued_approval> advance();

  /// Removes a request wherever it is (the server resolved it on its own:
  /// timeout, interrupt). Returns false if it was not queued.
  bool resolve(const protocol::request_id& id);

  /// Empties the queue and returns every pending id, current first, so that
  /// each can be answered (cancel on "abort all", decline at end of input).
  std::vector<protocol::request_id> abort_all();

  /// Whether a request of this thread is pending (its turn waits on us).
  bool has_thread(const std::string& thread_id) const;

  size_t size() const { return pending_.size(); }
  bool empty() const { return pending_.empty(); }

 private:
  std::deque<queued_approval> pending_;
};

}  // namespace parley
