#pragma once
// The client methods of Codex 0.169 that parley does not offer, and why.
// They belong to services a self-hosted runtime has no part in (ChatGPT
// accounts and billing, plugins and their marketplace, ChatGPT apps,
// feedback to OpenAI, Windows, importing other agents' configuration).
// Each answers `not_offered_code` with a message naming the method and the
// reason; a method that is merely not built yet is not listed here and
// answers -32601 (method not found).

#include <optional>
#include <string>
#include <string_view>

namespace parley::rpc {

/// The JSON-RPC error code of a method parley does not offer. Stable: a
/// client may tell "never here" (this) from "not here yet" (-32601).
constexpr int not_offered_code = -32002;

/// Why parley does not offer `method`, or nullopt if it is not one of those.
std::optional<std::string_view> not_offered_reason(std::string_view method);

/// The error message for a method parley does not offer.
std::string not_offered_message(std::string_view method, std::string_view reason);

}  // namespace parley::rpc
