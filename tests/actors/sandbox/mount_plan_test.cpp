#include "actors/sandbox/mount_plan.hpp"

#include <gtest/gtest.h>
#include <map>

using namespace parley::sandbox;

namespace {

/// A fake file system: every path not listed is missing.
probe_function fake_fs(std::map<std::string, entry_kind> entries) {
  return [entries = std::move(entries)](const std::string& path) {
    auto i = entries.find(path);
    return i == entries.end() ? entry_kind::missing : i->second;
  };
}

plan workspace(std::vector<std::string> writable) {
  plan p;
  p.sandbox_mode = mode::workspace_write;
  p.writable = std::move(writable);
  p.command = {"true"};
  return p;
}

using strings = std::vector<std::string>;

} // namespace

TEST(mount_plan, is_within_compares_whole_components) {
  EXPECT_TRUE(is_within("/w", "/w"));
  EXPECT_TRUE(is_within("/w/a", "/w"));
  EXPECT_FALSE(is_within("/wx", "/w"));
  EXPECT_FALSE(is_within("/", "/w"));
  EXPECT_TRUE(is_within("/anything", "/"));
}

TEST(mount_plan, outermost_drops_nested_and_duplicate_roots) {
  EXPECT_EQ(outermost({"/w/a/b", "/w", "/x", "/w", "/wx"}), (strings{"/w", "/x", "/wx"}));
}

TEST(mount_plan, protects_existing_names_only) {
  auto layout = make_layout(workspace({"/w", "/w/sub", "/gone"}),
                            fake_fs({{"/w", entry_kind::directory},
                                     {"/w/sub", entry_kind::directory},
                                     {"/w/.git", entry_kind::directory},
                                     {"/w/sub/.git", entry_kind::other}, // a worktree's file
                                     {"/w/sub/.codex", entry_kind::directory}}),
                            {});
  EXPECT_TRUE(layout.error.empty());
  EXPECT_EQ(layout.writable, strings{"/w"}); // /gone is missing, /w/sub is inside /w
  EXPECT_EQ(layout.protect, (strings{"/w/.git", "/w/sub/.git", "/w/sub/.codex"}));
}

TEST(mount_plan, a_protected_symlink_is_refused) {
  auto layout = make_layout(workspace({"/w"}), fake_fs({{"/w", entry_kind::directory},
                                                        {"/w/.git", entry_kind::symlink}}),
                            {});
  EXPECT_NE(layout.error.find("/w/.git"), std::string::npos);
}

TEST(mount_plan, read_only_has_no_writable_root) {
  plan p;
  p.sandbox_mode = mode::read_only;
  auto layout = make_layout(p, fake_fs({{"/w", entry_kind::directory}}), {});
  EXPECT_TRUE(layout.writable.empty());
  EXPECT_TRUE(layout.protect.empty());
}

TEST(mount_plan, hides_by_kind_and_skips_missing_paths) {
  plan p = workspace({"/w"});
  p.hidden = {"/home/p/.parley", "/home/p/secret.json", "/nowhere"};
  auto layout = make_layout(p, fake_fs({{"/w", entry_kind::directory},
                                        {"/home/p/.parley", entry_kind::directory},
                                        {"/home/p/secret.json", entry_kind::other}}),
                            {});
  EXPECT_EQ(layout.hide_dirs, strings{"/home/p/.parley"});
  EXPECT_EQ(layout.hide_files, strings{"/home/p/secret.json"});
}

TEST(mount_plan, isolate_reads_covers_every_non_system_top_level_entry) {
  plan p = workspace({"/work/w"});
  p.isolate_reads = true;
  p.readable = {"/data/set", "/data/set/sub"};
  auto layout = make_layout(p, fake_fs({{"/work/w", entry_kind::directory},
                                        {"/data/set", entry_kind::directory},
                                        {"/data/set/sub", entry_kind::directory},
                                        {"/usr", entry_kind::directory},
                                        {"/work", entry_kind::directory},
                                        {"/data", entry_kind::directory},
                                        {"/home", entry_kind::directory},
                                        {"/.dockerenv", entry_kind::other},
                                        {"/lib", entry_kind::symlink},
                                        {"/etc", entry_kind::directory}}),
                            {".", "..", "usr", "work", "data", "home", ".dockerenv", "lib", "etc"});
  EXPECT_EQ(layout.isolate_dirs, (strings{"/work", "/data", "/home"}));
  EXPECT_EQ(layout.isolate_files, strings{"/.dockerenv"});
  EXPECT_EQ(layout.readable, strings{"/data/set"});
}
