#pragma once
// The server's stdin and stdout as one session (connection 0).

#include "bench/harness/link.hpp"
#include "bench/harness/stamped_reader.hpp"

namespace parley {
class child_process;
}

namespace parley::bench {

class stdio_link final : public server_link {
 public:
  /// Starts reading the server's stdout at once; `server` outlives this.
  explicit stdio_link(child_process& server);

  std::optional<stamped_message> next(std::chrono::milliseconds timeout) override;
  bool ended() const override;
  void send(int connection, std::string text) override;
  /// Closes the server's stdin (it then ends) and reads until its stdout ends.
  void close(std::chrono::milliseconds timeout) override;

 private:
  child_process& server_;
  stamped_reader reader_;  // the only reader of the server's stdout
};

}  // namespace parley::bench
