#pragma once
// Standard base64 (RFC 4648, with padding), as fs/readFile, fs/writeFile and
// command/exec carry bytes.

#include <optional>
#include <string>
#include <string_view>

namespace parley::protocol {

std::string base64_encode(std::string_view bytes);

/// The bytes, or nullopt with `why` saying what is wrong (the first bad
/// symbol and its offset, or a bad length).
std::optional<std::string> base64_decode(std::string_view text, std::string& why);

}  // namespace parley::protocol
