#pragma once
// Identifiers and clocks used across the protocol.

#include <cstdint>
#include <string>

namespace parley::protocol {

/// A fresh UUIDv7 (time-ordered, as Codex uses for thread and turn ids).
std::string new_uuid_v7();

/// Whether `s` is a UUID in canonical 8-4-4-4-12 hex form.
bool is_uuid(const std::string& s);

/// A model-style tool call id ("call_" + 24 hex digits).
std::string new_call_id();

/// Wall-clock time in unix milliseconds / seconds.
int64_t unix_ms();
int64_t unix_seconds();

}  // namespace parley::protocol
