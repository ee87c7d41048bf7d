#include "bench/harness/stdio_link.hpp"

#include "transport/child_process.hpp"

namespace parley::bench {

stdio_link::stdio_link(child_process& server) : server_(server), reader_(server.stdout_fd()) {}

std::optional<stamped_message> stdio_link::next(std::chrono::milliseconds timeout) {
  auto line = reader_.next(timeout);
  if (!line) return std::nullopt;
  return stamped_message{std::move(line->text), line->arrived, 0};
}

bool stdio_link::ended() const {
  return reader_.eof();
}

void stdio_link::send(int, std::string text) {
  server_.write_line(text);
}

void stdio_link::close(std::chrono::milliseconds timeout) {
  server_.close_stdin();
  while (reader_.next(timeout)) {
  }
}

}  // namespace parley::bench
