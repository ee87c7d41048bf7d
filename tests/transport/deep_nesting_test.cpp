// A request nested far deeper than any real one (100,000 levels) must not
// take the server down: it is answered with an error for its id, and the
// server keeps serving everyone.

#include <gtest/gtest.h>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

std::string nested_arrays(size_t levels) {
  return std::string(levels, '[') + std::string(levels, ']');
}

TEST(deep_nesting, a_100000_level_request_is_refused_for_its_id_and_the_server_keeps_serving) {
  app_server_client c;
  c.initialize();
  auto thread = c.start_thread();
  c.send_raw(R"({"id":"deep","method":"thread/loaded/list","params":{"x":)" + nested_arrays(100000)
             + "}}");
  auto r = c.wait_for([](const json& m) { return m.contains("id") && m["id"] == "deep"; }, 30s);
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["error"]["code"], -32600);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("nested deeper than 128 levels"),
            std::string::npos)
      << r.dump();
  // Deep notifications and deep junk get no reply and change nothing.
  c.send_raw(R"({"method":"initialized","params":)" + nested_arrays(100000) + "}");
  c.send_raw(nested_arrays(100000));
  auto list = c.call_ok("thread/loaded/list");
  EXPECT_EQ(list["data"], json::array({thread})) << list.dump();
  EXPECT_EQ(c.close_and_wait(), 0);
  EXPECT_TRUE(c.bad_lines().empty());
}

TEST(deep_nesting, requests_within_the_bound_are_handled_as_usual) {
  app_server_client c;
  c.initialize();
  // 2 levels of envelope and params, 126 of arrays: 128 in all.
  auto r = c.call("thread/loaded/list", json::parse(R"({"x":)" + nested_arrays(126) + "}"));
  EXPECT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(c.close_and_wait(), 0);
}

}  // namespace
}  // namespace parley::test
