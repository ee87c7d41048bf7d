#include "actors/memory_store.hpp"

#include "actors/handlers.hpp"

namespace parley {

namespace {

protocol::turn* find_turn(stored_thread& t, const std::string& id) {
  // The turn being written is almost always the last one.
  for (auto i = t.meta.turns.rbegin(); i != t.meta.turns.rend(); ++i)
    if (i->id == id) return &*i;
  return nullptr;
}

}  // namespace

void apply_record(stored_thread& thread, const store_record& record) {
  std::visit(
      [&thread](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, thread_created_record>) {
          thread.meta = r.meta;
          thread.meta.turns.clear();
        } else if constexpr (std::is_same_v<T, turn_started_record>) {
          protocol::turn t;
          t.id = r.turn_id;
          t.status = protocol::turn_status::in_progress;
          t.started_at = r.started_at;
          thread.meta.turns.push_back(std::move(t));
          thread.meta.updated_at = r.started_at;
        } else if constexpr (std::is_same_v<T, item_record>) {
          if (auto* t = find_turn(thread, r.turn_id)) t->items.push_back(r.item);
        } else if constexpr (std::is_same_v<T, turn_completed_record>) {
          if (auto* t = find_turn(thread, r.turn.id)) {
            t->status = r.turn.status;
            t->error = r.turn.error;
            t->completed_at = r.turn.completed_at;
            t->duration_ms = r.turn.duration_ms;
            if (r.turn.completed_at) thread.meta.updated_at = *r.turn.completed_at;
          }
        }
      },
      record);
}

store_actor::behavior_type memory_store(store_actor::stateful_pointer<memory_store_state> self,
                                        std::shared_ptr<const runtime_config>) {
  install_default_handlers(self, "memory_store");
  return {
      [self](atom::append, const std::string& thread_id, const store_record& record) {
        apply_record(self->state.threads[thread_id], record);
        return atom::ok::value;
      },
      [self](atom::load, const std::string& thread_id) -> caf::result<stored_thread> {
        auto i = self->state.threads.find(thread_id);
        if (i == self->state.threads.end())
          return make_error(errc::invalid_request, "no rollout found for thread id " + thread_id);
        return i->second;
      },
  };
}

}  // namespace parley
