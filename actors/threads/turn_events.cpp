// The turn's events (items started and completed, through its conversation)
// and what it hears from its model while the model speaks: message and
// reasoning pieces as they stream, the tokens each request used, retries.

#include <algorithm>

#include "actors/core/log.hpp"
#include "actors/threads/turn_detail.hpp"
#include "protocol/ids.hpp"

namespace parley::turn_detail {

notification_ptr started_event(self_ptr self, protocol::thread_item item, int64_t at_ms) {
  auto& s = self->state.settings;
  return make_event(self->state.svc,
                    protocol::item_started{s.thread_id, s.turn_id, std::move(item), at_ms});
}

void send_event(self_ptr self, notification_ptr n) {
  if (auto* batch = self->state.gathering) return batch->push_back(std::move(n));
  self->send(self->state.conversation, atom::event::value, std::move(n));
}

void item_started(self_ptr self, protocol::thread_item item, int64_t at_ms) {
  send_event(self, started_event(self, std::move(item), at_ms));
}

void item_completed(self_ptr self, protocol::thread_item item) {
  auto& s = self->state.settings;
  emit(self,
       protocol::item_completed{s.thread_id, s.turn_id, std::move(item), protocol::unix_ms()});
}

/// Completes the message the model was streaming (an interrupt cuts it
/// short: it ends with what arrived).
void complete_streamed(self_ptr self, std::string full_text, std::string phase) {
  auto& st = self->state;
  if (!st.streaming) return;
  auto item = std::move(st.streaming->item);
  st.streaming.reset();
  if (!full_text.empty()) item.text = std::move(full_text);
  item.phase = std::move(phase);
  item_completed(self, std::move(item));
}

/// Completes the reasoning the model streamed (it is over once anything
/// else comes).
void complete_reasoning(self_ptr self) {
  auto& st = self->state;
  if (!st.reasoning) return;
  auto item = std::move(*st.reasoning);
  st.reasoning.reset();
  ++st.reasoning_done_in_step;
  item_completed(self, std::move(item));
}

namespace {

/// The event of a piece of the streaming message: make_event's, with its
/// params written by the message's own writer (the ids escaped once).
notification_ptr message_delta_event(self_ptr self, std::string text,
                                     std::shared_ptr<const void> credit) {
  auto& st = self->state;
  auto& s = st.settings;
  auto e = std::make_shared<outgoing_event>();
  e->credit = std::move(credit);
  e->body = protocol::agent_message_delta{s.thread_id, s.turn_id, st.streaming->item.id,
                                          std::move(text)};
  if (!st.svc.config->encode_events) return e;
  auto params =
      st.streaming->delta_text.params(std::get<protocol::agent_message_delta>(e->body).delta);
  e->wire_params = params ? std::move(*params) : protocol::params_text(e->body);
  return e;
}

/// Whether a reasoning delta of a retry belongs to an item the client has
/// seen completed already (in the attempt the retry replaces).
bool skipped_reasoning(turn_state& st, const model_delta& d) {
  if (!st.skipping_reasoning_id.empty() && d.item_id == st.skipping_reasoning_id) return true;
  st.skipping_reasoning_id.clear();
  if (st.reasoning_to_skip == 0) return false;
  --st.reasoning_to_skip;
  st.skipping_reasoning_id = d.item_id;
  return true;
}

/// A piece of the model's reasoning: the first starts its item. After a
/// retry the model streams it again under a new id: it goes on in the item
/// the client has, and only what the client has not seen is sent (the
/// items it saw completed are not sent again at all).
void on_reasoning_delta(self_ptr self, model_delta& d) {
  auto& st = self->state;
  if (skipped_reasoning(st, d)) return;
  auto& rs = st.reasoning_stream;
  if (st.reasoning && rs.restarting) {
    rs.model_id = d.item_id;
    rs.restarting = false;
  }
  if (st.reasoning && rs.model_id != d.item_id) complete_reasoning(self);
  if (!st.reasoning) {
    st.reasoning.emplace();
    st.reasoning->id = d.item_id;
    rs = streaming_reasoning{};
    rs.model_id = d.item_id;
    item_started(self, *st.reasoning, protocol::unix_ms());
  }
  bool summary = d.what == model_delta::kind::reasoning_summary;
  auto& parts = summary ? st.reasoning->summary : st.reasoning->content;
  auto& shown = summary ? rs.summary_shown : rs.content_shown;
  auto index = static_cast<size_t>(std::clamp<int64_t>(d.index, 0, 64));
  if (parts.size() <= index) parts.resize(index + 1);
  if (shown.size() <= index) shown.resize(index + 1);
  parts[index] += d.text;
  auto unseen = shown[index].take(parts[index], std::move(d.text));
  if (unseen.empty()) return;
  auto& s = st.settings;
  emit(self,
       protocol::reasoning_delta{s.thread_id, s.turn_id, st.reasoning->id, std::move(unseen),
                                 d.index, summary},
       std::move(d.credit));
}

}  // namespace

/// A piece of a message the model is streaming: the first starts its item.
void on_model_delta(self_ptr self, model_delta& d) {
  auto& st = self->state;
  if (st.finished || d.text.empty()) return;
  // A reviewer's words are shown as the review, once it has ended.
  if (st.settings.review) return;
  if (d.what != model_delta::kind::text) return on_reasoning_delta(self, d);
  // Past the reasoning: a retry's reasoning that did not come again is not waited for.
  st.reasoning_to_skip = 0;
  st.skipping_reasoning_id.clear();
  complete_reasoning(self);
  if (st.streaming && st.streaming->restarting) {
    // The retry's answer takes the place of the broken one's.
    st.streaming->model_id = d.item_id;
    st.streaming->restarting = false;
  }
  if (st.streaming && st.streaming->model_id != d.item_id) complete_streamed(self);
  if (!st.streaming) {
    st.streaming.emplace();
    st.streaming->item.id = d.item_id;
    st.streaming->model_id = d.item_id;
    st.streaming->delta_text = protocol::message_delta_text(
        st.settings.thread_id, st.settings.turn_id, st.streaming->item.id);
    item_started(self, st.streaming->item, protocol::unix_ms());
  }
  st.streaming->item.text += d.text;
  // After a retry, what the broken attempt sent is held back: each delta once.
  auto unseen = st.streaming->shown.take(st.streaming->item.text, std::move(d.text));
  if (unseen.empty()) return;
  // Under the item's id, not the model's (message_delta_event): after a
  // retry the model names its new answer differently, but clients only
  // know the item that was started. The stream's credit goes with it: the stream reads on once clients
  // have taken it (backpressure, issue 22).
  send_event(self, message_delta_event(self, std::move(unseen), std::move(d.credit)));
}

void on_model_deltas(self_ptr self, model_deltas& ds) {
  // Only the turn's events are sent while the pieces are taken (a piece
  // starts, extends or completes items, nothing else), so gathering them
  // reorders nothing against the turn's other messages to its conversation.
  notification_batch out;
  out.reserve(ds.size());
  auto& st = self->state;
  st.gathering = &out;
  struct stop_gathering {
    turn_state& turn;
    ~stop_gathering() { turn.gathering = nullptr; }
  } guard{st};
  for (auto& d : ds) on_model_delta(self, d);
  if (out.size() == 1)
    self->send(st.conversation, atom::event::value, std::move(out.front()));
  else if (!out.empty())
    self->send(st.conversation, atom::event::value, std::move(out));
}

/// Tokens one request used (the thread's total grows), or a retry the
/// client is told about (Codex's `error` with willRetry).
void store_context(self_ptr self, std::vector<nlohmann::json> items) {
  if (items.empty()) return;
  auto& st = self->state;
  self->send(st.conversation, atom::append::value,
             context_record{st.settings.turn_id, std::move(items)});
}

void begin_compaction(self_ptr self) {
  auto& st = self->state;
  if (st.compaction) return;
  st.compaction = protocol::context_compaction_item{protocol::new_uuid_v7()};
  item_started(self, *st.compaction, protocol::unix_ms());
}

void end_compaction(self_ptr self, compaction_result result) {
  auto& st = self->state;
  begin_compaction(self);
  PARLEY_INFO("turn {} event=compacted items={}", st.settings.turn_id, result.replacement.size());
  // Stored before the item that announces it, as Codex writes them.
  self->send(st.conversation, atom::append::value,
             compacted_record{st.settings.turn_id, std::move(result.message),
                              std::move(result.replacement)});
  st.last_request_tokens = 0;  // the next request is the compacted one
  auto item = std::move(*st.compaction);
  st.compaction.reset();
  item_completed(self, std::move(item));
}

void on_model_notice(self_ptr self, model_notice& n) {
  auto& st = self->state;
  auto& s = st.settings;
  store_context(self, std::move(n.context));
  if (n.usage) st.last_request_tokens = n.usage->total_tokens;
  if (n.compacting) begin_compaction(self);
  if (n.compacted) end_compaction(self, std::move(*n.compacted));
  if (n.usage) {
    auto& t = st.tokens;
    t.total_tokens += n.usage->total_tokens;
    t.input_tokens += n.usage->input_tokens;
    t.cached_input_tokens += n.usage->cached_input_tokens;
    t.output_tokens += n.usage->output_tokens;
    t.reasoning_output_tokens += n.usage->reasoning_output_tokens;
    emit(self, protocol::token_usage_updated{s.thread_id, s.turn_id, t, *n.usage});
  }
  // The retry streams its answer from the start; the cursors keep what the
  // client was sent, and the reasoning the client saw completed is not
  // shown again.
  if (n.restart) {
    st.reasoning_to_skip = st.reasoning_done_in_step;
    st.skipping_reasoning_id.clear();
  }
  if (n.restart && st.streaming) {
    st.streaming->item.text.clear();
    st.streaming->restarting = true;
  }
  if (n.restart && st.reasoning) {
    st.reasoning->summary.assign(st.reasoning->summary.size(), std::string{});
    st.reasoning->content.assign(st.reasoning->content.size(), std::string{});
    st.reasoning_stream.restarting = true;
  }
  if (!n.retrying.empty()) {
    protocol::turn_error e;
    e.message = n.retrying;
    e.codex_error_info = "other";
    emit(self, protocol::error_notification{s.thread_id, s.turn_id, e, true});
  }
}

}  // namespace parley::turn_detail
