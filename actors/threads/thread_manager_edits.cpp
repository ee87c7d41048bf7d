// The thread manager's thread/metadata/update, thread/revert and
// thread/inject_items. A loaded thread does each itself, in order with what
// it stores. One that is not loaded: its Git metadata is changed by
// appending a record to its rollout (as Codex, which updates a stored
// thread too); a revert or an injection needs it loaded ("thread not found",
// Codex's answer).

#include "actors/threads/thread_manager_detail.hpp"

namespace parley::thread_manager_detail {

namespace {

/// thread/metadata/update of a thread that is not loaded: stored, then the
/// thread as the store has it now.
void update_stored_metadata(self_ptr self, const thread_edit& edit,
                            owed_reply<thread_edit_answer> rp) {
  auto store = self->state.svc.store;
  auto id = edit.thread_id;
  auto patch = edit.git;
  self->request(store, store_timeout, atom::load::value, id)
      .then(
          [self, rp, id, patch](stored_thread& t) mutable {
            auto meta = std::move(t.meta);
            meta.turns.clear();
            meta.status = not_loaded();
            meta.git = protocol::patched(meta.git, patch);
            self->request(self->state.svc.store, store_timeout, atom::append::value, id,
                          store_record{git_info_record{meta.git}})
                .then([rp, meta](atom::ok) mutable {
                  rp.deliver(thread_edit_answer{meta, std::nullopt, std::nullopt});
                },
                      [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
          },
          [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
}

}  // namespace

void edit_thread(self_ptr self, thread_edit edit, owed_reply<thread_edit_answer> rp) {
  auto& threads = self->state.threads;
  if (auto i = threads.find(edit.thread_id); i != threads.end())
    return rp.delegate(i->second, atom::edit::value, std::move(edit));
  if (edit.what == thread_edit::kind::metadata) return update_stored_metadata(self, edit, rp);
  rp.deliver(make_error(errc::invalid_request, "thread not found: " + edit.thread_id));
}

}  // namespace parley::thread_manager_detail
