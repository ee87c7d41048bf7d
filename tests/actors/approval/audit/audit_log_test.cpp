#include "actors/approval/audit/audit_log.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace parley::audit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// 2026-11-21T08:00:00.123Z: a fixed clock keeps the lines byte-for-byte
// reproducible.
constexpr std::int64_t fixed_ms = 1795248000123;

audit_options fixed_clock() {
  audit_options opts;
  opts.now_ms = [] { return fixed_ms; };
  return opts;
}

record decided(int approval, const std::string& decision) {
  return {"decided", json{{"approval", std::to_string(approval)},
                          {"thread", "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80"},
                          {"turn", "019a5c3e-7b44-7d02-8e11-90ab12cd34ef"},
                          {"item", "call_" + std::to_string(approval)},
                          {"stage", "client"},
                          {"decision", decision},
                          {"latency_ms", 12.5}}};
}

record requested(int approval) {
  return {"requested", json{{"approval", std::to_string(approval)}, {"command", "ls -l"}}};
}

std::string read_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& data) {
  std::ofstream out{path, std::ios::binary | std::ios::trunc};
  out << data;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in{path, std::ios::binary};
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::string data;
  for (auto& l : lines) data += l + "\n";
  write_file(path, data);
}

class audit_log_test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tmpl = (fs::temp_directory_path() / "parley-audit-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/approvals.jsonl";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  /// Writes `n` records (requested/decided pairs) to a fresh log; returns its head.
  std::string write_records(int n) {
    auto opened = audit_log::open(path_, fixed_clock());
    EXPECT_TRUE(opened) << opened.error;
    if (!opened) return {};
    for (int i = 1; i <= n; ++i) {
      auto err = opened.log->append(i % 2 ? requested(i) : decided(i, "accept"));
      EXPECT_FALSE(err) << *err;
    }
    return opened.log->head();
  }

  std::string dir_;
  std::string path_;
};

// -- SHA-256 ------------------------------------------------------------------

TEST(sha256, fips_180_4_vectors) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                       "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(sha256, one_million_a_in_one_piece_and_in_odd_pieces) {
  const std::string million(1000000, 'a');
  const std::string expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  EXPECT_EQ(sha256_hex(million), expected);
  sha256 s;
  std::string_view rest = million;
  while (!rest.empty()) {  // 997 is prime: pieces straddle every block boundary
    auto n = std::min<std::size_t>(997, rest.size());
    s.update(rest.substr(0, n));
    rest.remove_prefix(n);
  }
  EXPECT_EQ(to_hex(s.finish()), expected);
}

