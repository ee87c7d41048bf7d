// The PostgreSQL store as the nodes of a cluster (issue 21): two or three
// postgres_store actors in this process, configured as nodes n1, n2, n3 of
// one database (a private cluster: tests/support/pg_cluster.py) with a short
// node lease. Thread leases are granted, refused to a second node while the
// first lives, released and taken over with a new epoch; a node that stops
// renewing is fenced: its threads are orphans the others take over, and
// every write it tries afterwards is refused by the database, even once it
// renews again, until it rejoins. A store without a cluster leases nothing.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "actors/cluster/cluster_config.hpp"
#include "actors/core/errors.hpp"
#include "actors/store/postgres_schema.hpp"
#include "actors/store/postgres_store.hpp"
#include "protocol/ids.hpp"
#include "tests/support/app_server_client.hpp"
#include "tests/support/pg_cluster.hpp"
#include "transport/child_process.hpp"

namespace parley {
namespace postgres_cluster_test {  // named: the test executables are unity builds

using namespace std::chrono_literals;
using store::postgres_store_actor;
using ::testing::HasSubstr;

constexpr auto ttl = 600ms;

// Threads (their ids are a rollout's: UUIDs; P sorts before T).
const std::string P = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c81";
const std::string T = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c82";
const std::string Q = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c83";
const std::string U = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c84";

protocol::thread meta_of(const std::string& id) {
  protocol::thread t;
  t.id = id;
  t.created_at = protocol::unix_seconds();
  t.updated_at = t.created_at;
  t.cwd = "/w";
  t.model_provider = "mock";
  t.source = "appServer";
  return t;
}

store_record user_said(const std::string& turn, const std::string& text) {
  return item_record{
      turn, protocol::user_message_item{"u-" + text, {protocol::user_input::make_text(text)},
                                        std::nullopt},
      true};
}

std::string error_text(const caf::error& e) {
  return message_of(e);
}

/// An answer of the store, or its error.
template <class T>
struct answer : caf::expected<T> {
  using caf::expected<T>::expected;
  T value_or(T fallback) const { return *this ? **this : fallback; }
};

class postgres_cluster : public ::testing::Test {
 protected:
  void SetUp() override {
    PARLEY_REQUIRE_POSTGRES();
    db = "c" + std::to_string(++databases) + "_" + std::to_string(::getpid());
    url = test::pg_cluster::shared().create_database(db);
    auto migrated = pg::migrate(url);
    ASSERT_TRUE(migrated.ok) << migrated.message;
    system = std::make_unique<caf::actor_system>(system_config);
  }

  void TearDown() override {
    for (auto& n : nodes) caf::anon_send_exit(n, caf::exit_reason::kill);
    nodes.clear();
    if (system) system->await_all_actors_done();
  }

  /// A store as node `name` of the cluster {n1, n2, n3}; without a name, a
  /// single process (no cluster).
  postgres_store_actor node(const std::string& name) {
    auto cfg = std::make_shared<runtime_config>();
    cfg->store = runtime_config::store_kind::postgres;
    cfg->store_url = url;
    if (!name.empty()) {
      auto cluster = std::make_shared<cluster::cluster_config>();
      cluster->node = name;
      for (auto* n : {"n1", "n2", "n3"})
        cluster->members.push_back({n, "127.0.0.1", static_cast<uint16_t>(7000 + n[1] - '0')});
      cluster->postgres = url;
      cluster->lease_ttl = ttl;
      cfg->cluster = cluster;
    }
    auto h = system->spawn(store::postgres_store, std::shared_ptr<const runtime_config>{cfg},
                           std::shared_ptr<runtime_telemetry>{});
    nodes.push_back(h);
    return h;
  }

  template <class T, class... Ts>
  answer<T> ask(const postgres_store_actor& h, Ts&&... xs) {
    caf::scoped_actor self{*system};
    answer<T> out{caf::error{}};
    self->request(h, 10s, std::forward<Ts>(xs)...)
        .receive([&](T& x) { out = std::move(x); }, [&](caf::error& err) { out = err; });
    return out;
  }

