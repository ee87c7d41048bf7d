#include "tests/support/deterministic.hpp"

#include <algorithm>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/threads/conversation.hpp"
#include "protocol/ids.hpp"

namespace parley::test {

namespace {

/// How a notification shows in a client's log.
std::string describe(const notification_ptr& n) {
  std::string method = protocol::method_of(n->body);
  if (auto* s = std::get_if<protocol::thread_status_changed>(&n->body)) {
    if (s->status.type == protocol::thread_status::kind::idle) return method + ":idle";
    if (s->status.type == protocol::thread_status::kind::not_loaded) return method + ":notLoaded";
    return method + (s->status.waiting_on_approval ? ":waiting" : ":active");
  }
  if (auto* c = std::get_if<protocol::item_completed>(&n->body)) {
    if (auto* cmd = std::get_if<protocol::command_execution_item>(&c->item))
      return method + ":command:" + protocol::to_string(cmd->status);
  }
  return method;
}

/// The client interface, and the test's hand on it.
using mock_client_actor
    = client_actor::extend<caf::reacts_to<answer_atom, uint64_t, protocol::approval_decision>>;

/// The store interface, and the test's hand on held appends.
using mock_store_actor
    = store_actor::extend<caf::reacts_to<atom::flush>, caf::reacts_to<atom::flush, uint64_t>,
                          caf::reacts_to<atom::load>>;

struct mock_client_state {
  std::shared_ptr<client_log> log;
  std::map<uint64_t, caf::typed_response_promise<protocol::approval_decision>> open;
};

mock_client_actor::behavior_type mock_client(
    mock_client_actor::stateful_pointer<mock_client_state> self, std::shared_ptr<client_log> log) {
  self->state.log = std::move(log);
  return {
      [self](atom::event, const notification_ptr& n) {
        self->state.log->seen.push_back(describe(n));
        self->state.log->events.push_back(n);
        ++self->state.log->event_messages;
      },
      [self](atom::event, const notification_batch& batch) {
        ++self->state.log->event_messages;
        for (const auto& n : batch) {
          self->state.log->seen.push_back(describe(n));
          self->state.log->events.push_back(n);
        }
      },
      [self](atom::ask, const approval_ask& ask) -> caf::result<protocol::approval_decision> {
        self->state.log->seen.push_back("ask");
        self->state.log->asks.push_back(ask);
        auto rp = self->make_response_promise<protocol::approval_decision>();
        self->state.open.emplace(ask.key, rp);
        return rp;
      },
      [self](atom::withdraw, uint64_t key) {
        self->state.log->seen.push_back("withdraw");
        self->state.log->withdrawn.push_back(key);
        if (auto i = self->state.open.find(key); i != self->state.open.end()) {
          i->second.deliver(make_error(errc::withdrawn, "approval withdrawn"));
          self->state.open.erase(i);
        }
      },
      [self](answer_atom, uint64_t key, protocol::approval_decision& d) {
        if (auto i = self->state.open.find(key); i != self->state.open.end()) {
          i->second.deliver(std::move(d));
          self->state.open.erase(i);
        }
      },
  };
}

struct mock_store_state {
  std::shared_ptr<store_log> log;
  std::vector<caf::typed_response_promise<atom::ok>> held;
  std::vector<std::pair<std::string, caf::typed_response_promise<stored_thread>>> held_loads;
};

caf::result<stored_thread> answer_load(const store_log& log, const std::string& id) {
  if (auto i = log.threads.find(id); i != log.threads.end()) return i->second;
  return make_error(errc::invalid_request, "no rollout found for thread id " + id);
}

mock_store_actor::behavior_type mock_store(
    mock_store_actor::stateful_pointer<mock_store_state> self, std::shared_ptr<store_log> log) {
  self->state.log = std::move(log);
  return {
      [self](atom::append, const std::string&, const store_record& r) -> caf::result<atom::ok> {
        self->state.log->appended.push_back(r);
        if (!self->state.log->hold_appends) return atom::ok::value;
        auto rp = self->make_response_promise<atom::ok>();
        self->state.held.push_back(rp);
        return rp;
      },
      [self](atom::flush) {
        for (auto& rp : self->state.held) rp.deliver(atom::ok::value);
        self->state.held.clear();
      },
      [self](atom::flush, uint64_t count) {
        auto& held = self->state.held;
        auto n = std::min<size_t>(count, held.size());
        for (size_t i = 0; i < n; ++i) held[i].deliver(atom::ok::value);
        held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(n));
      },
      [self](atom::load, const std::string& id) -> caf::result<stored_thread> {
        auto& st = self->state;
        ++st.log->loads;
        if (!st.log->hold_loads) return answer_load(*st.log, id);
        auto rp = self->make_response_promise<stored_thread>();
        st.held_loads.emplace_back(id, rp);
        st.log->most_loads_held = std::max(st.log->most_loads_held, st.held_loads.size());
        return rp;
      },
      [self](atom::load) {
        auto& st = self->state;
        auto held = std::move(st.held_loads);
        st.held_loads.clear();
        for (auto& [id, rp] : held) {
          if (auto i = st.log->threads.find(id); i != st.log->threads.end())
            rp.deliver(i->second);
          else
            rp.deliver(make_error(errc::invalid_request, "no rollout found for thread id " + id));
        }
      },
      [](atom::load, const rollout_path& p) -> caf::result<stored_thread> {
        return make_error(errc::invalid_request, "no rollout at " + p.path);
      },
      [self](atom::tenant, const std::string& id) -> caf::result<std::string> {
        auto& threads = self->state.log->threads;
        if (auto i = threads.find(id); i != threads.end()) return i->second.meta.tenant;
        return make_error(errc::invalid_request, "no rollout found for thread id " + id);
      },
      [](atom::list,
         const protocol::thread_list_params&) -> caf::result<protocol::thread_list_response> {
        return protocol::thread_list_response{};
      },
      [](atom::archive, const std::string& id, bool) -> caf::result<stored_thread> {
        return make_error(errc::invalid_request, "no rollout found for thread id " + id);
      },
      [self](atom::erase, const std::string& id) -> caf::result<atom::ok> {
        if (self->state.log->threads.erase(id) == 0)
          return make_error(errc::invalid_request, "no rollout found for thread id " + id);
        return atom::ok::value;
      },
      [](atom::revert, const std::string&, const std::string& turn) -> caf::result<stored_thread> {
        return make_error(errc::invalid_request, "turn not found: " + turn);
      },
      [self](atom::pending) {
        std::vector<pending_thread> out;
        for (auto& [id, t] : self->state.log->threads)
          if (t.pending) out.push_back({id, t.pending->at, t.pending->deadline_ms});
        return out;
      },
      [self](atom::seal) {
        self->state.log->sealed = true;
        return atom::ok::value;
      },
      // A single node: every lease is this node's (see store_actor).
      [](atom::lease, const std::string&) { return uint64_t{0}; },
      [](atom::release, const std::string&) {},
      [](atom::owner, const std::string&) { return std::string{}; },
      [](atom::members) { return cluster_view{}; },
      [](atom::orphans, const std::string&) { return std::vector<orphan_thread>{}; },
      [](atom::rejoin) { return uint64_t{0}; },
  };
}

model_actor::behavior_type mock_model(model_actor::pointer self,
                                      std::shared_ptr<std::deque<model_step>> steps,
                                      std::shared_ptr<std::vector<model_context>> asked,
                                      std::shared_ptr<std::vector<bool>> held) {
  return {
      [self, steps, asked](atom::step, const model_context& context) -> caf::result<model_step> {
        if (asked) asked->push_back(context);
        if (steps->empty()) return model_step{};  // done
        auto next = std::move(steps->front());
        steps->pop_front();
        // A streamed message: its pieces first, as one read of a stream
        // holds them (one message), then the step that completes it.
        if (!next.streamed_item.empty()) {
          model_deltas pieces;
          for (const auto& text : next.deltas)
            pieces.push_back(model_delta{next.streamed_item, text, model_delta::kind::text, 0, {}});
          self->send(caf::actor_cast<turn_actor>(self->current_sender()), atom::delta::value,
                     std::move(pieces));
        }
        return next;
      },
      [held](atom::pressure, bool on) {
        if (held) held->push_back(on);
      },
  };
}

}  // namespace

