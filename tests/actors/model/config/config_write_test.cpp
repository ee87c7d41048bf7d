#include "actors/model/config/config_write.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "actors/model/config/model_config.hpp"

namespace parley::model_config {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// The version the tests name a file by: its bytes, so a change shows.
std::string config_version(const std::string& content) {
  return "v:" + content;
}

write_result write_config(const std::string& path, const std::vector<config_edit>& edits,
                          const std::optional<std::string>& expected) {
  return model_config::write_config(path, edits, expected, config_version);
}

struct config_write_fixture : ::testing::Test {
  void SetUp() override {
    dir = fs::temp_directory_path()
          / ("parley-config-write-" + std::to_string(::getpid()) + "-"
             + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    path = (dir / "config.toml").string();
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string text() const {
    std::ifstream in{path};
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void put(const std::string& t) const { std::ofstream{path} << t; }
  fs::path dir;
  std::string path;
};

TEST_F(config_write_fixture, sets_a_key_in_a_file_that_does_not_exist_yet) {
  auto r = write_config(path, {{"model", "o3", false}}, std::nullopt);
  ASSERT_TRUE(r) << r.message;
  EXPECT_EQ(r.version, config_version(text()));
  auto read = parse(text(), path);
  ASSERT_TRUE(read) << read.error;
  EXPECT_EQ(read.config->model, "o3");
}

TEST_F(config_write_fixture, replace_upsert_and_remove) {
  put("model = \"a\"\ndeveloper_instructions = \"be brief\"\n[model_providers.local]\n"
      "name = \"Local\"\nbase_url = \"http://h/v1\"\n");
  auto r = write_config(path,
                        {{"model_providers.local", json{{"env_key", "LOCAL_KEY"}}, true},
                         {"model_provider", "local", false},
                         {"developer_instructions", nullptr, false},
                         {"not.there.at_all", nullptr, false}},
                        std::nullopt);
  ASSERT_TRUE(r) << r.message;
  auto read = parse(text(), path);
  ASSERT_TRUE(read) << read.error;
  EXPECT_EQ(read.config->model, "a");
  EXPECT_EQ(read.config->developer_instructions, "") << "null removes the key";
  EXPECT_EQ(text().find("developer_instructions"), std::string::npos);
  EXPECT_EQ(read.config->model_provider, "local");
  const auto& p = read.config->providers.at("local");
  EXPECT_EQ(p.name, "Local") << "upsert keeps what it does not name";
  EXPECT_EQ(p.env_key, "LOCAL_KEY");
  EXPECT_EQ(p.base_url, "http://h/v1");
  // replace sets the whole table: what it does not name is gone.
  r = write_config(path, {{"model_providers.local", json{{"name", "Other"}}, false}}, std::nullopt);
  ASSERT_TRUE(r) << r.message;
  read = parse(text(), path);
  ASSERT_TRUE(read) << read.error;
  EXPECT_EQ(read.config->providers.at("local").name, "Other");
  EXPECT_EQ(read.config->providers.at("local").env_key, "");
  EXPECT_NE(read.config->providers.at("local").base_url, "http://h/v1");
}

TEST_F(config_write_fixture, a_version_conflict_writes_nothing) {
  put("model = \"a\"\n");
  auto before = text();
  auto r = write_config(path, {{"model", "b", false}}, std::string{"sha256:bogus"});
  EXPECT_EQ(r.error, write_error::version_conflict);
  EXPECT_EQ(std::string{to_string(r.error)}, "configVersionConflict");
  EXPECT_EQ(text(), before);
  r = write_config(path, {{"model", "b", false}}, config_version(before));
  EXPECT_TRUE(r) << r.message;
}

TEST_F(config_write_fixture, bad_key_paths_and_values) {
  put("model = \"a\"\n");
  auto before = text();
  auto r = write_config(path, {{"", "x", false}}, std::nullopt);
  EXPECT_EQ(r.error, write_error::validation);
  EXPECT_EQ(r.message, "keyPath must not be empty");
  r = write_config(path, {{"a..b", "x", false}}, std::nullopt);
  EXPECT_EQ(r.message, "keyPath segments must not be empty");
  r = write_config(path, {{"model.inner", "x", false}}, std::nullopt);
  EXPECT_EQ(r.error, write_error::validation) << "model is not a table";
  r = write_config(path, {{"model", 5, false}}, std::nullopt);
  EXPECT_EQ(r.error, write_error::validation);
  EXPECT_EQ(r.message.rfind("Invalid configuration: ", 0), 0u) << r.message;
  // A batch is all or nothing: the first edit is fine, the second is not.
  r = write_config(path, {{"model", "b", false}, {"model_provider", "no-such", false}},
                   std::nullopt);
  EXPECT_FALSE(r);
  EXPECT_EQ(text(), before);
}

TEST_F(config_write_fixture, a_file_that_is_not_toml_is_not_overwritten) {
  put("model = [unclosed\n");
  auto r = write_config(path, {{"model", "b", false}}, std::nullopt);
  EXPECT_EQ(r.error, write_error::validation);
  EXPECT_EQ(text(), "model = [unclosed\n");
}

TEST_F(config_write_fixture, no_edits_answer_the_version_and_write_nothing) {
  put("model = \"a\"   # a comment\n");
  auto r = write_config(path, {}, std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r.version, config_version("model = \"a\"   # a comment\n"));
  EXPECT_EQ(text(), "model = \"a\"   # a comment\n");
}

// -- set_table_value (an MCP tool approved "always") ----------------------------------

const std::vector<std::string> tool_table = {"mcp_servers", "files", "tools", "delete_file"};

TEST_F(config_write_fixture, a_new_table_is_appended_and_the_text_kept) {
  const std::string before
      = "# my settings\nmodel = \"o3\"  # the model\n\n[mcp_servers.files]\ncommand = \"srv\"\n"
        "# trailing words\n";
  put(before);
  auto r = set_table_value(path, tool_table, "approval_mode", "approve", 2);
  ASSERT_TRUE(r) << r.message;
  EXPECT_EQ(text(), before + "[mcp_servers.files.tools.delete_file]\napproval_mode = \"approve\"\n");
  auto read = parse(text(), path);
  ASSERT_TRUE(read) << read.error;
  EXPECT_EQ(read.config->mcp.at("files").approval_mode("delete_file"), "approve");
  EXPECT_EQ(read.config->model, "o3");
  // Again (a decision applied twice after a restart): nothing changes.
  auto once = text();
  ASSERT_TRUE(set_table_value(path, tool_table, "approval_mode", "approve", 2));
  EXPECT_EQ(text(), once);
}

TEST_F(config_write_fixture, names_that_are_not_bare_keys_are_quoted) {
  put("[mcp_servers.files]\ncommand = \"srv\"");  // no newline at the end
  auto r = set_table_value(path, {"mcp_servers", "files", "tools", "fs.delete \"x\""},
                           "approval_mode", "approve", 2);
  ASSERT_TRUE(r) << r.message;
  EXPECT_NE(text().find("[mcp_servers.files.tools.\"fs.delete \\\"x\\\"\"]\n"), std::string::npos)
      << text();
  auto read = parse(text(), path);
  ASSERT_TRUE(read) << read.error;
  EXPECT_EQ(read.config->mcp.at("files").approval_mode("fs.delete \"x\""), "approve");
}

TEST_F(config_write_fixture, a_table_already_there_is_changed_in_place) {
  put("[mcp_servers.files]\ncommand = \"srv\"\n[mcp_servers.files.tools.delete_file]\n"
      "approval_mode = \"auto\"\n[mcp_servers.other]\ncommand = \"o\"\n");
  auto r = set_table_value(path, tool_table, "approval_mode", "approve", 2);
  ASSERT_TRUE(r) << r.message;
  auto read = parse(text(), path);
  ASSERT_TRUE(read) << read.error;
  EXPECT_EQ(read.config->mcp.at("files").approval_mode("delete_file"), "approve");
  EXPECT_EQ(read.config->mcp.at("other").command, "o");
  EXPECT_EQ(text().find("approval_mode = \"auto\""), std::string::npos);
  // An inline table too.
  put("[mcp_servers.files]\ncommand = \"srv\"\n"
      "tools = { delete_file = { approval_mode = \"auto\" } }\n");
  r = set_table_value(path, tool_table, "approval_mode", "approve", 2);
  ASSERT_TRUE(r) << r.message;
  read = parse(text(), path);
  ASSERT_TRUE(read) << read.error;
  EXPECT_EQ(read.config->mcp.at("files").approval_mode("delete_file"), "approve");
}

TEST_F(config_write_fixture, a_server_the_file_does_not_configure_is_not_written) {
  const std::string before = "model = \"o3\"\n";
  put(before);
  auto r = set_table_value(path, tool_table, "approval_mode", "approve", 2);
  EXPECT_FALSE(r);
  EXPECT_EQ(r.error, write_error::validation);
  EXPECT_EQ(text(), before);
  fs::remove(path);
  EXPECT_FALSE(set_table_value(path, tool_table, "approval_mode", "approve", 2));
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(config_write_fixture, no_temporary_file_is_left_behind) {
  put("[mcp_servers.files]\ncommand = \"srv\"\n");
  ASSERT_TRUE(set_table_value(path, tool_table, "approval_mode", "approve", 2));
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

// config/value/write (a pool thread) and an "always" approval (the MCP hub's
// thread) may write at once: each reads the file, edits it and renames its
// copy over it. Found by reading the code: without the folder lock the later
// rename dropped the earlier edit, and both wrote the same temporary file.
TEST_F(config_write_fixture, concurrent_writers_keep_every_edit) {
  put("[mcp_servers.files]\ncommand = \"srv\"\n");
  constexpr int per_kind = 12;
  std::vector<std::thread> writers;
  std::vector<std::string> failures(2 * per_kind);
  for (int i = 0; i < per_kind; ++i) {
    writers.emplace_back([&, i] {
      auto r = write_config(path,
                            {{"mcp_servers.files.tools.w" + std::to_string(i) + ".approval_mode",
                              "prompt", false}},
                            std::nullopt);
      if (!r) failures[i] = r.message;
    });
    writers.emplace_back([&, i] {
      auto r = set_table_value(path, {"mcp_servers", "files", "tools", "s" + std::to_string(i)},
                               "approval_mode", "approve", 2);
      if (!r) failures[per_kind + i] = r.message;
    });
  }
  for (auto& t : writers) t.join();
  for (const auto& f : failures) EXPECT_EQ(f, "");
  auto read = parse(text(), path);
  ASSERT_TRUE(read) << read.error;
  const auto& files = read.config->mcp.at("files");
  for (int i = 0; i < per_kind; ++i) {
    EXPECT_EQ(files.approval_mode("w" + std::to_string(i)), "prompt") << text();
    EXPECT_EQ(files.approval_mode("s" + std::to_string(i)), "approve") << text();
  }
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) entries += e.is_regular_file();
  EXPECT_EQ(entries, 1u);  // no temporary left behind
}

}  // namespace
}  // namespace parley::model_config
