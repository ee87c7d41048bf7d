#pragma once
// An MCP tool's input schema as the model is offered it (issue 30), in the
// subset of JSON Schema Codex 0.169 sends: `type`, `description`, `enum`,
// `items`, `minItems`, `properties`, `required`, `additionalProperties` and
// `anyOf`; everything else (`$schema`, `default`, `minimum`, `format`, ...)
// is left out. Before that, as Codex does: local `$ref`s are resolved (one that
// refers back into itself becomes a plain schema of its target's kind), a
// `oneOf`/`anyOf`/`allOf` of one variant is that variant, `const` becomes a
// one-value `enum`, a schema `true`/`false` becomes a string, a schema
// without a `type` gets one from its keywords (object, array, string,
// number; else string), and an object gets `properties` and an array
// `items` when they lack them. Pure.

#include <nlohmann/json.hpp>

namespace parley::mcp {

/// `input_schema` (a tool's inputSchema) as the model is offered it.
nlohmann::json model_input_schema(const nlohmann::json& input_schema);

}  // namespace parley::mcp
