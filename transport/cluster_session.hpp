#pragma once
// A client connection's side of the cluster (rpc::session_router): where its
// requests for threads go, the sessions it has opened on other nodes for
// them, and what comes back. The other node's session speaks for this
// client there; its lines (responses, the thread's notifications, approval
// requests) come back through a relay actor and are written to the client
// as they are. When that node is lost, the requests still in flight there
// are answered with an error (exactly one reply each), and the threads the
// client followed there are resumed on their new owner, so their pending
// approvals are asked of this client again.

#include <caf/expected.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "actors/cluster/thread_router.hpp"
#include "actors/core/tenant.hpp"
#include "transport/session_router.hpp"

namespace parley {

/// How the connection actor serves the router: requests, sends, timers.
class connection_link {
 public:
  virtual ~connection_link() = default;
  virtual void ask_owner(const std::string& thread_id, std::function<void(caf::expected<std::string>)>) = 0;
  virtual void ask_placement(std::function<void(caf::expected<std::pair<std::string, std::string>>)>) = 0;
  virtual void ask_cluster_stats(std::function<void(caf::expected<std::string>)>) = 0;
  virtual void open_remote(const std::string& node, const cluster::session_open& open,
                           std::function<void(caf::expected<cluster::remote_session_actor>)>) = 0;
  virtual void send_line(const cluster::remote_session_actor& to, std::string line) = 0;
  virtual void send_eof(const cluster::remote_session_actor& to) = 0;
  virtual void write_client(std::string line) = 0;
  virtual void after(std::chrono::milliseconds delay, std::function<void()> f) = 0;
  virtual void resume_here(const std::string& thread_id, std::function<void(bool ok)> done) = 0;
};

class cluster_session final : public rpc::session_router {
 public:
  cluster_session(std::shared_ptr<const cluster::cluster_config> config, std::string label,
                  bool closing_cancels, connection_link& link);

  /// Who the client is: its remote sessions speak for the same tenant.
  tenant_identity identity;

  // -- rpc::session_router ----------------------------------------------------
  void locate(const std::string& thread_id, located then) override;
  void place(placed then) override;
  void forward(const std::string& node, const std::string& thread_id,
               const std::string& request_id_json, std::string line) override;
  bool forward_answer(int64_t request_id, std::string line) override;
  void client_initialized(std::string initialize_line) override;
  void client_closed() override;
  void cluster_stats(stats_ready then) override;

  // -- from the connection actor ---------------------------------------------
  /// A line of `node`'s session for this client.
  void on_remote_line(const std::string& node, std::string line);
  /// `node`'s session ended or its link was lost.
  void on_remote_lost(const std::string& node, const std::string& why);
  /// The session on `node` (to match a down message).
  std::string node_of(const caf::actor_addr& session) const;

 private:
  struct remote {
    bool open = false;
    cluster::remote_session_actor session;
    std::vector<std::string> queued;     // lines sent while it opens
    std::set<std::string> in_flight;     // request ids (JSON) not yet answered
    std::set<std::string> threads;       // threads the client follows there
    /// Its requests to the client not yet answered: id -> thread.
    std::map<int64_t, std::string> asks;
  };
  void send_to(const std::string& node, std::string line);
  void fail(const std::string& request_id_json, const std::string& why);
  void resubscribe(const std::string& thread_id, int attempt);

  std::shared_ptr<const cluster::cluster_config> config_;
  std::string label_;
  bool closing_cancels_;
  connection_link& link_;
  std::string initialize_line_;
  bool closed_ = false;
  std::map<std::string, remote> remotes_;
  int64_t internal_ids_ = 0;
  /// Our own resumes (after a node was lost): id -> thread and the node
  /// asked, answered quietly; retried until the thread has its new node.
  struct resubscription {
    std::string thread;
    std::string node;
    int attempt = 0;
  };
  std::map<std::string, resubscription> resubscribing_;
};

}  // namespace parley
