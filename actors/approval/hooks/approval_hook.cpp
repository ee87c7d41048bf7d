#include "actors/approval/hooks/approval_hook.hpp"

#include <caf/send.hpp>

#include "actors/core/interfaces.hpp"

namespace parley::hooks {

void decision_handle::resolve(verdict v) const {
  auto strong = caf::actor_cast<caf::strong_actor_ptr>(approval_);
  if (!strong) return;  // the approval already ended
  caf::anon_send(caf::actor_cast<approval_actor>(strong), atom::hook_reply::value, token_,
                 std::move(v));
}

}  // namespace parley::hooks
