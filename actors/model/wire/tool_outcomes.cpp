#include "actors/model/wire/tool_outcomes.hpp"

#include <cstdio>

namespace parley::wire {

namespace {

std::string seconds(std::chrono::milliseconds wall_time) {
  char text[64];
  std::snprintf(text, sizeof text, "%.4f", static_cast<double>(wall_time.count()) / 1000.0);
  return text;
}

}  // namespace

std::string exec_ran_text(int exit_code, std::chrono::milliseconds wall_time,
                          std::string_view output) {
  std::string text = "Wall time: " + seconds(wall_time) + " seconds\n";
  text += "Process exited with code " + std::to_string(exit_code) + "\n";
  text += "Output:\n";
  text.append(output);
  return text;
}

std::string exec_timed_out_text(std::chrono::milliseconds wall_time, std::string_view output) {
  std::string text = "Wall time: " + seconds(wall_time) + " seconds\n";
  text += "command timed out after " + std::to_string(wall_time.count()) + " milliseconds\n";
  text += "Output:\n";
  text.append(output);
  return text;
}

std::string exec_failed_to_start_text(std::string_view reason) {
  return "execution error: the command could not be started: " + std::string(reason);
}

std::string exec_declined_text() { return "exec command rejected by user"; }

std::string patch_declined_text() { return "patch rejected by user"; }

std::string approval_timed_out_text() {
  return "not run: the approval request expired before anyone answered it. This is not a "
         "refusal; you may retry once, or ask the user how to go on.";
}

std::string interrupted_text() { return "aborted"; }

std::string patch_applied_text(const std::vector<changed_file>& files) {
  std::string text = "Success. Updated the following files:\n";
  for (const auto& file : files) {
    text += file.change;
    text += ' ';
    text += file.path;
    text += '\n';
  }
  return text;
}

std::string patch_failed_text(std::string_view reason) {
  return "apply_patch failed: " + std::string(reason);
}

std::string unknown_tool_text(std::string_view name) {
  return "unsupported call: " + std::string(name) +
         " (the tools available are exec_command and apply_patch)";
}

}  // namespace parley::wire
