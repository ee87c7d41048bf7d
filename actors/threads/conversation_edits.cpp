// A loaded thread's thread/metadata/update, thread/revert and
// thread/inject_items: each stored in order with everything the thread
// stored before, and answered (and announced) only once it is stored.

#include <memory>
#include <optional>

#include "actors/threads/conversation_detail.hpp"
#include "protocol/items.hpp"

namespace parley::conversation_detail {

namespace {

using answer_promise = caf::typed_response_promise<thread_edit_answer>;

/// The thread as an edit's answer shows it: no turns.
protocol::thread shown(const conversation_state& st) {
  auto t = st.meta;
  t.turns.clear();
  return t;
}

caf::result<thread_edit_answer> update_metadata(self_ptr self, const protocol::git_info_patch& p) {
  auto& st = self->state;
  // Now, as a rename does: the next update patches this one.
  st.meta.git = protocol::patched(st.meta.git, p);
  auto rp = self->make_response_promise<thread_edit_answer>();
  post_durable(self, git_info_record{st.meta.git}, [self, rp](caf::error err) mutable {
    if (err)
      rp.deliver(std::move(err));
    else
      rp.deliver(thread_edit_answer{shown(self->state), std::nullopt, std::nullopt});
  });
  return rp;
}

caf::result<thread_edit_answer> inject(self_ptr self, std::vector<nlohmann::json> items) {
  auto& st = self->state;
  if (auto why = protocol::check_inject_items(protocol::thread_inject_items_params{st.meta.id, items}))
    return make_error(errc::invalid_request, *why);
  if (st.meta.ephemeral)
    return make_error(errc::invalid_request,
                      "thread/inject_items needs a stored thread: " + st.meta.id + " is ephemeral");
  auto rp = self->make_response_promise<thread_edit_answer>();
  post_durable(self, injected_record{std::move(items)}, [self, rp](caf::error err) mutable {
    if (err)
      rp.deliver(std::move(err));
    else
      rp.deliver(thread_edit_answer{shown(self->state), std::nullopt, std::nullopt});
  });
  return rp;
}

/// Where thread/turns/list and thread/items/list page back from: the last
/// kept turn and its last item (their cursors' "from:" form).
void set_cursors(thread_edit_answer& a, const std::vector<protocol::turn>& kept) {
  for (auto t = kept.rbegin(); t != kept.rend(); ++t) {
    if (!a.turns_cursor) a.turns_cursor = "from:" + t->id;
    if (!t->items.empty()) {
      a.items_cursor = "from:" + t->id + "/" + protocol::item_id(t->items.back());
      return;
    }
  }
}

caf::result<thread_edit_answer> revert(self_ptr self, const std::string& before_turn_id) {
  auto& st = self->state;
  // Codex 0.169 interrupts a running turn and reverts; parley refuses, so
  // nothing the user started is cut short (the same as compaction).
  if (st.active)
    return make_error(errc::invalid_request,
                      "a turn is running (" + st.active->id
                          + "): thread/revert reverts between turns; interrupt it or wait");
  if (st.meta.ephemeral)
    return make_error(errc::invalid_request,
                      "thread/revert needs a stored thread: " + st.meta.id + " is ephemeral");
  auto rp = self->make_response_promise<thread_edit_answer>();
  st.reverting = true;
  // After every record queued before it, and before anything said after it.
  struct outcome {
    std::optional<stored_thread> thread;
    caf::error err;
  };
  auto result = std::make_shared<outcome>();
  auto seq = st.outbox.post_held([self, rp, result]() mutable {
    send_gathered(self);  // its reply comes after every event before it
    auto& s = self->state;
    s.reverting = false;
    if (!result->thread) {
      rp.deliver(std::move(result->err));
      return;
    }
    auto& t = *result->thread;
    s.meta.preview = t.meta.preview;
    s.meta.updated_at = t.meta.updated_at;
    s.last_ended.reset();  // it may be gone; the store tells how turns ended
    s.last_request_tokens = 0;  // the next request's size is unknown again
    thread_edit_answer a{shown(s), std::nullopt, std::nullopt};
    set_cursors(a, t.meta.turns);
    rp.deliver(std::move(a));
    broadcast(self, make_event(*s.svc, protocol::thread_reverted{s.meta.id}));
  });
  auto release = [self, seq] {
    self->state.outbox.release(seq);
    quit_if_done(self);
  };
  self->request(st.svc->store, caf::infinite, atom::revert::value, st.meta.id, before_turn_id)
      .then(
          [release, result](stored_thread& t) {
            result->thread = std::move(t);
            release();
          },
          [release, result](caf::error& err) {
            result->err = std::move(err);
            release();
          });
  return rp;
}

}  // namespace

caf::error reverting_error(self_ptr self) {
  return make_error(errc::invalid_request, "a revert of thread " + self->state.meta.id
                                               + " is in progress; start the turn once it is done");
}

caf::result<thread_edit_answer> edit_thread(self_ptr self, thread_edit& edit) {
  if (self->state.closing) return unloading_error(self);
  // One at a time with a revert: what the store tells afterwards must not
  // miss an edit made while it rewrote the file.
  if (self->state.reverting)
    return make_error(errc::invalid_request,
                      "a revert of thread " + self->state.meta.id + " is in progress");
  switch (edit.what) {
    case thread_edit::kind::metadata:
      return update_metadata(self, edit.git);
    case thread_edit::kind::inject:
      return inject(self, std::move(edit.items));
    case thread_edit::kind::revert:
      return revert(self, edit.before_turn_id);
  }
  return make_error(errc::internal, "unknown thread edit");
}

}  // namespace parley::conversation_detail
