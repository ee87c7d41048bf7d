#include "actors/mcp/tool_schema.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace parley::mcp {

using json = nlohmann::json;  // as framing.hpp has it (a unity build may see both)

namespace {

const char* const primitive_types[] = {"string", "number", "boolean", "integer",
                                       "object", "array",  "null"};

bool is_primitive(const json& t) {
  return t.is_string()
         && std::find(std::begin(primitive_types), std::end(primitive_types), t.get<std::string>())
                != std::end(primitive_types);
}

/// The schema's known type names, in order.
std::vector<std::string> types_of(const json& schema) {
  std::vector<std::string> out;
  auto t = schema.find("type");
  if (t == schema.end()) return out;
  if (is_primitive(*t)) out.push_back(t->get<std::string>());
  if (t->is_array())
    for (const auto& each : *t)
      if (is_primitive(each)) out.push_back(each.get<std::string>());
  return out;
}

bool has_type(const std::vector<std::string>& types, const char* name) {
  return std::find(types.begin(), types.end(), name) != types.end();
}

/// `overlay`'s keys that `base` lacks, added to it (a $ref's siblings, a
/// lone variant's surroundings).
void add_missing(json& base, const json& overlay, const char* except) {
  for (auto it = overlay.begin(); it != overlay.end(); ++it)
    if (it.key() != except && it.key() != "$ref" && !base.contains(it.key())) base[it.key()] = *it;
}

/// What a $ref that refers back into itself stands for: a schema of its
/// target's kind.
json cyclic_fallback(const json* target) {
  if (!target || !target->is_object()) return {{"type", "string"}};
  auto types = types_of(*target);
  if (has_type(types, "object") || target->contains("properties") || target->contains("required")
      || target->contains("additionalProperties"))
    return {{"type", "object"}, {"properties", json::object()}};
  if (has_type(types, "array") || target->contains("items") || target->contains("prefixItems"))
    return {{"type", "array"}, {"items", {{"type", "string"}}}};
  for (const char* t : {"number", "integer", "boolean"})
    if (has_type(types, t)) return {{"type", t}};
  return {{"type", "string"}};
}

const json* resolve(const json& root, const std::string& pointer) {
  try {
    const auto& target = root.at(json::json_pointer(pointer));
    return &target;
  } catch (...) {
    return nullptr;
  }
}

/// The keywords the model is sent, each of the type Codex reads it as.
json kept_keywords(const json& schema) {
  json out = json::object();
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    const auto& k = it.key();
    const auto& v = *it;
    bool keep = (k == "type" && (v.is_string() || v.is_array()))
                || (k == "description" && v.is_string()) || (k == "enum" && v.is_array())
                || (k == "items" && v.is_object()) || (k == "properties" && v.is_object())
                || (k == "required" && v.is_array()
                    && std::all_of(v.begin(), v.end(), [](const json& r) { return r.is_string(); }))
                || (k == "additionalProperties" && (v.is_boolean() || v.is_object()))
                || (k == "anyOf" && v.is_array())
                || (k == "minItems" && v.is_number_unsigned());
    if (keep) out[k] = v;
  }
  return out;
}

json sanitized(json value, const json& root, std::vector<std::string>& refs) {
  if (value.is_boolean()) return {{"type", "string"}};
  if (value.is_array()) {
    for (auto& each : value) each = sanitized(std::move(each), root, refs);
    return value;
  }
  if (!value.is_object()) return value;
  auto depth = refs.size();
  if (auto r = value.find("$ref"); r != value.end() && r->is_string() && r->get<std::string>().rfind('#', 0) == 0) {
    auto pointer = r->get<std::string>().substr(1);
    const json* target = resolve(root, pointer);
    if (std::find(refs.begin(), refs.end(), pointer) != refs.end()) {
      auto fallback = cyclic_fallback(target);
      add_missing(fallback, value, "$ref");
      return sanitized(std::move(fallback), root, refs);
    }
    if (target) {
      refs.push_back(pointer);
      json replacement = *target;
      if (replacement.is_object()) add_missing(replacement, value, "$ref");
      auto out = sanitized(std::move(replacement), root, refs);
      refs.resize(depth);
      return out;
    }
  }
  for (const char* combiner : {"oneOf", "anyOf", "allOf"}) {
    auto c = value.find(combiner);
    if (c == value.end() || !c->is_array() || c->size() != 1) continue;
    json replacement = (*c)[0];
    if (replacement.is_object()) add_missing(replacement, value, combiner);
    return sanitized(std::move(replacement), root, refs);
  }
  if (auto p = value.find("properties"); p != value.end() && p->is_object())
    for (auto& each : *p) each = sanitized(std::move(each), root, refs);
  if (auto i = value.find("items"); i != value.end()) *i = sanitized(std::move(*i), root, refs);
  if (auto a = value.find("additionalProperties"); a != value.end() && !a->is_boolean())
    *a = sanitized(std::move(*a), root, refs);
  if (auto a = value.find("anyOf"); a != value.end()) *a = sanitized(std::move(*a), root, refs);
  if (auto c = value.find("const"); c != value.end()) {
    value["enum"] = json::array({*c});
    value.erase("const");
  }
  auto types = types_of(value);
  if (types.empty() && value.contains("anyOf")) return kept_keywords(value);
  if (types.empty()) {
    if (value.contains("properties") || value.contains("required")
        || value.contains("additionalProperties"))
      types.push_back("object");
    else if (value.contains("items") || value.contains("prefixItems"))
      types.push_back("array");
    else if (value.contains("enum") || value.contains("format"))
      types.push_back("string");
    else if (value.contains("minimum") || value.contains("maximum")
             || value.contains("exclusiveMinimum") || value.contains("exclusiveMaximum")
             || value.contains("multipleOf"))
      types.push_back("number");
    else
      types.push_back("string");
  }
  value["type"] = types.size() == 1 ? json(types[0]) : json(types);
  if (has_type(types, "object") && !value.contains("properties")) value["properties"] = json::object();
  if (has_type(types, "array") && !value.contains("items")) value["items"] = {{"type", "string"}};
  refs.resize(depth);
  return kept_keywords(value);
}

}  // namespace

nlohmann::json model_input_schema(const nlohmann::json& input_schema) {
  std::vector<std::string> refs;
  return sanitized(input_schema, input_schema, refs);
}

}  // namespace parley::mcp
