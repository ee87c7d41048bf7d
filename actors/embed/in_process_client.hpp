#pragma once
// A connection for hosts that embed parley: typed calls in, typed events and
// approval asks out, no JSON and no pipes. The host answers approvals from
// its own code, now or later, from any thread.

#include <caf/expected.hpp>
#include <chrono>
#include <memory>

#include "actors/core/interfaces.hpp"
#include "actors/runtime/runtime.hpp"

namespace parley {

/// The in-process connection's actor: a client_actor that also takes the
/// host's answers.
using in_process_actor = client_actor::extend<
    // The host's decision for an ask (the first answer counts).
    caf::reacts_to<atom::answer, uint64_t, protocol::approval_decision>,
    // The host disconnects: pending asks fail as transport_closed.
    caf::reacts_to<atom::close>>;

/// Answers one ask. Copyable; calling it more than once has no effect.
class approval_reply {
 public:
  approval_reply(in_process_actor client, uint64_t key) : client_(std::move(client)), key_(key) {}
  void operator()(protocol::approval_decision decision) const;
  uint64_t key() const { return key_; }

 private:
  in_process_actor client_;
  uint64_t key_;
};

class in_process_client {
 public:
  /// Receives what the runtime sends this client. Called on runtime worker
  /// threads, one call at a time per client, in each thread's event order.
  class handler {
   public:
    virtual ~handler() = default;
    virtual void on_notification(const protocol::notification& n) = 0;
    /// A decision is needed; answer through `reply` (or never: the approval
    /// times out and fails closed).
    virtual void on_approval(const approval_ask& ask, approval_reply reply) = 0;
    /// The ask was resolved without the host (timeout, interrupt).
    virtual void on_withdrawn(uint64_t /*key*/) {}
  };

  in_process_client(runtime& rt, std::shared_ptr<handler> h);
  /// Disconnects: pending asks resolve as transport_closed.
  ~in_process_client();
  in_process_client(const in_process_client&) = delete;
  in_process_client& operator=(const in_process_client&) = delete;

  caf::expected<protocol::thread_session_response> start_thread(
      protocol::thread_start_params params = {});
  /// Subscribes to a thread (loading it if needed); approvals of it that
  /// wait are asked of this client too.
  caf::expected<protocol::thread_session_response> resume_thread(
      protocol::thread_resume_params params);
  caf::expected<protocol::turn_start_response> start_turn(protocol::turn_start_params params);
  caf::error interrupt_turn(protocol::turn_interrupt_params params);
  /// More input for the running turn (turn/steer).
  caf::expected<protocol::turn_steer_response> steer_turn(protocol::turn_steer_params params);
  caf::expected<protocol::thread_read_response> read_thread(protocol::thread_read_params params);
  caf::expected<runtime_counts> counts();

  in_process_actor handle() const { return actor_; }

 private:
  template <class Result, class... Ts>
  caf::expected<Result> call(Ts&&... xs);

  runtime& rt_;
  in_process_actor actor_;
};

}  // namespace parley
