// Store benchmarks (issue: durable thread store). Prints medians.
//
//   parley_store_bench [--dir=DIR]
//
//   append   items/s appended through the local store actor, 64 threads in
//            parallel, with durability=turn and durability=item
//   list     thread/list latency with 10,000 threads in the index
//   resume   load time of a thread with 1,000 items (read + decode)

#include <algorithm>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "actors/runtime/runtime.hpp"
#include "actors/store/local_store.hpp"
#include "actors/store/rollout_file.hpp"
#include "actors/store/rollout_format.hpp"
#include "protocol/ids.hpp"

namespace {

using namespace parley;
using clock_type = std::chrono::steady_clock;
namespace fs = std::filesystem;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

protocol::thread make_meta(int64_t created) {
  protocol::thread t;
  t.id = protocol::new_uuid_v7();
  t.created_at = t.updated_at = created;
  t.cwd = "/tmp";
  t.cli_version = "0.1.0";
  t.model_provider = "parley";
  return t;
}

protocol::command_execution_item command(int i) {
  protocol::command_execution_item c;
  c.id = "call_" + std::to_string(i);
  c.command = "/bin/sh -c 'echo " + std::to_string(i) + "'";
  c.cwd = "/tmp";
  c.status = protocol::item_status::completed;
  c.command_actions = {protocol::command_action{protocol::command_action::kind::unknown,
                                                "echo " + std::to_string(i), {}, {}, {}}};
  c.aggregated_output = std::to_string(i) + "\n";
  c.exit_code = 0;
  c.duration_ms = 1;
  return c;
}

/// Items per second appended by `threads` conversations, each writing
/// `turns` turns of `items` items. Like conversations, nothing waits for an
/// acknowledgement before sending the next record (the store keeps each
/// thread's records in order); the clock stops at the last acknowledgement.
double append_rate(const std::string& home, runtime_config::durability_kind durability, int threads,
                   int turns, int items) {
  fs::remove_all(home);
  auto cfg = std::make_shared<runtime_config>();
  cfg->home = home;
  cfg->store = runtime_config::store_kind::local;
  cfg->durability = durability;
  caf::actor_system_config sys_cfg;
  configure_scheduler(sys_cfg, 0);
  caf::actor_system sys{sys_cfg};
  auto store = sys.spawn(store::local_store, std::shared_ptr<const runtime_config>(cfg),
                         std::make_shared<runtime_telemetry>());
  std::vector<std::pair<std::string, store_record>> records;
  std::vector<protocol::thread> metas;
  for (int t = 0; t < threads; ++t) metas.push_back(make_meta(protocol::unix_seconds()));
  for (auto& m : metas) records.emplace_back(m.id, thread_created_record{m, {}});
  int64_t total = 0;
  for (int turn = 0; turn < turns; ++turn) {
    for (auto& m : metas) {
      auto turn_id = protocol::new_uuid_v7();
      records.emplace_back(m.id, turn_started_record{turn_id, protocol::unix_seconds()});
      for (int i = 0; i < items; ++i) {
        records.emplace_back(m.id, item_record{turn_id, command(i)});
        ++total;
      }
      protocol::turn done;
      done.id = turn_id;
      done.status = protocol::turn_status::completed;
      records.emplace_back(m.id, turn_completed_record{done});
    }
  }
  auto start = clock_type::now();
  {
    caf::scoped_actor self{sys};
    auto pending = std::make_shared<size_t>(records.size());
    auto driver = sys.spawn([store, records, pending](caf::event_based_actor* me) -> caf::behavior {
      for (auto& [id, r] : records)
        me->request(store, std::chrono::minutes(5), atom::append::value, id, r)
            .then([me, pending](atom::ok) {
                    if (--*pending == 0) me->quit();
                  },
                  [me](caf::error& e) {
                    std::fprintf(stderr, "append: %s\n", caf::to_string(e).c_str());
                    me->quit();
                  });
      return {[](int) {}};
    });
    self->wait_for(driver);
    self->send_exit(store, caf::exit_reason::user_shutdown);
  }
  auto secs = std::chrono::duration<double>(clock_type::now() - start).count();
  return static_cast<double>(total) / secs;
}

void write_threads(const std::string& home, int n, int items_in_first) {
  for (int i = 0; i < n; ++i) {
    auto meta = make_meta(1762500000 + i);
    protocol::turn t;
    t.id = protocol::new_uuid_v7();
    t.status = protocol::turn_status::completed;
    t.started_at = meta.created_at;
    t.items.push_back(protocol::user_message_item{"u", {protocol::user_input::make_text("thread " + std::to_string(i))}, std::nullopt});
    int items = i == 0 ? items_in_first : 1;
    for (int k = 0; k < items; ++k) t.items.push_back(command(k));
    meta.turns.push_back(t);
    auto path = home + "/" + store::rollout_relative_path(meta.created_at, meta.id);
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream f{path};
    for (auto& l : store::encode_thread(meta)) f << l << '\n';
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/tmp/parley-store-bench";
  for (int i = 1; i < argc; ++i)
    if (std::string{argv[i]}.rfind("--dir=", 0) == 0) dir = std::string{argv[i]}.substr(6);
  fs::create_directories(dir);

  using d = runtime_config::durability_kind;
  for (auto [name, mode] : {std::pair{"turn", d::turn}, std::pair{"item", d::item}, std::pair{"none", d::none}}) {
    std::vector<double> rates;
    for (int run = 0; run < 3; ++run) rates.push_back(append_rate(dir + "/append", mode, 64, 4, 25));
    std::printf("append durability=%-4s  %9.0f items/s (median of 3; 64 threads x 4 turns x 25 items)\n",
                name, median(rates));
  }

  auto home = dir + "/list";
  fs::remove_all(home);
  write_threads(home, 10000, 1000);
  auto cfg = std::make_shared<runtime_config>();
  cfg->home = home;
  cfg->store = runtime_config::store_kind::local;
  caf::actor_system_config sys_cfg;
  configure_scheduler(sys_cfg, 0);
  caf::actor_system sys{sys_cfg};
  auto start = clock_type::now();
  auto store = sys.spawn(store::local_store, std::shared_ptr<const runtime_config>(cfg),
                         std::make_shared<runtime_telemetry>());
  {
    caf::scoped_actor self{sys};
    protocol::thread_list_params first;
    first.limit = 25;
    std::vector<double> first_page, deep_page;
    std::string deep_cursor;
    // The first list waits for the index to be built from 10k rollouts.
    self->request(store, std::chrono::minutes(5), atom::list::value, first)
        .receive([](protocol::thread_list_response&) {}, [](caf::error&) {});
    auto build = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
    std::printf("index build from 10000 rollouts: %.0f ms (cold start, first list)\n", build);
    for (int i = 0; i < 51; ++i) {
      auto t0 = clock_type::now();
      self->request(store, std::chrono::seconds(10), atom::list::value, first)
          .receive([&](protocol::thread_list_response& r) { deep_cursor = r.next_cursor.value_or(""); },
                   [](caf::error&) {});
      first_page.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
    }
    protocol::thread_list_params deep = first;
    deep.sort_key = "updated_at";
    deep.search_term = "thread 99";
    for (int i = 0; i < 51; ++i) {
      auto t0 = clock_type::now();
      self->request(store, std::chrono::seconds(10), atom::list::value, deep)
          .receive([](protocol::thread_list_response&) {}, [](caf::error&) {});
      deep_page.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
    }
    std::printf("thread/list, 10000 threads indexed: %.0f us first page (limit 25), %.0f us with searchTerm (median of 51)\n",
                median(first_page), median(deep_page));
    // The thread with 1000 items is the oldest one.
    protocol::thread_list_params oldest;
    oldest.limit = 1;
    oldest.sort_direction = "asc";
    std::string big;
    self->request(store, std::chrono::seconds(10), atom::list::value, oldest)
        .receive([&](protocol::thread_list_response& r) { big = r.data.at(0).id; }, [](caf::error&) {});
    std::vector<double> loads;
    size_t items = 0;
    for (int i = 0; i < 21; ++i) {
      auto t0 = clock_type::now();
      self->request(store, std::chrono::seconds(10), atom::load::value, big)
          .receive([&](stored_thread& t) { items = t.meta.turns.at(0).items.size(); }, [](caf::error&) {});
      loads.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
    }
    std::printf("resume (load) of a thread with %zu items: %.2f ms (median of 21)\n", items, median(loads));
    self->send_exit(store, caf::exit_reason::user_shutdown);
  }
  return 0;
}
