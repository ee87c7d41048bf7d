#include "protocol/notification_text.hpp"

#include <cstdint>

#include "protocol/item_text.hpp"
#include "protocol/json_codec.hpp"
#include "protocol/thread_text.hpp"

namespace parley::protocol {

namespace {

/// The length of the well-formed UTF-8 sequence at `s[i]` (a lead byte of
/// 0x80 or more), or 0 when it is not one (Unicode's table 3-7: no
/// overlong forms, no surrogates, nothing above U+10FFFF), which is what
/// nlohmann's decoder accepts.
size_t utf8_sequence(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto in = [](unsigned char c, unsigned char lo, unsigned char hi) { return c >= lo && c <= hi; };
  const unsigned char c = byte(i);
  const size_t left = s.size() - i;
  if (in(c, 0xC2, 0xDF)) return left >= 2 && in(byte(i + 1), 0x80, 0xBF) ? 2 : 0;
  if (in(c, 0xE0, 0xEF)) {
    if (left < 3) return 0;
    unsigned char lo = c == 0xE0 ? 0xA0 : 0x80;
    unsigned char hi = c == 0xED ? 0x9F : 0xBF;
    return in(byte(i + 1), lo, hi) && in(byte(i + 2), 0x80, 0xBF) ? 3 : 0;
  }
  if (in(c, 0xF0, 0xF4)) {
    if (left < 4) return 0;
    unsigned char lo = c == 0xF0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xF4 ? 0x8F : 0xBF;
    return in(byte(i + 1), lo, hi) && in(byte(i + 2), 0x80, 0xBF) && in(byte(i + 3), 0x80, 0xBF)
               ? 4
               : 0;
  }
  return 0;
}

/// The four-string shape of message and command output deltas.
bool write_delta(std::string& out, const std::string& thread_id, const std::string& turn_id,
                 const std::string& item_id, const std::string& delta) {
  out += '{';
  append_key(out, "delta");
  if (!append_json_string(out, delta)) return false;
  out += ',';
  append_key(out, "itemId");
  if (!append_json_string(out, item_id)) return false;
  out += ',';
  append_key(out, "threadId");
  if (!append_json_string(out, thread_id)) return false;
  out += ',';
  append_key(out, "turnId");
  if (!append_json_string(out, turn_id)) return false;
  out += '}';
  return true;
}

bool write_reasoning(std::string& out, const reasoning_delta& x) {
  auto index = [&] { out += std::to_string(x.index); };
  out += '{';
  if (!x.summary) {
    append_key(out, "contentIndex");
    index();
    out += ',';
  }
  append_key(out, "delta");
  if (!append_json_string(out, x.delta)) return false;
  out += ',';
  append_key(out, "itemId");
  if (!append_json_string(out, x.item_id)) return false;
  out += ',';
  if (x.summary) {
    append_key(out, "summaryIndex");
    index();
    out += ',';
  }
  append_key(out, "threadId");
  if (!append_json_string(out, x.thread_id)) return false;
  out += ',';
  append_key(out, "turnId");
  if (!append_json_string(out, x.turn_id)) return false;
  out += '}';
  return true;
}

bool write_status(std::string& out, const thread_status_changed& x) {
  out += "{\"status\":";
  switch (x.status.type) {
    case thread_status::kind::not_loaded: out += R"({"type":"notLoaded"})"; break;
    case thread_status::kind::idle: out += R"({"type":"idle"})"; break;
    case thread_status::kind::system_error: out += R"({"type":"systemError"})"; break;
    case thread_status::kind::active:
      out += R"({"activeFlags":[)";
      if (x.status.waiting_on_approval) out += R"("waitingOnApproval")";
      if (x.status.waiting_on_approval && x.status.waiting_on_user_input) out += ',';
      if (x.status.waiting_on_user_input) out += R"("waitingOnUserInput")";
      out += R"(],"type":"active"})";
      break;
  }
  out += ',';
  append_key(out, "threadId");
  if (!append_json_string(out, x.thread_id)) return false;
  out += '}';
  return true;
}

/// A request id as nlohmann writes it: a number, or a string.
bool append_request_id(std::string& out, const request_id& id) {
  if (auto* i = std::get_if<int64_t>(&id.value)) {
    out += std::to_string(*i);
    return true;
  }
  return append_json_string(out, std::get<std::string>(id.value));
}

/// Every answered approval writes one (serverRequest/resolved).
bool write_resolved(std::string& out, const server_request_resolved& x) {
  out += '{';
  append_key(out, "requestId");
  if (!append_request_id(out, x.request)) return false;
  out += ',';
  append_key(out, "threadId");
  if (!append_json_string(out, x.thread_id)) return false;
  out += '}';
  return true;
}

/// turn/started and turn/completed.
bool write_turn_params(std::string& out, const std::string& thread_id, const turn& t) {
  out += '{';
  append_key(out, "threadId");
  if (!append_json_string(out, thread_id)) return false;
  out += ',';
  append_key(out, "turn");
  if (!append_turn(out, t)) return false;
  out += '}';
  return true;
}

/// item/started and item/completed: their time's key sorts before "item"
/// (completedAtMs) or after it (startedAtMs).
bool write_item_params(std::string& out, const char* at_key, int64_t at, bool at_first,
                       const std::string& thread_id, const std::string& turn_id,
                       const thread_item& item) {
  out += '{';
  auto time = [&] {
    append_key(out, at_key);
    out += std::to_string(at);
    out += ',';
  };
  if (at_first) time();
  append_key(out, "item");
  if (!append_item(out, item)) return false;
  out += ',';
  if (!at_first) time();
  append_key(out, "threadId");
  if (!append_json_string(out, thread_id)) return false;
  out += ',';
  append_key(out, "turnId");
  if (!append_json_string(out, turn_id)) return false;
  out += '}';
  return true;
}

/// Writes the shapes this file knows (and a thread's start and close, with
/// protocol/thread_text.hpp); false for any other (or bad UTF-8).
bool write_params(std::string& out, const notification& n) {
  if (auto* d = std::get_if<agent_message_delta>(&n))
    return write_delta(out, d->thread_id, d->turn_id, d->item_id, d->delta);
  if (auto* d = std::get_if<command_output_delta>(&n))
    return write_delta(out, d->thread_id, d->turn_id, d->item_id, d->delta);
  if (auto* r = std::get_if<reasoning_delta>(&n)) return write_reasoning(out, *r);
  if (auto* s = std::get_if<thread_status_changed>(&n)) return write_status(out, *s);
  if (auto* r = std::get_if<server_request_resolved>(&n)) return write_resolved(out, *r);
  if (auto* i = std::get_if<item_started>(&n))
    return write_item_params(out, "startedAtMs", i->started_at_ms, false, i->thread_id,
                             i->turn_id, i->item);
  if (auto* i = std::get_if<item_completed>(&n))
    return write_item_params(out, "completedAtMs", i->completed_at_ms, true, i->thread_id,
                             i->turn_id, i->item);
  if (auto* t = std::get_if<turn_started>(&n)) return write_turn_params(out, t->thread_id, t->turn_);
  if (auto* s = std::get_if<thread_started>(&n)) {
    append_key(out += '{', "thread");
    if (!append_thread(out, s->thread_)) return false;
    out += '}';
    return true;
  }
  if (auto* t = std::get_if<turn_completed>(&n))
    return write_turn_params(out, t->thread_id, t->turn_);
  if (auto* c = std::get_if<thread_closed>(&n)) {
    append_key(out += '{', "threadId");
    if (!append_json_string(out, c->thread_id)) return false;
    out += '}';
    return true;
  }
  return false;
}

}  // namespace

void append_key(std::string& out, const char* key) {
  out += '"';
  out += key;
  out += "\":";
}

bool append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t n = utf8_sequence(s, i);
      if (n == 0) return false;
      i += n;
      continue;
    }
    if (c >= 0x20 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    out.append(s.data() + run, i - run);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 0xF];
    }
    run = ++i;
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
  return true;
}

std::string params_text(const notification& n) {
  std::string out;
  out.reserve(192);
  if (write_params(out, n)) return out;
  return dump_line(params_of(n));
}

}  // namespace parley::protocol
