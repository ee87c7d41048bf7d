#pragma once
// Which records a store must make durable before it acknowledges them
// (`--durability`), the same rule for every store: the local store syncs
// the file, the PostgreSQL store waits for its commit's WAL flush.

#include "actors/core/config.hpp"
#include "actors/core/messages.hpp"

namespace parley::store {

/// Whether `record` is acknowledged only once it would survive the machine
/// crashing: `item` every record; `turn` a turn's end and an action's
/// phases (each must be durable before what it names happens; group commit
/// keeps that cheap); `none` nothing.
bool must_sync(const runtime_config& cfg, const store_record& record);

}  // namespace parley::store