TEST(sha256, padding_boundaries) {
  // Around 55/56 bytes the length no longer fits the last block; around 64 a
  // block is full. Expected values from coreutils' sha256sum.
  const std::vector<std::pair<std::size_t, std::string>> cases
      = {{55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
         {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
         {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
         {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
         {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
         {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
         {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"}};
  for (auto& [n, hex] : cases) EXPECT_EQ(sha256_hex(std::string(n, 'a')), hex) << n << " bytes";
}

// -- appending -----------------------------------------------------------------

TEST_F(audit_log_test, appended_lines_form_a_chain) {
  auto opened = audit_log::open(path_, fixed_clock());
  ASSERT_TRUE(opened) << opened.error;
  EXPECT_TRUE(opened.torn_tail.empty());
  auto& log = *opened.log;
  EXPECT_EQ(log.next_seq(), 1u);
  EXPECT_EQ(log.head(), genesis_prev);
  for (int i = 1; i <= 4; ++i)
    ASSERT_FALSE(log.append(i % 2 ? requested(i) : decided(i, "accept")));
  EXPECT_EQ(log.next_seq(), 5u);

  auto lines = read_lines(path_);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind(R"({"seq":1,"ts":"2026-11-21T08:00:00.123Z","event":"requested",)", 0),
            0u)
      << "seq, ts and event come first: " << lines[0];
  EXPECT_EQ(lines[1],
            R"({"seq":2,"ts":"2026-11-21T08:00:00.123Z","event":"decided","approval":"2",)"
            R"("decision":"accept","item":"call_2","latency_ms":12.5,"stage":"client",)"
            R"("thread":"019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80",)"
            R"("turn":"019a5c3e-7b44-7d02-8e11-90ab12cd34ef","prev":")"
                + sha256_hex(lines[0]) + R"("})");
  std::string prev{genesis_prev};
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto j = json::parse(lines[i]);
    EXPECT_EQ(j["seq"], i + 1);
    EXPECT_EQ(j["prev"], prev) << "line " << i + 1;
    prev = sha256_hex(lines[i]);
  }
  EXPECT_EQ(log.head(), prev);

  auto report = verify(path_, log.head());
  EXPECT_TRUE(report.ok) << report.reason;
  EXPECT_EQ(report.lines, 4u);
  EXPECT_FALSE(report.first_bad_line);
  EXPECT_EQ(report.head, log.head());
}

TEST_F(audit_log_test, reopening_continues_the_chain) {
  auto head = write_records(3);
  auto opened = audit_log::open(path_, fixed_clock());
  ASSERT_TRUE(opened) << opened.error;
  EXPECT_TRUE(opened.torn_tail.empty());
  EXPECT_EQ(opened.log->next_seq(), 4u);
  EXPECT_EQ(opened.log->head(), head);
  ASSERT_FALSE(opened.log->append(decided(4, "decline")));
  ASSERT_FALSE(opened.log->append({"timed_out", json{{"approval", "5"}}}));

  auto lines = read_lines(path_);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(json::parse(lines[3])["seq"], 4);
  EXPECT_EQ(json::parse(lines[3])["prev"], sha256_hex(lines[2]));
  auto report = verify(path_, opened.log->head());
  EXPECT_TRUE(report.ok) << report.reason;
  EXPECT_EQ(report.lines, 5u);
}

TEST_F(audit_log_test, the_system_clock_stamps_lines_by_default) {
  auto opened = audit_log::open(path_);
  ASSERT_TRUE(opened) << opened.error;
  ASSERT_FALSE(opened.log->append(requested(1)));
  auto ts = json::parse(read_lines(path_).at(0))["ts"].get<std::string>();
  ASSERT_EQ(ts.size(), 24u) << ts;  // 2026-11-21T08:00:00.123Z
  EXPECT_EQ(ts[10], 'T');
  EXPECT_EQ(ts[19], '.');
  EXPECT_EQ(ts.back(), 'Z');
}

TEST_F(audit_log_test, fsync_mode_appends_the_same_lines) {
  auto opts = fixed_clock();
  opts.fsync = true;
  auto opened = audit_log::open(path_, opts);
  ASSERT_TRUE(opened) << opened.error;
  ASSERT_FALSE(opened.log->append(requested(1)));
  ASSERT_FALSE(opened.log->append(decided(1, "accept")));
  EXPECT_TRUE(verify(path_, opened.log->head()).ok);
}

TEST_F(audit_log_test, invalid_records_are_refused_and_write_nothing) {
  auto opened = audit_log::open(path_, fixed_clock());
  ASSERT_TRUE(opened) << opened.error;
  auto& log = *opened.log;
  ASSERT_FALSE(log.append(requested(1)));
  auto before = read_file(path_);
  EXPECT_TRUE(log.append({"", json::object()}));
  EXPECT_TRUE(log.append({"decided", json::array({1, 2})}));
  EXPECT_TRUE(log.append({"decided", json{{"seq", 7}}}));
  EXPECT_TRUE(log.append({"decided", json{{"prev", genesis_prev}}}));
  EXPECT_TRUE(log.append({"decided", json{{"ts", "now"}}}));
  EXPECT_TRUE(log.append({"decided", json{{"event", "x"}}}));
  EXPECT_EQ(read_file(path_), before);
  EXPECT_EQ(log.next_seq(), 2u);
  ASSERT_FALSE(log.append({"cancelled", nullptr})) << "null fields mean none";
  EXPECT_TRUE(verify(path_, log.head()).ok);
}

TEST_F(audit_log_test, invalid_utf8_is_replaced_not_lost) {
  auto opened = audit_log::open(path_, fixed_clock());
  ASSERT_TRUE(opened) << opened.error;
  ASSERT_FALSE(opened.log->append({"requested", json{{"command", "echo \xff\xfe"}}}));
  auto j = json::parse(read_lines(path_).at(0));
  EXPECT_EQ(j["command"], "echo \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_TRUE(verify(path_, opened.log->head()).ok);
}

TEST_F(audit_log_test, a_second_writer_is_refused_until_the_first_closes) {
  {
    auto first = audit_log::open(path_, fixed_clock());
    ASSERT_TRUE(first) << first.error;
    auto second = audit_log::open(path_, fixed_clock());
    EXPECT_FALSE(second);
    EXPECT_NE(second.error.find("already open"), std::string::npos) << second.error;
    auto moved = std::move(*first.log);  // the lock moves with the log
    EXPECT_FALSE(audit_log::open(path_, fixed_clock()));
    EXPECT_TRUE(first.log->append(requested(1))) << "a moved-from log refuses";
    EXPECT_FALSE(moved.append(requested(1)));
  }
  auto again = audit_log::open(path_, fixed_clock());
  ASSERT_TRUE(again) << again.error;
  EXPECT_EQ(again.log->next_seq(), 2u);
}

TEST_F(audit_log_test, open_refuses_a_log_whose_last_line_is_damaged) {
  write_records(2);
  write_file(path_, read_file(path_) + "garbage\n");
  auto opened = audit_log::open(path_, fixed_clock());
  EXPECT_FALSE(opened);
  EXPECT_NE(opened.error.find("not an audit record"), std::string::npos) << opened.error;
  EXPECT_FALSE(audit_log::open(dir_, fixed_clock())) << "a directory is not a log";
}

// -- torn tails ----------------------------------------------------------------

TEST_F(audit_log_test, open_cuts_off_a_torn_last_line_and_the_chain_goes_on) {
  write_records(3);
  auto intact = read_file(path_);
  // A crash in the middle of writing line 4.
  const std::string torn = R"({"seq":4,"ts":"2026-11-21T08:00:00.123Z","event":"deci)";
  write_file(path_, intact + torn);

  auto report = verify(path_);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_line, 4u);
  EXPECT_EQ(report.lines, 4u);
  EXPECT_NE(report.reason.find("torn"), std::string::npos) << report.reason;

  auto opened = audit_log::open(path_, fixed_clock());
  ASSERT_TRUE(opened) << opened.error;
  EXPECT_EQ(opened.torn_tail, torn) << "returned for the caller to log";
  EXPECT_EQ(read_file(path_), intact);
  EXPECT_EQ(opened.log->next_seq(), 4u);
  ASSERT_FALSE(opened.log->append(decided(3, "accept")));
  report = verify(path_, opened.log->head());
  EXPECT_TRUE(report.ok) << report.reason;
  EXPECT_EQ(report.lines, 4u);
}

TEST_F(audit_log_test, a_log_that_is_only_a_torn_line_starts_over) {
  write_file(path_, R"({"seq":1,"ts":"2026-11-)");
  auto opened = audit_log::open(path_, fixed_clock());
  ASSERT_TRUE(opened) << opened.error;
  EXPECT_EQ(opened.torn_tail, R"({"seq":1,"ts":"2026-11-)");
  EXPECT_EQ(opened.log->next_seq(), 1u);
  EXPECT_EQ(opened.log->head(), genesis_prev);
  EXPECT_EQ(read_file(path_), "");
  ASSERT_FALSE(opened.log->append(requested(1)));
  EXPECT_TRUE(verify(path_, opened.log->head()).ok);
}

TEST_F(audit_log_test, a_torn_tail_longer_than_a_read_block_is_cut_whole) {
  write_records(2);
  auto intact = read_file(path_);
  const std::string torn = R"({"seq":3,"command":")" + std::string(10000, 'x');
  write_file(path_, intact + torn);
  auto opened = audit_log::open(path_, fixed_clock());
  ASSERT_TRUE(opened) << opened.error;
  EXPECT_EQ(opened.torn_tail, torn);
  EXPECT_EQ(opened.log->next_seq(), 3u);
  EXPECT_EQ(read_file(path_), intact);
}

// -- verify --------------------------------------------------------------------

TEST_F(audit_log_test, an_empty_log_verifies_and_a_missing_one_does_not) {
  ASSERT_TRUE(audit_log::open(path_, fixed_clock()));
  auto report = verify(path_, genesis_prev);
  EXPECT_TRUE(report.ok) << report.reason;
  EXPECT_EQ(report.lines, 0u);
  EXPECT_EQ(report.head, genesis_prev);

  report = verify(dir_ + "/missing.jsonl");
  EXPECT_FALSE(report.ok);
  EXPECT_FALSE(report.first_bad_line);
  EXPECT_NE(report.reason.find("cannot open"), std::string::npos) << report.reason;
}

TEST_F(audit_log_test, a_one_byte_edit_in_a_middle_line_is_reported_at_that_line) {
  auto head = write_records(5);
  const auto lines = read_lines(path_);
  auto edit = [&](const std::string& from, const std::string& to) {
    auto copy = lines;
    auto at = copy[2].find(from);
    EXPECT_NE(at, std::string::npos) << from;
    copy[2].replace(at, from.size(), to);
    EXPECT_EQ(copy[2].size(), lines[2].size()) << "one byte";
    write_lines(path_, copy);
  };
  struct edit_case {
    std::string what, from, to;
  };
  auto prev_digit = json::parse(lines[2])["prev"].get<std::string>().substr(0, 1);
  const std::vector<edit_case> cases
      = {{"a value", R"("command":"ls -l")", R"("command":"ls -r")"},
         {"the seq", R"("seq":3)", R"("seq":8)"},
         {"the prev", R"("prev":")" + prev_digit,
          R"("prev":")" + std::string{prev_digit == "0" ? "1" : "0"}},
         {"the prev, into a non-digest", R"("prev":")" + prev_digit, R"("prev":"g)"},
         {"the JSON itself", R"({"seq")", R"(["seq")"},
         {"a key", R"("event")", R"("evenT")"}};
  for (auto& c : cases) {
    edit(c.from, c.to);
    for (auto& anchor : {std::string{}, head}) {
      auto report = verify(path_, anchor);
      EXPECT_FALSE(report.ok) << c.what;
      EXPECT_EQ(report.first_bad_line, 3u) << c.what << ": " << report.reason;
      EXPECT_EQ(report.lines, 5u) << c.what;
    }
  }
}

TEST_F(audit_log_test, an_edit_to_the_second_last_line_is_reported_at_that_line) {
  write_records(3);
  auto lines = read_lines(path_);
  lines[1].replace(lines[1].find("accept"), 6, "acceps");
  write_lines(path_, lines);
  auto report = verify(path_);
  EXPECT_EQ(report.first_bad_line, 2u) << report.reason;
}

TEST_F(audit_log_test, an_edit_to_the_last_line_needs_the_head_to_be_seen) {
  auto head = write_records(4);
  const auto original = read_lines(path_);

  auto lines = original;
  lines[3].replace(lines[3].find("accept"), 6, "acceps");
  write_lines(path_, lines);
  EXPECT_TRUE(verify(path_).ok) << "nothing after the last line vouches for it";
  auto report = verify(path_, head);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_line, 4u) << report.reason;

  // An edit to its prev breaks the chain, but alone the chain can't tell
  // whether line 3 or line 4 changed: the earlier one is reported. The head
  // settles it.
  lines = original;
  auto at = lines[3].find(R"("prev":")") + 8;
  lines[3][at] = lines[3][at] == '0' ? '1' : '0';
  write_lines(path_, lines);
  report = verify(path_);
  EXPECT_EQ(report.first_bad_line, 3u) << report.reason;
  EXPECT_NE(report.reason.find("or line 4's prev was"), std::string::npos) << report.reason;
  report = verify(path_, head);
  EXPECT_EQ(report.first_bad_line, 4u) << report.reason;
}

