#include "protocol/command_exec.hpp"

#include "protocol/json_codec.hpp"
#include "protocol/jsonrpc.hpp"

namespace parley::protocol {

namespace command_exec_codec {

uint64_t unsigned_of(const json& j, const char* expected, uint64_t max) {
  if (j.is_number_unsigned() && j.get<uint64_t>() <= max) return j.get<uint64_t>();
  throw_invalid_type(j, expected);
}

std::optional<uint64_t> optional_unsigned(const json& obj, const char* key, const char* expected,
                                          uint64_t max) {
  auto i = obj.find(key);
  if (i == obj.end() || i->is_null()) return std::nullopt;
  return unsigned_of(*i, expected, max);
}

terminal_size size_of(const json& j) {
  require_object(j);
  terminal_size s;
  for (auto [key, field] : {std::pair{"rows", &s.rows}, std::pair{"cols", &s.cols}}) {
    auto i = j.find(key);
    if (i == j.end() || i->is_null())
      throw decode_error(std::string{"missing field `"} + key + "`");
    *field = static_cast<uint16_t>(unsigned_of(*i, "u16", UINT16_MAX));
  }
  return s;
}

bool flag(const json& j, const char* key) { return optional<bool>(j, key).value_or(false); }

}  // namespace command_exec_codec

void from_json(const json& j, command_exec_params& x) {
  using namespace command_exec_codec;
  require_object(j);
  x.command = required<std::vector<std::string>>(j, "command");
  x.cwd = optional<std::string>(j, "cwd");
  if (auto e = j.find("env"); e != j.end() && !e->is_null()) {
    if (!e->is_object()) throw_invalid_type(*e, "a map");
    for (auto& [name, value] : e->items())
      x.env[name] = value.is_null() ? std::nullopt
                                    : std::optional<std::string>{decode<std::string>(value)};
  }
  x.sandbox = optional<sandbox_policy>(j, "sandboxPolicy");
  x.timeout_ms = optional<int64_t>(j, "timeoutMs");
  x.disable_timeout = flag(j, "disableTimeout");
  x.output_bytes_cap = optional_unsigned(j, "outputBytesCap", "usize", UINT64_MAX);
  x.disable_output_cap = flag(j, "disableOutputCap");
  x.process_id = optional<std::string>(j, "processId");
  x.tty = flag(j, "tty");
  x.stream_stdin = flag(j, "streamStdin") || x.tty;
  x.stream_stdout_stderr = flag(j, "streamStdoutStderr") || x.tty;
  if (auto s = j.find("size"); s != j.end() && !s->is_null()) x.size = size_of(*s);
}

std::optional<params_problem> command_exec_problem(const command_exec_params& x) {
  // The order and words of Codex 0.169's checks.
  if (x.command.empty()) return params_problem{rpc_code::invalid_request, "command must not be empty"};
  if (x.size && !x.tty)
    return params_problem{rpc_code::invalid_params, "command/exec size requires tty: true"};
  if (x.size)
    if (auto problem = terminal_size_problem(*x.size)) return problem;
  if (x.disable_timeout && x.timeout_ms)
    return params_problem{rpc_code::invalid_params,
                          "command/exec cannot set both timeoutMs and disableTimeout"};
  if (x.disable_output_cap && x.output_bytes_cap)
    return params_problem{rpc_code::invalid_params,
                          "command/exec cannot set both outputBytesCap and disableOutputCap"};
  if (x.timeout_ms && *x.timeout_ms < 0)
    return params_problem{rpc_code::invalid_params,
                          "command/exec timeoutMs must be non-negative, got "
                              + std::to_string(*x.timeout_ms)};
  if ((x.tty || x.stream_stdin || x.stream_stdout_stderr) && !x.process_id)
    return params_problem{rpc_code::invalid_request,
                          "command/exec tty or streaming requires a client-supplied processId"};
  return std::nullopt;
}

std::optional<params_problem> terminal_size_problem(const terminal_size& size) {
  if (size.rows == 0 || size.cols == 0)
    return params_problem{rpc_code::invalid_params,
                          "command/exec size rows and cols must be greater than 0"};
  return std::nullopt;
}

void to_json(json& j, const command_exec_response& x) {
  j = json{{"exitCode", x.exit_code}, {"stdout", x.stdout_text}, {"stderr", x.stderr_text}};
}

void from_json(const json& j, command_exec_write_params& x) {
  require_object(j);
  x.process_id = required<std::string>(j, "processId");
  x.delta_base64 = optional<std::string>(j, "deltaBase64");
  x.close_stdin = command_exec_codec::flag(j, "closeStdin");
}

void from_json(const json& j, command_exec_terminate_params& x) {
  require_object(j);
  x.process_id = required<std::string>(j, "processId");
}

void from_json(const json& j, command_exec_resize_params& x) {
  require_object(j);
  x.process_id = required<std::string>(j, "processId");
  x.size = command_exec_codec::size_of(required<json>(j, "size"));
}

}  // namespace parley::protocol
