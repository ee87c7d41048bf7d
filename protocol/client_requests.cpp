#include "protocol/client_requests.hpp"

#include <filesystem>
#include <set>

namespace parley::protocol {

namespace client_request_codec {

const json& field(const json& obj, const char* name, const char* where) {
  auto i = obj.find(name);
  if (i == obj.end() || i->is_null())
    throw decode_error(std::string{"missing field `"} + name + "` in " + where);
  return *i;
}

std::string string_field(const json& obj, const char* name, const char* where) {
  const auto& v = field(obj, name, where);
  if (!v.is_string()) throw_invalid_type(v, "a string");
  return v.get<std::string>();
}

void require_object(const json& j, const char* what) {
  if (!j.is_object()) throw decode_error(std::string{what} + " must be an object, not " + describe_value(j));
}

std::vector<std::string> string_list(const json& j, const char* what) {
  if (!j.is_array()) throw decode_error(std::string{what} + " must be a list of strings");
  std::vector<std::string> out;
  for (const auto& s : j) {
    if (!s.is_string()) throw decode_error(std::string{what} + " must be a list of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

bool optional_bool(const json& obj, const char* name) {
  auto i = obj.find(name);
  if (i == obj.end() || i->is_null()) return false;
  if (!i->is_boolean()) throw_invalid_type(*i, "a boolean");
  return i->get<bool>();
}

/// `path` absolute (taken against `cwd` when relative) and lexically
/// normal, without a trailing slash.
std::string absolute_normal(const std::string& path, const std::string& cwd) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(cwd) / p;
  auto text = p.lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

/// Whether `path` is `root` or inside it (both absolute and normal).
bool within(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path.compare(0, root.size(), root) == 0
         && (path.size() == root.size() || path[root.size()] == '/');
}

void add_path(json& list, const std::string& path) {
  for (const auto& p : list)
    if (p == path) return;
  list.push_back(path);
}

/// A normalised profile: {"fileSystem"?: {"read"?, "write"?}, "network"?:
/// {"enabled": true}}, only what it grants.
json profile_of(json read, json write, bool network) {
  json out = json::object();
  json fs = json::object();
  if (!read.empty()) fs["read"] = std::move(read);
  if (!write.empty()) fs["write"] = std::move(write);
  if (!fs.empty()) out["fileSystem"] = std::move(fs);
  if (network) out["network"] = {{"enabled", true}};
  return out;
}

/// The paths a normalised profile names for `access` ("read" or "write").
std::vector<std::string> paths_of(const json& profile, const char* access) {
  std::vector<std::string> out;
  auto fs = profile.find("fileSystem");
  if (fs == profile.end() || !fs->is_object()) return out;
  auto list = fs->find(access);
  if (list == fs->end() || !list->is_array()) return out;
  for (const auto& p : *list)
    if (p.is_string()) out.push_back(p.get<std::string>());
  return out;
}

bool network_of(const json& profile) {
  auto net = profile.find("network");
  return net != profile.end() && net->is_object() && net->value("enabled", false) == true;
}

/// A GrantedPermissionProfile's fileSystem, folded to read and write lists
/// (path entries included; globs and special paths name no path: dropped).
void read_granted_files(const json& fs, json& read, json& write) {
  require_object(fs, "fileSystem");
  for (const char* key : {"read", "write"}) {
    auto i = fs.find(key);
    if (i == fs.end() || i->is_null()) continue;
    for (const auto& path : string_list(*i, key)) {
      if (path.empty()) throw decode_error(std::string{"an empty path in fileSystem."} + key);
      add_path(std::string{key} == "read" ? read : write, path);
    }
  }
  auto entries = fs.find("entries");
  if (entries == fs.end() || entries->is_null()) return;
  if (!entries->is_array()) throw_invalid_type(*entries, "a sequence");
  for (const auto& e : *entries) {
    require_object(e, "a fileSystem entry");
    auto access = string_field(e, "access", "a fileSystem entry");
    if (access != "read" && access != "write" && access != "deny")
      throw_unknown_variant(access, {"read", "write", "deny"});
    const auto& where = field(e, "path", "a fileSystem entry");
    require_object(where, "a fileSystem entry's path");
    if (access == "deny" || where.value("type", "") != "path") continue;
    auto path = string_field(where, "path", "a fileSystem entry's path");
    if (path.empty()) throw decode_error("an empty path in fileSystem.entries");
    add_path(access == "read" ? read : write, path);
  }
}

}  // namespace client_request_codec

using namespace client_request_codec;

// -- item/tool/requestUserInput ------------------------------------------------

json checked_questions(const json& arguments) {
  require_object(arguments, "the arguments");
  const auto& qs = field(arguments, "questions", "the arguments");
  if (!qs.is_array() || qs.empty())
    throw decode_error("`questions` must be a non-empty list of questions");
  json out = json::array();
  std::set<std::string> ids;
  for (const auto& q : qs) {
    require_object(q, "a question");
    json n;
    n["id"] = string_field(q, "id", "a question");
    if (n["id"].get_ref<const std::string&>().empty()) throw decode_error("a question's id is empty");
    if (!ids.insert(n["id"].get<std::string>()).second)
      throw decode_error("the question id `" + n["id"].get<std::string>() + "` is given twice");
    n["header"] = string_field(q, "header", "a question");
    n["question"] = string_field(q, "question", "a question");
    n["isOther"] = optional_bool(q, "isOther");
    n["isSecret"] = optional_bool(q, "isSecret");
    auto opts = q.find("options");
    if (opts != q.end() && !opts->is_null()) {
      if (!opts->is_array()) throw decode_error("`options` must be a list of {label, description}");
      json list = json::array();
      for (const auto& o : *opts) {
        require_object(o, "an option");
        list.push_back({{"label", string_field(o, "label", "an option")},
                        {"description", string_field(o, "description", "an option")}});
      }
      n["options"] = std::move(list);
    } else {
      n["options"] = nullptr;
    }
    out.push_back(std::move(n));
  }
  return out;
}

json user_input_params(const std::string& thread_id, const std::string& turn_id,
                       const std::string& item_id, const json& questions) {
  return {{"threadId", thread_id},
          {"turnId", turn_id},
          {"itemId", item_id},
          {"questions", questions},
          {"isBlocking", true}};
}

json decode_user_input_answer(const json& result, const json& questions) {
  require_object(result, "the answer");
  const auto& answers = field(result, "answers", "ToolRequestUserInputResponse");
  require_object(answers, "`answers`");
  std::set<std::string> asked;
  for (const auto& q : questions) asked.insert(q.value("id", std::string{}));
  json out = json::object();
  for (auto it = answers.begin(); it != answers.end(); ++it) {
    if (!asked.count(it.key()))
      throw decode_error("an answer to `" + it.key() + "`, which was not asked");
    require_object(it.value(), "an answer");
    const auto& list = field(it.value(), "answers", "ToolRequestUserInputAnswer");
    out[it.key()] = {{"answers", string_list(list, "`answers`")}};
  }
  return {{"answers", std::move(out)}};
}

// -- item/tool/call -----------------------------------------------------------------

namespace client_request_codec {

dynamic_tool function_spec(const json& s, std::optional<std::string> ns) {
  require_object(s, "a dynamic tool");
  auto type = string_field(s, "type", "a dynamic tool");
  if (type != "function") throw_unknown_variant(type, {"function", "namespace"});
  dynamic_tool t;
  t.name = string_field(s, "name", "a dynamic tool");
  if (t.name.empty()) throw decode_error("a dynamic tool's name is empty");
  t.ns = std::move(ns);
  t.description = string_field(s, "description", "a dynamic tool");
  auto schema = s.find("inputSchema");
  if (schema == s.end()) throw decode_error("missing field `inputSchema` in a dynamic tool");
  if (!schema->is_object()) throw decode_error("`inputSchema` of " + t.name + " must be an object");
  t.input_schema = *schema;
  return t;
}

}  // namespace client_request_codec

std::vector<dynamic_tool> decode_dynamic_tools(const json& specs) {
  if (specs.is_null()) return {};
  if (!specs.is_array()) throw_invalid_type(specs, "a sequence");
  std::vector<dynamic_tool> out;
  std::set<std::string> names;
  auto add = [&](dynamic_tool t) {
    auto full = (t.ns ? *t.ns + "." : std::string{}) + t.name;
    if (!names.insert(full).second) throw decode_error("the dynamic tool `" + full + "` is declared twice");
    out.push_back(std::move(t));
  };
  for (const auto& s : specs) {
    require_object(s, "a dynamic tool");
    if (s.value("type", std::string{}) == "namespace") {
      auto ns = string_field(s, "name", "a dynamic tool namespace");
      const auto& tools = field(s, "tools", "a dynamic tool namespace");
      if (!tools.is_array()) throw_invalid_type(tools, "a sequence");
      for (const auto& t : tools) add(function_spec(t, ns));
    } else {
      add(function_spec(s, std::nullopt));
    }
  }
  return out;
}

std::string model_tool_name(const dynamic_tool& t) {
  return t.ns ? *t.ns + "__" + t.name : t.name;
}

json model_function_tool(const dynamic_tool& t) {
  return {{"type", "function"},
          {"name", model_tool_name(t)},
          {"description", t.description},
          {"strict", false},
          {"parameters", t.input_schema}};
}

json model_tool_output(const json& content_items) {
  json out = json::array();
  for (const auto& item : content_items) {
    auto type = item.value("type", std::string{});
    if (type == "inputText")
      out.push_back({{"type", "input_text"}, {"text", item.value("text", std::string{})}});
    else if (type == "inputImage")
      out.push_back({{"type", "input_image"}, {"image_url", item.value("imageUrl", std::string{})}});
    else if (type == "inputAudio")
      out.push_back({{"type", "input_text"},
                     {"text", "[audio: " + item.value("audioUrl", std::string{}) + "]"}});
  }
  return out;
}

json dynamic_tool_call_params(const std::string& thread_id, const std::string& turn_id,
                              const std::string& call_id, const dynamic_tool& tool,
                              const json& arguments) {
  json p = {{"threadId", thread_id}, {"turnId", turn_id}, {"callId", call_id},
            {"tool", tool.name},     {"arguments", arguments}};
  p["namespace"] = tool.ns ? json(*tool.ns) : json(nullptr);
  return p;
}

json decode_dynamic_tool_answer(const json& result) {
  require_object(result, "the answer");
  const auto& items = field(result, "contentItems", "DynamicToolCallResponse");
  if (!items.is_array()) throw_invalid_type(items, "a sequence");
  json out = json::array();
  for (const auto& item : items) {
    require_object(item, "a content item");
    auto type = string_field(item, "type", "a content item");
    if (type == "inputText")
      out.push_back({{"type", type}, {"text", string_field(item, "text", "an inputText item")}});
    else if (type == "inputImage")
      out.push_back({{"type", type}, {"imageUrl", string_field(item, "imageUrl", "an inputImage item")}});
    else if (type == "inputAudio")
      out.push_back({{"type", type}, {"audioUrl", string_field(item, "audioUrl", "an inputAudio item")}});
    else
      throw_unknown_variant(type, {"inputText", "inputImage", "inputAudio"});
  }
  const auto& success = field(result, "success", "DynamicToolCallResponse");
  if (!success.is_boolean()) throw_invalid_type(success, "a boolean");
  return {{"contentItems", std::move(out)}, {"success", success.get<bool>()}};
}

// -- item/permissions/requestApproval ---------------------------------------------

json checked_permission_request(const json& arguments, const std::string& cwd) {
  require_object(arguments, "the arguments");
  for (auto it = arguments.begin(); it != arguments.end(); ++it)
    if (it.key() != "permissions" && it.key() != "reason" && it.key() != "environment_id")
      throw decode_error("unknown field `" + it.key()
                         + "`, expected `permissions`, `reason` or `environment_id`");
  if (auto env = arguments.find("environment_id"); env != arguments.end() && !env->is_null()) {
    if (!env->is_string()) throw_invalid_type(*env, "a string");
    if (*env != "local") throw decode_error("unknown environment `" + env->get<std::string>() + "`");
  }
  const auto& p = field(arguments, "permissions", "the arguments");
  require_object(p, "`permissions`");
  json read = json::array(), write = json::array();
  bool network = false;
  for (auto it = p.begin(); it != p.end(); ++it) {
    if (it.key() != "file_system" && it.key() != "network")
      throw decode_error("unknown field `" + it.key() + "`, expected `network` or `file_system`");
  }
  if (auto fs = p.find("file_system"); fs != p.end() && !fs->is_null()) {
    require_object(*fs, "`file_system`");
    for (auto it = fs->begin(); it != fs->end(); ++it) {
      if (it.key() != "read" && it.key() != "write")
        throw decode_error("unknown field `" + it.key() + "`, expected `read` or `write`");
      if (it->is_null()) continue;
      for (const auto& path : string_list(*it, it.key().c_str())) {
        if (path.empty()) throw decode_error("an empty path in file_system." + it.key());
        add_path(it.key() == "read" ? read : write, absolute_normal(path, cwd));
      }
    }
  }
  if (auto net = p.find("network"); net != p.end() && !net->is_null()) {
    require_object(*net, "`network`");
    for (auto it = net->begin(); it != net->end(); ++it)
      if (it.key() != "enabled") throw decode_error("unknown field `" + it.key() + "`, expected `enabled`");
    network = optional_bool(*net, "enabled");
  }
  if (read.empty() && write.empty() && !network)
    throw decode_error("`permissions` asks for nothing: name file_system read or write paths, or "
                       "network {\"enabled\": true}");
  // The schema's RequestPermissionProfile, as Codex sends it: the legacy
  // read/write lists and the same paths as entries.
  json profile = json::object();
  json entries = json::array();
  for (const auto& path : read) entries.push_back({{"path", {{"type", "path"}, {"path", path}}}, {"access", "read"}});
  for (const auto& path : write) entries.push_back({{"path", {{"type", "path"}, {"path", path}}}, {"access", "write"}});
  if (!entries.empty())
    profile["fileSystem"] = {{"read", read.empty() ? json(nullptr) : read},
                             {"write", write.empty() ? json(nullptr) : write},
                             {"entries", std::move(entries)}};
  else
    profile["fileSystem"] = nullptr;
  profile["network"] = network ? json{{"enabled", true}} : json(nullptr);
  json out = {{"permissions", std::move(profile)}};
  if (auto r = arguments.find("reason"); r != arguments.end() && !r->is_null()) {
    if (!r->is_string()) throw_invalid_type(*r, "a string");
    out["reason"] = *r;
  }
  return out;
}

json permissions_params(const std::string& thread_id, const std::string& turn_id,
                        const std::string& item_id, const std::string& cwd,
                        const json& permissions, const std::optional<std::string>& reason,
                        int64_t started_at_ms) {
  json p = {{"threadId", thread_id}, {"turnId", turn_id},       {"itemId", item_id},
            {"cwd", cwd},            {"permissions", permissions}, {"startedAtMs", started_at_ms}};
  p["reason"] = reason ? json(*reason) : json(nullptr);
  return p;
}

json decode_permissions_answer(const json& result) {
  require_object(result, "the answer");
  const auto& p = field(result, "permissions", "PermissionsRequestApprovalResponse");
  require_object(p, "`permissions`");
  for (auto it = p.begin(); it != p.end(); ++it)
    if (it.key() != "fileSystem" && it.key() != "network")
      throw decode_error("unknown field `" + it.key() + "` in `permissions`, expected `fileSystem` or `network`");
  json read = json::array(), write = json::array();
  if (auto fs = p.find("fileSystem"); fs != p.end() && !fs->is_null()) read_granted_files(*fs, read, write);
  bool network = false;
  if (auto net = p.find("network"); net != p.end() && !net->is_null()) {
    require_object(*net, "network");
    network = optional_bool(*net, "enabled");
  }
  std::string scope = "turn";
  if (auto s = result.find("scope"); s != result.end() && !s->is_null()) {
    if (!s->is_string()) throw_invalid_type(*s, "a string");
    scope = s->get<std::string>();
    if (scope != "turn" && scope != "session") throw_unknown_variant(scope, {"turn", "session"});
  }
  return {{"permissions", profile_of(std::move(read), std::move(write), network)}, {"scope", scope}};
}

json granted_within(const json& asked, const json& answer, const std::string& cwd) {
  auto asked_read = paths_of(asked, "read");
  auto asked_write = paths_of(asked, "write");
  const auto& given = answer.value("permissions", json::object());
  auto inside = [](const std::string& path, const std::vector<std::string>& roots) {
    for (const auto& r : roots)
      if (within(path, r)) return true;
    return false;
  };
  json read = json::array(), write = json::array();
  for (const auto& path : paths_of(given, "write")) {
    auto p = absolute_normal(path, cwd);
    if (inside(p, asked_write)) add_path(write, p);
  }
  for (const auto& path : paths_of(given, "read")) {
    auto p = absolute_normal(path, cwd);
    if (inside(p, asked_read) || inside(p, asked_write)) add_path(read, p);
  }
  bool network = network_of(asked) && network_of(given);
  return {{"permissions", profile_of(std::move(read), std::move(write), network)},
          {"scope", answer.value("scope", std::string{"turn"})}};
}

bool grants_anything(const json& granted) {
  const auto& p = granted.value("permissions", json::object());
  return !paths_of(p, "read").empty() || !paths_of(p, "write").empty() || network_of(p);
}

std::string model_grant_output(const json& granted) {
  const auto& p = granted.value("permissions", json::object());
  json fs = json::object();
  auto read = paths_of(p, "read"), write = paths_of(p, "write");
  if (!read.empty()) fs["read"] = read;
  if (!write.empty()) fs["write"] = write;
  json out = {{"permissions",
               {{"network", network_of(p) ? json{{"enabled", true}} : json(nullptr)},
                {"file_system", fs.empty() ? json(nullptr) : fs}}},
              {"scope", granted.value("scope", std::string{"turn"})}};
  return out.dump();
}

// -- mcpServer/elicitation/request ------------------------------------------------

json decode_elicitation_answer(const json& result) {
  using namespace client_request_codec;
  require_object(result, "the answer");
  auto action = string_field(result, "action", "McpServerElicitationRequestResponse");
  if (action != "accept" && action != "decline" && action != "cancel")
    throw_unknown_variant(action, {"accept", "decline", "cancel"});
  json out = {{"action", action}};
  auto content = result.find("content");
  if (action == "accept" && content != result.end() && !content->is_null()) {
    // MCP's ElicitResult carries the form's values as an object of
    // primitives (or string lists); anything else is no answer.
    require_object(*content, "`content`");
    for (auto it = content->begin(); it != content->end(); ++it) {
      const auto& v = it.value();
      bool ok = v.is_string() || v.is_number() || v.is_boolean();
      if (v.is_array()) {
        ok = true;
        for (const auto& item : v) ok = ok && item.is_string();
      }
      if (!ok)
        throw decode_error("`content." + it.key()
                           + "` must be a string, number, boolean or list of strings, not "
                           + describe_value(v));
    }
    out["content"] = *content;
  }
  // The client's metadata goes to the server with it, as Codex sends it.
  if (auto meta = result.find("_meta"); meta != result.end() && !meta->is_null())
    out["_meta"] = *meta;
  return out;
}

}  // namespace parley::protocol

