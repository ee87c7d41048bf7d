#include "actors/model/wire/tool_calls.hpp"

#include <optional>
#include <string_view>
#include <utility>

#include "actors/model/wire/json_fields.hpp"
#include "actors/model/wire/tool_outcomes.hpp"
#include "actors/model/wire/tools.hpp"

namespace parley::wire {

namespace {

using namespace detail;

tool_call invalid(tool_call call, std::string error) {
  call.kind = call_kind::invalid;
  call.error = std::move(error);
  return call;
}

bool safe_unquoted(std::string_view arg) {
  if (arg.empty()) return false;
  for (char c : arg) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!plain && std::string_view("_@%+=:,./-").find(c) == std::string_view::npos) return false;
  }
  return true;
}

std::string_view basename(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::optional<std::vector<std::string>> string_list(const json* value) {
  if (!value || !value->is_array() || value->empty()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& arg : *value) {
    if (!arg.is_string()) return std::nullopt;
    out.push_back(arg.get<std::string>());
  }
  return out;
}

// An argument list as parley runs it: a script, or a patch for apply_patch.
tool_call from_argv(tool_call call, const std::vector<std::string>& argv) {
  auto program = basename(argv[0]);
  if ((program == "apply_patch" || program == "applypatch") && argv.size() == 2) {
    call.kind = call_kind::patch;
    call.patch = argv[1];
    return call;
  }
  bool shell = program == "bash" || program == "sh" || program == "zsh" || program == "dash";
  bool script_flag = argv.size() == 3 && (argv[1] == "-c" || argv[1] == "-lc");
  call.kind = call_kind::run;
  call.command = shell && script_flag ? argv[2] : shell_join(argv);
  return call;
}

/// What a run call may add to its command: leaving the sandbox
/// (sandbox_permissions) and a timeout (timeout_ms; not a positive integer:
/// ignored, so the configured default applies).
void read_run_limits(tool_call& call, const json& args) {
  call.sandbox_permissions = string_or(args, "sandbox_permissions");
  const json* t = field(args, "timeout_ms");
  if (t && t->is_number_integer() && t->get<int64_t>() > 0) call.timeout_ms = t->get<int64_t>();
}

tool_call from_exec_command(tool_call call, const json& args) {
  const std::string* cmd = string_field(args, "cmd");
  if (!cmd || cmd->empty()) return invalid(std::move(call), "exec_command needs a non-empty string `cmd`");
  call.kind = call_kind::run;
  call.command = *cmd;
  call.workdir = string_or(args, "workdir");
  call.justification = string_or(args, "justification");
  read_run_limits(call, args);
  return call;
}

tool_call from_shell(tool_call call, const json& args) {
  auto argv = string_list(field(args, "command"));
  if (!argv) return invalid(std::move(call), "shell needs `command`: a non-empty array of strings");
  call.workdir = string_or(args, "workdir");
  call.justification = string_or(args, "justification");
  read_run_limits(call, args);
  return from_argv(std::move(call), *argv);
}

tool_call from_shell_command(tool_call call, const json& args) {
  const std::string* command = string_field(args, "command");
  if (!command || command->empty()) {
    return invalid(std::move(call), "shell_command needs a non-empty string `command`");
  }
  call.kind = call_kind::run;
  call.command = *command;
  call.workdir = string_or(args, "workdir");
  call.justification = string_or(args, "justification");
  read_run_limits(call, args);
  return call;
}

tool_call from_patch_input(tool_call call, const std::string* input) {
  if (!input) return invalid(std::move(call), "apply_patch needs the patch as a string `input`");
  call.kind = call_kind::patch;
  call.patch = *input;
  return call;
}

// The arguments arrive as JSON text; a server that sends them parsed is
// taken at its word.
std::optional<json> parse_arguments(const json& item, std::string& error) {
  const json* arguments = field(item, "arguments");
  if (arguments && arguments->is_object()) return *arguments;
  if (!arguments || !arguments->is_string()) {
    error = "the arguments are missing";
    return std::nullopt;
  }
  auto parsed = json::parse(arguments->get_ref<const std::string&>(), nullptr, false);
  if (parsed.is_discarded()) {
    error = "the arguments are not valid JSON: " + preview(arguments->get_ref<const std::string&>());
    return std::nullopt;
  }
  if (!parsed.is_object()) {
    error = "the arguments are not a JSON object";
    return std::nullopt;
  }
  return parsed;
}

tool_call from_function_call(tool_call call, const json& item,
                             const std::set<std::string>& client_tools) {
  const auto& name = call.tool_name;
  if (client_tools.count(name)) {
    std::string error;
    auto args = parse_arguments(item, error);
    if (!args) return invalid(std::move(call), "failed to parse the arguments of " + name + ": " + error);
    call.kind = call_kind::client_tool;
    call.arguments = std::move(*args);
    return call;
  }
  bool known = name == exec_command_tool || name == apply_patch_tool || name == "shell" ||
               name == "shell_command" || name == request_user_input_tool_name
               || name == request_permissions_tool_name;
  if (!known) {
    call.kind = call_kind::unknown;
    call.error = unknown_tool_text(name);
    return call;
  }
  std::string error;
  auto args = parse_arguments(item, error);
  if (!args) return invalid(std::move(call), "failed to parse the arguments of " + name + ": " + error);
  if (name == exec_command_tool) return from_exec_command(std::move(call), *args);
  if (name == "shell") return from_shell(std::move(call), *args);
  if (name == "shell_command") return from_shell_command(std::move(call), *args);
  if (name == request_user_input_tool_name || name == request_permissions_tool_name) {
    call.kind = name == request_user_input_tool_name ? call_kind::ask_user : call_kind::permissions;
    call.arguments = std::move(*args);
    return call;
  }
  return from_patch_input(std::move(call), string_field(*args, "input"));
}

tool_call from_custom_call(tool_call call, const json& item) {
  call.output = output_type::custom_tool_call_output;
  if (call.tool_name != apply_patch_tool) {
    call.kind = call_kind::unknown;
    call.error = unknown_tool_text(call.tool_name);
    return call;
  }
  return from_patch_input(std::move(call), string_field(item, "input"));
}

tool_call from_local_shell(tool_call call, const json& item) {
  if (call.call_id.empty()) call.call_id = string_or(item, "id");
  if (call.call_id.empty()) return invalid(std::move(call), "local_shell_call without a call_id");
  const json* action = object_field(item, "action");
  if (!action || string_or(*action, "type") != "exec") {
    return invalid(std::move(call), "local_shell_call needs an `action` of type exec");
  }
  const json* exec = object_field(*action, "exec");  // some servers nest it
  const json& source = exec ? *exec : *action;
  auto argv = string_list(field(source, "command"));
  if (!argv) return invalid(std::move(call), "local_shell_call needs `command`: a non-empty array of strings");
  call.workdir = string_or(source, "working_directory");
  return from_argv(std::move(call), *argv);
}

}  // namespace

