// The one place where errors become JSON-RPC errors: CAF's own failures must
// reach a client as something it can act on, never as CAF's internal names.

#include "actors/core/errors.hpp"

#include <caf/sec.hpp>
#include <gtest/gtest.h>

#include "actors/core/passed_rpc_error.hpp"
#include "protocol/jsonrpc.hpp"

namespace parley {
namespace {

TEST(errors, a_request_to_an_actor_that_went_away_reads_as_a_thread_not_loaded) {
  auto err = caf::make_error(caf::sec::request_receiver_down);
  EXPECT_EQ(rpc_code_of(err), protocol::rpc_code::invalid_request);
  auto message = rpc_message_of(err);
  EXPECT_EQ(message.find("request_receiver_down"), std::string::npos) << message;
  EXPECT_EQ(message.rfind("thread not loaded", 0), 0u) << message;
}

TEST(errors, a_timeout_inside_the_server_is_retryable) {
  auto err = caf::make_error(caf::sec::request_timeout);
  EXPECT_EQ(rpc_code_of(err), protocol::rpc_code::server_overloaded);
  EXPECT_EQ(rpc_message_of(err).find("request_timeout"), std::string::npos);
}

TEST(errors, other_caf_errors_are_internal_errors) {
  auto err = caf::make_error(caf::sec::unexpected_message);
  EXPECT_EQ(rpc_code_of(err), protocol::rpc_code::internal_error);
  EXPECT_EQ(rpc_message_of(err).rfind("Internal error: ", 0), 0u);
}

TEST(errors, parley_errors_keep_their_code_and_message) {
  auto err = make_error(errc::invalid_request, "thread not found: x");
  EXPECT_EQ(rpc_code_of(err), protocol::rpc_code::invalid_request);
  EXPECT_EQ(rpc_message_of(err), "thread not found: x");
  EXPECT_EQ(rpc_code_of(make_error(errc::unloading, "u")), protocol::rpc_code::invalid_request);
}

TEST(errors, a_peers_error_is_carried_whole_and_reads_as_its_summary_elsewhere) {
  auto err = make_passed_rpc_error("MCP server `s` refused tools/call `t`: more (-32042)",
                                   {-32042, "more", R"({"elicitations":[{"mode":"url"}]})"});
  auto passed = passed_rpc_error_of(err);
  ASSERT_TRUE(passed);
  EXPECT_EQ(passed->code, -32042);
  EXPECT_EQ(passed->message, "more");
  EXPECT_EQ(passed->data, R"({"elicitations":[{"mode":"url"}]})");
  // A path that does not look for it: -32603 with the summary.
  EXPECT_EQ(rpc_code_of(err), protocol::rpc_code::internal_error);
  EXPECT_EQ(message_of(err), "MCP server `s` refused tools/call `t`: more (-32042)");
  auto bare = passed_rpc_error_of(make_passed_rpc_error("x", {-32000, "it broke", ""}));
  ASSERT_TRUE(bare);
  EXPECT_TRUE(bare->data.empty());
  // parley's own errors and CAF's are no peer's.
  EXPECT_FALSE(passed_rpc_error_of(make_error(errc::internal, "x")));
  EXPECT_FALSE(passed_rpc_error_of(caf::make_error(caf::sec::request_timeout)));
  EXPECT_FALSE(passed_rpc_error_of(caf::error{}));
}

}  // namespace
}  // namespace parley
