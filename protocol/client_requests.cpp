#include "protocol/client_requests.hpp"

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

/// AdditionalFileSystemPermissions and AdditionalNetworkPermissions, kept to
/// what parley applies: `read` and `write` path lists, `network.enabled`.
json checked_profile(const json& p, const char* what) {
  require_object(p, what);
  json out = json::object();
  for (auto it = p.begin(); it != p.end(); ++it) {
    if (it.key() != "fileSystem" && it.key() != "network")
      throw decode_error(std::string{"unknown field `"} + it.key() + "` in " + what
                         + ", expected `fileSystem` or `network`");
  }
  if (auto fs = p.find("fileSystem"); fs != p.end() && !fs->is_null()) {
    require_object(*fs, "fileSystem");
    json f = json::object();
    for (const char* key : {"read", "write"}) {
      auto i = fs->find(key);
      if (i == fs->end() || i->is_null()) continue;
      auto paths = string_list(*i, key);
      for (const auto& path : paths)
        if (path.empty()) throw decode_error(std::string{"an empty path in fileSystem."} + key);
      if (!paths.empty()) f[key] = paths;
    }
    if (!f.empty()) out["fileSystem"] = std::move(f);
  }
  if (auto net = p.find("network"); net != p.end() && !net->is_null()) {
    require_object(*net, "network");
    if (optional_bool(*net, "enabled")) out["network"] = {{"enabled", true}};
  }
  return out;
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

json checked_permission_request(const json& arguments) {
  require_object(arguments, "the arguments");
  auto profile = checked_profile(field(arguments, "permissions", "the arguments"), "`permissions`");
  if (profile.empty())
    throw decode_error("`permissions` asks for nothing: name fileSystem read/write paths or "
                       "network {enabled: true}");
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
  auto granted = checked_profile(field(result, "permissions", "PermissionsRequestApprovalResponse"),
                                 "`permissions`");
  std::string scope = "turn";
  if (auto s = result.find("scope"); s != result.end() && !s->is_null()) {
    if (!s->is_string()) throw_invalid_type(*s, "a string");
    scope = s->get<std::string>();
    if (scope != "turn" && scope != "session") throw_unknown_variant(scope, {"turn", "session"});
  }
  return {{"permissions", std::move(granted)}, {"scope", scope}};
}

}  // namespace parley::protocol
