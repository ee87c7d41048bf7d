#include "transport/cluster_session.hpp"

#include <nlohmann/json.hpp>

#include "actors/core/errors.hpp"
#include "actors/core/log.hpp"

namespace parley {

namespace cluster_session_detail {

using json = nlohmann::json;

/// Our own thread/resume after a node was lost: its answer is not the
/// client's (string ids: a client's numeric ids never collide).
constexpr const char* resubscribe_prefix = "parley-resubscribe-";
constexpr int resubscribe_attempts = 40;

/// Notifications are written with emittedAtMs first (protocol/jsonrpc.cpp):
/// they go to the client without being parsed.
bool is_notification(const std::string& line) {
  return line.rfind("{\"emittedAtMs\"", 0) == 0 || line.rfind("{\"method\"", 0) == 0;
}

}  // namespace cluster_session_detail

using namespace cluster_session_detail;

cluster_session::cluster_session(std::shared_ptr<const cluster::cluster_config> config,
                                 std::string label, bool closing_cancels, connection_link& link)
    : config_(std::move(config)),
      label_(std::move(label)),
      closing_cancels_(closing_cancels),
      link_(link) {}

void cluster_session::locate(const std::string& thread_id, located then) {
  link_.ask_owner(thread_id, [then, thread_id](caf::expected<std::string> node) {
    if (node) return then(std::move(*node));
    // Without an answer from the store the request runs here: the thread
    // manager's lease check refuses it if another node holds the thread.
    PARLEY_WARN("cluster event=locate_failed thread={} error={}", thread_id,
                message_of(node.error()));
    then("");
  });
}

void cluster_session::place(placed then) {
  link_.ask_placement([then](caf::expected<std::pair<std::string, std::string>> at) {
    if (at) return then(std::move(at->first), std::move(at->second));
    PARLEY_WARN("cluster event=place_failed error={}", message_of(at.error()));
    then("", "");  // a new id, here
  });
}

void cluster_session::cluster_stats(stats_ready then) {
  link_.ask_cluster_stats([then](caf::expected<std::string> text) {
    if (text) return then(true, std::move(*text));
    then(false, message_of(text.error()));
  });
}

void cluster_session::forward(const std::string& node, const std::string& thread_id,
                              const std::string& request_id_json, std::string line) {
  if (closed_) return;
  auto& r = remotes_[node];
  r.in_flight.insert(request_id_json);
  if (!thread_id.empty()) r.threads.insert(thread_id);
  send_to(node, std::move(line));
}

void cluster_session::send_to(const std::string& node, std::string line) {
  auto& r = remotes_[node];
  if (r.open) return link_.send_line(r.session, std::move(line));
  r.queued.push_back(std::move(line));
  if (r.queued.size() > 1) return;  // already opening
  cluster::session_open open;
  open.origin = config_->node;
  open.label = label_ + " via " + config_->node;
  open.initialize_line = initialize_line_;
  open.closing_cancels = closing_cancels_;
  open.tenant = identity.tenant;
  open.subject = identity.subject;
  open.is_operator = identity.is_operator;
  open.local = identity.local;
  link_.open_remote(node, open, [this, node](caf::expected<cluster::remote_session_actor> s) {
    auto i = remotes_.find(node);
    if (i == remotes_.end()) return;
    if (!s) return on_remote_lost(node, message_of(s.error()));
    auto& opened = i->second;
    opened.open = true;
    opened.session = std::move(*s);
    for (auto& queued : opened.queued) link_.send_line(opened.session, std::move(queued));
    opened.queued.clear();
    PARLEY_INFO("cluster event=remote_session_open node={} client={}", node, label_);
  });
}

bool cluster_session::forward_answer(int64_t request_id, std::string line) {
  auto ordinal = static_cast<uint64_t>(request_id) >> 40;
  if (request_id < 0 || ordinal == config_->ordinal()) return false;  // this node's own
  if (ordinal >= config_->members.size()) return false;  // not a node's: refused as foreign
  const auto& node = config_->members[ordinal].name;
  auto i = remotes_.find(node);
  if (i == remotes_.end() || !i->second.open) {
    // Asked by a node that is gone: its successor asks again (fail closed).
    PARLEY_WARN("cluster event=answer_for_lost_node node={} id={} ignored", node, request_id);
    return true;
  }
  i->second.asks.erase(request_id);
  link_.send_line(i->second.session, std::move(line));
  return true;
}

void cluster_session::client_initialized(std::string initialize_line) {
  initialize_line_ = std::move(initialize_line);
}

void cluster_session::client_closed() {
  closed_ = true;
  for (auto& [node, r] : remotes_)
    if (r.open) link_.send_eof(r.session);
}

void cluster_session::on_remote_line(const std::string& node, std::string line) {
  if (is_notification(line)) return link_.write_client(std::move(line));
  auto j = json::parse(line, nullptr, false);
  if (j.is_object() && j.contains("id") && j.contains("method") && j["id"].is_number_integer()) {
    // An approval (or other request) of that node's for the client.
    auto p = j.find("params");
    std::string thread;
    if (p != j.end() && p->is_object() && p->contains("threadId") && (*p)["threadId"].is_string())
      thread = (*p)["threadId"].get<std::string>();
    remotes_[node].asks[j["id"].get<int64_t>()] = thread;
  }
  if (j.is_object() && j.contains("id") && !j.contains("method")) {
    auto id = j["id"].dump();
    if (j["id"].is_string() && j["id"].get<std::string>().rfind(resubscribe_prefix, 0) == 0) {
      auto t = resubscribing_.find(j["id"].get<std::string>());
      if (t == resubscribing_.end()) return;
      auto thread_id = t->second.thread;
      auto attempt = t->second.attempt;
      resubscribing_.erase(t);
      if (j.contains("error")) {
        PARLEY_INFO("cluster event=resubscribe_retry thread={} node={} error={}", thread_id, node,
                    j["error"].value("message", ""));
        link_.after(config_->lease_ttl / 4,
                    [this, thread_id, attempt] { resubscribe(thread_id, attempt + 1); });
      } else {
        remotes_[node].threads.insert(thread_id);
        PARLEY_INFO("cluster event=resubscribed thread={} node={} client={}", thread_id, node,
                    label_);
      }
      return;
    }
    auto& r = remotes_[node];
    r.in_flight.erase(id);
    // A thread started, resumed or forked there: followed on that node.
    if (auto res = j.find("result"); res != j.end() && res->is_object()) {
      auto t = res->find("thread");
      if (t != res->end() && t->is_object() && t->contains("id") && (*t)["id"].is_string())
        r.threads.insert((*t)["id"].get<std::string>());
    }
  }
  link_.write_client(std::move(line));
}

void cluster_session::on_remote_lost(const std::string& node, const std::string& why) {
  auto i = remotes_.find(node);
  if (i == remotes_.end()) return;
  auto r = std::move(i->second);
  remotes_.erase(i);
  PARLEY_WARN("cluster event=remote_session_lost node={} client={} in_flight={} threads={} why={}",
              node, label_, r.in_flight.size(), r.threads.size(), why);
  for (const auto& id : r.in_flight)
    fail(id, "the cluster node " + node + " holding this thread was lost (" + why
                 + "); the thread moves to another node: retry");
  if (closed_) return;
  // Its prompts are void (an answer to them reaches nobody): the client
  // closes them; the thread's next node asks again.
  for (const auto& [id, thread] : r.asks) {
    json resolved{{"method", "serverRequest/resolved"},
                  {"params", {{"threadId", thread}, {"requestId", id}}}};
    link_.write_client(resolved.dump());
  }
  // Our resumes that were on their way there: tried again.
  for (auto k = resubscribing_.begin(); k != resubscribing_.end();) {
    if (k->second.node != node) {
      ++k;
      continue;
    }
    auto again = k->second;
    k = resubscribing_.erase(k);
    link_.after(config_->lease_ttl / 4,
                [this, again] { resubscribe(again.thread, again.attempt + 1); });
  }
  // Asked again of this client on the thread's next node, once the lost
  // node's lease has expired and the thread has moved.
  for (const auto& t : r.threads)
    link_.after(config_->lease_ttl / 2, [this, t] { resubscribe(t, 0); });
}

void cluster_session::fail(const std::string& request_id_json, const std::string& why) {
  auto id = json::parse(request_id_json, nullptr, false);
  if (id.is_discarded()) return;
  json e{{"id", id}, {"error", {{"code", -32001}, {"message", why}}}};
  link_.write_client(e.dump());
}

void cluster_session::resubscribe(const std::string& thread_id, int attempt) {
  if (closed_ || attempt > resubscribe_attempts) return;
  locate(thread_id, [this, thread_id, attempt](std::string node) {
    if (closed_) return;
    if (node.empty()) {
      link_.resume_here(thread_id, [this, thread_id, attempt](bool ok) {
        if (ok) {
          PARLEY_INFO("cluster event=resubscribed thread={} node=here client={}", thread_id,
                      label_);
          return;
        }
        link_.after(config_->lease_ttl / 4,
                    [this, thread_id, attempt] { resubscribe(thread_id, attempt + 1); });
      });
      return;
    }
    auto id = std::string{resubscribe_prefix} + std::to_string(++internal_ids_);
    resubscribing_[id] = resubscription{thread_id, node, attempt};
    json req{{"id", id},
             {"method", "thread/resume"},
             {"params", {{"threadId", thread_id}, {"excludeTurns", true}}}};
    send_to(node, req.dump());
  });
}

std::string cluster_session::node_of(const caf::actor_addr& session) const {
  for (const auto& [node, r] : remotes_)
    if (r.open && r.session.address() == session) return node;
  return {};
}

}  // namespace parley
