// The thread manager's thread/goal/* : a thread's goal is read from its
// rollout and changed by appending a record to it (loaded or not), so it
// survives a restart. parley keeps and shows the goal; unlike Codex it does
// not start turns of its own to pursue an active one.

#include "actors/core/log.hpp"
#include "actors/threads/thread_manager_detail.hpp"

namespace parley::thread_manager_detail {

namespace goals_detail {

bool blank(const std::string& s) {
  return s.find_first_not_of(" \t\r\n\f\v") == std::string::npos;
}

/// The goal after a thread/goal/set, or why it cannot be set.
caf::expected<protocol::thread_goal> goal_after(const std::optional<protocol::thread_goal>& now,
                                                const protocol::thread_goal_set_params& p) {
  auto at = protocol::unix_seconds();
  protocol::thread_goal goal;
  if (p.objective) {
    if (blank(*p.objective))
      return make_error(errc::invalid_request, "goal objective must not be empty");
    if (now && now->objective == *p.objective) {
      goal = *now;  // the same goal, updated
    } else {  // a new goal
      goal.thread_id = p.thread_id;
      goal.objective = *p.objective;
      goal.created_at = at;
    }
  } else if (now) {
    goal = *now;
  } else {
    return make_error(errc::invalid_request,
                      "cannot update goal for thread " + p.thread_id + ": no goal exists");
  }
  if (p.status) goal.status = *p.status;
  if (p.token_budget_given) goal.token_budget = p.token_budget;
  goal.updated_at = at;
  return goal;
}

}  // namespace goals_detail

void goal_of_thread(self_ptr self, goal_request req, client_actor client,
                    owed_reply<goal_answer> rp) {
  using namespace goals_detail;
  auto id = req.params.thread_id;
  auto store = self->state.svc.store;
  self->request(store, store_timeout, atom::load::value, id)
      .then(
          [self, rp, req, client, id](stored_thread& t) mutable {
            if (req.what == goal_request::kind::get) return rp.deliver(goal_answer{t.goal, false});
            std::optional<protocol::thread_goal> next;
            if (req.what == goal_request::kind::set) {
              auto goal = goal_after(t.goal, req.params);
              if (!goal) return rp.deliver(std::move(goal.error()));
              next = std::move(*goal);
            } else if (!t.goal) {
              return rp.deliver(goal_answer{std::nullopt, false});  // nothing to clear
            }
            self->request(self->state.svc.store, store_timeout, atom::append::value, id,
                          store_record{goal_record{next}})
                .then(
                    [self, rp, client, id, next](atom::ok) mutable {
                      rp.deliver(goal_answer{next, !next});
                      if (next)
                        self->send(client, atom::event::value,
                                   make_event(self->state.svc,
                                              protocol::thread_goal_updated{id, *next}));
                      else
                        self->send(client, atom::event::value,
                                   make_event(self->state.svc, protocol::thread_goal_cleared{id}));
                    },
                    [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
          },
          [rp, id](caf::error& err) mutable {
            if (message_of(err).rfind("no rollout found", 0) == 0)
              rp.deliver(make_error(errc::invalid_request, "thread not found: " + id));
            else
              rp.deliver(std::move(err));
          });
}

}  // namespace parley::thread_manager_detail
