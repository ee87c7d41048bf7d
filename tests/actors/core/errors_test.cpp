// The one place where errors become JSON-RPC errors: CAF's own failures must
// reach a client as something it can act on, never as CAF's internal names.

#include "actors/core/errors.hpp"

#include <caf/sec.hpp>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace parley