TEST_F(audit_log_test, deleted_lines_are_detected) {
  auto head = write_records(5);
  const auto lines = read_lines(path_);

  write_lines(path_, {lines[0], lines[1], lines[3], lines[4]});
  auto report = verify(path_, head);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_line, 3u) << "where the gap is: " << report.reason;
  EXPECT_NE(report.reason.find("missing"), std::string::npos) << report.reason;
  EXPECT_EQ(report.lines, 4u);

  write_lines(path_, {lines[1], lines[2], lines[3], lines[4]});
  report = verify(path_, head);
  EXPECT_EQ(report.first_bad_line, 1u) << report.reason;

  // A cut at the end leaves a valid, shorter chain: only the head tells.
  write_lines(path_, {lines[0], lines[1], lines[2], lines[3]});
  EXPECT_TRUE(verify(path_).ok);
  report = verify(path_, head);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.reason.find("expected head"), std::string::npos) << report.reason;
}

TEST_F(audit_log_test, swapped_lines_are_detected) {
  auto head = write_records(5);
  auto lines = read_lines(path_);
  std::swap(lines[1], lines[2]);
  write_lines(path_, lines);
  auto report = verify(path_, head);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_line, 2u) << report.reason;
}

TEST_F(audit_log_test, inserted_lines_are_detected) {
  auto head = write_records(4);
  const auto lines = read_lines(path_);

  write_lines(path_, {lines[0], lines[1], lines[1], lines[2], lines[3]});
  auto report = verify(path_, head);
  EXPECT_EQ(report.first_bad_line, 3u) << "a repeated line: " << report.reason;
  EXPECT_EQ(report.lines, 5u);

  // A forged line 3 that chains onto line 2 correctly still leaves the old
  // line 3 behind it with the wrong seq.
  nlohmann::ordered_json f = nlohmann::ordered_json::parse(lines[2]);
  f["approval"] = "99";
  write_lines(path_, {lines[0], lines[1], f.dump(), lines[2], lines[3]});
  report = verify(path_, head);
  EXPECT_EQ(report.first_bad_line, 4u) << report.reason;

  // A line that is not JSON at all, or an empty line.
  write_lines(path_, {lines[0], "not json", lines[1]});
  EXPECT_EQ(verify(path_).first_bad_line, 2u);
  write_lines(path_, {lines[0], "", lines[1]});
  EXPECT_EQ(verify(path_).first_bad_line, 2u);
}

TEST_F(audit_log_test, a_chain_rewritten_from_the_first_line_needs_genesis) {
  write_records(2);
  auto lines = read_lines(path_);
  auto first = nlohmann::ordered_json::parse(lines[0]);
  first["prev"] = sha256_hex("something before");
  write_lines(path_, {first.dump(), lines[1]});
  auto report = verify(path_);
  EXPECT_EQ(report.first_bad_line, 1u) << report.reason;
}

}  // namespace
}  // namespace parley::audit
