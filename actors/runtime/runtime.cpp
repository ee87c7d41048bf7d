#include "actors/runtime/runtime.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <cstdlib>
#include <thread>
#include <unistd.h>  // environ

#include "actors/approval/rules_book.hpp"
#include "actors/core/cluster_config.hpp"
#include "actors/core/errors.hpp"
#include "actors/core/log.hpp"
#include "actors/model/config/environment_policy.hpp"
#include "actors/model/config/model_config.hpp"
#include "actors/mcp/mcp_hub.hpp"
#include "actors/mcp/messages.hpp"
#include "actors/runtime/lazy_clock_scheduler.hpp"
#include "actors/runtime/server.hpp"
#include "actors/core/command_sandbox.hpp"
#include "actors/threads/process_reactor.hpp"

namespace parley {

namespace {

// What every command a turn runs gets: parley's environment (read once,
// here) through the shell environment policy; the default policy when no
// config was loaded, so API keys and tokens never reach a command.
std::shared_ptr<const std::vector<std::string>> command_environment_of(const runtime_config& cfg) {
  model_config::shell_environment_policy defaults;
  const auto& policy = cfg.model_settings ? cfg.model_settings->shell_environment : defaults;
  return std::make_shared<const std::vector<std::string>>(
      model_config::command_environment(policy, model_config::environment_of(environ)));
}

}  // namespace

void configure_scheduler(caf::actor_system_config& cfg, size_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  use_lazy_clock_scheduler(cfg, threads);
}

runtime::runtime(runtime_config config) {
  if (config.store == runtime_config::store_kind::local) {
    auto lock = store::home_lock::acquire(config.home);
    if (!lock) throw std::runtime_error(message_of(lock.error()));
    lock_.emplace(std::move(*lock));
  }
  // Rules that do not load stop the start: serving without them would
  // decide differently from what the deployment wrote.
  std::shared_ptr<rules::rules_book> rules;
  if (!config.rules_dir.empty()) rules = std::make_shared<rules::rules_book>(config.rules_dir);
  if (!config.command_environment) config.command_environment = command_environment_of(config);
  if (!config.sandbox) {
    config.sandbox = default_sandbox({config.home, config.audit_path});
    if (!config.sandbox->confines())
      PARLEY_WARN("runtime event=sandbox_unavailable {}", describe_sandbox(*config.sandbox));
  }
  configure_scheduler(caf_config_, config.scheduler_threads);
  // The middleman and its TLS module are modules of the actor system: they
  // are loaded before it exists.
  if (config.cluster) cluster::configure_cluster_system(caf_config_, *config.cluster);
  system_ = std::make_unique<caf::actor_system>(caf_config_);
  config_ = std::make_shared<const runtime_config>(std::move(config));
  telemetry_ = std::make_shared<runtime_telemetry>();
  if (config_->cluster)
    telemetry_->start_request_ids_at(static_cast<int64_t>(config_->cluster->ordinal()) << 40);
  process_reactor_options reactor_options;
  reactor_options.telemetry = telemetry_;
  reactor_ = std::make_shared<process_reactor>(std::move(reactor_options));
  // The MCP hub first: every turn reaches it (the tools it offers, calls).
  auto tools_generation = std::make_shared<std::atomic<uint64_t>>(0);
  mcp::hub_options mcp_options;
  if (config_->model_settings) mcp_options.servers = config_->model_settings->mcp;
  mcp_options.config_file = config_->config_file;
  mcp_options.config_file_given = config_->config_file_given;
  mcp_options.config_overrides = config_->config_overrides;
  mcp_options.client_version = config_->cli_version;
  mcp_options.sandbox = config_->sandbox;
  mcp_options.tools_generation = tools_generation;
  mcp_hub_ = mcp::spawn_hub(*system_, std::move(mcp_options));
  server_ = system_->spawn(server, config_, reactor_, std::move(rules), telemetry_,
                           mcp_port{mcp_hub_, tools_generation});
  caf::scoped_actor self{*system_};
  self->request(server_, std::chrono::seconds(10), atom::get::value)
      .receive([this](thread_manager_actor& threads) { threads_ = std::move(threads); },
               [](caf::error& err) {
                 throw std::runtime_error("parley runtime failed to start: " + caf::to_string(err));
               });
  if (config_->cluster)
    self->request(server_, std::chrono::seconds(10), atom::get::value, atom::owner::value)
        .receive([this](thread_router_actor& router) { router_ = std::move(router); },
                 [](caf::error& err) {
                   throw std::runtime_error("parley runtime failed to start: "
                                            + caf::to_string(err));
                 });
  if (config_->cluster) start_cluster_link();
  // The servers' elicitations go to the threads (the hub was spawned first).
  caf::anon_send(mcp_hub_, mcp::atom::threads::value, threads_);
}

void runtime::start_cluster_link() {
  cluster::node_link_options options;
  options.config = config_->cluster;
  // Later starts of a node have larger incarnations.
  options.incarnation = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                  std::chrono::system_clock::now().time_since_epoch())
                                                  .count());
  // Sessions for other nodes' clients: the transport serves them
  // (serve_cluster_sessions); until it does, a peer's open is refused.
  options.open_session = [slot = sessions_](const cluster::session_open& open,
                                            const cluster::session_relay_actor& relay) {
    std::lock_guard<std::mutex> guard{slot->lock};
    return slot->open ? slot->open(open, relay) : cluster::remote_session_actor{};
  };
  options.stats = [sys = system_.get(), router = router_](
                      caf::typed_response_promise<std::string> rp) {
    sys->spawn([router, rp](caf::event_based_actor* self) mutable {
      self->request(router, std::chrono::seconds(5), atom::stats::value)
          .then([rp](std::string& s) mutable { rp.deliver(std::move(s)); },
                [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
    });
  };
  cluster_link_ = cluster::spawn_node_link(*system_, std::move(options));
  // The router hears of every peer that comes up or is lost.
  caf::anon_send(cluster_link_, cluster::link_atom::watch::value,
                 caf::actor_cast<cluster::peer_watcher_actor>(router_));
  std::string problem;
  {
    caf::scoped_actor self{*system_};
    self->request(cluster_link_, std::chrono::seconds(15), cluster::link_atom::listen::value)
        .receive([](uint16_t) {},
                 [this, &problem](caf::error& err) { problem = system_->render(err); });
  }
  if (problem.empty()) return;
  // Stop what runs already, so the actor system can be destroyed.
  shutdown();
  system_->await_all_actors_done();
  const auto& address = config_->cluster->self();
  throw std::runtime_error("cluster node " + config_->cluster->node + " cannot listen on " +
                           address.host + ":" + std::to_string(address.port) + ": " + problem);
}

void runtime::serve_cluster_sessions(cluster::session_factory open) {
  std::lock_guard<std::mutex> guard{sessions_->lock};
  sessions_->open = std::move(open);
}

void runtime::seal_store() {
  // Called from a plain thread (the stdio reader's) before the stop; after
  // a stop the server is gone and the request fails, which is logged.
  caf::scoped_actor self{*system_};
  self->request(server_, std::chrono::seconds(60), atom::seal::value)
      .receive([](atom::ok) { PARLEY_INFO("runtime event=store_sealed"); },
               [](caf::error& err) {
                 PARLEY_WARN("runtime event=seal_failed error={}", caf::to_string(err));
               });
}

void runtime::shutdown() {
  if (stopped_) return;
  stopped_ = true;
  {
    caf::scoped_actor self{*system_};
    self->request(server_, std::chrono::seconds(90), atom::shutdown::value)
        .receive([](atom::ok) {},
                 [](caf::error& err) {
                   // request_receiver_down: the server already stopped on its own.
                   if (err == caf::sec::request_receiver_down) return;
                   PARLEY_WARN("runtime event=shutdown_incomplete error={}", caf::to_string(err));
                 });
  }
  if (cluster_link_) caf::anon_send_exit(cluster_link_, caf::exit_reason::user_shutdown);
  // The MCP servers' processes are killed with their actors.
  if (mcp_hub_) caf::anon_send_exit(mcp_hub_, caf::exit_reason::user_shutdown);
  reactor_->stop();
}

runtime::~runtime() {
  shutdown();
  if (config_->cluster) {
    // A node that was fenced and rejoined has been seen to keep two idle
    // detached actors after its orderly stop (not found yet; README,
    // cluster). Everything it stores is sealed and stopped by now, so a
    // stop never hangs on them: after 15 s the process ends without them.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (system_->registry().running() > 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (auto left = system_->registry().running(); left > 0) {
      PARLEY_ERROR("runtime event=actors_left count={}: the node exits without them", left);
      log::get().flush();
      std::_Exit(0);
    }
  }
  system_->await_all_actors_done();
}

}  // namespace parley
