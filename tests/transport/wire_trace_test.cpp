// At trace level every line a connection reads and writes is logged to
// stderr with the connection's name, so a session can be replayed from the
// log; at the default level none is (lines may carry file contents).

#include <cstdlib>
#include <gtest/gtest.h>

#include "tests/support/app_server_client.hpp"

namespace parley::test {
namespace {

struct run_result {
  std::string out, err;
};

run_result serve(const std::string& input, const std::string& log_level) {
  auto dir = make_temp_dir("wire_trace_" + log_level);
  write_file(dir + "/in.jsonl", input);
  auto command = "'" + parley_binary() + "' app-server --store memory --log-level " + log_level +
                 " <'" + dir + "/in.jsonl' >'" + dir + "/out.jsonl' 2>'" + dir + "/err.txt'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return {read_file(dir + "/out.jsonl"), read_file(dir + "/err.txt")};
}

const std::string initialize =
    R"({"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}})";

TEST(WireTrace, every_line_in_and_out_is_traced_with_its_connection) {
  auto r = serve(initialize + "\n" + R"({"id":2,"method":"no/such"})" + "\n", "trace");
  EXPECT_NE(r.err.find("wire connection=stdio in=" + initialize), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(R"(wire connection=stdio in={"id":2,"method":"no/such"})"), std::string::npos);
  // Each line written to stdout is in the trace, word for word.
  size_t lines = 0;
  for (size_t at = 0, nl; (nl = r.out.find('\n', at)) != std::string::npos; at = nl + 1, ++lines)
    EXPECT_NE(r.err.find("wire connection=stdio out=" + r.out.substr(at, nl - at)),
              std::string::npos)
        << r.out.substr(at, nl - at);
  EXPECT_EQ(lines, 2u) << r.out;
}

TEST(WireTrace, nothing_is_traced_at_the_default_level) {
  auto r = serve(initialize + "\n", "info");
  EXPECT_NE(r.out.find(R"("id":1)"), std::string::npos);
  EXPECT_EQ(r.err.find("wire "), std::string::npos) << r.err;
}

}  // namespace
}  // namespace parley::test
