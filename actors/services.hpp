#pragma once
// What every conversation and turn of one runtime shares.

#include <atomic>
#include <memory>

#include "actors/config.hpp"
#include "actors/interfaces.hpp"
#include "actors/process_reactor.hpp"

namespace parley {

struct runtime_services {
  std::shared_ptr<const runtime_config> config;
  store_actor store;
  model_actor model;
  std::shared_ptr<process_reactor> reactor;
};

/// A process-unique key for an approval ask.
uint64_t next_ask_key();

}  // namespace parley