bool is_tool_call(const nlohmann::json& item) {
  auto type = string_or(item, "type");
  return type == "function_call" || type == "custom_tool_call" || type == "local_shell_call";
}

std::string flat_call_name(const std::string& ns, const std::string& name) {
  return ns + "__" + name;
}

tool_call decode_tool_call(const nlohmann::json& item, const std::set<std::string>& client_tools) {
  tool_call call;
  call.call_id = string_or(item, "call_id");
  call.tool_name = string_or(item, "name");
  auto type = string_or(item, "type");
  if (type == "local_shell_call") call.tool_name = "local_shell";
  if (!is_tool_call(item)) return invalid(std::move(call), "not a tool call: type '" + type + "'");
  if (call.call_id.empty() && type != "local_shell_call") {
    return invalid(std::move(call), type + " without a call_id");
  }
  if (auto ns = string_or(item, "namespace"); type == "function_call" && !ns.empty()) {
    // A function of a namespace tool (an MCP server's): only one offered.
    auto flat = flat_call_name(ns, call.tool_name);
    if (!client_tools.count(flat)) {
      call.kind = call_kind::unknown;
      call.error = unknown_tool_text(ns + call.tool_name);  // as Codex names it
      return call;
    }
    call.tool_name = std::move(flat);
  }
  if (type == "function_call") return from_function_call(std::move(call), item, client_tools);
  if (type == "custom_tool_call") return from_custom_call(std::move(call), item);
  return from_local_shell(std::move(call), item);
}

nlohmann::json tool_output_item(const tool_call& call, std::string output) {
  return tool_output_item(call.output, call.call_id, std::move(output));
}

nlohmann::json tool_output_item(output_type type, std::string call_id, std::string output) {
  const char* name = type == output_type::custom_tool_call_output ? "custom_tool_call_output"
                                                                   : "function_call_output";
  return {{"type", name}, {"call_id", std::move(call_id)}, {"output", std::move(output)}};
}

nlohmann::json tool_content_output_item(const tool_call& call, nlohmann::json content) {
  const char* name = call.output == output_type::custom_tool_call_output ? "custom_tool_call_output"
                                                                         : "function_call_output";
  return {{"type", name}, {"call_id", call.call_id}, {"output", std::move(content)}};
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) {
    if (!out.empty()) out += ' ';
    if (safe_unquoted(arg)) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) {
      if (c == '\'') {
        out += "'\\''";  // close the quote, an escaped quote, reopen
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

}  // namespace parley::wire
