#pragma once
// Where a client's requests go when parley runs as a cluster. The session
// asks before it runs a request that names a thread: this node runs it, or
// the line goes, as it is, to a session on the node that holds the thread
// (transport/cluster_session.cpp). Without a cluster there is no router and
// nothing changes.

#include <cstdint>
#include <functional>
#include <string>

namespace parley::rpc {

class session_router {
 public:
  virtual ~session_router() = default;

  /// Where a thread lives: "" for this node, else the node's name.
  using located = std::function<void(std::string node)>;
  virtual void locate(const std::string& thread_id, located then) = 0;

  /// A new thread's id and node (rendezvous hashing of the id over the live
  /// nodes): "" for this node.
  using placed = std::function<void(std::string thread_id, std::string node)>;
  virtual void place(placed then) = 0;

  /// The client's request `id` (as its JSON) for `thread_id` goes to its
  /// session on `node`, opened at first use with the client's initialize
  /// line. The router answers the client itself if the node cannot.
  virtual void forward(const std::string& node, const std::string& thread_id,
                       const std::string& request_id_json, std::string line) = 0;

  /// The client's answer to a server->client request of another node's
  /// (ids carry their node's ordinal): true when it was sent there.
  virtual bool forward_answer(int64_t request_id, std::string line) = 0;

  /// The client said initialize (its line, replayed to remote sessions).
  virtual void client_initialized(std::string initialize_line) = 0;

  /// parley/stats for the whole cluster: every member's figures and their
  /// totals as JSON text (ok), or why they could not be had (!ok).
  using stats_ready = std::function<void(bool ok, std::string text)>;
  virtual void cluster_stats(stats_ready then) = 0;

  /// The client's input ended: every remote session hears it.
  virtual void client_closed() = 0;
};

}  // namespace parley::rpc
