// The usage table (actors/core/usage_limits.hpp): grants count while they
// live, refusals name the limit reached, and usage drops back exactly when a
// grant goes, from many threads at once.

#include "actors/core/usage_limits.hpp"

#include <gtest/gtest.h>
#include <thread>
#include <vector>

#include "actors/core/errors.hpp"
#include "actors/core/telemetry.hpp"

namespace parley {
namespace {

usage_limits tight() {
  usage_limits l;
  l.tenant_running_turns = 2;
  l.connection_running_turns = 1;
  l.tenant_loaded_threads = 0;  // none
  l.connection_loaded_threads = 0;
  return l;
}

TEST(UsageTable, ConnectionLimitFirstReachedNamesTheConnection) {
  auto table = std::make_shared<usage_table>();
  auto limits = tight();
  std::string reason;
  auto a = table->acquire(usage_kind::running_turns, "acme", 7, limits, &reason);
  ASSERT_TRUE(a);
  auto b = table->acquire(usage_kind::running_turns, "acme", 7, limits, &reason);
  ASSERT_FALSE(b);
  EXPECT_EQ(reason, "connection_turns");
  EXPECT_EQ(rpc_code_of(b.error()), -32001);
  EXPECT_EQ(message_of(b.error()),
            "Server overloaded: this connection has 1 running turns (limit 1); retry later.");
  EXPECT_EQ(table->of_tenant("acme").running_turns, 1);
  EXPECT_EQ(table->of_connection(7).running_turns, 1);
}

TEST(UsageTable, TenantLimitSpansConnectionsAndSparesOtherTenants) {
  auto table = std::make_shared<usage_table>();
  auto limits = tight();
  std::string reason;
  auto a = table->acquire(usage_kind::running_turns, "acme", 1, limits);
  auto b = table->acquire(usage_kind::running_turns, "acme", 2, limits);
  ASSERT_TRUE(a && b);
  auto c = table->acquire(usage_kind::running_turns, "acme", 3, limits, &reason);
  ASSERT_FALSE(c);
  EXPECT_EQ(reason, "tenant_turns");
  EXPECT_EQ(message_of(c.error()),
            "Server overloaded: tenant acme has 2 running turns (limit 2); retry later.");
  EXPECT_TRUE(table->acquire(usage_kind::running_turns, "globex", 3, limits));
  // A refusal holds nothing.
  EXPECT_EQ(table->of_connection(3).running_turns, 0);
}

TEST(UsageTable, ReleaseDropsUsageExactlyOnceAndForgetsEmptyHolders) {
  auto table = std::make_shared<usage_table>();
  auto limits = tight();
  {
    auto a = table->acquire(usage_kind::running_turns, "acme", 1, limits);
    ASSERT_TRUE(a);
    auto moved = std::move(*a);
    a->release();  // moved from: nothing
    EXPECT_EQ(table->of_tenant("acme").running_turns, 1);
    moved.release();
    moved.release();  // idempotent
    EXPECT_EQ(table->of_tenant("acme").running_turns, 0);
  }
  EXPECT_TRUE(table->tenants().empty());
  EXPECT_TRUE(table->acquire(usage_kind::running_turns, "acme", 1, limits));
}

TEST(UsageTable, ZeroMeansNoLimitAndForceIsNeverRefused) {
  auto table = std::make_shared<usage_table>();
  auto limits = tight();
  std::vector<usage_grant> held;
  for (int i = 0; i < 100; ++i) {
    auto g = table->acquire(usage_kind::loaded_threads, "acme", 1, limits);
    ASSERT_TRUE(g);
    held.push_back(std::move(*g));
  }
  for (int i = 0; i < 5; ++i) held.push_back(table->force(usage_kind::running_turns, "acme", 0));
  EXPECT_EQ(table->of_tenant("acme").loaded_threads, 100);
  EXPECT_EQ(table->of_tenant("acme").running_turns, 5);
  held.clear();
  EXPECT_TRUE(table->tenants().empty());
}

TEST(UsageTable, ManyThreadsNeverExceedTheLimitAndLeaveNothing) {
  auto table = std::make_shared<usage_table>();
  usage_limits limits;
  limits.tenant_pending_approvals = 8;
  limits.connection_pending_approvals = 0;
  std::atomic<int64_t> peak{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 8; ++w)
    workers.emplace_back([&, w] {
      for (int i = 0; i < 2000; ++i) {
        auto g = table->acquire(usage_kind::pending_approvals, "acme", uint64_t(w + 1), limits);
        auto now = table->of_tenant("acme").pending_approvals;
        int64_t seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
      }
    });
  for (auto& t : workers) t.join();
  EXPECT_LE(peak.load(), 8);
  EXPECT_GE(peak.load(), 1);
  EXPECT_TRUE(table->tenants().empty());
}

TEST(UsageTable, AGrantOutlivingItsTelemetryReleasesSafely) {
  usage_grant kept;
  {
    auto telemetry = std::make_shared<runtime_telemetry>();
    auto g = acquire_usage(telemetry, usage_kind::running_turns, "acme", 1, usage_limits{});
    ASSERT_TRUE(g);
    kept = std::move(*g);
  }
  kept.release();  // the table is still alive through the grant
}

TEST(UsageTable, RefusalsAreCountedByConstantReason) {
  auto telemetry = std::make_shared<runtime_telemetry>();
  usage_limits limits;
  limits.tenant_loaded_threads = 1;
  auto a = acquire_usage(telemetry, usage_kind::loaded_threads, "acme", 1, limits);
  ASSERT_TRUE(a);
  EXPECT_FALSE(acquire_usage(telemetry, usage_kind::loaded_threads, "acme", 2, limits));
  EXPECT_EQ(telemetry->limits.snapshot().at("tenant_threads"), 1u);
}

TEST(UsageLimits, KeysSetTheirLimitAndUnknownOnesAreRefused) {
  usage_limits l;
  EXPECT_TRUE(l.set("connection_pending_approvals", 3));
  EXPECT_EQ(l.connection_pending_approvals, 3);
  EXPECT_FALSE(l.set("tenant_turns", 3));
  EXPECT_NE(usage_limits::keys().find("tenant_running_turns"), std::string::npos);
}

}  // namespace
}  // namespace parley
