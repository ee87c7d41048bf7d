#include "actors/runtime/lazy_clock_scheduler.hpp"

#include <caf/detail/thread_safe_actor_clock.hpp>
#include <caf/policy/unprofiled.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduler/coordinator.hpp>

#include <pthread.h>
#include <thread>

#include "actors/runtime/express_queue.hpp"

namespace parley {

namespace {

/// CAF's sharing policy (one queue every worker takes from) with an express
/// lane: a job queued from a thread marked express (the WebSocket listener's
/// I/O thread, waking a connection with its client's frame) is taken before
/// the ordinary jobs, within express_queue's burst. What workers queue, and
/// what any unmarked thread queues, stays first in, first out.
class express_sharing : public caf::policy::unprofiled {
 public:
  struct coordinator_data {
    explicit coordinator_data(caf::scheduler::abstract_coordinator*) {}
    express_queue<caf::resumable*> queue;
  };

  struct worker_data {
    explicit worker_data(caf::scheduler::abstract_coordinator*) {}
  };

  template <class Coordinator>
  void central_enqueue(Coordinator* self, caf::resumable* job) {
    d(self).queue.push(job, enqueues_express());
  }

  template <class Worker>
  void external_enqueue(Worker* self, caf::resumable* job) {
    d(self->parent()).queue.push(job, enqueues_express());
  }

  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    d(self->parent()).queue.push(job, false);
  }

  template <class Worker>
  void resume_job_later(Worker* self, caf::resumable* job) {
    d(self->parent()).queue.push(job, false);
  }

  template <class Worker>
  caf::resumable* dequeue(Worker* self) {
    return d(self->parent()).queue.pop();
  }

  template <class Worker, class UnaryFunction>
  void foreach_resumable(Worker*, UnaryFunction) {}

  template <class Coordinator, class UnaryFunction>
  void foreach_central_resumable(Coordinator* self, UnaryFunction f) {
    d(self).queue.drain(f);
  }
};

/// CAF's coordinator declares its clock as a `thread_safe_actor_clock`, so
/// the clock it hands out must be one: this one passes every call on to the
/// lazy clock. (Its own queue and the coordinator's "caf.clock" thread stay
/// idle: nothing is ever pushed to them.)
class forwarding_clock final : public caf::detail::thread_safe_actor_clock {
 public:
  explicit forwarding_clock(lazy_actor_clock& to) : to_(to) {}

  void set_ordinary_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                            uint64_t id) override {
    to_.set_ordinary_timeout(t, self, type, id);
  }
  void set_multi_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                         uint64_t id) override {
    to_.set_multi_timeout(t, self, type, id);
  }
  void set_request_timeout(time_point t, caf::abstract_actor* self, caf::message_id id) override {
    to_.set_request_timeout(t, self, id);
  }
  void cancel_ordinary_timeout(caf::abstract_actor* self, caf::atom_value type) override {
    to_.cancel_ordinary_timeout(self, type);
  }
  void cancel_request_timeout(caf::abstract_actor* self, caf::message_id id) override {
    to_.cancel_request_timeout(self, id);
  }
  void cancel_timeouts(caf::abstract_actor* self) override { to_.cancel_timeouts(self); }
  void schedule_message(time_point t, caf::strong_actor_ptr receiver,
                        caf::mailbox_element_ptr content) override {
    to_.schedule_message(t, std::move(receiver), std::move(content));
  }
  void schedule_message(time_point t, caf::group target, caf::strong_actor_ptr sender,
                        caf::message content) override {
    to_.schedule_message(t, std::move(target), std::move(sender), std::move(content));
  }
  void cancel_all() override { to_.cancel_all(); }

 private:
  lazy_actor_clock& to_;
};

/// CAF's coordinator (its workers, its start and stop) on the sharing policy
/// with an express lane, whose clock is the lazy one; the lazy clock's thread starts before the
/// workers and stops after them, as CAF's clock thread does.
class lazy_clock_coordinator final
    : public caf::scheduler::coordinator<express_sharing> {
 public:
  using super = caf::scheduler::coordinator<express_sharing>;

  lazy_clock_coordinator(caf::actor_system& sys, caf::actor_clock::duration_type longest_sleep)
      : super(sys), clock_(longest_sleep), forwarding_(clock_) {}

  caf::detail::thread_safe_actor_clock& clock() noexcept override { return forwarding_; }

  lazy_actor_clock& lazy_clock() { return clock_; }

 protected:
  void start() override {
    clock_thread_ = std::thread{[this] {
      pthread_setname_np(pthread_self(), "parley.clock");
      system().thread_started();
      clock_.run_dispatch_loop();
      system().thread_terminates();
    }};
    super::start();
  }

  void stop() override {
    super::stop();
    clock_.cancel_dispatch_loop();
    clock_thread_.join();
  }

 private:
  lazy_actor_clock clock_;
  forwarding_clock forwarding_;
  std::thread clock_thread_;
};

}  // namespace

void use_lazy_clock_scheduler(caf::actor_system_config& cfg, size_t threads,
                              caf::actor_clock::duration_type longest_sleep) {
  // The policy setting stays for anything that reads it; the module given
  // here is the scheduler the system runs (CAF makes its own only when none
  // was given).
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", threads);
  cfg.module_factories.push_back(
      [longest_sleep](caf::actor_system& sys) -> caf::actor_system::module* {
        return new lazy_clock_coordinator(sys, longest_sleep);
      });
}

lazy_actor_clock* lazy_clock_of(caf::actor_system& sys) {
  auto* coordinator = dynamic_cast<lazy_clock_coordinator*>(&sys.scheduler());
  return coordinator ? &coordinator->lazy_clock() : nullptr;
}

}  // namespace parley
