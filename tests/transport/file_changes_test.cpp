// File-change approvals (issue 4 §4) against the real binary: the scripted
// model's `patch:` step becomes a fileChange item, asks
// item/fileChange/requestApproval, and only an accept changes the files, all
// of them or none.

#include <filesystem>
#include <gtest/gtest.h>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

constexpr const char* file_approval = "item/fileChange/requestApproval";

class file_changes : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = make_temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    work = dir + "/work";
    std::filesystem::create_directories(work);
    client = std::make_unique<app_server_client>();
    client->initialize();
    thread = client->start_thread(json{{"cwd", work}});
  }

  json file_item_completed() {
    return client->wait_for([](const json& m) {
      return method_of(m) == "item/completed" && m["params"]["item"]["type"] == "fileChange";
    });
  }

  json turn_completed() { return client->wait_for_method("turn/completed"); }

  /// Whether an approval request arrives for this thread.
  bool asked(std::chrono::milliseconds wait) {
    return client->arrives([](const json& m) { return method_of(m) == file_approval; }, wait);
  }

  std::string dir, work, thread;
  std::unique_ptr<app_server_client> client;
};

const std::string every_kind_of_change =
    "patch:\n"
    "*** Begin Patch\n"
    "*** Add File: added.txt\n"
    "+new file\n"
    "*** Update File: edited.txt\n"
    "@@\n"
    " keep\n"
    "-old line\n"
    "+new line\n"
    "*** Delete File: removed.txt\n"
    "*** Update File: before.txt\n"
    "*** Move to: after.txt\n"
    "@@\n"
    "-moved\n"
    "+moved and changed\n"
    "*** End Patch";

TEST_F(file_changes, accepted_patch_applies_add_update_delete_and_move) {
  write_file(work + "/edited.txt", "keep\nold line\n");
  write_file(work + "/removed.txt", "bye\n");
  write_file(work + "/before.txt", "moved\n");
  client->start_turn(thread, every_kind_of_change);

  auto started = client->wait_for([](const json& m) {
    return method_of(m) == "item/started" && m["params"]["item"]["type"] == "fileChange";
  });
  auto item = started["params"]["item"];
  EXPECT_EQ(item["status"], "inProgress");
  ASSERT_EQ(item["changes"].size(), 4u);
  std::map<std::string, json> by_path;
  for (auto& c : item["changes"]) by_path[c["path"].get<std::string>()] = c;
  EXPECT_EQ(by_path[work + "/added.txt"]["kind"]["type"], "add");
  EXPECT_EQ(by_path[work + "/added.txt"]["diff"], "new file\n");
  EXPECT_EQ(by_path[work + "/edited.txt"]["kind"]["type"], "update");
  EXPECT_NE(by_path[work + "/edited.txt"]["diff"].get<std::string>().find("-old line\n+new line"),
            std::string::npos);
  EXPECT_EQ(by_path[work + "/removed.txt"]["kind"]["type"], "delete");
  EXPECT_EQ(by_path[work + "/before.txt"]["kind"]["move_path"], work + "/after.txt");

  auto req = client->wait_for_method(file_approval);
  EXPECT_EQ(req["params"]["threadId"], thread);
  EXPECT_EQ(req["params"]["itemId"], item["id"]);
  EXPECT_TRUE(req["params"]["startedAtMs"].is_number_integer());
  // Nothing is written before the decision.
  EXPECT_FALSE(file_exists(work + "/added.txt"));
  EXPECT_EQ(read_file(work + "/edited.txt"), "keep\nold line\n");
  client->answer(req, "accept");

  auto done = file_item_completed();
  EXPECT_EQ(done["params"]["item"]["status"], "completed");
  auto diff = client->wait_for_method("turn/diff/updated");
  EXPECT_EQ(diff["params"]["threadId"], thread);
  auto text = diff["params"]["diff"].get<std::string>();
  EXPECT_NE(text.find("+new file"), std::string::npos);
  EXPECT_NE(text.find("+new line"), std::string::npos);
  EXPECT_NE(text.find("after.txt"), std::string::npos);
  EXPECT_EQ(turn_completed()["params"]["turn"]["status"], "completed");

  EXPECT_EQ(read_file(work + "/added.txt"), "new file\n");
  EXPECT_EQ(read_file(work + "/edited.txt"), "keep\nnew line\n");
  EXPECT_FALSE(file_exists(work + "/removed.txt"));
  EXPECT_FALSE(file_exists(work + "/before.txt"));
  EXPECT_EQ(read_file(work + "/after.txt"), "moved and changed\n");

  // The order of protocol.md §4: item/started, status waiting, request,
  // resolved, item/completed, turn/diff/updated.
  std::vector<std::string> order;
  for (auto& m : client->thread_log(thread)) {
    auto method = method_of(m);
    if (method == "item/started" && m["params"]["item"]["type"] == "fileChange")
      order.push_back("started");
    else if (method == "thread/status/changed" && !m["params"]["status"]["activeFlags"].empty())
      order.push_back("waiting");
    else if (method == file_approval)
      order.push_back("request");
    else if (method == "serverRequest/resolved")
      order.push_back("resolved");
    else if (method == "item/completed" && m["params"]["item"]["type"] == "fileChange")
      order.push_back("completed");
    else if (method == "turn/diff/updated")
      order.push_back("diff");
  }
  EXPECT_EQ(order, (std::vector<std::string>{"started", "waiting", "request", "resolved",
                                             "completed", "diff"}));

  // The item is in the thread's history as it completed.
  auto read = client->call_ok("thread/read", json{{"threadId", thread}, {"includeTurns", true}});
  bool stored = false;
  for (auto& t : read["thread"]["turns"])
    for (auto& i : t["items"])
      if (i["type"] == "fileChange") {
        stored = true;
        EXPECT_EQ(i["status"], "completed");
        EXPECT_EQ(i["changes"].size(), 4u);
      }
  EXPECT_TRUE(stored);
  EXPECT_EQ(client->close_and_wait(), 0);
}

