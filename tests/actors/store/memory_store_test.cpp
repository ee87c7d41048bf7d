// The memory store's history of a thread: a thread that has only been
// created keeps no log of its own (its one record is what it folded to), so
// the log thread/revert replays is made from it when the next record comes.
// What a revert returns must be what it returned when every record was kept.
// Such a thread is kept as its metadata alone (issue 23, memory per idle
// loaded thread): a load, a list, an archive, its tenant and a revert must
// read it as they read the whole fold.

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

/// A fork's creation: it comes with a completed turn copied from its parent.
protocol::thread forked_meta() {
  auto t = created_meta();
  protocol::turn copied;
  copied.id = "t-0";
  copied.status = protocol::turn_status::completed;
  t.turns.push_back(copied);
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
  auto meta = forked_meta();
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

/// A created thread with every field of its metadata set.
protocol::thread full_meta() {
  auto t = created_meta();
  t.preview = "a preview";
  t.ephemeral = false;
  t.model = "gpt-test";
  t.updated_at = 1762500005;
  t.status = protocol::thread_status::idle();
  t.path = "/home/x/sessions/rollout.jsonl";
  t.cli_version = "0.169.0";
  t.source = "cli";
  t.name = "a name";
  t.forked_from_id = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80";
  protocol::git_info git;
  git.branch = "main";
  git.sha = "abc123";
  t.git = git;
  t.dynamic_tools = nlohmann::json::array({{{"name", "lookup"}}});
  t.tenant = "tenant-with-a-long-name";
  return t;
}

/// Everything of a thread's metadata, wire fields and the rest.
nlohmann::json all_of(const protocol::thread& t) {
  nlohmann::json j = t;
  j["_dynamic_tools"] = t.dynamic_tools;
  j["_tenant"] = t.tenant;
  return j;
}

TEST_F(memory_store_log, a_thread_only_created_loads_every_field_it_was_created_with) {
  auto meta = full_meta();
  append(thread_created_record{meta, {}});
  auto loaded = ask<stored_thread>(atom::load::value, std::string{kThread});
  ASSERT_TRUE(loaded) << caf::to_string(loaded.error());
  EXPECT_EQ(all_of(loaded->meta), all_of(meta));
  EXPECT_FALSE(loaded->archived);
  EXPECT_TRUE(loaded->context.empty());
  EXPECT_FALSE(loaded->pending);
  EXPECT_FALSE(loaded->goal);
  auto tenant = ask<std::string>(atom::tenant::value, std::string{kThread});
  ASSERT_TRUE(tenant);
  EXPECT_EQ(*tenant, "tenant-with-a-long-name");
  // Its next record makes its history from what it was created with.
  add_turn(*this, "t-1", 1762500010, "first");
  auto after = ask<stored_thread>(atom::load::value, std::string{kThread});
  ASSERT_TRUE(after);
  ASSERT_EQ(after->meta.turns.size(), 1u);
  auto expected = meta;
  expected.turns = after->meta.turns;
  expected.updated_at = 1762500011;
  EXPECT_EQ(all_of(after->meta), all_of(expected));
  auto back = ask<stored_thread>(atom::revert::value, std::string{kThread}, std::string{"t-1"});
  ASSERT_TRUE(back) << caf::to_string(back.error());
  EXPECT_TRUE(back->meta.turns.empty());
  EXPECT_EQ(back->meta.git, meta.git);
  EXPECT_EQ(back->meta.dynamic_tools, meta.dynamic_tools);
  EXPECT_EQ(back->meta.tenant, meta.tenant);
}

TEST_F(memory_store_log, a_thread_only_created_is_not_listed_nor_archived_until_its_first_turn) {
  append(thread_created_record{full_meta(), {}});
  protocol::thread_list_params everyone;
  auto listed = ask<protocol::thread_list_response>(atom::list::value, everyone);
  ASSERT_TRUE(listed);
  EXPECT_TRUE(listed->data.empty());
  auto archived = ask<stored_thread>(atom::archive::value, std::string{kThread}, true);
  ASSERT_FALSE(archived);
  EXPECT_TRUE(is_errc(archived.error(), errc::invalid_request));
  auto pending = ask<std::vector<pending_thread>>(atom::pending::value);
  ASSERT_TRUE(pending);
  EXPECT_TRUE(pending->empty());

  add_turn(*this, "t-1", 1762500010, "first");
  listed = ask<protocol::thread_list_response>(atom::list::value, everyone);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->data.size(), 1u);
  EXPECT_EQ(listed->data[0].id, kThread);
  EXPECT_EQ(listed->data[0].name, std::optional<std::string>{"a name"});
  protocol::thread_list_params others;
  others.tenant = "someone-else";
  listed = ask<protocol::thread_list_response>(atom::list::value, others);
  ASSERT_TRUE(listed);
  EXPECT_TRUE(listed->data.empty());
  archived = ask<stored_thread>(atom::archive::value, std::string{kThread}, true);
  ASSERT_TRUE(archived) << caf::to_string(archived.error());
  EXPECT_TRUE(archived->archived);
  EXPECT_EQ(archived->meta.tenant, "tenant-with-a-long-name");
}

TEST_F(memory_store_log, a_thread_only_created_is_erased_and_not_brought_back) {
  append(thread_created_record{created_meta(), {}});
  auto erased = ask<atom::ok>(atom::erase::value, std::string{kThread});
  ASSERT_TRUE(erased);
  EXPECT_FALSE(ask<stored_thread>(atom::load::value, std::string{kThread}));
  EXPECT_FALSE(ask<atom::ok>(atom::append::value, std::string{kThread},
                             store_record{turn_started_record{"t-1", 1762500010}}));
  EXPECT_FALSE(ask<std::string>(atom::tenant::value, std::string{kThread}));
}

TEST_F(memory_store_log, a_forks_copied_context_loads_with_its_turns) {
  auto meta = forked_meta();
  std::vector<context_item> context{{"t-0", nlohmann::json{{"type", "message"}}, false}};
  append(thread_created_record{meta, context});
  auto loaded = ask<stored_thread>(atom::load::value, std::string{kThread});
  ASSERT_TRUE(loaded) << caf::to_string(loaded.error());
  ASSERT_EQ(loaded->meta.turns.size(), 1u);
  ASSERT_EQ(loaded->context.size(), 1u);
  EXPECT_EQ(loaded->context[0].turn_id, "t-0");
  EXPECT_EQ(loaded->context[0].item, (nlohmann::json{{"type", "message"}}));
}

}  // namespace memory_store_test
}  // namespace parley
