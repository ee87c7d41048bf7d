#pragma once
// `parley chat`: a small terminal client. It starts `parley app-server` as a
// child over pipes, sends each input line as a turn, prints what streams
// back, and asks the person at every approval.

#include <string>
#include <vector>

namespace parley {

struct chat_options {
  /// Accept every approval without asking.
  bool auto_accept = false;
  /// approvalPolicy for the thread ("on-request", "untrusted", "never").
  std::string approval_policy = "on-request";
  /// The server command; default: this executable's `app-server`.
  std::vector<std::string> server;
};

int run_chat(const chat_options& options);

}  // namespace parley
