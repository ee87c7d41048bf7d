// The memory store's history of a thread: a thread that has only been
// created keeps no log of its own (its one record is what it folded to), so
// the log thread/revert replays is made from it when the next record comes.
// What a revert returns must be what it returned when every record was kept.

#include <gtest/gtest.h>

#include <caf/scoped_actor.hpp>

#include "actors/core/errors.hpp"
#include "actors/runtime/runtime.hpp"
#include "actors/store/memory_store.hpp"

namespace parley {
namespace memory_store_test {  // named: the test executables are unity builds

const char* kThread = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c81";

struct memory_store_log : ::testing::Test {
  memory_store_log() {
    runtime_config cfg;
    cfg.scheduler_threads = 2;
    rt = std::make_unique<runtime>(cfg);
    store = rt->system().spawn(memory_store, std::make_shared<const runtime_config>(cfg));
  }
  ~memory_store_log() override { caf::anon_send_exit(store, caf::exit_reason::user_shutdown); }

  template <class Result, class... Ts>
  caf::expected<Result> ask(Ts&&... xs) {
    caf::scoped_actor self{rt->system()};
    caf::expected<Result> out{caf::error{}};
    self->request(store, std::chrono::seconds(10), std::forward<Ts>(xs)...)
        .receive([&](Result& r) { out = std::move(r); }, [&](caf::error& err) { out = err; });
    return out;
  }

  void append(const store_record& r) {
    auto ok = ask<atom::ok>(atom::append::value, std::string{kThread}, r);
    ASSERT_TRUE(ok) << caf::to_string(ok.error());
  }

  std::unique_ptr<runtime> rt;
  store_actor store;
};

protocol::thread created_meta() {
  protocol::thread t;
  t.id = kThread;
  t.created_at = 1762500000;
  t.updated_at = 1762500000;
  t.cwd = "/w";
  t.model_provider = "mock";
  t.preview = "";
  return t;
}

void add_turn(memory_store_log& f, const std::string& turn, int64_t at, const std::string& text) {
  f.append(turn_started_record{turn, at});
  protocol::user_message_item u{"u-" + turn, {protocol::user_input::make_text(text)}, std::nullopt};
  f.append(item_record{turn, u, true});
  protocol::turn done;
  done.id = turn;
  done.status = protocol::turn_status::completed;
  done.completed_at = at + 1;
  f.append(turn_completed_record{done});
}

TEST_F(memory_store_log, a_thread_only_created_reverts_as_it_was_created) {
  append(thread_created_record{created_meta(), {}});
  auto none = ask<stored_thread>(atom::revert::value, std::string{kThread}, std::string{"t-x"});
  ASSERT_FALSE(none);
  EXPECT_TRUE(is_errc(none.error(), errc::invalid_request));
  auto loaded = ask<stored_thread>(atom::load::value, std::string{kThread});
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->meta.cwd, "/w");
  EXPECT_TRUE(loaded->meta.turns.empty());
}

TEST_F(memory_store_log, a_revert_replays_the_creation_and_what_came_after_it) {
  append(thread_created_record{created_meta(), {}});
  append(thread_renamed_record{std::string{"named"}});  // the log is made here
  add_turn(*this, "t-1", 1762500010, "first");
  add_turn(*this, "t-2", 1762500020, "second");
  auto kept = ask<stored_thread>(atom::revert::value, std::string{kThread}, std::string{"t-2"});
  ASSERT_TRUE(kept) << caf::to_string(kept.error());
  ASSERT_EQ(kept->meta.turns.size(), 1u);
  EXPECT_EQ(kept->meta.turns[0].id, "t-1");
  EXPECT_EQ(kept->meta.name, std::optional<std::string>{"named"});
  EXPECT_EQ(kept->meta.preview, "first");
  EXPECT_EQ(kept->meta.cwd, "/w");
  EXPECT_EQ(kept->meta.created_at, 1762500000);
  // Back to before the first turn: the thread as created, still named.
  auto first = ask<stored_thread>(atom::revert::value, std::string{kThread}, std::string{"t-1"});
  ASSERT_TRUE(first) << caf::to_string(first.error());
  EXPECT_TRUE(first->meta.turns.empty());
  EXPECT_EQ(first->meta.preview, "");
  EXPECT_EQ(first->meta.name, std::optional<std::string>{"named"});
  EXPECT_EQ(first->meta.model_provider, "mock");
  auto loaded = ask<stored_thread>(atom::load::value, std::string{kThread});
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(loaded->meta.turns.empty());
}

TEST_F(memory_store_log, a_forks_copied_turns_are_kept_by_a_revert_before_its_own) {
  auto meta = created_meta();
  protocol::turn copied;
  copied.id = "t-0";
  copied.status = protocol::turn_status::completed;
  meta.turns.push_back(copied);
  append(thread_created_record{meta, {}});
  add_turn(*this, "t-1", 1762500010, "own");
  auto kept = ask<stored_thread>(atom::revert::value, std::string{kThread}, std::string{"t-1"});
  ASSERT_TRUE(kept) << caf::to_string(kept.error());
  ASSERT_EQ(kept->meta.turns.size(), 1u);
  EXPECT_EQ(kept->meta.turns[0].id, "t-0");
}

TEST_F(memory_store_log, a_record_for_a_thread_never_created_is_refused) {
  auto refused = ask<atom::ok>(atom::append::value, std::string{kThread},
                               store_record{thread_renamed_record{std::string{"x"}}});
  EXPECT_FALSE(refused);
  EXPECT_FALSE(ask<stored_thread>(atom::load::value, std::string{kThread}));
}

}  // namespace memory_store_test
}  // namespace parley
