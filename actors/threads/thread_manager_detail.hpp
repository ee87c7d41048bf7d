#pragma once
// Inside the thread manager: what its handlers share. Only
// thread_manager*.cpp include this.
//
//   thread_manager.cpp         the factory: the messages it handles, loaded threads
//   thread_manager_stored.cpp  threads from the store: resume, fork, archive, rename

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "actors/threads/conversation.hpp"
#include "actors/threads/thread_manager.hpp"
#include "protocol/ids.hpp"

namespace parley::thread_manager_detail {

using self_ptr = thread_manager_actor::stateful_pointer<thread_manager_state>;

inline constexpr auto store_timeout = std::chrono::seconds(60);
inline constexpr auto shutdown_timeout = std::chrono::seconds(30);

/// Quits once shutting down, every thread is gone and no reply is owed.
void maybe_finish_shutdown(self_ptr self);

/// A reply this actor owes: counted until delivered (or handed to a thread),
/// so that shutdown never ends with a request left unanswered (CAF 0.17
/// drops an undelivered promise silently).
template <class T>
class owed_reply {
 public:
  explicit owed_reply(self_ptr self)
      : self_(self), rp_(self->make_response_promise<T>()), open_(std::make_shared<bool>(true)) {
    ++self->state.owed;
  }
  template <class... Ts>
  void deliver(Ts&&... xs) {
    rp_.deliver(std::forward<Ts>(xs)...);
    settle();
  }
  template <class... Ts>
  void delegate(Ts&&... xs) {
    rp_.delegate(std::forward<Ts>(xs)...);
    settle();
  }
  caf::typed_response_promise<T> promise() const { return rp_; }

 private:
  void settle() {
    if (!*open_) return;
    *open_ = false;
    --self_->state.owed;
    maybe_finish_shutdown(self_);
  }
  self_ptr self_;
  caf::typed_response_promise<T> rp_;
  std::shared_ptr<bool> open_;
};

caf::error shutting_down_error();

/// Looks up a loaded thread for a request; `missing` is the Codex message prefix.
caf::expected<conversation_actor> find(self_ptr self, const std::string& id, const char* missing);

protocol::thread_status not_loaded();

/// Where a new thread's rollout will be (null for ephemeral threads and the
/// memory store), as thread.path reports it before the file exists.
std::optional<std::string> planned_path(const runtime_config& cfg, const protocol::thread& meta);

/// Runs `then` once this node holds the thread's lease (at once without a
/// cluster), or `fail` with why not (errc::not_owner: another node has it).
/// A thread is loaded only under its lease, so it is loaded on one node.
void with_lease(self_ptr self, const std::string& thread_id, std::function<void()> then,
                std::function<void(caf::error)> fail);

/// One more loaded thread for `tenant`, loaded by `client`: refused with
/// -32001 past the tenant's or the connection's limit.
caf::expected<usage_grant> admit_thread(self_ptr self, const std::string& tenant,
                                        const client_actor& client);

/// Spawns a loaded thread's conversation; `usage` (from admit_thread) is
/// held until the conversation is down.
conversation_actor spawn_conversation(self_ptr self, protocol::thread meta,
                                      conversation_settings settings, usage_grant usage,
                                      std::vector<context_item> fork_context = {});

/// Notes that a request of `client` that may subscribe it goes to `conv`:
/// when the client leaves, `conv` is told (see thread_manager_state::by_client).
/// Returns `conv`, so a call site can note and send in one expression.
const conversation_actor& note_client(self_ptr self, const conversation_actor& conv,
                                      const client_actor& client);

/// A conversation for a stored thread that is not loaded; if its last turn
/// has an action pending, the turn goes on from it.
conversation_actor load_conversation(self_ptr self, stored_thread stored,
                                     conversation_settings settings, usage_grant usage);

/// The same, the pending turn handed back instead of sent, for a caller
/// that sends it together with its own first request.
std::pair<conversation_actor, std::optional<resumed_turn>> spawn_stored(
    self_ptr self, stored_thread stored, conversation_settings settings, usage_grant usage);

/// Loads a thread whose turn has an action pending so the turn goes on
/// (nothing if it is loaded already).
void restore_stored(self_ptr self, const std::string& id);

/// Loads a stored thread (by explicit path if given, else by id) and runs
/// `then` with it, or delivers the store's error to `rp`.
template <class Promise, class Then>
void load_stored(self_ptr self, const std::string& thread_id,
                 const std::optional<std::string>& path, Promise rp, Then then) {
  auto on_error = [rp](caf::error& err) mutable { rp.deliver(std::move(err)); };
  if (path) {
    self->request(self->state.svc.store, store_timeout, atom::load::value, rollout_path{*path})
        .then([then](stored_thread& t) mutable { then(std::move(t)); }, on_error);
  } else {
    if (!protocol::is_uuid(thread_id)) {
      rp.deliver(make_error(errc::invalid_request, "invalid thread id: " + thread_id));
      return;
    }
    self->request(self->state.svc.store, store_timeout, atom::load::value, thread_id)
        .then([then](stored_thread& t) mutable { then(std::move(t)); }, on_error);
  }
}

using session_promise = owed_reply<protocol::thread_session_response>;

// -- thread_manager_stored.cpp -----------------------------------------------

/// Resumes a thread: rejoins it if loaded, else loads it from the store.
void resume_thread(self_ptr self, protocol::thread_resume_params params, client_actor client,
                   session_promise rp);

/// thread/fork: a new thread with a stored thread's history (or part of it).
void fork_thread(self_ptr self, const protocol::thread_fork_params& params, client_actor client,
                 session_promise rp);

/// thread/archive (true) and thread/unarchive (false).
void archive_thread(self_ptr self, const std::string& id, bool archive, client_actor client,
                    owed_reply<protocol::thread> rp);

/// thread/delete: unloads a loaded thread (its turn interrupted), then the
/// store deletes its rollout and index entry; thread/deleted to `client`.
void delete_thread(self_ptr self, const std::string& id, client_actor client,
                   owed_reply<atom::ok> rp);

// -- thread_manager_goals.cpp ------------------------------------------------

/// thread/goal/get, /set, /clear on a stored thread (loaded or not); the
/// change (thread/goal/updated or /cleared) to `client`.
void goal_of_thread(self_ptr self, goal_request req, client_actor client,
                    owed_reply<goal_answer> rp);

// -- thread_manager_edits.cpp ------------------------------------------------

/// thread/metadata/update (loaded or not), thread/revert and
/// thread/inject_items (loaded only) of a thread with a valid id.
void edit_thread(self_ptr self, thread_edit edit, owed_reply<thread_edit_answer> rp);

/// thread/name/set of a stored thread that is not loaded.
void rename_stored(self_ptr self, const protocol::thread_name_set_params& params,
                   client_actor client, owed_reply<atom::ok> rp);

}  // namespace parley::thread_manager_detail
