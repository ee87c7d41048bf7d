#include "actors/runtime.hpp"

#include <caf/scoped_actor.hpp>
#include <thread>

#include "actors/log.hpp"
#include "actors/memory_store.hpp"
#include "actors/scripted_model.hpp"
#include "actors/thread_manager.hpp"

namespace parley {

uint64_t next_ask_key() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void configure_scheduler(caf::actor_system_config& cfg, size_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", threads);
}

runtime::runtime(runtime_config config) {
  configure_scheduler(caf_config_, config.scheduler_threads);
  system_ = std::make_unique<caf::actor_system>(caf_config_);
  services_.config = std::make_shared<const runtime_config>(std::move(config));
  services_.reactor = std::make_shared<process_reactor>();
  services_.store = system_->spawn(memory_store, services_.config);
  services_.model = system_->spawn(scripted_model, services_.config);
  threads_ = system_->spawn(thread_manager, services_);
}

void runtime::shutdown() {
  if (stopped_) return;
  stopped_ = true;
  {
    caf::scoped_actor self{*system_};
    self->request(threads_, std::chrono::seconds(60), atom::shutdown::value)
        .receive([](atom::ok) {},
                 [](caf::error& err) {
                   // Already stopped (e.g. by the stdio connection): nothing to do.
                   if (err == caf::sec::request_receiver_down) return;
                   PARLEY_WARN("runtime event=shutdown_incomplete error={}", caf::to_string(err));
                 });
    self->send_exit(threads_, caf::exit_reason::user_shutdown);
    self->send_exit(services_.store, caf::exit_reason::user_shutdown);
    self->send_exit(services_.model, caf::exit_reason::user_shutdown);
  }
  services_.reactor->stop();
}

runtime::~runtime() {
  shutdown();
  system_->await_all_actors_done();
}

}  // namespace parley
