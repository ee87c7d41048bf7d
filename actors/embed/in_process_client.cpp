#include "actors/embed/in_process_client.hpp"

#include <caf/scoped_actor.hpp>
#include <unordered_map>

#include "actors/core/handlers.hpp"
#include "actors/core/telemetry.hpp"

namespace parley {

namespace {

constexpr auto call_timeout = std::chrono::seconds(60);

struct in_process_state {
  static inline const char* name = "in_process_client";
  std::shared_ptr<in_process_client::handler> host;
  thread_manager_actor threads;
  std::shared_ptr<runtime_telemetry> telemetry;
  struct pending {
    caf::typed_response_promise<protocol::approval_decision> promise;
    counted live;  // the runtime's pending_requests
  };
  std::unordered_map<uint64_t, std::unique_ptr<pending>> asks;
};

in_process_actor::behavior_type in_process_connection(
    in_process_actor::stateful_pointer<in_process_state> self,
    std::shared_ptr<in_process_client::handler> host, thread_manager_actor threads,
    std::shared_ptr<runtime_telemetry> telemetry) {
  install_default_handlers(self, "in_process_client");
  self->state.host = std::move(host);
  self->state.threads = std::move(threads);
  self->state.telemetry = std::move(telemetry);
  return {
      [self](atom::event, const notification_ptr& n) { self->state.host->on_notification(n->body); },
      [self](atom::event, const notification_batch& batch) {
        for (const auto& n : batch) self->state.host->on_notification(n->body);
      },
      [self](atom::ask, const approval_ask& ask) -> caf::result<protocol::approval_decision> {
        auto rp = self->make_response_promise<protocol::approval_decision>();
        auto entry = std::make_unique<in_process_state::pending>();
        entry->live = count_live(self->state.telemetry, &live_counters::pending_requests);
        entry->promise = rp;
        self->state.asks.emplace(ask.key, std::move(entry));
        self->state.host->on_approval(ask, approval_reply{caf::actor_cast<in_process_actor>(self),
                                                          ask.key});
        return rp;
      },
      [self](atom::withdraw, uint64_t key) {
        auto i = self->state.asks.find(key);
        if (i == self->state.asks.end()) return;
        i->second->promise.deliver(make_error(errc::withdrawn, "approval withdrawn"));
        self->state.asks.erase(i);
        self->state.host->on_withdrawn(key);
      },
      [self](atom::answer, uint64_t key, protocol::approval_decision& d) {
        auto i = self->state.asks.find(key);
        if (i == self->state.asks.end()) {
          PARLEY_INFO("in_process_client event=late_answer key={} ignored", key);
          return;
        }
        i->second->promise.deliver(std::move(d));
        self->state.asks.erase(i);
      },
      [self](atom::close) {
        for (auto& [key, p] : self->state.asks)
          p->promise.deliver(make_error(errc::transport_closed, "client disconnected"));
        self->state.asks.clear();
        self->send(self->state.threads, atom::gone::value,
                   caf::actor_cast<client_actor>(self));
        self->quit();
      },
  };
}

}  // namespace

void approval_reply::operator()(protocol::approval_decision decision) const {
  caf::anon_send(client_, atom::answer::value, key_, std::move(decision));
}

in_process_client::in_process_client(runtime& rt, std::shared_ptr<handler> h) : rt_(rt) {
  actor_ = rt.system().spawn(in_process_connection, std::move(h), rt.threads(), rt.telemetry());
}

in_process_client::~in_process_client() { caf::anon_send(actor_, atom::close::value); }

template <class Result, class... Ts>
caf::expected<Result> in_process_client::call(Ts&&... xs) {
  caf::expected<Result> out{caf::error{}};
  caf::scoped_actor self{rt_.system()};
  self->request(rt_.threads(), call_timeout, std::forward<Ts>(xs)...)
      .receive([&](Result& r) { out = std::move(r); }, [&](caf::error& err) { out = std::move(err); });
  return out;
}

caf::expected<protocol::thread_session_response> in_process_client::start_thread(
    protocol::thread_start_params params) {
  return call<protocol::thread_session_response>(atom::open::value, std::move(params),
                                                  caf::actor_cast<client_actor>(actor_));
}

caf::expected<protocol::thread_session_response> in_process_client::resume_thread(
    protocol::thread_resume_params params) {
  return call<protocol::thread_session_response>(atom::resume::value, std::move(params),
                                                  caf::actor_cast<client_actor>(actor_));
}

caf::expected<protocol::turn_start_response> in_process_client::start_turn(
    protocol::turn_start_params params) {
  return call<protocol::turn_start_response>(atom::turn_start::value, std::move(params),
                                             caf::actor_cast<client_actor>(actor_));
}

caf::error in_process_client::interrupt_turn(protocol::turn_interrupt_params params) {
  auto r = call<atom::ok>(atom::interrupt::value, std::move(params));
  return r ? caf::error{} : r.error();
}

caf::expected<protocol::turn_steer_response> in_process_client::steer_turn(
    protocol::turn_steer_params params) {
  return call<protocol::turn_steer_response>(atom::steer::value, std::move(params),
                                             caf::actor_cast<client_actor>(actor_));
}

caf::expected<protocol::thread_read_response> in_process_client::read_thread(
    protocol::thread_read_params params) {
  return call<protocol::thread_read_response>(atom::read::value, std::move(params));
}

caf::expected<runtime_counts> in_process_client::counts() {
  return call<runtime_counts>(atom::stats::value);
}

}  // namespace parley
