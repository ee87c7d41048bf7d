// fuzzyFileSearch for a session: params decoded as Codex decodes them, the
// search run on the connection's search worker (actors/files/search/),
// confined to the roots this session may see, and a newer search with the
// same cancellationToken cancelling the one before (which answers an empty
// list, as in Codex).

#include <utility>

#include "actors/core/log.hpp"
#include "actors/files/search/file_search.hpp"
#include "transport/rpc_session.hpp"

namespace parley::rpc {

using protocol::json;

void session::fuzzy_file_search(const protocol::request_id& id, const json& p) {
  files::search::search_request request;
  std::optional<std::string> token;
  try {
    protocol::require_object(p);
    request.query = protocol::required<std::string>(p, "query");
    request.roots = protocol::required<std::vector<std::string>>(p, "roots");
    token = protocol::optional<std::string>(p, "cancellationToken");
  } catch (const protocol::decode_error& e) {
    return reply_error(id, protocol::rpc_code::invalid_request,
                       std::string{"Invalid request: "} + e.what());
  }
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  request.cancelled = cancelled;
  if (token) {
    auto& running = search_tokens_[*token];
    if (running) running->store(true);  // the earlier search answers an empty list
    running = cancelled;
  }
  searches_.insert(cancelled);
  auto done = [this, alive = std::weak_ptr<bool>(alive_), id, token,
               cancelled](files::answer a) {
    if (alive.expired()) return;
    searches_.erase(cancelled);
    if (token) {
      auto i = search_tokens_.find(*token);
      if (i != search_tokens_.end() && i->second == cancelled) search_tokens_.erase(i);
    }
    if (auto* f = std::get_if<files::failure>(&a)) return reply_error(id, f->code, f->message);
    reply(id, std::get<json>(a));
  };
  if (!config_.files) return done(files_unavailable());
  config_.files->search({[roots = roots_, request = std::move(request)] {
                          return files::search::fuzzy_file_search(roots, request);
                        }},
                        std::move(done));
}

}  // namespace parley::rpc

namespace parley::rpc {

// The experimental sessions (Codex's fuzzyFileSearch/sessionStart, Update,
// Stop): a session keeps its roots; each query (the empty one at the start)
// is a search like fuzzyFileSearch's, answered by a sessionUpdated then a
// sessionCompleted notification; a newer query, or the stop, drops the
// older one's answer (Codex sends the latest query's only).
void session::search_session(const std::string& method, const protocol::request_id& id,
                             const json& p) {
  std::string session_id;
  std::vector<std::string> roots;
  std::string query;
  try {
    protocol::require_object(p);
    session_id = protocol::required<std::string>(p, "sessionId");
    if (method == "fuzzyFileSearch/sessionStart")
      roots = protocol::required<std::vector<std::string>>(p, "roots");
    if (method == "fuzzyFileSearch/sessionUpdate")
      query = protocol::required<std::string>(p, "query");
  } catch (const protocol::decode_error& e) {
    return reply_error(id, protocol::rpc_code::invalid_request,
                       std::string{"Invalid request: "} + e.what());
  }
  auto existing = search_sessions_.find(session_id);
  if (method == "fuzzyFileSearch/sessionStop") {
    if (existing != search_sessions_.end()) {
      if (existing->second.running) existing->second.running->store(true);
      search_sessions_.erase(existing);
    }
    return reply(id, json::object());
  }
  if (method == "fuzzyFileSearch/sessionUpdate") {
    if (existing == search_sessions_.end())
      return reply_error(id, protocol::rpc_code::invalid_request,
                         "fuzzy file search session not found: " + session_id);
    reply(id, json::object());
    return run_session_query(session_id, std::move(query));
  }
  if (roots.empty())
    return reply_error(id, protocol::rpc_code::internal_error,
                       "failed to start fuzzy file search session: at least one search "
                       "directory is required");
  // Roots outside what this connection may see fail the start, as they fail
  // fuzzyFileSearch.
  for (const auto& root : roots) {
    if (!files::normal_path(root)) continue;
    auto where = roots_.locate(root);
    if (auto* f = std::get_if<files::failure>(&where)) return reply_error(id, f->code, f->message);
  }
  if (existing != search_sessions_.end() && existing->second.running)
    existing->second.running->store(true);
  search_sessions_[session_id] = search_session_state{std::move(roots), nullptr};
  reply(id, json::object());
  run_session_query(session_id, "");
}

void session::run_session_query(const std::string& session_id, std::string query) {
  auto& state = search_sessions_[session_id];
  if (state.running) state.running->store(true);
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  state.running = cancelled;
  searches_.insert(cancelled);
  auto done = [this, alive = std::weak_ptr<bool>(alive_), session_id, query,
               cancelled](files::answer a) {
    if (alive.expired()) return;
    searches_.erase(cancelled);
    auto i = search_sessions_.find(session_id);
    if (cancelled->load() || i == search_sessions_.end() || i->second.running != cancelled)
      return;  // superseded or stopped: only the latest query is reported
    i->second.running = nullptr;
    auto* found = std::get_if<json>(&a);
    if (!found) PARLEY_WARN("fuzzy_search event=session_failed session={} error={}", session_id,
                            std::get<files::failure>(a).message);
    if (opted_out_.count("fuzzyFileSearch/sessionUpdated") == 0)
      write(protocol::encode_notification(
          "fuzzyFileSearch/sessionUpdated",
          json{{"sessionId", session_id},
               {"query", query},
               {"files", found ? (*found)["files"] : json::array()}},
          protocol::unix_ms()));
    if (opted_out_.count("fuzzyFileSearch/sessionCompleted") == 0)
      write(protocol::encode_notification("fuzzyFileSearch/sessionCompleted",
                                          json{{"sessionId", session_id}}, protocol::unix_ms()));
  };
  if (!config_.files) return done(files_unavailable());
  files::search::search_request request;
  request.query = std::move(query);
  request.roots = state.roots;
  request.cancelled = cancelled;
  config_.files->search({[roots = roots_, request = std::move(request)] {
                          return files::search::fuzzy_file_search(roots, request);
                        }},
                        std::move(done));
}

}  // namespace parley::rpc
