#include "actors/model/wire/tools.hpp"

#include "actors/model/wire/tool_calls.hpp"

namespace parley::wire {

using json = nlohmann::json;  // at namespace scope: unity builds put compaction.cpp's beside it

namespace {

const char* const exec_command_description =
    "Runs a shell command on the user's machine (with /bin/sh -c, in the conversation's "
    "working directory unless `workdir` says otherwise) and returns its exit code, how long "
    "it took and its output (stdout and stderr together). Depending on the user's approval "
    "policy the user may be asked first; a command they decline is not run and you are told "
    "so. The command cannot be typed into while it runs, so use non-interactive forms "
    "(`git --no-pager`, `-y`). To create or edit files use apply_patch rather than this tool.";

const char* const apply_patch_description =
    "Creates, edits, moves and deletes files by applying a patch in the apply_patch "
    "language. This is a freeform tool: send the patch text itself, not JSON.";

const char* const apply_patch_function_description =
    "Creates, edits, moves and deletes files. `input` is a whole patch in this language:\n"
    "*** Begin Patch\n"
    "*** Add File: <path>        (then every line of the new file, each starting with +)\n"
    "*** Delete File: <path>\n"
    "*** Update File: <path>\n"
    "*** Move to: <new path>     (optional, right after Update File: renames the file)\n"
    "@@ <a line near the change, e.g. the enclosing function; may be left empty>\n"
    "<hunk lines: ' ' unchanged context, '-' removed, '+' added; about 3 context lines "
    "before and after each change>\n"
    "*** End of File             (optional, after a hunk that reaches the end of the file)\n"
    "*** End Patch\n"
    "Paths are relative to the working directory. One patch may hold several file "
    "sections and an Update File section several @@ hunks.";

json exec_command_parameters() {
  json properties = {
      {"cmd",
       {{"type", "string"},
        {"description", "The command line to run, e.g. `ls -la src` or `make test 2>&1 | tail -n 40`."}}},
      {"workdir",
       {{"type", "string"},
        {"description",
         "The directory to run in; a relative path is taken from the working directory. "
         "Leave it out to run in the working directory itself."}}},
      {"justification",
       {{"type", "string"},
        {"description",
         "With sandbox_permissions \"require_escalated\" only: one sentence, shown to the "
         "user, saying why the command must run outside the sandbox."}}},
      {"sandbox_permissions",
       {{"type", "string"},
        {"enum", json::array({"use_default", "require_escalated"})},
        {"description",
         "\"use_default\" (the default) runs the command under the session's sandbox; "
         "\"require_escalated\" asks the user to let it run without the sandbox."}}},
  };
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", json::array({"cmd"})},
          {"additionalProperties", false}};
}

json apply_patch_parameters() {
  return {{"type", "object"},
          {"properties",
           {{"input", {{"type", "string"}, {"description", "The whole patch, *** Begin Patch to *** End Patch."}}}}},
          {"required", json::array({"input"})},
          {"additionalProperties", false}};
}

json function_tool(std::string_view name, const std::string& description, json parameters) {
  return {{"type", "function"},
          {"name", name},
          {"description", description},
          {"strict", false},
          {"parameters", std::move(parameters)}};
}

}  // namespace

const std::string& apply_patch_grammar() {
  // Every line ends in LF, the last one's (after End Patch) optional. A hunk
  // line may be just its marker: an empty line of the file.
  static const std::string grammar = R"lark(start: begin_patch file_section+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

file_section: add_section | delete_section | update_section
add_section: "*** Add File: " LINE_TEXT LF new_line+
new_line: "+" LINE_TEXT? LF
delete_section: "*** Delete File: " LINE_TEXT LF
update_section: "*** Update File: " LINE_TEXT LF rename? hunk+
rename: "*** Move to: " LINE_TEXT LF

hunk: hunk_start hunk_line+ end_of_file?
hunk_start: "@@" LF | "@@ " LINE_TEXT LF
hunk_line: (" " | "-" | "+") LINE_TEXT? LF
end_of_file: "*** End of File" LF

LINE_TEXT: /[^\r\n]+/
%import common.LF
)lark";
  return grammar;
}

nlohmann::json request_user_input_tool() {
  json option = {{"type", "object"},
                 {"properties",
                  {{"label", {{"type", "string"}, {"description", "A short answer the user can pick."}}},
                   {"description",
                    {{"type", "string"}, {"description", "What picking it means, in one sentence."}}}}},
                 {"required", json::array({"label", "description"})},
                 {"additionalProperties", false}};
  json question = {
      {"type", "object"},
      {"properties",
       {{"id", {{"type", "string"}, {"description", "A stable id; the answers are keyed by it."}}},
        {"header", {{"type", "string"}, {"description", "A label of a few words shown above it."}}},
        {"question", {{"type", "string"}, {"description", "The question itself, one sentence."}}},
        {"options", {{"type", "array"}, {"items", std::move(option)},
                     {"description", "Answers to choose from (the user may also write their own)."}}}}},
      {"required", json::array({"id", "header", "question"})},
      {"additionalProperties", false}};
  json parameters = {{"type", "object"},
                     {"properties",
                      {{"questions", {{"type", "array"}, {"items", std::move(question)},
                                      {"description", "One to three short questions."}}}}},
                     {"required", json::array({"questions"})},
                     {"additionalProperties", false}};
  return function_tool(request_user_input_tool_name,
                       "Asks the user one to three short questions and waits for the answers. "
                       "Use it only when you cannot go on without the user's choice; say first "
                       "why you ask. The output is the answers as JSON "
                       "({\"answers\": {id: {\"answers\": [...]}}}), or why there are none.",
                       std::move(parameters));
}

