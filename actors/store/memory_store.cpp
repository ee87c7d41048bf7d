#include "actors/store/memory_store.hpp"
#include "actors/core/tenant.hpp"

#include <algorithm>

#include "actors/core/handlers.hpp"
#include "actors/store/response_items.hpp"
#include "actors/store/rollout_format.hpp"
#include "actors/store/thread_index.hpp"
#include "protocol/ids.hpp"

namespace parley {

namespace {

protocol::turn* find_turn(stored_thread& t, const std::string& id) {
  // The turn being written is almost always the last one.
  for (auto i = t.meta.turns.rbegin(); i != t.meta.turns.rend(); ++i)
    if (i->id == id) return &*i;
  return nullptr;
}

/// Whether `r` describes the thread rather than a turn (kept by a revert).
bool thread_level(const store_record& r) {
  return std::holds_alternative<thread_renamed_record>(r) || std::holds_alternative<goal_record>(r)
         || std::holds_alternative<git_info_record>(r);
}

/// The records of a thread reverted to its turns before `turn_id`, or none
/// when it has no such turn.
std::optional<std::vector<store_record>> reverted_log(const std::vector<store_record>& log,
                                                     const std::string& turn_id) {
  std::vector<store_record> out;
  size_t i = 0;
  for (; i < log.size(); ++i) {
    auto* started = std::get_if<turn_started_record>(&log[i]);
    if (started && started->turn_id == turn_id) break;
    auto* created = std::get_if<thread_created_record>(&log[i]);
    if (created) {  // a fork: its copied turns are in the record
      auto& turns = created->meta.turns;
      auto at = std::find_if(turns.begin(), turns.end(),
                             [&](const protocol::turn& t) { return t.id == turn_id; });
      if (at != turns.end()) {
        thread_created_record kept = *created;
        kept.meta.turns.erase(kept.meta.turns.begin() + (at - turns.begin()), kept.meta.turns.end());
        std::vector<std::string> ids{""};
        for (auto& t : kept.meta.turns) ids.push_back(t.id);
        auto& ctx = kept.context;
        ctx.erase(std::remove_if(ctx.begin(), ctx.end(),
                                 [&](const context_item& c) {
                                   return std::find(ids.begin(), ids.end(), c.turn_id) == ids.end();
                                 }),
                  ctx.end());
        out.push_back(std::move(kept));
        break;
      }
    }
    out.push_back(log[i]);
  }
  if (i == log.size()) return std::nullopt;
  for (++i; i < log.size(); ++i)
    if (thread_level(log[i])) out.push_back(log[i]);
  return out;
}

using history = memory_store_state::history;

/// The history of a thread, made from its creation if that is all it has
/// been (its log is then its creation as the record was); null when the
/// store has no such thread.
history* history_of(memory_store_state& st, const std::string& thread_id) {
  if (auto i = st.threads.find(thread_id); i != st.threads.end()) return &i->second;
  auto only = st.created.find(thread_id);
  if (only == st.created.end()) return nullptr;
  history h;
  h.log.push_back(thread_created_record{only->second, {}});
  h.folded.meta = std::move(only->second);
  st.created.erase(only);
  return &st.threads.emplace(thread_id, std::move(h)).first->second;
}

}  // namespace

void apply_record(stored_thread& thread, const store_record& record) {
  std::visit(
      [&thread](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, thread_created_record>) {
          thread.meta = r.meta;  // a fork arrives with its copied turns and context
          thread.context = r.context;
        } else if constexpr (std::is_same_v<T, turn_started_record>) {
          protocol::turn t;
          t.id = r.turn_id;
          t.status = protocol::turn_status::in_progress;
          t.started_at = r.started_at;
          thread.meta.turns.push_back(std::move(t));
          thread.meta.updated_at = r.started_at;
          thread.pending.reset();
        } else if constexpr (std::is_same_v<T, item_record>) {
          if (auto* t = find_turn(thread, r.turn_id)) t->items.push_back(r.item);
          if (thread.pending && thread.pending->item_id == protocol::item_id(r.item))
            thread.pending.reset();
          auto* user = std::get_if<protocol::user_message_item>(&r.item);
          if (user && thread.meta.preview.empty())
            thread.meta.preview = protocol::joined_text(user->content);
        } else if constexpr (std::is_same_v<T, context_record>) {
          // Only the verbatim context is kept: what an item stands for is
          // derived when a model asks (store::model_history).
          for (auto& item : r.items) thread.context.push_back(context_item{r.turn_id, item});
        } else if constexpr (std::is_same_v<T, turn_completed_record>) {
          if (auto* t = find_turn(thread, r.turn.id)) {
            t->status = r.turn.status;
            t->error = r.turn.error;
            t->completed_at = r.turn.completed_at;
            t->duration_ms = r.turn.duration_ms;
            if (r.turn.completed_at) thread.meta.updated_at = *r.turn.completed_at;
          }
          thread.pending.reset();
        } else if constexpr (std::is_same_v<T, compacted_record>) {
          std::vector<std::string> ids;
          for (const auto& t : thread.meta.turns) ids.push_back(t.id);
          store::compact_context(thread.context, thread.compacted_turns, std::move(ids), r.turn_id,
                                 r.replacement);
        } else if constexpr (std::is_same_v<T, action_record>) {
          if (r.at == action_record::phase::done)  // a request's outcome is with its model
            thread.pending.reset();
          else
            thread.pending = r;
        } else if constexpr (std::is_same_v<T, thread_renamed_record>) {
          thread.meta.name = r.name;
        } else if constexpr (std::is_same_v<T, goal_record>) {
          thread.goal = r.goal;
        } else if constexpr (std::is_same_v<T, git_info_record>) {
          thread.meta.git = r.git;
        } else if constexpr (std::is_same_v<T, injected_record>) {
          // After everything so far: the last turn's items (running or not).
          auto after = thread.meta.turns.empty() ? std::string{} : thread.meta.turns.back().id;
          for (auto& item : r.items) thread.context.push_back(context_item{after, item, true});
        }
      },
      record);
}

