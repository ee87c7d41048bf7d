#pragma once
// command/exec and its follow-ups (write, terminate, resize): a command a
// client runs outside any thread, its output buffered in the reply or
// streamed as base64 chunks (command/exec/outputDelta). Shapes: Codex
// 0.169's v2 schema (CommandExec*Params, CommandExecResponse).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/types.hpp"

namespace parley::protocol {

struct terminal_size {
  uint16_t rows = 24;
  uint16_t cols = 80;
};

struct command_exec_params {
  std::vector<std::string> command;  // argv, run without a shell
  std::optional<std::string> cwd;
  /// Overrides of the server's command environment; nullopt = unset it.
  std::map<std::string, std::optional<std::string>> env;
  std::optional<sandbox_policy> sandbox;
  std::optional<int64_t> timeout_ms;
  bool disable_timeout = false;
  std::optional<uint64_t> output_bytes_cap;
  bool disable_output_cap = false;
  std::optional<std::string> process_id;
  bool tty = false;
  bool stream_stdin = false;          // also set by tty
  bool stream_stdout_stderr = false;  // also set by tty
  std::optional<terminal_size> size;
};
void from_json(const json& j, command_exec_params& x);

/// A problem with params that decoded: the JSON-RPC code and message Codex
/// gives for the same request.
struct params_problem {
  int code = 0;
  std::string message;
};

/// What is wrong with the params as a whole (empty command, fields that
/// cannot be combined, streaming without a processId), or nullopt.
std::optional<params_problem> command_exec_problem(const command_exec_params& x);

struct command_exec_response {
  int32_t exit_code = -1;
  std::string stdout_text;  // empty when streamed
  std::string stderr_text;
};
void to_json(json& j, const command_exec_response& x);

struct command_exec_write_params {
  std::string process_id;
  std::optional<std::string> delta_base64;  // as sent; decoded by the session
  bool close_stdin = false;
};
void from_json(const json& j, command_exec_write_params& x);

struct command_exec_terminate_params {
  std::string process_id;
};
void from_json(const json& j, command_exec_terminate_params& x);

struct command_exec_resize_params {
  std::string process_id;
  terminal_size size;
};
void from_json(const json& j, command_exec_resize_params& x);

/// A size with a zero side, as Codex refuses it; nullopt when fine.
std::optional<params_problem> terminal_size_problem(const terminal_size& size);

}  // namespace parley::protocol
