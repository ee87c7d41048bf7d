#include "actors/model/wire/sse_parser.hpp"

namespace parley::wire {

namespace {

/// Where the first line end (\r or \n) is. find_first_of("\r\n") asks
/// memchr of the two-byte set for every byte of the body (a call per byte,
/// ~5% of a streaming run's samples, issue 23); a loop reads each byte once.
std::size_t line_end(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == '\n' || bytes[i] == '\r') return i;
  }
  return std::string_view::npos;
}

}  // namespace

std::vector<sse_event> sse_parser::feed(std::string_view bytes) {
  std::vector<sse_event> out;
  if (error_) return out;
  if (skip_next_lf_ && !bytes.empty()) {
    skip_next_lf_ = false;
    if (bytes.front() == '\n') bytes.remove_prefix(1);
  }
  while (!bytes.empty() && !error_) {
    auto end = line_end(bytes);
    if (end == std::string_view::npos) {
      if (!over_bound(bytes.size())) partial_line_.append(bytes);
      break;
    }
    auto line = bytes.substr(0, end);
    if (partial_line_.empty()) {
      take_line(line, out);
    } else {
      if (over_bound(line.size())) break;
      partial_line_.append(line);
      take_line(partial_line_, out);
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
  return out;
}

void sse_parser::take_line(std::string_view line, std::vector<sse_event>& out) {
  if (line.empty()) {
    // The id counts once its event is dispatched, or at a blank line after
    // an id alone (WHATWG sets the buffer at dispatch either way).
    last_event_id_ = id_;
    if (has_data_) out.push_back(sse_event{std::move(event_name_), std::move(data_)});
    event_name_.clear();
    data_.clear();
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
    if (has_data_) data_ += '\n';
    data_.append(value);
    has_data_ = true;
  } else if (name == "event") {
    if (over_bound(value.size())) return;
    event_name_.assign(value);
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
  if (data_.size() + partial_line_.size() + event_name_.size() + more <= max_event_bytes_) {
    return false;
  }
  error_ = "a server-sent event exceeds " + std::to_string(max_event_bytes_) +
           " bytes; the stream was abandoned";
  return true;
}

}  // namespace parley::wire