nlohmann::json request_permissions_tool() {
  auto paths = [](const char* what) {
    return json{{"type", "array"}, {"items", {{"type", "string"}}}, {"description", what}};
  };
  json file_system = {
      {"type", "object"},
      {"properties",
       {{"read", paths("Absolute paths (folders or files) the sandbox should let you read.")},
        {"write", paths("Absolute paths (folders) the sandbox should let you write.")}}},
      {"additionalProperties", false}};
  json network = {{"type", "object"},
                  {"properties",
                   {{"enabled", {{"type", "boolean"}, {"description", "true asks for network access."}}}}},
                  {"additionalProperties", false}};
  json parameters = {
      {"type", "object"},
      {"properties",
       {{"permissions",
         {{"type", "object"},
          {"properties", {{"file_system", std::move(file_system)}, {"network", std::move(network)}}},
          {"additionalProperties", false},
          {"description", "Only what the next commands need: paths, network, or both."}}},
        {"reason", {{"type", "string"}, {"description", "One sentence for the user: why."}}}}},
      {"required", json::array({"permissions"})},
      {"additionalProperties", false}};
  return function_tool(request_permissions_tool_name,
                       "Asks the user to widen your sandbox: paths to read or write outside the "
                       "workspace, or network access. The user may grant all of it, part of it "
                       "or nothing, for this turn or the rest of the session; your later commands "
                       "run with what was granted. The output is the grant as JSON "
                       "({\"permissions\": {...}, \"scope\": \"turn\"|\"session\"}).",
                       std::move(parameters));
}

namespace {

/// parley's own tools for `flavour`, in their order.
json builtin_tools(tool_flavour flavour) {
  json tools = json::array();
  tools.push_back(function_tool(exec_command_tool, exec_command_description,
                                exec_command_parameters()));
  if (flavour == tool_flavour::function_only) {
    tools.push_back(function_tool(apply_patch_tool, apply_patch_function_description,
                                  apply_patch_parameters()));
  } else {
    tools.push_back({{"type", "custom"},
                     {"name", apply_patch_tool},
                     {"description", apply_patch_description},
                     {"format",
                      {{"type", "grammar"}, {"syntax", "lark"}, {"definition", apply_patch_grammar()}}}});
  }
  return tools;
}

/// Calls `put` with each tool `extra` adds, as sent.
template <typename Put>
void for_each_extra_tool(tool_flavour flavour, const std::vector<json>& extra, Put put) {
  for (const auto& tool : extra) {
    // Servers that take only functions get a namespace tool's functions
    // flat, under the names a call of them is known by.
    if (flavour == tool_flavour::function_only && tool.value("type", "") == "namespace") {
      for (auto f : tool.value("tools", json::array())) {
        f["name"] = flat_call_name(tool.value("name", ""), f.value("name", ""));
        put(std::move(f));
      }
      continue;
    }
    put(tool);
  }
}

}  // namespace

nlohmann::json responses_tools(tool_flavour flavour, const std::vector<nlohmann::json>& extra) {
  json tools = builtin_tools(flavour);
  for_each_extra_tool(flavour, extra,
                      [&](auto&& tool) { tools.push_back(std::forward<decltype(tool)>(tool)); });
  return tools;
}

std::string responses_tools_text(tool_flavour flavour, const std::vector<nlohmann::json>& extra) {
  auto dumped = [](tool_flavour f) {
    auto text = builtin_tools(f).dump(-1, ' ', false, json::error_handler_t::replace);
    text.pop_back();  // the "]": extra tools follow
    return text;
  };
  static const std::string responses_text = dumped(tool_flavour::responses);
  static const std::string function_only_text = dumped(tool_flavour::function_only);
  std::string out = flavour == tool_flavour::function_only ? function_only_text : responses_text;
  for_each_extra_tool(flavour, extra, [&](const json& tool) {
    out += ',';
    out += tool.dump(-1, ' ', false, json::error_handler_t::replace);
  });
  out += ']';
  return out;
}

nlohmann::json chat_tools(const std::vector<nlohmann::json>& extra) {
  json tools = json::array();
  for (auto& tool : responses_tools(tool_flavour::function_only, extra)) {
    json function = {{"name", tool["name"]},
                     {"description", tool["description"]},
                     {"parameters", tool["parameters"]}};
    tools.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return tools;
}

}  // namespace parley::wire