std::vector<protocol::thread> select_threads(const std::vector<const stored_thread*>& all,
                                            const protocol::thread_list_params& params,
                                            std::optional<std::string>& next_cursor) {
  bool by_created = params.sort_key == "created_at";
  bool descending = params.sort_direction != "asc";
  auto key_of = [by_created](const protocol::thread& t) {
    return by_created ? t.created_at : t.updated_at;
  };
  auto contains = [](const std::string& hay, const std::string& needle) {
    auto lower = [](std::string s) {
      for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    return lower(hay).find(lower(needle)) != std::string::npos;
  };
  std::vector<const protocol::thread*> rows;
  for (auto* st : all) {
    const auto& t = st->meta;
    if (t.turns.empty() || st->archived != params.archived) continue;  // listed once it has a turn
    if (!params.cwds.empty()
        && std::find(params.cwds.begin(), params.cwds.end(), t.cwd) == params.cwds.end())
      continue;
    if (!params.model_providers.empty()
        && std::find(params.model_providers.begin(), params.model_providers.end(),
                     t.model_provider)
               == params.model_providers.end())
      continue;
    if (!params.source_kinds.empty()
        && std::find(params.source_kinds.begin(), params.source_kinds.end(), t.source)
               == params.source_kinds.end())
      continue;
    if (params.search_term && !contains(t.preview, *params.search_term)
        && !contains(t.name.value_or(""), *params.search_term))
      continue;
    rows.push_back(&t);
  }
  std::sort(rows.begin(), rows.end(), [&](const protocol::thread* a, const protocol::thread* b) {
    auto ka = std::make_pair(key_of(*a), a->id);
    auto kb = std::make_pair(key_of(*b), b->id);
    return descending ? kb < ka : ka < kb;
  });
  int64_t cursor_key = 0;
  std::string cursor_id;
  auto begin = rows.begin();
  if (params.cursor && store::decode_cursor(*params.cursor, cursor_key, cursor_id)) {
    auto pos = std::make_pair(cursor_key, cursor_id);
    begin = std::find_if(rows.begin(), rows.end(), [&](const protocol::thread* t) {
      auto k = std::make_pair(key_of(*t), t->id);
      return descending ? k < pos : pos < k;
    });
  }
  uint32_t limit = params.limit && *params.limit > 0 ? *params.limit : 25;
  std::vector<protocol::thread> out;
  for (auto i = begin; i != rows.end() && out.size() < limit; ++i) {
    out.push_back(**i);
    out.back().turns.clear();
    out.back().status = protocol::thread_status{protocol::thread_status::kind::not_loaded, false, false};
  }
  if (!out.empty() && begin + static_cast<std::ptrdiff_t>(out.size()) != rows.end())
    next_cursor = store::encode_cursor(key_of(out.back()), out.back().id);
  return out;
}

store_actor::behavior_type memory_store(store_actor::stateful_pointer<memory_store_state> self,
                                        std::shared_ptr<const runtime_config>) {
  install_default_handlers(self, "memory_store");
  return {
      [self](atom::append, const std::string& thread_id,
             const store_record& record) -> caf::result<atom::ok> {
        // Only a new thread makes an entry: a late record of a deleted
        // thread does not bring it back.
        auto& st = self->state;
        if (auto* h = history_of(st, thread_id)) {
          h->log.push_back(record);
          apply_record(h->folded, record);
          return atom::ok::value;
        }
        if (!std::holds_alternative<thread_created_record>(record))
          return make_error(errc::internal, "store: append to an unknown thread " + thread_id);
        stored_thread folded;
        apply_record(folded, record);
        if (folded.context.empty() && folded.meta.turns.empty())
          st.created.emplace(thread_id, std::move(folded.meta));
        else  // a fork with its copied history
          st.threads.emplace(thread_id, history{std::move(folded), {record}});
        return atom::ok::value;
      },
      [self](atom::revert, const std::string& thread_id,
             const std::string& turn_id) -> caf::result<stored_thread> {
        auto* h = history_of(self->state, thread_id);
        if (!h)
          return make_error(errc::invalid_request, "no rollout found for thread id " + thread_id);
        auto kept = reverted_log(h->log, turn_id);
        if (!kept) return make_error(errc::invalid_request, "turn not found: " + turn_id);
        stored_thread t;
        t.archived = h->folded.archived;
        for (const auto& r : *kept) apply_record(t, r);
        t.meta.updated_at = std::max(t.meta.updated_at, protocol::unix_seconds());
        h->log = std::move(*kept);
        h->folded = t;
        return t;
      },
      [self](atom::erase, const std::string& thread_id) -> caf::result<atom::ok> {
        auto& st = self->state;
        if (st.threads.erase(thread_id) + st.created.erase(thread_id) == 0)
          return make_error(errc::invalid_request, "no rollout found for thread id " + thread_id);
        return atom::ok::value;
      },
      [self](atom::load, const std::string& thread_id) -> caf::result<stored_thread> {
        auto& st = self->state;
        if (auto i = st.threads.find(thread_id); i != st.threads.end()) return i->second.folded;
        auto only = st.created.find(thread_id);
        if (only == st.created.end())
          return make_error(errc::invalid_request, "no rollout found for thread id " + thread_id);
        stored_thread t;
        t.meta = only->second;
        return t;
      },
      [self](atom::tenant, const std::string& thread_id) -> caf::result<std::string> {
        auto& st = self->state;
        if (auto i = st.threads.find(thread_id); i != st.threads.end())
          return i->second.folded.meta.tenant;
        auto only = st.created.find(thread_id);
        if (only == st.created.end())
          return make_error(errc::invalid_request, "no rollout found for thread id " + thread_id);
        return only->second.tenant;
      },
      [](atom::load, const rollout_path& path) -> caf::result<stored_thread> {
        // Explicit rollout files are read from disk whatever the store.
        return store::read_rollout(path.path);
      },
      [self](atom::list, const protocol::thread_list_params& params) {
        // A thread only created has no turns: it is not listed (select_threads).
        std::vector<const stored_thread*> all;
        for (auto& [id, h] : self->state.threads)
          if (!params.tenant || tenant_or_default(h.folded.meta.tenant) == *params.tenant)
            all.push_back(&h.folded);
        protocol::thread_list_response r;
        r.data = select_threads(all, params, r.next_cursor);
        return r;
      },
      [self](atom::archive, const std::string& thread_id,
             bool archived) -> caf::result<stored_thread> {
        // A thread only created has no turns: there is nothing to archive.
        auto i = self->state.threads.find(thread_id);
        if (i == self->state.threads.end() || i->second.folded.meta.turns.empty()
            || (archived && i->second.folded.archived))
          return make_error(errc::invalid_request, "no rollout found for thread id " + thread_id);
        auto& folded = i->second.folded;
        if (!archived && !folded.archived)  // Codex: only an archived thread unarchives
          return make_error(errc::invalid_request,
                            "no archived rollout found for thread id " + thread_id);
        folded.archived = archived;
        return folded;
      },
      // Nothing of it outlives the process: what is pending now is only
      // what this process is running.
      [self](atom::pending) {
        std::vector<pending_thread> out;
        for (auto& [id, h] : self->state.threads)  // a thread only created has none
          if (h.folded.pending)
            out.push_back({id, h.folded.pending->at, h.folded.pending->deadline_ms});
        return out;
      },
      [](atom::seal) { return atom::ok::value; },
      // A single node: every lease is this node's (see store_actor).
      [](atom::lease, const std::string&) { return uint64_t{0}; },
      [](atom::release, const std::string&) {},
      [](atom::owner, const std::string&) { return std::string{}; },
      [](atom::members) { return cluster_view{}; },
      [](atom::orphans, const std::string&) { return std::vector<orphan_thread>{}; },
      [](atom::rejoin) { return uint64_t{0}; },
  };
}

}  // namespace parley
