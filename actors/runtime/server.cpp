#include "actors/runtime/server.hpp"

#include <caf/spawn_options.hpp>

#include "actors/approval/audit_writer.hpp"
#include "actors/approval/rules_book.hpp"
#include "actors/cluster/thread_router.hpp"
#include "actors/core/handlers.hpp"
#include "actors/model/http_model.hpp"
#include "actors/model/scripted_model.hpp"
#include "actors/store/local_store.hpp"
#include "actors/store/memory_store.hpp"
#include "actors/store/postgres_store.hpp"
#include "actors/threads/thread_manager.hpp"

namespace parley {

server_actor::behavior_type server(server_actor::stateful_pointer<server_state> self,
                                   std::shared_ptr<const runtime_config> config,
                                   std::shared_ptr<process_reactor> reactor,
                                   std::shared_ptr<rules::rules_book> rules,
                                   std::shared_ptr<runtime_telemetry> telemetry,
                                   mcp_port mcp) {
  install_default_handlers(self, "server");
  auto& st = self->state;
  st.svc.mcp = std::move(mcp);
  st.svc.config = std::move(config);
  st.svc.reactor = std::move(reactor);
  st.svc.telemetry = std::move(telemetry);
  if (rules) {
    st.svc.rules = std::move(rules);
    st.svc.rules_keeper = self->spawn<caf::detached + caf::monitored>(rules_keeper, st.svc.rules);
  }
  if (st.svc.config->store == runtime_config::store_kind::local)
    st.svc.store = self->spawn<caf::monitored>(store::local_store, st.svc.config,
                                               st.svc.telemetry);
  else if (st.svc.config->store == runtime_config::store_kind::postgres)
    st.svc.store = self->spawn<caf::monitored>(store::postgres_store, st.svc.config,
                                               st.svc.telemetry);
  else
    st.svc.store = self->spawn<caf::monitored>(memory_store, st.svc.config);
  st.svc.model = self->spawn<caf::monitored>(scripted_model, st.svc.config);
  // An HTTP provider: each turn gets a model of its own, holding its request.
  const auto& settings = st.svc.config->model_settings;
  if (auto setup = settings ? http_provider_setup(*settings) : nullptr) {
    st.svc.model_for_turn = [setup, store = st.svc.store, telemetry = st.svc.telemetry](
                                caf::actor_system& sys, const turn_actor& turn) {
      return spawn_http_model(sys, setup, store, turn, telemetry);
    };
    st.svc.model_keeps_context = true;
  }
  if (!st.svc.config->audit_path.empty())
    st.svc.audit
        = self->spawn<caf::detached + caf::monitored>(audit_writer, st.svc.config->audit_path);
  st.threads = self->spawn<caf::monitored>(thread_manager, st.svc);
  if (st.svc.config->cluster)
    st.router = self->spawn<caf::linked>(cluster::thread_router, st.svc.config->cluster,
                                         st.svc.store, st.threads, st.svc.telemetry);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& s = self->state;
    if (s.stopping) return;
    if (!dm.reason && dm.source == s.threads.address()) {
      // The thread manager finished an orderly shutdown (the stdio connection
      // asks for one when its input ends): stop the rest.
      s.stopping = true;
      self->send_exit(s.svc.store, caf::exit_reason::user_shutdown);
      self->send_exit(s.svc.model, caf::exit_reason::user_shutdown);
      if (s.router) self->send_exit(s.router, caf::exit_reason::user_shutdown);
      if (s.svc.audit) self->send_exit(s.svc.audit, caf::exit_reason::user_shutdown);
      if (s.svc.rules_keeper) self->send_exit(s.svc.rules_keeper, caf::exit_reason::user_shutdown);
      self->quit();
      return;
    }
    // A core actor died: nothing can be served reliably any more.
    PARLEY_ERROR("server event=core_actor_down reason={}", caf::to_string(dm.reason));
    self->quit(dm.reason);
  });
  return {
      [self](atom::get) { return self->state.threads; },
      [self](atom::get, atom::owner) { return self->state.router; },
      [self](atom::seal) { return self->delegate(self->state.svc.store, atom::seal::value); },
      [self](atom::shutdown) -> caf::result<atom::ok> {
        auto& s = self->state;
        auto rp = self->make_response_promise<atom::ok>();
        s.stopping = true;
        auto finish = [self, rp]() mutable {
          auto& svc = self->state.svc;
          self->send_exit(svc.store, caf::exit_reason::user_shutdown);
          self->send_exit(svc.model, caf::exit_reason::user_shutdown);
          if (self->state.router)
            self->send_exit(self->state.router, caf::exit_reason::user_shutdown);
          if (svc.audit) self->send_exit(svc.audit, caf::exit_reason::user_shutdown);
          if (svc.rules_keeper) self->send_exit(svc.rules_keeper, caf::exit_reason::user_shutdown);
          self->send_exit(self->state.threads, caf::exit_reason::user_shutdown);
          rp.deliver(atom::ok::value);
          self->quit();
        };
        self->request(s.threads, std::chrono::seconds(60), atom::shutdown::value)
            .then([finish](atom::ok) mutable { finish(); },
                  [finish](caf::error&) mutable { finish(); });  // already stopped
        return rp;
      },
  };
}

}  // namespace parley