client_actor spawn_mock_client(caf::actor_system& sys, std::shared_ptr<client_log> log) {
  return sys.spawn(mock_client, std::move(log));
}

void answer(caf::scoped_actor& self, const client_actor& client, uint64_t key,
            protocol::approval_decision d) {
  self->send(caf::actor_cast<mock_client_actor>(client), answer_atom::value, key, std::move(d));
}

store_actor spawn_mock_store(caf::actor_system& sys, std::shared_ptr<store_log> log) {
  return sys.spawn(mock_store, std::move(log));
}

void release_appends(caf::scoped_actor& self, const store_actor& store) {
  self->send(caf::actor_cast<mock_store_actor>(store), atom::flush::value);
}

void release_appends(caf::scoped_actor& self, const store_actor& store, uint64_t count) {
  self->send(caf::actor_cast<mock_store_actor>(store), atom::flush::value, count);
}

void release_loads(caf::scoped_actor& self, const store_actor& store) {
  self->send(caf::actor_cast<mock_store_actor>(store), atom::load::value);
}

model_actor spawn_mock_model(caf::actor_system& sys, std::shared_ptr<std::deque<model_step>> steps,
                             std::shared_ptr<std::vector<model_context>> asked,
                             std::shared_ptr<std::vector<bool>> held) {
  return sys.spawn(mock_model, std::move(steps), std::move(asked), std::move(held));
}

