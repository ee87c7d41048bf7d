#pragma once
// In-process approval hooks (seed 004): C++ code a host registers through
// runtime_config::hooks to review approvals before any client is asked.
//
// Each review_* call runs on the approval actor's worker thread and must not
// block: answer at once (allow / deny / abstain), or return async() and
// answer later, from any thread, through the decision_handle. An async
// answer that does not come within timeout() is a deny ("approval timeout");
// one that comes later is ignored. A hook that throws denies.

#include <caf/actor_cast.hpp>
#include <caf/weak_intrusive_ptr.hpp>
#include <chrono>
#include <cstdint>
#include <string>

#include "actors/approval/hooks/review.hpp"

namespace parley::hooks {

/// Answers one async review. Copyable, callable from any thread; only the
/// first answer before the deadline counts. It does not keep the approval
/// alive: after the approval ended, answering does nothing.
class decision_handle {
 public:
  decision_handle() = default;
  decision_handle(caf::weak_actor_ptr approval, uint64_t token)
      : approval_(std::move(approval)), token_(token) {}

  void resolve(verdict v) const;
  void allow(std::string why = {}) const { resolve(verdict::allow(std::move(why))); }
  void deny(std::string why) const { resolve(verdict::deny(std::move(why))); }
  void abstain() const { resolve(verdict::abstain()); }

 private:
  caf::weak_actor_ptr approval_;
  uint64_t token_ = 0;
};

/// What a review_* call returns: a verdict now, or "later, through the handle".
struct hook_reply {
  bool async = false;
  verdict now;

  static hook_reply allow(std::string why = {}) { return {false, verdict::allow(std::move(why))}; }
  static hook_reply deny(std::string why) { return {false, verdict::deny(std::move(why))}; }
  static hook_reply abstain() { return {false, verdict::abstain()}; }
  static hook_reply later() { return {true, {}}; }
};

class approval_hook {
 public:
  virtual ~approval_hook() = default;

  /// Shown in the audit log and stats as "hook:<name>".
  virtual std::string name() const = 0;

  /// How long an async answer may take.
  virtual std::chrono::milliseconds timeout() const { return std::chrono::seconds(30); }

  /// Called before the review; may annotate the request (e.g. metadata).
  virtual void prepare(review_request& request) { (void)request; }

  virtual hook_reply review_command(const review_request& request, const decision_handle& handle) {
    (void)request, (void)handle;
    return hook_reply::abstain();
  }
  virtual hook_reply review_file(const review_request& request, const decision_handle& handle) {
    (void)request, (void)handle;
    return hook_reply::abstain();
  }
  virtual hook_reply review_tool(const review_request& request, const decision_handle& handle) {
    (void)request, (void)handle;
    return hook_reply::abstain();
  }
};

}  // namespace parley::hooks
