#include "actors/mcp/elicitation.hpp"

#include <cstdint>
#include <initializer_list>
#include <set>

namespace parley::mcp {

elicitation_route route_elicitation(const std::vector<call_owner>& in_flight) {
  std::set<std::string> threads;
  for (const auto& c : in_flight) threads.insert(c.thread_id);
  elicitation_route r;
  if (threads.empty()) {
    r.why_not = "no tools/call of this server is in flight, so no thread asked";
    return r;
  }
  if (threads.size() > 1) {
    r.why_not = "tools/call of " + std::to_string(threads.size())
                + " threads are in flight, so parley cannot tell which one asked";
    return r;
  }
  call_owner owner{*threads.begin(), in_flight.front().turn_id};
  for (const auto& c : in_flight)
    if (c.turn_id != owner.turn_id) owner.turn_id.clear();  // two turns (or none): turnId null
  r.owner = std::move(owner);
  return r;
}

namespace {

bool optional_string(const json& p, const char* key) {
  auto i = p.find(key);
  return i == p.end() || i->is_null() || i->is_string();
}

bool optional_count(const json& p, const char* key) {
  auto i = p.find(key);
  return i == p.end() || i->is_null() || i->is_number_unsigned()
         || (i->is_number_integer() && i->get<int64_t>() >= 0);
}

bool optional_number(const json& p, const char* key) {
  auto i = p.find(key);
  return i == p.end() || i->is_null() || i->is_number();
}

bool string_list(const json& v) {
  if (!v.is_array()) return false;
  for (const auto& s : v)
    if (!s.is_string()) return false;
  return true;
}

/// [{const, title}] (a titled enum's options).
bool const_options(const json& v) {
  if (!v.is_array()) return false;
  for (const auto& o : v) {
    if (!o.is_object() || o.size() != 2 || !o.value("const", json()).is_string()
        || !o.value("title", json()).is_string())
      return false;
  }
  return true;
}

/// A key outside `allowed`, or "".
std::string unknown_key(const json& p, std::initializer_list<const char*> allowed) {
  for (auto it = p.begin(); it != p.end(); ++it) {
    bool known = false;
    for (auto a : allowed) known = known || it.key() == a;
    if (!known) return it.key();
  }
  return {};
}

/// One of the form's fields, against Codex 0.169's McpElicitationPrimitiveSchema
/// (every variant closed: no key beyond those listed), or "".
std::string field_problem(const json& p) {
  if (!p.is_object()) return "is not an object";
  auto type = p.value("type", json());
  if (!type.is_string()) return "has no string `type`";
  if (!optional_string(p, "title") || !optional_string(p, "description"))
    return "has a title or description that is not a string";
  std::string extra;
  if (type == "string") {
    if (!optional_string(p, "default")) return "has a default that is not a string";
    if (p.contains("oneOf")) {
      if (!const_options(p["oneOf"])) return "has a oneOf that is not a list of {const, title}";
      extra = unknown_key(p, {"type", "title", "description", "default", "oneOf"});
    } else if (p.contains("enum")) {
      if (!string_list(p["enum"])) return "has an enum that is not a list of strings";
      if (auto n = p.find("enumNames"); n != p.end() && !n->is_null() && !string_list(*n))
        return "has enumNames that are not a list of strings";
      extra = unknown_key(p, {"type", "title", "description", "default", "enum", "enumNames"});
    } else {
      auto format = p.value("format", json());
      if (!format.is_null() && format != "email" && format != "uri" && format != "date"
          && format != "date-time")
        return "has a format other than email, uri, date or date-time";
      if (!optional_count(p, "minLength") || !optional_count(p, "maxLength"))
        return "has a minLength or maxLength that is not a count";
      extra = unknown_key(p, {"type", "title", "description", "default", "format", "minLength",
                              "maxLength"});
    }
  } else if (type == "number" || type == "integer") {
    if (!optional_number(p, "default") || !optional_number(p, "minimum")
        || !optional_number(p, "maximum"))
      return "has a default, minimum or maximum that is not a number";
    extra = unknown_key(p, {"type", "title", "description", "default", "minimum", "maximum"});
  } else if (type == "boolean") {
    if (auto d = p.find("default"); d != p.end() && !d->is_null() && !d->is_boolean())
      return "has a default that is not a boolean";
    extra = unknown_key(p, {"type", "title", "description", "default"});
  } else if (type == "array") {
    auto items = p.value("items", json());
    bool untitled = items.is_object() && items.size() == 2 && items.value("type", json()) == "string"
                    && string_list(items.value("enum", json()));
    bool titled = items.is_object() && items.size() == 1 && const_options(items.value("anyOf", json()));
    if (!untitled && !titled)
      return "is an array whose items are neither {type: string, enum} nor {anyOf: [{const, title}]}";
    if (auto d = p.find("default"); d != p.end() && !d->is_null() && !string_list(*d))
      return "has a default that is not a list of strings";
    if (!optional_count(p, "minItems") || !optional_count(p, "maxItems"))
      return "has a minItems or maxItems that is not a count";
    extra = unknown_key(p, {"type", "title", "description", "default", "items", "minItems",
                            "maxItems"});
  } else {
    return "has type `" + type.get<std::string>()
           + "`, not a primitive (string, number, integer, boolean, array)";
  }
  if (!extra.empty()) return "has a key parley does not know: `" + extra + "`";
  return {};
}

}  // namespace

std::string elicitation_problem(const json& params) {
  if (!params.is_object()) return "params is not an object";
  auto mode = params.value("mode", json("form"));
  if (!mode.is_string()) return "`mode` is not a string";
  if (mode != "form" && mode != "url")
    return "mode `" + mode.get<std::string>()
           + "` is not offered (parley declared form and url modes)";
  auto message = params.find("message");
  if (message == params.end() || !message->is_string()) return "`message` is not a string";
  if (mode == "url") {
    // Out of band: the client shows the URL, the user goes there; what
    // they enter never passes through parley.
    auto url = params.find("url");
    if (url == params.end() || !url->is_string() || url->get<std::string>().empty())
      return "`url` is not a non-empty string";
    auto id = params.find("elicitationId");
    if (id == params.end() || !id->is_string()) return "`elicitationId` is not a string";
    return {};
  }
  auto schema = params.find("requestedSchema");
  if (schema == params.end() || !schema->is_object()) return "`requestedSchema` is not an object";
  if (schema->value("type", json()) != "object") return "requestedSchema.type is not \"object\"";
  auto props = schema->find("properties");
  if (props == schema->end() || !props->is_object())
    return "requestedSchema.properties is not an object";
  for (auto it = props->begin(); it != props->end(); ++it)
    if (auto problem = field_problem(it.value()); !problem.empty())
      return "requestedSchema.properties." + it.key() + " " + problem;
  if (auto req = schema->find("required"); req != schema->end() && !req->is_null()
                                           && !string_list(*req))
    return "requestedSchema.required is not a list of strings";
  if (!optional_string(*schema, "$schema")) return "requestedSchema.$schema is not a string";
  if (auto extra = unknown_key(*schema, {"$schema", "type", "properties", "required"}); !extra.empty())
    return "requestedSchema has a key parley does not know: `" + extra + "`";
  return {};
}

bool is_url_mode(const json& params) {
  return params.is_object() && params.value("mode", json("form")) == "url";
}

json elicitation_request_params(const std::string& server, const call_owner& owner,
                                const json& params) {
  if (is_url_mode(params)) {
    auto meta = params.value("_meta", json());
    return {{"threadId", owner.thread_id},
            {"turnId", owner.turn_id.empty() ? json() : json(owner.turn_id)},
            {"serverName", server},
            {"mode", "url"},
            {"_meta", meta},
            {"message", params.at("message")},
            {"url", params.at("url")},
            {"elicitationId", params.at("elicitationId")}};
  }
  // `_meta` is there in either mode, null when the server sent none, as
  // Codex 0.169 sends it.
  return {{"threadId", owner.thread_id},
          {"turnId", owner.turn_id.empty() ? json() : json(owner.turn_id)},
          {"serverName", server},
          {"mode", "form"},
          {"_meta", params.value("_meta", json())},
          {"message", params.at("message")},
          {"requestedSchema", params.at("requestedSchema")}};
}

json elicit_result(const std::string& action) { return {{"action", action}}; }

json elicit_result_of_answer(const json& answer, bool url_mode) {
  json out = answer;
  if (url_mode && out.is_object()) out.erase("content");
  return out;
}

}  // namespace parley::mcp
