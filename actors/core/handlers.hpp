#pragma once
// CAF 0.17's default handlers print to stdout (through aout), which would
// corrupt the protocol stream. Every parley actor routes them to the log.

#include <caf/scheduled_actor.hpp>
#include <caf/to_string.hpp>
#include <exception>
#include <string>

#include "actors/core/log.hpp"

namespace parley {

/// What an exception caught by an actor says (for logs and outcomes).
inline std::string describe_exception(const std::exception_ptr& eptr) {
  try {
    std::rethrow_exception(eptr);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown";
  }
}

template <class Self>
void install_default_handlers(Self* self, const char* name) {
  self->set_default_handler([name](caf::scheduled_actor*, caf::message_view& x) -> caf::result<caf::message> {
    PARLEY_WARN("{} event=unexpected_message message={}", name, caf::to_string(x.content()));
    return caf::sec::unexpected_message;
  });
  self->set_down_handler([name](caf::scheduled_actor*, caf::down_msg& dm) {
    PARLEY_DEBUG("{} event=unhandled_down reason={}", name, caf::to_string(dm.reason));
  });
  self->set_error_handler([name](caf::scheduled_actor*, caf::error& err) {
    PARLEY_WARN("{} event=unhandled_error error={}", name, caf::to_string(err));
  });
  self->set_exception_handler([name](caf::scheduled_actor*, std::exception_ptr& eptr) -> caf::error {
    PARLEY_ERROR("{} event=exception what={}", name, describe_exception(eptr));
    return caf::sec::runtime_error;
  });
}

}  // namespace parley
