#pragma once
// The script of a turn: the `mock:` directives of its last user message (mock_model.md).
// Pure: text in, script out; which part of the script a response carries.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::mock_model {

enum class action_kind {
  say,     ///< an assistant message
  reason,  ///< a reasoning item (summary text)
  run,     ///< a function_call to exec_command
  shell,   ///< a function_call to shell, {"command": ["bash", "-lc", CMD]}
  patch,   ///< apply_patch (custom_tool_call on the Responses API)
  tool,    ///< a function_call to any tool NAME, arguments {} or the JSON given
};

/// True for the actions that end a response: the client must answer them first.
bool is_tool_call(action_kind kind);

struct action {
  action_kind kind;
  /// The message, summary, command, patch or tool name.
  std::string text;
};

enum class fault_kind { http, cut, stall, malformed, failed };

struct fault {
  fault_kind kind;
  /// The directive as written: with the request's input, it names the fault's counter.
  std::string line;
  /// How many attempts of the same request it hits before it lets one through.
  unsigned times = 1;
  /// The response of the turn it hits (1 = before any tool output).
  unsigned at = 1;
  int status = 0;            ///< http
  std::string retry_after;   ///< http: the Retry-After header, if any
  long stall_ms = 0;         ///< stall
  bool close_after = false;  ///< stall: close the connection after the pause
  std::string message;       ///< failed
};

struct token_usage {
  std::uint64_t input_tokens = 0;
  std::uint64_t output_tokens = 0;
};

struct script {
  /// False without any `mock:` line: the stream is then exactly the historic one.
  bool has_directives = false;
  std::vector<action> actions;
  std::vector<fault> faults;
  std::optional<token_usage> usage;
  std::optional<long> pace_ms;
  /// Directives that could not be read, each with the reason.
  std::vector<std::string> errors;
};

/// Reads the directives of a user message (lines starting with `mock:`).
script parse_script(std::string_view user_text);

/// The actions of the response that follows `tool_outputs` tool outputs in this turn: the
/// script up to and including the next tool call, or after the last call the remaining
/// messages. Empty means "answer `done`". A script without actions is the default one:
/// `run default_command`.
std::vector<action> response_actions(const script& s, std::size_t tool_outputs,
                                     const std::string& default_command);

}  // namespace parley::mock_model