TEST_F(file_changes, a_hunk_that_does_not_apply_changes_nothing) {
  write_file(work + "/edited.txt", "something else entirely\n");
  client->start_turn(thread,
                     "patch:\n*** Begin Patch\n*** Add File: added.txt\n+x\n"
                     "*** Update File: edited.txt\n@@\n-old line\n+new line\n*** End Patch");
  auto done = file_item_completed();
  EXPECT_EQ(done["params"]["item"]["status"], "failed");
  // The reason is reported, and nobody was asked to approve a broken patch.
  auto said = client->wait_for([](const json& m) {
    return method_of(m) == "item/completed" && m["params"]["item"]["type"] == "agentMessage";
  });
  EXPECT_NE(said["params"]["item"]["text"].get<std::string>().find("edited.txt"), std::string::npos);
  turn_completed();
  EXPECT_FALSE(asked(0ms));
  EXPECT_FALSE(file_exists(work + "/added.txt"));
  EXPECT_EQ(read_file(work + "/edited.txt"), "something else entirely\n");
  EXPECT_EQ(client->close_and_wait(), 0);
}

TEST_F(file_changes, a_declined_patch_changes_nothing) {
  write_file(work + "/edited.txt", "keep\nold line\n");
  client->start_turn(thread,
                     "patch:\n*** Begin Patch\n*** Add File: added.txt\n+x\n"
                     "*** Update File: edited.txt\n@@\n keep\n-old line\n+new line\n*** End Patch");
  client->answer(client->wait_for_method(file_approval), "decline");
  EXPECT_EQ(file_item_completed()["params"]["item"]["status"], "declined");
  EXPECT_EQ(turn_completed()["params"]["turn"]["status"], "completed");
  EXPECT_FALSE(file_exists(work + "/added.txt"));
  EXPECT_EQ(read_file(work + "/edited.txt"), "keep\nold line\n");
  EXPECT_EQ(client->close_and_wait(), 0);
}

