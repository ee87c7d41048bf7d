#pragma once
// Private to the turn (turn.cpp, turn_events.cpp): the events it reports to
// its conversation, and what it hears from its model while the model speaks
// (message and reasoning pieces, usage, retries).

#include <string>
#include <utility>

#include "actors/threads/turn.hpp"

namespace parley::turn_detail {

using self_ptr = turn_actor::stateful_pointer<turn_state>;

template <class T>
void emit(self_ptr self, T&& n) {
  self->send(self->state.conversation, atom::event::value,
             make_event(self->state.svc, std::forward<T>(n)));
}

notification_ptr started_event(self_ptr self, protocol::thread_item item, int64_t at_ms);
void send_event(self_ptr self, notification_ptr n);
void item_started(self_ptr self, protocol::thread_item item, int64_t at_ms);
void item_completed(self_ptr self, protocol::thread_item item);

/// Completes the message the model was streaming, with its whole text when
/// given (an interrupt cuts it short: it ends with what arrived).
void complete_streamed(self_ptr self, std::string full_text = {},
                       std::string phase = "final_answer");
/// Completes the reasoning the model streamed (it is over once anything
/// else comes).
void complete_reasoning(self_ptr self);

/// A piece of a message or of reasoning: the first of an item starts it.
void on_model_delta(self_ptr self, model_delta& d);
/// Tokens one request used, or a retry (which restarts the answer).
void on_model_notice(self_ptr self, model_notice& n);

/// The model's context of this turn, to the conversation to store.
void store_context(self_ptr self, std::vector<nlohmann::json> items);

}  // namespace parley::turn_detail
