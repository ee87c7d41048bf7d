#include "actors/model/wire/sse_parser.hpp"

#include <cstring>

namespace parley::wire {

namespace {

/// Where the first line end (\r or \n) of `bytes` is. find_first_of("\r\n")
/// asks memchr of the two-byte set for every byte of the body (a call per
/// byte, ~5% of a streaming run's samples, issue 23), and a loop over the
/// bytes read one at a time (~2%). Two memchr passes over the line instead:
/// the \n that ends it, then a \r before that. `next_lf` keeps where the
/// next \n is (the end of `bytes` when there is none; null: not looked for
/// yet) across the lines of one piece, so that lines ended by \r alone do
/// not make each search run to the piece's end again.
std::size_t line_end(std::string_view bytes, const char*& next_lf) {
  const char* start = bytes.data();
  const char* end = start + bytes.size();
  if (!next_lf || next_lf < start) {
    const void* lf = std::memchr(start, '\n', bytes.size());
    next_lf = lf ? static_cast<const char*>(lf) : end;
  }
  auto before_lf = static_cast<std::size_t>(next_lf - start);
  if (const void* cr = std::memchr(start, '\r', before_lf))
    return static_cast<std::size_t>(static_cast<const char*>(cr) - start);
  return next_lf == end ? std::string_view::npos : before_lf;
}

}  // namespace

std::vector<sse_event> sse_parser::feed(std::string_view bytes) {
  std::vector<sse_event> out;
  feed(bytes, [&out](const sse_event& e) { out.push_back(e); });
  return out;
}

void sse_parser::feed_to(std::string_view bytes, event_sink sink, void* context) {
  if (error_) return;
  if (skip_next_lf_ && !bytes.empty()) {
    skip_next_lf_ = false;
    if (bytes.front() == '\n') bytes.remove_prefix(1);
  }
  const char* next_lf = nullptr;
  while (!bytes.empty() && !error_) {
    auto end = line_end(bytes, next_lf);
    if (end == std::string_view::npos) {
      if (!over_bound(bytes.size())) partial_line_.append(bytes);
      break;
    }
    auto line = bytes.substr(0, end);
    if (partial_line_.empty()) {
      take_line(line, sink, context);
    } else {
      if (over_bound(line.size())) break;
      partial_line_.append(line);
      take_line(partial_line_, sink, context);
      partial_line_.clear();
    }
    bool carriage_return = bytes[end] == '\r';
    bytes.remove_prefix(end + 1);
    if (carriage_return) {
      // \r\n is one line end even when the chunk boundary falls between them.
      if (bytes.empty()) {
        skip_next_lf_ = true;
      } else if (bytes.front() == '\n') {
        bytes.remove_prefix(1);
      }
    }
  }
}

void sse_parser::take_line(std::string_view line, event_sink sink, void* context) {
  if (line.empty()) {
    // The id counts once its event is dispatched, or at a blank line after
    // an id alone (WHATWG sets the buffer at dispatch either way).
    last_event_id_ = id_;
    if (has_data_) sink(context, event_);
    event_.event.clear();  // both keep their capacity for the next event
    event_.data.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // a comment (servers send them as keep-alives)
  auto colon = line.find(':');
  auto name = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  take_field(name, value);
}

void sse_parser::take_field(std::string_view name, std::string_view value) {
  if (name == "data") {
    if (over_bound(value.size() + 1)) return;
    if (has_data_) event_.data += '\n';
    event_.data.append(value);
    has_data_ = true;
  } else if (name == "event") {
    if (over_bound(value.size())) return;
    event_.event.assign(value);
  } else if (name == "id") {
    if (value.find('\0') == std::string_view::npos && !over_bound(value.size())) id_.assign(value);
  } else if (name == "retry") {
    bool digits = !value.empty() && value.size() <= 9
                  && value.find_first_not_of("0123456789") == std::string_view::npos;
    if (digits) retry_ms_ = std::stol(std::string(value));
  }
  // Unknown fields are ignored.
}

bool sse_parser::over_bound(std::size_t more) {
  if (event_.data.size() + partial_line_.size() + event_.event.size() + more <= max_event_bytes_) {
    return false;
  }
  error_ = "a server-sent event exceeds " + std::to_string(max_event_bytes_) +
           " bytes; the stream was abandoned";
  return true;
}

}  // namespace parley::wire