model_step say(std::string text) {
  model_step s;
  s.what = model_step::kind::say;
  s.deltas = {std::move(text)};
  return s;
}

model_step run(std::string command) {
  model_step s;
  s.what = model_step::kind::run;
  s.command = std::move(command);
  return s;
}

model_step escalate(std::string command) {
  auto s = run(std::move(command));
  s.escalate = true;
  return s;
}

deterministic::deterministic() {
  cfg.set("scheduler.policy", caf::atom("testing"));
  sys = std::make_unique<caf::actor_system>(cfg);
  sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
  self = std::make_unique<caf::scoped_actor>(*sys, true);
  config = std::make_shared<runtime_config>();
  config->approval_timeout = std::chrono::seconds(30);
  config->idle_unload = std::chrono::minutes(10);
  stored = std::make_shared<store_log>();
  steps = std::make_shared<std::deque<model_step>>();
  model_asked = std::make_shared<std::vector<model_context>>();
  svc.config = config;
  svc.telemetry = std::make_shared<runtime_telemetry>();
  svc.store = spawn_mock_store(*sys, stored);
  model_held = std::make_shared<std::vector<bool>>();
  svc.model = spawn_mock_model(*sys, steps, model_asked, model_held);
}

deterministic::~deterministic() {
  run();
  (*self)->send_exit(caf::actor_cast<caf::actor>(svc.store), caf::exit_reason::user_shutdown);
  (*self)->send_exit(caf::actor_cast<caf::actor>(svc.model), caf::exit_reason::user_shutdown);
  run();
  self.reset();
}

void deterministic::run() {
  sched->run();
}

void deterministic::advance(caf::timespan d) {
  sched->advance_time(d);
  run();
}

conversation_actor deterministic::start_conversation(protocol::approval_policy policy) {
  protocol::thread meta;
  meta.id = protocol::new_uuid_v7();
  meta.cwd = "/tmp";
  meta.status = protocol::thread_status::idle();
  conversation_settings settings;
  settings.cwd = "/tmp";
  settings.policy = std::move(policy);
  settings.sandbox = protocol::sandbox_policy::from_mode(protocol::sandbox_mode::workspace_write);
  return sys->spawn<conversation>(std::make_shared<const runtime_services>(svc), std::move(meta),
                                  std::move(settings),
                                  std::vector<context_item>{});
}

}  // namespace parley::test