  answer<uint64_t> lease(const postgres_store_actor& h, const std::string& thread) {
    return ask<uint64_t>(h, atom::lease::value, thread);
  }
  answer<atom::ok> append(const postgres_store_actor& h, const std::string& thread,
                                 store_record r) {
    return ask<atom::ok>(h, atom::append::value, thread, std::move(r));
  }
  cluster_view members(const postgres_store_actor& h) {
    auto v = ask<cluster_view>(h, atom::members::value);
    EXPECT_TRUE(v) << message_of(v.error());
    return v ? *v : cluster_view{};
  }
  /// Releases, then waits until it is in the database (a job behind it on
  /// the same connection has ended).
  void release(const postgres_store_actor& h, const std::string& thread) {
    caf::anon_send(h, atom::release::value, thread);
    ASSERT_TRUE(ask<std::vector<pending_thread>>(h, atom::pending::value));
  }
  /// Waits until `observer` sees `node`'s lease expired.
  bool wait_dead(const postgres_store_actor& observer, const std::string& name) {
    for (int i = 0; i < 100; ++i) {
      for (auto& m : members(observer).members)
        if (m.name == name && !m.alive) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }
  /// Stops a node as a crash would: its leases stay in the database.
  void stop_node(const postgres_store_actor& h) {
    caf::scoped_actor self{*system};
    self->monitor(h);
    self->send_exit(h, caf::exit_reason::kill);
    self->receive([](caf::down_msg&) {});
  }
  friend int64_t median_append_us(postgres_cluster&, const postgres_store_actor&,
                                  const std::string&, int);
  std::string psql(const std::string& sql) { return test::pg_cluster::shared().psql(db, sql); }

  static inline int databases = 0;
  std::string db, url;
  caf::actor_system_config system_config;
  std::unique_ptr<caf::actor_system> system;
  std::vector<postgres_store_actor> nodes;
};


TEST_F(postgres_cluster, a_lease_is_granted_confirmed_refused_released_and_taken_with_a_new_epoch) {
  auto n1 = node("n1");
  auto n2 = node("n2");
  auto first = lease(n1, T);
  ASSERT_TRUE(first) << error_text(first.error());
  EXPECT_EQ(*first, 1u);
  EXPECT_EQ(lease(n1, T).value_or(0), 1u) << "confirmed: the same epoch";

  auto refused = lease(n2, T);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(is_errc(refused.error(), errc::not_owner));
  EXPECT_EQ(error_text(refused.error()), "thread " + T + " is owned by node n1");
  EXPECT_EQ(ask<std::string>(n2, atom::owner::value, T).value_or("?"), "n1");
  EXPECT_EQ(ask<std::string>(n2, atom::owner::value, U).value_or("?"), "");

  auto view = members(n2);
  ASSERT_EQ(view.members.size(), 2u);
  EXPECT_TRUE(view.self_alive);
  EXPECT_EQ(view.self_incarnation, 1u);
  EXPECT_EQ(view.members[0].name, "n1");
  EXPECT_EQ(view.members[0].address, "127.0.0.1:7001");
  EXPECT_TRUE(view.members[0].alive);
  EXPECT_GT(view.members[0].lease_ms_left, 0);
  EXPECT_LE(view.members[0].lease_ms_left, 600);
  EXPECT_EQ(view.members[0].threads, 1u);
  EXPECT_EQ(view.members[1].threads, 0u);
  EXPECT_TRUE(ask<std::vector<orphan_thread>>(n2, atom::orphans::value, std::string{"n1"})
                  ->empty());

  release(n1, T);
  EXPECT_EQ(ask<std::string>(n2, atom::owner::value, T).value_or("?"), "");
  EXPECT_EQ(psql("SELECT coalesce(node, '-'), epoch FROM thread_leases"), "-|1")
      << "released: no node, the epoch kept";
  EXPECT_EQ(lease(n2, T).value_or(0), 2u) << "taken after a release: epoch + 1";
  auto n1_refused = lease(n1, T);
  ASSERT_FALSE(n1_refused);
  EXPECT_EQ(error_text(n1_refused.error()), "thread " + T + " is owned by node n2");

  // A node that joins again (a restart) has a new incarnation: the leases
  // of its old one are void, taken over by anyone (itself included).
  stop_node(n2);
  auto n2b = node("n2");
  EXPECT_EQ(members(n2b).self_incarnation, 2u);
  EXPECT_EQ(lease(n1, T).value_or(0), 3u);
}

TEST_F(postgres_cluster, a_node_that_stops_renewing_is_fenced_until_it_rejoins) {
  auto n1 = node("n1");
  auto n2 = node("n2");
  ASSERT_EQ(lease(n1, T).value_or(0), 1u);
  ASSERT_EQ(lease(n1, P).value_or(0), 1u);
  ASSERT_TRUE(append(n1, T, thread_created_record{meta_of(T), {}}));
  ASSERT_TRUE(append(n1, T, turn_started_record{"turn1", 1}));
  ASSERT_TRUE(append(n1, T, user_said("turn1", "one")));
  ASSERT_TRUE(append(n1, P, thread_created_record{meta_of(P), {}}));
  ASSERT_TRUE(append(n1, P, turn_started_record{"turnP", 1}));
  action_record asked;
  asked.turn_id = "turnP";
  asked.item_id = "call-1";
  asked.command = "true";
  ASSERT_TRUE(append(n1, P, asked));
  // Renewed every ttl/3: alive well past its ttl.
  std::this_thread::sleep_for(ttl * 2);
  EXPECT_TRUE(members(n1).self_alive);
  ASSERT_TRUE(append(n1, T, user_said("turn1", "two")));

  // n1 stops renewing (as a paused or cut-off node would).
  caf::anon_send(n1, store::pg_hold_atom::value, true);
  ASSERT_TRUE(wait_dead(n2, "n1"));
  auto orphans = ask<std::vector<orphan_thread>>(n2, atom::orphans::value, std::string{"n1"});
  ASSERT_TRUE(orphans);
  ASSERT_EQ(orphans->size(), 2u);
  EXPECT_EQ((*orphans)[0].id, P);
  EXPECT_TRUE((*orphans)[0].pending) << "its action waits";
  EXPECT_EQ((*orphans)[1].id, T);
  EXPECT_FALSE((*orphans)[1].pending);
  EXPECT_EQ(ask<std::string>(n2, atom::owner::value, T).value_or("?"), "")
      << "no live node holds it";
  EXPECT_EQ(lease(n2, T).value_or(0), 2u) << "taken over: epoch + 1";

  // n1's write with its old epoch: refused by the database (its node lease
  // is gone), never stored.
  auto late = append(n1, T, user_said("turn1", "late"));
  ASSERT_FALSE(late);
  EXPECT_TRUE(is_errc(late.error(), errc::not_owner)) << error_text(late.error());
  EXPECT_THAT(error_text(late.error()), HasSubstr("node n1 (incarnation 1) is fenced"));
  EXPECT_EQ(members(n1).self_alive, false);

  // n1 renews again: too late, it stays fenced until it rejoins.
  caf::anon_send(n1, store::pg_hold_atom::value, false);
  std::this_thread::sleep_for(ttl);
  EXPECT_FALSE(members(n1).self_alive);
  auto still = append(n1, P, user_said("turnP", "late"));
  ASSERT_FALSE(still);
  EXPECT_THAT(error_text(still.error()), HasSubstr("is fenced"));
  auto no_lease = lease(n1, Q);
  ASSERT_FALSE(no_lease);
  EXPECT_THAT(error_text(no_lease.error()), HasSubstr("is fenced"));
  EXPECT_EQ(psql("SELECT count(*) FROM thread_lines WHERE line::text LIKE '%late%'"), "0");

  auto back = ask<uint64_t>(n1, atom::rejoin::value);
  ASSERT_TRUE(back) << error_text(back.error());
  EXPECT_EQ(*back, 2u);
  auto view = members(n1);
  EXPECT_TRUE(view.self_alive);
  EXPECT_EQ(view.self_incarnation, 2u);
  auto taken = lease(n1, T);
  ASSERT_FALSE(taken);
  EXPECT_EQ(error_text(taken.error()), "thread " + T + " is owned by node n2");
  EXPECT_EQ(lease(n1, P).value_or(0), 2u) << "its own old incarnation's lease: taken over";
  auto hole = append(n1, P, user_said("turnP", "after rejoin"));
  ASSERT_FALSE(hole) << "nothing after the record refused";
  EXPECT_THAT(error_text(hole.error()), HasSubstr("an earlier record of thread " + P + " was not stored"));
  ASSERT_TRUE(append(n1, P, turn_started_record{"turnP2", 2})) << "a new turn: written";
  ASSERT_TRUE(append(n1, P, user_said("turnP2", "after rejoin")));
  EXPECT_TRUE(ask<std::vector<orphan_thread>>(n2, atom::orphans::value, std::string{"n1"})
                  ->empty());
}

TEST_F(postgres_cluster, the_fence_refuses_a_stale_epoch_and_writes_of_a_thread_another_node_holds) {
  auto n1 = node("n1");
  auto n2 = node("n2");
  ASSERT_EQ(lease(n1, T).value_or(0), 1u);
  ASSERT_TRUE(append(n1, T, thread_created_record{meta_of(T), {}}));
  ASSERT_TRUE(append(n1, T, turn_started_record{"turn1", 1}));

  // The lease moved under n1 (as a takeover racing a renewal would leave
  // it): its epoch is stale, its write refused, and nothing after it.
  psql("UPDATE thread_leases SET epoch = 7 WHERE thread_id = '" + T + "'");
  auto stale = append(n1, T, user_said("turn1", "stale"));
  ASSERT_FALSE(stale);
  EXPECT_EQ(error_text(stale.error()),
            "not stored: thread " + T + " is owned by node n1 (epoch 7): node n1 lost its lease (epoch 1)");
  auto after = append(n1, T, user_said("turn1", "after the hole"));
  ASSERT_FALSE(after);
  EXPECT_THAT(error_text(after.error()), HasSubstr("an earlier record of thread " + T + " was not stored"));
  EXPECT_TRUE(members(n1).self_alive) << "a thread lost is not the node fenced";
  EXPECT_EQ(lease(n1, T).value_or(0), 7u) << "its own incarnation: confirmed as it is";
  ASSERT_TRUE(append(n1, T, turn_started_record{"turn2", 2})) << "a new turn resyncs";

  // n2 reads T (reads are never fenced) but writes nothing of it while
  // n1 lives and holds it: the thread is not loaded on n2 (no epoch).
  auto read = ask<stored_thread>(n2, atom::load::value, T);
  ASSERT_TRUE(read) << error_text(read.error());
  auto rename = append(n2, T, thread_renamed_record{std::string{"mine"}});
  ASSERT_FALSE(rename);
  EXPECT_EQ(error_text(rename.error()), "not stored: thread " + T + " is owned by node n1");
  auto archive = ask<stored_thread>(n2, atom::archive::value, T, true);
  ASSERT_FALSE(archive);
  EXPECT_TRUE(is_errc(archive.error(), errc::not_owner));
  auto erase = ask<atom::ok>(n2, atom::erase::value, T);
  ASSERT_FALSE(erase);
  EXPECT_TRUE(is_errc(erase.error(), errc::not_owner));
  EXPECT_EQ(psql("SELECT count(*) FROM threads WHERE id = '" + T + "' AND name IS NULL"), "1");

  // Once n1 lets it go, a write of the unloaded thread lands, and takes no
  // lease.
  release(n1, T);
  auto n3 = node("n3");
  ASSERT_TRUE(ask<stored_thread>(n3, atom::load::value, T));
  auto renamed = append(n3, T, thread_renamed_record{std::string{"renamed"}});
  ASSERT_TRUE(renamed) << error_text(renamed.error());
  EXPECT_EQ(psql("SELECT name FROM threads WHERE id = '" + T + "'"), "renamed");
  EXPECT_EQ(ask<std::string>(n3, atom::owner::value, T).value_or("?"), "");
  EXPECT_EQ(lease(n2, T).value_or(0), 8u);
}

TEST_F(postgres_cluster, a_store_without_a_cluster_leases_nothing_and_writes_as_before) {
  auto solo = node("");
  EXPECT_EQ(lease(solo, T).value_or(9), 0u);
  auto view = members(solo);
  EXPECT_TRUE(view.members.empty());
  EXPECT_TRUE(view.self_alive);
  ASSERT_TRUE(append(solo, T, thread_created_record{meta_of(T), {}}));
  ASSERT_TRUE(append(solo, T, turn_started_record{"turn1", 1}));
  ASSERT_TRUE(append(solo, T, thread_renamed_record{std::string{"solo"}}));
  ASSERT_TRUE(ask<stored_thread>(solo, atom::archive::value, T, true));
  EXPECT_EQ(psql("SELECT count(*) FROM thread_leases") + psql("SELECT count(*) FROM parley_nodes"), "00");
  EXPECT_EQ(ask<uint64_t>(solo, atom::rejoin::value).value_or(9), 0u);
}

/// Median microseconds of `n` appends, one at a time, of thread `id` (already
/// created) on `h`.
int64_t median_append_us(postgres_cluster& t, const postgres_store_actor& h, const std::string& id,
                         int n);

TEST_F(postgres_cluster, a_version_1_database_is_upgraded_with_its_threads) {
  auto solo = node("");
  ASSERT_TRUE(append(solo, T, thread_created_record{meta_of(T), {}}));
  stop_node(solo);
  // Back to version 1 (as a database of the parley before the cluster):
  // version 3's columns and indexes (its tenant indexes go with the column)
  // and version 2's tables and functions dropped.
  psql("DROP INDEX threads_by_cwd_updated, threads_by_cwd_created, threads_search_preview,"
       " threads_search_name; ALTER TABLE threads DROP COLUMN tenant;"
       " DROP FUNCTION parley_lease; DROP FUNCTION parley_fence; DROP FUNCTION parley_node_alive;"
       " DROP TABLE thread_leases; DROP TABLE parley_nodes; UPDATE parley_schema SET version = 1");
  EXPECT_THAT(pg::schema_problem(url).value_or(""),
              HasSubstr("the database's schema is version 1, this parley needs 3"));
  auto upgraded = pg::migrate(url);
  ASSERT_TRUE(upgraded.ok) << upgraded.message;
  EXPECT_THAT(upgraded.message, HasSubstr("upgraded the schema from version 1 to 3"));
  auto n1 = node("n1");
  ASSERT_EQ(lease(n1, T).value_or(0), 1u);
  ASSERT_TRUE(ask<stored_thread>(n1, atom::load::value, T));
  EXPECT_TRUE(append(n1, T, turn_started_record{"turn1", 1}));
}

struct command_result {
  int code = 0;
  std::string out, err;
};

/// `parley ARGS` with no input: its exit code, stdout and stderr.
command_result run_parley(const std::vector<std::string>& args) {
  auto dir = test::make_temp_dir("cluster_status");
  std::vector<std::string> argv{test::parley_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  child_process p(argv, dir + "/stderr");
  p.close_stdin();
  command_result r;
  while (auto line = p.read_line(30s)) r.out += *line + "\n";
  r.code = p.wait();
  r.err = test::read_file(dir + "/stderr");
  return r;
}

TEST_F(postgres_cluster, parley_cluster_status_shows_the_members_and_the_leases) {
  auto n1 = node("n1");
  auto n2 = node("n2");
  ASSERT_EQ(lease(n1, T).value_or(0), 1u);
  ASSERT_EQ(lease(n2, P).value_or(0), 1u);
  ASSERT_EQ(lease(n2, Q).value_or(0), 1u);
  caf::anon_send(n2, store::pg_hold_atom::value, true);
  ASSERT_TRUE(wait_dead(n1, "n2"));

  auto text = run_parley({"cluster", "status", "--store-url", url, "--threads"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, ::testing::ContainsRegex("\nn1    127.0.0.1:7001  1            yes    1  "
                                                 "      [0-9.]+s left\n"));
  EXPECT_THAT(text.out, ::testing::ContainsRegex("\nn2    127.0.0.1:7002  1            no     2  "
                                                 "      expired [0-9.]+s ago\n"));
  EXPECT_THAT(text.out, HasSubstr(T + "  n1  1  (1, alive)"));
  EXPECT_THAT(text.out, HasSubstr(P + "  n2  1  (1, dead: an orphan)"));

  auto json_run = run_parley({"cluster", "status", "--store-url=" + url, "--json"});
  ASSERT_EQ(json_run.code, 0) << json_run.err;
  auto j = nlohmann::json::parse(json_run.out);
  ASSERT_EQ(j["members"].size(), 2u);
  EXPECT_EQ(j["members"][0]["name"], "n1");
  EXPECT_EQ(j["members"][0]["alive"], true);
  EXPECT_EQ(j["members"][1]["threads"], 2);
  EXPECT_LT(j["members"][1]["leaseMsLeft"].get<int64_t>(), 0);
  EXPECT_FALSE(j.contains("leases")) << "only with --threads";
  auto with_threads = run_parley({"cluster", "status", "--store-url=" + url, "--json", "--threads"});
  EXPECT_EQ(nlohmann::json::parse(with_threads.out)["leases"].size(), 3u);

  auto none = run_parley({"cluster", "status"});
  EXPECT_EQ(none.code, 2);
  EXPECT_THAT(none.err, HasSubstr("cluster status needs --cluster FILE or --store-url"));
}

int64_t median_append_us(postgres_cluster& t, const postgres_store_actor& h, const std::string& id,
                         int n) {
  std::vector<int64_t> us;
  for (int i = 0; i < n; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto r = t.append(h, id, user_said("turn1", "line " + std::to_string(i)));
    us.push_back(std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    if (!r) {
      ADD_FAILURE() << message_of(r.error());
      return -1;
    }
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

// The fence's cost: appends one at a time of a plain store's thread and of
// a cluster node's leased thread (PARLEY_FENCE_APPENDS sets how many; the
// report in the README comes from 3000).
TEST_F(postgres_cluster, fenced_appends_cost_little_more_than_plain_ones) {
  int n = 200;
  if (const char* v = std::getenv("PARLEY_FENCE_APPENDS")) n = std::max(10, std::atoi(v));
  auto solo = node("");
  auto n1 = node("n1");
  ASSERT_TRUE(append(solo, P, thread_created_record{meta_of(P), {}}));
  ASSERT_TRUE(append(solo, P, turn_started_record{"turn1", 1}));
  ASSERT_EQ(lease(n1, T).value_or(0), 1u);
  ASSERT_TRUE(append(n1, T, thread_created_record{meta_of(T), {}}));
  ASSERT_TRUE(append(n1, T, turn_started_record{"turn1", 1}));
  // Alternated, so both see the same machine.
  std::vector<int64_t> plain, fenced;
  for (int round = 0; round < 4; ++round) {
    plain.push_back(median_append_us(*this, solo, P, n / 4));
    fenced.push_back(median_append_us(*this, n1, T, n / 4));
  }
  std::sort(plain.begin(), plain.end());
  std::sort(fenced.begin(), fenced.end());
  std::cout << "appends: " << n << " plain, " << n << " fenced; median of the rounds' medians: "
            << "plain " << plain[2] << " us, fenced " << fenced[2] << " us\n";
  auto lines = [&](const std::string& id) {
    return psql("SELECT count(*) FROM thread_lines WHERE thread_id = '" + id + "'");
  };
  EXPECT_EQ(lines(P), lines(T)) << "every append stored, on both";
}

}  // namespace postgres_cluster_test
}  // namespace parley
