#pragma once
// What the model is told about each outcome of a call: the text of the
// output item that answers it (tool_calls.hpp). The wording follows what
// Codex sends, so models trained on Codex read it as they expect:
//
//   ran           Wall time: 0.2000 seconds
//                 Process exited with code 0
//                 Output:
//                 <stdout and stderr>
//   declined      exec command rejected by user   /   patch rejected by user
//   interrupted   aborted
//   patch applied Success. Updated the following files:
//                 M src/main.cpp

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace parley::wire {

/// The command ran to its end.
std::string exec_ran_text(int exit_code, std::chrono::milliseconds wall_time,
                          std::string_view output);

/// The command ran past its time limit and was killed.
std::string exec_timed_out_text(std::chrono::milliseconds wall_time, std::string_view output);

/// The command could not be started (no such directory, fork failed, ...).
std::string exec_failed_to_start_text(std::string_view reason);

/// The user (or a rule) declined the command, or the patch.
std::string exec_declined_text();
std::string patch_declined_text();

/// Nobody answered the approval request before its deadline; nothing ran.
std::string approval_timed_out_text();

/// The turn was interrupted before the call finished (or started).
std::string interrupted_text();

/// One line of a patch's summary: 'A' added, 'M' modified (or moved), 'D' deleted.
struct changed_file {
  char change = 'M';
  std::string path;
};

std::string patch_applied_text(const std::vector<changed_file>& files);
std::string patch_failed_text(std::string_view reason);

/// A call of a tool parley does not offer.
std::string unknown_tool_text(std::string_view name);

}  // namespace parley::wire
