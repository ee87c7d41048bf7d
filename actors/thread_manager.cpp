#include "actors/thread_manager.hpp"

#include <filesystem>
#include <system_error>

#include "actors/conversation.hpp"
#include "actors/handlers.hpp"
#include "protocol/ids.hpp"

namespace parley {

namespace {

using self_ptr = thread_manager_actor::stateful_pointer<thread_manager_state>;

constexpr auto shutdown_timeout = std::chrono::seconds(30);

/// Looks up a thread for a request; `missing` is the Codex message prefix.
caf::expected<conversation_actor> find(self_ptr self, const std::string& id, const char* missing) {
  if (!protocol::is_uuid(id)) return make_error(errc::invalid_request, "invalid thread id: " + id);
  auto i = self->state.threads.find(id);
  if (i == self->state.threads.end())
    return make_error(errc::invalid_request, std::string{missing} + id);
  return i->second;
}

void maybe_finish_shutdown(self_ptr self) {
  auto& st = self->state;
  if (!st.shutting_down || !st.threads.empty()) return;
  for (auto& rp : st.shutdown_waiters) rp.deliver(atom::ok::value);
  st.shutdown_waiters.clear();
  self->quit();
}

}  // namespace

caf::expected<std::string> resolve_cwd(const std::optional<std::string>& requested,
                                       const std::string& fallback) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = requested && !requested->empty() ? fs::path(*requested)
               : !fallback.empty()              ? fs::path(fallback)
                                                : fs::current_path(ec);
  if (p.is_relative()) p = fs::absolute(p, ec);
  if (!fs::is_directory(p, ec))
    return make_error(errc::invalid_request, "cwd is not a directory: " + p.string());
  return p.lexically_normal().string();
}

thread_manager_actor::behavior_type thread_manager(
    thread_manager_actor::stateful_pointer<thread_manager_state> self, runtime_services svc) {
  install_default_handlers(self, "thread_manager");
  self->state.svc = std::move(svc);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& threads = self->state.threads;
    for (auto i = threads.begin(); i != threads.end(); ++i)
      if (i->second.address() == dm.source) {
        threads.erase(i);
        break;
      }
    maybe_finish_shutdown(self);
  });
  return {
      [self](atom::open, const protocol::thread_start_params& params,
             client_actor client) -> caf::result<protocol::thread_session_response> {
        auto& st = self->state;
        if (st.shutting_down) return make_error(errc::overloaded, "server is shutting down");
        const auto& cfg = *st.svc.config;
        auto cwd = resolve_cwd(params.cwd, cfg.default_cwd);
        if (!cwd) return std::move(cwd.error());
        protocol::thread meta;
        meta.id = protocol::new_uuid_v7();
        meta.ephemeral = params.ephemeral.value_or(false);
        meta.model_provider = params.model_provider.value_or(cfg.model_provider);
        meta.model = params.model.value_or(cfg.model_id);
        meta.created_at = meta.updated_at = protocol::unix_seconds();
        meta.status = protocol::thread_status::idle();
        meta.cwd = *cwd;
        meta.cli_version = cfg.cli_version;
        conversation_settings settings;
        settings.cwd = *cwd;
        settings.policy = params.approval_policy_.value_or(protocol::approval_policy::on_request());
        settings.sandbox = protocol::sandbox_policy::from_mode(
            params.sandbox.value_or(protocol::sandbox_mode::workspace_write));
        settings.reviewer = params.approvals_reviewer.value_or("user");
        settings.model = *meta.model;
        auto id = meta.id;
        auto conv = self->spawn<caf::monitored>(conversation, st.svc, std::move(meta),
                                                std::move(settings));
        st.threads.emplace(id, conv);
        return self->delegate(conv, atom::open::value, std::move(client));
      },
      [self](atom::turn_start, protocol::turn_start_params& params,
             client_actor client) -> caf::result<protocol::turn_start_response> {
        auto conv = find(self, params.thread_id, "thread not found: ");
        if (!conv) return std::move(conv.error());
        return self->delegate(*conv, atom::turn_start::value, std::move(params), std::move(client));
      },
      [self](atom::interrupt, const protocol::turn_interrupt_params& params) -> caf::result<atom::ok> {
        auto conv = find(self, params.thread_id, "thread not found: ");
        if (!conv) return std::move(conv.error());
        return self->delegate(*conv, atom::interrupt::value, params.turn_id);
      },
      [self](atom::read,
             const protocol::thread_read_params& params) -> caf::result<protocol::thread_read_response> {
        auto conv = find(self, params.thread_id, "thread not loaded: ");
        if (!conv) return std::move(conv.error());
        return self->delegate(*conv, atom::read::value, params.include_turns);
      },
      [self](atom::loaded, const protocol::thread_loaded_list_params& params) {
        protocol::thread_loaded_list_response r;
        auto& threads = self->state.threads;
        auto i = params.cursor ? threads.upper_bound(*params.cursor) : threads.begin();
        size_t limit = params.limit && *params.limit > 0 ? *params.limit : threads.size();
        for (; i != threads.end() && r.data.size() < limit; ++i) r.data.push_back(i->first);
        if (i != threads.end() && !r.data.empty()) r.next_cursor = r.data.back();
        return r;
      },
      [](atom::stats) { return snapshot_counts(); },
      [self](atom::gone, const client_actor& client) {
        for (auto& [id, conv] : self->state.threads) self->send(conv, atom::gone::value, client);
      },
      [self](atom::shutdown) -> caf::result<atom::ok> {
        auto& st = self->state;
        auto rp = self->make_response_promise<atom::ok>();
        st.shutdown_waiters.push_back(rp);
        if (!st.shutting_down) {
          st.shutting_down = true;
          for (auto& [id, conv] : st.threads)
            self->request(conv, shutdown_timeout, atom::shutdown::value)
                .then([](atom::ok) {},
                      [self, conv = conv](caf::error& err) {
                        PARLEY_WARN("thread_manager event=shutdown_timeout error={}",
                                    caf::to_string(err));
                        self->send_exit(conv, caf::exit_reason::kill);
                      });
        }
        maybe_finish_shutdown(self);
        return rp;
      },
  };
}

}  // namespace parley