TEST_F(file_changes, an_error_reply_declines_and_cancel_interrupts) {
  client->start_turn(thread, "patch:\n*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch");
  client->respond_error(client->wait_for_method(file_approval)["id"], -32000, "no thanks");
  EXPECT_EQ(file_item_completed()["params"]["item"]["status"], "declined");
  turn_completed();
  EXPECT_FALSE(file_exists(work + "/a.txt"));

  client->start_turn(thread, "patch:\n*** Begin Patch\n*** Add File: b.txt\n+x\n*** End Patch");
  client->answer(client->wait_for_method(file_approval), "cancel");
  EXPECT_EQ(file_item_completed()["params"]["item"]["status"], "declined");
  EXPECT_EQ(turn_completed()["params"]["turn"]["status"], "interrupted");
  EXPECT_FALSE(file_exists(work + "/b.txt"));
  EXPECT_EQ(client->close_and_wait(), 0);
}

TEST_F(file_changes, files_outside_the_writable_roots_are_refused_without_asking) {
  client->start_turn(thread,
                     "patch:\n*** Begin Patch\n*** Add File: ../escaped.txt\n+x\n*** End Patch");
  EXPECT_EQ(file_item_completed()["params"]["item"]["status"], "declined");
  turn_completed();
  EXPECT_FALSE(asked(0ms));
  EXPECT_FALSE(file_exists(dir + "/escaped.txt"));
  EXPECT_EQ(client->close_and_wait(), 0);
}

// Issue 9, defect 7: with `never` nobody is asked, so the roots check is all
// that stands between a patch and the files outside; a directory symlink in
// the cwd must not lead past it.
TEST_F(file_changes, a_directory_symlink_does_not_lead_a_patch_out_of_the_roots) {
  auto outside = dir + "/outside";
  write_file(outside + "/target.txt", "outside\n");
  std::filesystem::create_directory_symlink(outside, work + "/dirlink");
  auto never = client->start_thread(
      json{{"cwd", work}, {"approvalPolicy", "never"}, {"sandbox", "workspace-write"}});
  for (std::string body : {"*** Add File: dirlink/new.txt\n+x\n",
                           "*** Update File: dirlink/target.txt\n@@\n-outside\n+changed\n",
                           "*** Delete File: dirlink/target.txt\n"}) {
    client->start_turn(never, "patch:\n*** Begin Patch\n" + body + "*** End Patch");
    auto item = file_item_completed()["params"]["item"];
    EXPECT_EQ(item["status"], "declined") << body;
    auto said = client->wait_for([](const json& m) {
      return method_of(m) == "item/completed" && m["params"]["item"]["type"] == "agentMessage";
    });
    EXPECT_NE(said["params"]["item"]["text"].get<std::string>().find("outside the writable roots"),
              std::string::npos)
        << said.dump();
    turn_completed();
    EXPECT_FALSE(file_exists(outside + "/new.txt")) << body;
    EXPECT_EQ(read_file(outside + "/target.txt"), "outside\n") << body;
  }
  EXPECT_FALSE(asked(0ms));
  EXPECT_EQ(client->close_and_wait(), 0);
}

TEST_F(file_changes, accept_for_session_covers_later_changes_to_the_same_files) {
  client->start_turn(thread, "patch:\n*** Begin Patch\n*** Add File: a.txt\n+one\n*** End Patch");
  client->answer(client->wait_for_method(file_approval), "acceptForSession");
  EXPECT_EQ(file_item_completed()["params"]["item"]["status"], "completed");
  turn_completed();
  client->start_turn(thread, "patch:\n*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n"
                             "*** End Patch");
  EXPECT_EQ(file_item_completed()["params"]["item"]["status"], "completed");
  turn_completed();
  EXPECT_EQ(read_file(work + "/a.txt"), "two\n");
  EXPECT_EQ(client->close_and_wait(), 0);
  size_t requests = 0;
  for (auto& m : client->log()) requests += method_of(m) == file_approval ? 1 : 0;
  EXPECT_EQ(requests, 1u) << "the second change to a.txt was covered by the session grant";
}

}  // namespace
}  // namespace parley::test
