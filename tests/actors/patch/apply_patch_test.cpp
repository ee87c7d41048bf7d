#include "actors/patch/apply_patch.hpp"

#include "actors/patch/beneath.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

namespace parley::patch {
namespace {

namespace fs = std::filesystem;

// Each test gets a fresh directory; `work` is the cwd the patch runs in.
class apply_patch_test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    root_ = fs::temp_directory_path()
            / ("parley-apply-patch-" + std::to_string(::getpid()) + "-" + name);
    fs::remove_all(root_);
    fs::create_directories(root_ / "work");
    cwd_ = (root_ / "work").string();
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  void write(const std::string& rel, const std::string& content) {
    auto path = root_ / "work" / rel;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << content;
  }

  std::string read(const std::string& rel) {
    std::ifstream in(root_ / "work" / rel, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }

  bool exists(const std::string& rel) { return fs::exists(root_ / "work" / rel); }

  // Every file (dot files included) and directory under the test's root:
  // equal snapshots mean nothing changed and nothing was left behind.
  std::map<std::string, std::string> snapshot() {
    std::map<std::string, std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(root_)) {
      auto rel = entry.path().lexically_relative(root_).string();
      if (entry.is_directory())
        files[rel + "/"] = "";
      else
        files[rel] = std::string(
            std::istreambuf_iterator<char>(std::ifstream(entry.path(), std::ios::binary).rdbuf()),
            {});
    }
    return files;
  }

  result<std::vector<file_change>> run(const std::string& body,
                                       const std::vector<std::string>& roots = {}) {
    return apply_patch("*** Begin Patch\n" + body + "*** End Patch\n", cwd_, roots);
  }

  fs::path root_;
  std::string cwd_;
};

std::string error_of(const result<parsed_patch>& r) {
  return r ? std::string("(parsed)") : r.error().message;
}

// -- add, update, delete, move ------------------------------------------------

TEST_F(apply_patch_test, a_failure_inside_the_roots_is_not_a_policy_refusal) {
  auto r = run("*** Update File: missing.txt\n@@\n-x\n+y\n");
  ASSERT_FALSE(r);
  EXPECT_FALSE(r.error().refused_by_policy()) << r.error().message;
}

TEST_F(apply_patch_test, adds_a_file_creating_its_directories) {
  auto r = run("*** Add File: dir/new.txt\n+line one\n+line two\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read("dir/new.txt"), "line one\nline two\n");
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].kind, change_kind::add);
  EXPECT_EQ((*r)[0].resolved_path, cwd_ + "/dir/new.txt");
  EXPECT_EQ((*r)[0].unified_diff,
            "--- /dev/null\n+++ b/dir/new.txt\n@@ -0,0 +1,2 @@\n+line one\n+line two\n");
}

TEST_F(apply_patch_test, updates_with_context_removed_and_added_lines) {
  write("f.txt", "a\nb\nc\nd\ne\n");
  auto r = run("*** Update File: f.txt\n@@\n b\n-c\n+C\n+C2\n d\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read("f.txt"), "a\nb\nC\nC2\nd\ne\n");
  const auto& change = (*r)[0];
  EXPECT_EQ(change.kind, change_kind::update);
  EXPECT_EQ(change.old_content, "a\nb\nc\nd\ne\n");
  EXPECT_EQ(change.new_content, "a\nb\nC\nC2\nd\ne\n");
  EXPECT_EQ(change.unified_diff,
            "--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,6 @@\n a\n b\n-c\n+C\n+C2\n d\n e\n");
}

TEST_F(apply_patch_test, applies_several_hunks_each_searched_after_the_previous) {
  write("m.py", "def f():\n  return 1\n\ndef g():\n  return 1\n\ndef h():\n  return 1\n");
  // The same old line three times: each hunk finds the next occurrence, and
  // an "@@ <anchor>" skips ahead to the named function.
  auto r = run(
      "*** Update File: m.py\n"
      "@@\n-  return 1\n+  return 10\n"
      "@@ def h():\n-  return 1\n+  return 30\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read("m.py"),
            "def f():\n  return 10\n\ndef g():\n  return 1\n\ndef h():\n  return 30\n");
}

TEST_F(apply_patch_test, several_anchors_narrow_the_search_step_by_step) {
  write("c.py",
        "class A:\n  def run(self):\n    pass\nclass B:\n  def stop(self):\n    pass\n"
        "  def run(self):\n    pass\n");
  auto r = run("*** Update File: c.py\n@@ class B:\n@@   def run(self):\n-    pass\n+    go()\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read("c.py"),
            "class A:\n  def run(self):\n    pass\nclass B:\n  def stop(self):\n    pass\n"
            "  def run(self):\n    go()\n");
}

TEST_F(apply_patch_test, end_of_file_anchors_the_hunk_at_the_end) {
  write("t.txt", "x\ny\nx\n");
  auto r = run("*** Update File: t.txt\n@@\n-x\n+z\n*** End of File\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read("t.txt"), "x\ny\nz\n");

  write("u.txt", "x\ny\nx\n");
  ASSERT_TRUE(run("*** Update File: u.txt\n@@\n-x\n+z\n"));
  EXPECT_EQ(read("u.txt"), "z\ny\nx\n") << "without the marker the first match wins";

  write("v.txt", "a\nb\nc\n");
  auto bad = run("*** Update File: v.txt\n@@\n-a\n+A\n*** End of File\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("not found at the end of the file"), std::string::npos);
  EXPECT_EQ(read("v.txt"), "a\nb\nc\n");
}

TEST_F(apply_patch_test, matching_tolerates_whitespace_and_typographic_punctuation) {
  write("w.txt", "    foo  \nbar\t\nalpha   \nx \xE2\x80\x93 y\n");
  auto r = run("*** Update File: w.txt\n@@\n foo\n-bar\n+baz\n-alpha\n+beta\n-x - y\n+x to y\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read("w.txt"), "    foo  \nbaz\nbeta\nx to y\n");
}

TEST_F(apply_patch_test, seek_prefers_stricter_matches_and_only_searches_forward) {
  std::vector<std::string> lines = {"  a", "b", "a", "a  "};
  EXPECT_EQ(detail::seek(lines, {"a"}, 0, false), 2u) << "exact beats an earlier lenient match";
  EXPECT_EQ(detail::seek(lines, {"a"}, 3, false), 3u) << "then trailing whitespace";
  EXPECT_EQ(detail::seek(lines, {"a"}, 4, false), std::nullopt);
  EXPECT_EQ(detail::seek(lines, {"   a"}, 0, false), 0u) << "then both sides";
  EXPECT_EQ(detail::seek(lines, {"b", "a"}, 0, true), std::nullopt) << "at_end: last lines only";
  EXPECT_EQ(detail::seek(lines, {"a", "a"}, 0, true), 2u);
  EXPECT_EQ(detail::seek(lines, {"x", "y", "z", "w", "v"}, 0, false), std::nullopt);
}

TEST_F(apply_patch_test, moves_a_file_keeping_its_permissions) {
  write("old/name.txt", "one\ntwo\n");
  ::chmod((root_ / "work/old/name.txt").c_str(), 0750);
  auto r
      = run("*** Update File: old/name.txt\n*** Move to: new/dir/name.txt\n@@\n one\n-two\n+2\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(exists("old/name.txt"));
  EXPECT_EQ(read("new/dir/name.txt"), "one\n2\n");
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "work/new/dir/name.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ((*r)[0].resolved_move_to, cwd_ + "/new/dir/name.txt");
  EXPECT_EQ((*r)[0].unified_diff,
            "--- a/old/name.txt\n+++ b/new/dir/name.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n");
}

TEST_F(apply_patch_test, update_in_place_keeps_permissions) {
  write("run.sh", "echo a\n");
  ::chmod((root_ / "work/run.sh").c_str(), 0755);
  ASSERT_TRUE(run("*** Update File: run.sh\n@@\n-echo a\n+echo b\n"));
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "work/run.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_EQ(read("run.sh"), "echo b\n");
}

TEST_F(apply_patch_test, deletes_a_file) {
  write("gone.txt", "bye\n");
  write("keep.txt", "stay\n");
  auto r = run("*** Delete File: gone.txt\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(exists("gone.txt"));
  EXPECT_EQ(read("keep.txt"), "stay\n");
  EXPECT_EQ((*r)[0].kind, change_kind::remove);
  EXPECT_EQ((*r)[0].old_content, "bye\n");
  EXPECT_EQ((*r)[0].unified_diff, "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n");
}

TEST_F(apply_patch_test, applies_changes_to_several_files_together) {
  write("modify.txt", "line1\nline2\n");
  write("delete.txt", "obsolete\n");
  write("src/old.rs", "fn a() {}\n");
  auto r = run(
      "*** Add File: nested/new.txt\n+created\n"
      "*** Delete File: delete.txt\n"
      "*** Update File: modify.txt\n@@\n-line2\n+changed\n"
      "*** Update File: src/old.rs\n*** Move to: src/new.rs\n@@\n-fn a() {}\n+fn b() {}\n");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ(read("nested/new.txt"), "created\n");
  EXPECT_FALSE(exists("delete.txt"));
  EXPECT_EQ(read("modify.txt"), "line1\nchanged\n");
  EXPECT_FALSE(exists("src/old.rs"));
  EXPECT_EQ(read("src/new.rs"), "fn b() {}\n");
}

TEST_F(apply_patch_test, pure_additions_append_or_follow_their_anchor) {
  write("a.txt", "line1\nline2\n");
  ASSERT_TRUE(run("*** Update File: a.txt\n@@\n+added 1\n+added 2\n"));
  EXPECT_EQ(read("a.txt"), "line1\nline2\nadded 1\nadded 2\n") << "as Codex: appended";

  write("b.py", "def f():\n  pass\ndef g():\n  pass\n");
  ASSERT_TRUE(run("*** Update File: b.py\n@@ def f():\n+  \"\"\"doc\"\"\"\n"));
  EXPECT_EQ(read("b.py"), "def f():\n  \"\"\"doc\"\"\"\n  pass\ndef g():\n  pass\n");
}

TEST_F(apply_patch_test, delete_then_add_of_one_file_rewrites_it) {
  write("r.txt", "old 1\nold 2\n");
  auto r = run("*** Delete File: r.txt\n*** Add File: r.txt\n+new\n");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].kind, change_kind::update);
  EXPECT_EQ((*r)[0].unified_diff,
            "--- a/r.txt\n+++ b/r.txt\n@@ -1,2 +1 @@\n-old 1\n-old 2\n+new\n");
  EXPECT_EQ(read("r.txt"), "new\n");

  auto before = snapshot();
  auto twice = run("*** Add File: s.txt\n+a\n*** Delete File: s.txt\n");
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().message, "invalid patch: s.txt is changed by more than one file section");
  EXPECT_EQ(snapshot(), before);
}

TEST_F(apply_patch_test, an_append_inside_a_later_hunk_is_refused) {
  write("o.txt", "a\nb\n\n");
  // The append lands before the final blank line, which the second hunk
  // replaces: applying both could not mean anything sensible.
  auto r = run("*** Update File: o.txt\n@@\n+tail\n@@\n b\n-\n+B\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "hunk 2 of o.txt does not apply: it overlaps hunk 1");
  EXPECT_EQ(read("o.txt"), "a\nb\n\n");
}

TEST_F(apply_patch_test, updated_files_end_with_a_newline_and_keep_crlf) {
  write("no_newline.txt", "no newline at end");
  auto r = run("*** Update File: no_newline.txt\n@@\n-no newline at end\n+first\n+second\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read("no_newline.txt"), "first\nsecond\n");
  EXPECT_EQ((*r)[0].unified_diff,
            "--- a/no_newline.txt\n+++ b/no_newline.txt\n@@ -1 +1,2 @@\n-no newline at end\n"
            "\\ No newline at end of file\n+first\n+second\n");

  write("dos.txt", "a\r\nb\r\n");
  ASSERT_TRUE(run("*** Update File: dos.txt\n@@\n a\n-b\n+c\n"));
  EXPECT_EQ(read("dos.txt"), "a\r\nc\r\n");

  write("blank_end.txt", "a\n\n");
  ASSERT_TRUE(run("*** Update File: blank_end.txt\n@@\n-a\n+b\n"));
  EXPECT_EQ(read("blank_end.txt"), "b\n\n") << "a final blank line survives";
}

// -- all or nothing -----------------------------------------------------------

TEST_F(apply_patch_test, a_hunk_that_does_not_apply_changes_nothing) {
  write("a.txt", "alpha\n");
  write("b.txt", "one\ntwo\nthree\n");
  write("d.txt", "doomed\n");
  auto before = snapshot();
  auto r = run(
      "*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n"
      "*** Add File: c/new.txt\n+new\n"
      "*** Delete File: d.txt\n"
      "*** Update File: b.txt\n@@\n-one\n+1\n@@\n-four\n+4\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "hunk 2 of b.txt does not apply: expected lines not found:\n  four");
  EXPECT_EQ(snapshot(), before);
}

TEST_F(apply_patch_test, add_over_an_existing_file_fails_and_changes_nothing) {
  write("exists.txt", "precious\n");
  auto before = snapshot();
  auto r = run("*** Add File: fresh.txt\n+x\n*** Add File: exists.txt\n+overwritten\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "cannot add exists.txt: it already exists");
  EXPECT_EQ(snapshot(), before);
}

TEST_F(apply_patch_test, refuses_other_impossible_changes) {
  write("taken.txt", "mine\n");
  write("src.txt", "s\n");
  fs::create_directories(root_ / "work/dir");
  auto before = snapshot();
  auto message = [&](const std::string& body) {
    auto r = run(body);
    return r ? std::string("(applied)") : r.error().message;
  };
  EXPECT_EQ(message("*** Update File: missing.txt\n@@\n-a\n+b\n"),
            "cannot update missing.txt: no such file");
  EXPECT_EQ(message("*** Delete File: missing.txt\n"), "cannot delete missing.txt: no such file");
  EXPECT_EQ(message("*** Delete File: dir\n"), "cannot delete dir: it is a directory");
  EXPECT_EQ(message("*** Update File: src.txt\n*** Move to: taken.txt\n@@\n-s\n+t\n"),
            "cannot move src.txt to taken.txt: the destination already exists");
  EXPECT_EQ(message("*** Delete File: src.txt\n*** Update File: ./src.txt\n@@\n-s\n+t\n"),
            "invalid patch: ./src.txt is changed by more than one file section");
  EXPECT_EQ(message("*** Update File: src.txt\n@@ nowhere\n-s\n+t\n"),
            "hunk 1 of src.txt does not apply: context '@@ nowhere' not found");
  EXPECT_EQ(snapshot(), before);
}

TEST_F(apply_patch_test, a_file_changed_after_planning_is_not_overwritten) {
  write("a.txt", "old\n");
  write("b.txt", "bee\n");
  auto parsed = parse(
      "*** Begin Patch\n*** Update File: b.txt\n@@\n-bee\n+B\n"
      "*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch");
  ASSERT_TRUE(parsed) << parsed.error().message;
  auto changes = plan(*parsed, cwd_, {});
  ASSERT_TRUE(changes) << changes.error().message;
  write("a.txt", "edited by someone else\n");
  auto before = snapshot();
  auto applied = apply(*changes);
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error().message,
            "cannot apply the patch: a.txt changed since the patch was planned");
  EXPECT_EQ(snapshot(), before);
}

// Fails the 1st, 2nd, ... file-system step of apply() in turn: every failure
// must leave the tree exactly as it was, until all steps pass.
TEST_F(apply_patch_test, a_failure_at_any_step_of_apply_changes_nothing) {
  write("update.txt", "u\n");
  write("delete.txt", "d\n");
  write("move/from.txt", "m\n");
  auto parsed = parse(
      "*** Begin Patch\n"
      "*** Update File: update.txt\n@@\n-u\n+U\n"
      "*** Add File: added/deep/new.txt\n+n\n"
      "*** Delete File: delete.txt\n"
      "*** Update File: move/from.txt\n*** Move to: moved/to.txt\n@@\n-m\n+M\n"
      "*** End Patch");
  ASSERT_TRUE(parsed) << parsed.error().message;
  auto changes = plan(*parsed, cwd_, {});
  ASSERT_TRUE(changes) << changes.error().message;
  auto before = snapshot();
  std::set<std::string> kinds;
  int failing = 0;
  for (;; ++failing) {
    int calls = 0;
    std::string failed_step;
    auto applied = detail::apply(*changes, [&](const std::string& step, const std::string&) {
      if (calls++ != failing) return false;
      failed_step = step;
      return true;
    });
    if (applied) break;
    kinds.insert(failed_step);
    EXPECT_NE(applied.error().message.find("nothing was changed"), std::string::npos)
        << applied.error().message;
    ASSERT_EQ(snapshot(), before) << "after failing step " << failing << " (" << failed_step << ")";
    ASSERT_LT(failing, 100);
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"mkdir", "write", "backup", "commit"}));
  EXPECT_GE(failing, 10);
  EXPECT_EQ(read("update.txt"), "U\n");
  EXPECT_EQ(read("added/deep/new.txt"), "n\n");
  EXPECT_FALSE(exists("delete.txt"));
  EXPECT_FALSE(exists("move/from.txt"));
  EXPECT_EQ(read("moved/to.txt"), "M\n");
  // Only the targets remain: no temp or backup files.
  auto after = snapshot();
  for (const auto& [name, content] : after)
    EXPECT_EQ(name.find(".parley-"), std::string::npos) << name;
}

// -- policy -------------------------------------------------------------------

TEST_F(apply_patch_test, refuses_paths_outside_the_writable_roots) {
  write("inside.txt", "x\n");
  fs::create_directories(root_ / "other");
  auto before = snapshot();
  auto message = [&](const std::string& body, const std::vector<std::string>& roots = {}) {
    auto r = run(body, roots);
    if (r) return std::string("(applied)");
    // The kind, not the wording, is what the turn decides on (declined vs failed).
    EXPECT_TRUE(r.error().refused_by_policy()) << r.error().message;
    return r.error().message;
  };
  EXPECT_EQ(message("*** Add File: ../escape.txt\n+x\n"),
            "refused by policy: ../escape.txt is outside the writable roots");
  EXPECT_EQ(message("*** Add File: sub/../../escape.txt\n+x\n"),
            "refused by policy: sub/../../escape.txt is outside the writable roots");
  auto absolute = (root_ / "other/abs.txt").string();
  EXPECT_EQ(message("*** Add File: " + absolute + "\n+x\n"),
            "refused by policy: " + absolute + " is outside the writable roots");
  EXPECT_EQ(message("*** Update File: inside.txt\n*** Move to: ../../out.txt\n@@\n-x\n+y\n"),
            "refused by policy: ../../out.txt is outside the writable roots");
  EXPECT_EQ(message("*** Delete File: /etc/hostname\n"),
            "refused by policy: /etc/hostname is outside the writable roots");
  EXPECT_EQ(message("*** Add File: " + cwd_ + "-sibling/x.txt\n+x\n"),
            "refused by policy: " + cwd_ + "-sibling/x.txt is outside the writable roots")
      << "a root is a path prefix by components, not by characters";
  EXPECT_EQ(snapshot(), before);

  // With explicit roots, exactly those are writable.
  auto roots = std::vector<std::string>{cwd_, (root_ / "other").string()};
  auto r = run("*** Add File: " + absolute + "\n+x\n*** Add File: ./dir/../rel.txt\n+y\n", roots);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ((*r)[1].resolved_path, cwd_ + "/rel.txt");
  EXPECT_EQ((*r)[0].unified_diff.substr(0, 18), "--- /dev/null\n+++ ");
  EXPECT_EQ(message("*** Add File: inside2.txt\n+x\n", {"../other"}),
            "refused by policy: inside2.txt is outside the writable roots");
}

// -- symlinks (issue 9, defect 7) --------------------------------------------

// work/dirlink -> outside/, which holds target.txt: what the path really names
// decides, so every change through the link is refused and nothing changes.
TEST_F(apply_patch_test, a_directory_symlink_out_of_the_roots_is_refused) {
  write("inside.txt", "x\n");
  fs::create_directories(root_ / "outside");
  std::ofstream(root_ / "outside/target.txt") << "out\n";
  fs::create_directory_symlink(root_ / "outside", root_ / "work/dirlink");
  auto before = snapshot();
  auto message = [&](const std::string& body) {
    auto r = run(body);
    return r ? std::string("(applied)") : r.error().message;
  };
  EXPECT_EQ(message("*** Add File: dirlink/new.txt\n+x\n"),
            "refused by policy: dirlink/new.txt is outside the writable roots");
  EXPECT_EQ(message("*** Add File: dirlink/deep/new.txt\n+x\n"),
            "refused by policy: dirlink/deep/new.txt is outside the writable roots");
  EXPECT_EQ(message("*** Update File: dirlink/target.txt\n@@\n-out\n+changed\n"),
            "refused by policy: dirlink/target.txt is outside the writable roots");
  EXPECT_EQ(message("*** Delete File: dirlink/target.txt\n"),
            "refused by policy: dirlink/target.txt is outside the writable roots");
  EXPECT_EQ(message("*** Update File: inside.txt\n*** Move to: dirlink/moved.txt\n@@\n-x\n+y\n"),
            "refused by policy: dirlink/moved.txt is outside the writable roots");
  EXPECT_EQ(snapshot(), before);
}

// A symlink that stays within the writable roots is followed as before,
// also one into another root (the write happens beneath that root).
TEST_F(apply_patch_test, a_directory_symlink_within_the_roots_is_followed) {
  fs::create_directories(root_ / "work/real");
  fs::create_directories(root_ / "other");
  fs::create_directory_symlink(root_ / "work/real", root_ / "work/alias");
  fs::create_directory_symlink(root_ / "other", root_ / "work/to-other");
  auto r = run("*** Add File: alias/a.txt\n+a\n*** Add File: to-other/b.txt\n+b\n",
               {cwd_, (root_ / "other").string()});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read("real/a.txt"), "a\n");
  EXPECT_EQ(read("../other/b.txt"), "b\n");
}

// The check in plan() and the write in apply() are apart: a directory that
// becomes a symlink out of the root in between must not be written through.
TEST_F(apply_patch_test, a_symlink_swapped_in_after_planning_changes_nothing_outside) {
  for (bool walk : {false, true}) {
    beneath::detail::force_component_walk(walk);
    for (std::string body : {"*** Add File: sub/new.txt\n+x\n",
                             "*** Add File: sub/deep/new.txt\n+x\n",
                             "*** Update File: sub/target.txt\n@@\n-same\n+changed\n",
                             "*** Delete File: sub/target.txt\n",
                             "*** Update File: a.txt\n*** Move to: sub/moved.txt\n@@\n-a\n+b\n"}) {
      fs::remove_all(root_);
      write("sub/target.txt", "same\n");
      write("a.txt", "a\n");
      fs::create_directories(root_ / "outside");
      std::ofstream(root_ / "outside/target.txt") << "same\n";
      auto parsed = parse("*** Begin Patch\n" + body + "*** End Patch\n");
      ASSERT_TRUE(parsed) << parsed.error().message;
      auto changes = plan(*parsed, cwd_, {});
      ASSERT_TRUE(changes) << changes.error().message;
      fs::rename(root_ / "work/sub", root_ / "work/sub.was");
      fs::create_directory_symlink(root_ / "outside", root_ / "work/sub");
      auto before = snapshot();
      auto applied = apply(*changes);
      EXPECT_FALSE(applied) << body << (walk ? " (component walk)" : "");
      if (!applied) {
        EXPECT_NE(applied.error().message.find(" leads outside the writable root "),
                  std::string::npos)
            << applied.error().message;
      }
      EXPECT_EQ(snapshot(), before) << body << (walk ? " (component walk)" : "");
    }
  }
  beneath::detail::force_component_walk(false);
}

// work/link.txt -> outside/file.txt: an update replaces the link with a
// regular file and a delete removes the link; the outside file stays intact.
TEST_F(apply_patch_test, a_file_symlink_is_replaced_not_written_through) {
  fs::create_directories(root_ / "outside");
  std::ofstream(root_ / "outside/file.txt") << "out\n";
  fs::create_symlink(root_ / "outside/file.txt", root_ / "work/link.txt");
  fs::create_symlink(root_ / "outside/file.txt", root_ / "work/gone.txt");
  auto r = run("*** Update File: link.txt\n@@\n-out\n+in\n*** Delete File: gone.txt\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(fs::is_symlink(root_ / "work/link.txt"));
  EXPECT_EQ(read("link.txt"), "in\n");
  EXPECT_FALSE(fs::exists(fs::symlink_status(root_ / "work/gone.txt")));
  EXPECT_EQ(read("../outside/file.txt"), "out\n");
}

// -- parsing ------------------------------------------------------------------

TEST(apply_patch_parse, rejects_malformed_patches_with_clear_errors) {
  EXPECT_EQ(error_of(parse("*** Add File: x\n+a\n*** End Patch\n")),
            "invalid patch: line 1: the patch must start with '*** Begin Patch', found "
            "'*** Add File: x'");
  EXPECT_EQ(error_of(parse("*** Begin Patch\n*** Add File: x\n+a\n")),
            "invalid patch: line 3: the patch must end with '*** End Patch', found '+a'");
  EXPECT_EQ(error_of(parse("*** Begin Patch\n*** Frobnicate File: x\n*** End Patch")),
            "invalid patch: line 2: '*** Frobnicate File: x' is not a file header; expected "
            "'*** Add File: <path>', '*** Update File: <path>' or '*** Delete File: <path>'");
  auto unexpected = [](int line, const std::string& text) {
    return "invalid patch: line " + std::to_string(line) + ": unexpected line '" + text
           + "': hunk lines start with ' ' (context), '+' (added) or '-' (removed), and a new"
             " hunk starts with '@@'";
  };
  EXPECT_EQ(error_of(parse("*** Begin Patch\n*** Update File: x\n@@\n-a\nb\n*** End Patch")),
            unexpected(5, "b"));
  EXPECT_EQ(error_of(parse("*** Begin Patch\n*** Update File: x\n@@\nb\n*** End Patch")),
            unexpected(4, "b"));
  EXPECT_EQ(error_of(parse(
                "*** Begin Patch\n*** Update File: x\n@@\n-a\n*** End of File\n-c\n*** End Patch")),
            unexpected(6, "-c"));
  EXPECT_EQ(error_of(parse("*** Begin Patch\n*** Update File: x\n*** End Patch")),
            "invalid patch: line 2: '*** Update File: x' has no hunks");
  EXPECT_EQ(error_of(parse("*** Begin Patch\n*** Update File: x\n@@\n*** End Patch")),
            "invalid patch: line 3: empty hunk");
  EXPECT_EQ(error_of(parse("*** Begin Patch\n*** Add File: \n+a\n*** End Patch")),
            "invalid patch: line 2: missing path after '*** Add File:'");
  EXPECT_EQ(error_of(parse("  \n")), "invalid patch: the patch is empty");
  EXPECT_EQ(error_of(parse("*** Begin Patch\n*** End Patch")),
            "invalid patch: nothing between '*** Begin Patch' and '*** End Patch'");
  EXPECT_EQ(error_of(parse("*** Begin Patch\n*** Add File: a\n+x\n y\n*** End Patch")),
            "invalid patch: line 4: ' y' is not a file header; expected '*** Add File: <path>', "
            "'*** Update File: <path>' or '*** Delete File: <path>'");
}

TEST(apply_patch_parse, accepts_what_codex_accepts) {
  // Padded markers, CRLF, a heredoc wrapper, blank lines around the patch, a
  // first hunk without "@@", an empty context line, an empty Add File.
  auto r = parse(
      "\n<<'EOF'\r\n *** Begin Patch \r\n  *** Update File: a.txt\r\n ctx\r\n-old\r\n"
      "+new\r\n\r\n@@ def f():\r\n-x\r\n+y\r\n*** End of File\r\n*** Add File: empty.txt\r\n"
      "*** Delete File: gone.txt \r\n*** End Patch\r\nEOF\r\n\n");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->files.size(), 3u);
  const auto& update = r->files[0];
  EXPECT_EQ(update.kind, change_kind::update);
  EXPECT_EQ(update.path, "a.txt");
  ASSERT_EQ(update.hunks.size(), 2u);
  EXPECT_TRUE(update.hunks[0].anchors.empty());
  EXPECT_EQ(update.hunks[0].old_lines(), (std::vector<std::string>{"ctx", "old", ""}));
  EXPECT_EQ(update.hunks[0].new_lines(), (std::vector<std::string>{"ctx", "new", ""}));
  EXPECT_FALSE(update.hunks[0].end_of_file);
  EXPECT_EQ(update.hunks[1].anchors, (std::vector<std::string>{"def f():"}));
  EXPECT_TRUE(update.hunks[1].end_of_file);
  EXPECT_EQ(update.hunks[1].line, 9u);
  EXPECT_EQ(r->files[1].kind, change_kind::add);
  EXPECT_EQ(r->files[1].content, "");
  EXPECT_EQ(r->files[2].kind, change_kind::remove);
  EXPECT_EQ(r->files[2].path, "gone.txt");
}

TEST(apply_patch_parse, reads_add_contents_and_move_targets) {
  auto r = parse(
      "*** Begin Patch\n*** Add File: path/add.py\n+abc\n+\n+  def\n"
      "*** Update File: path/update.py\n*** Move to: path/update2.py\n@@ def f():\n-    pass\n"
      "+    return 123\n*** End Patch\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->files[0].content, "abc\n\n  def\n");
  EXPECT_EQ(r->files[1].move_to, "path/update2.py");
  const auto& lines = r->files[1].hunks[0].lines;
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].kind, '-');
  EXPECT_EQ(lines[0].text, "    pass");
  EXPECT_EQ(lines[1].kind, '+');
  EXPECT_EQ(lines[1].text, "    return 123");
}

// -- unified diff -------------------------------------------------------------

TEST(apply_patch_diff, formats_hunks_with_three_lines_of_context) {
  std::string old_text = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n";
  std::string new_text = "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16";
  EXPECT_EQ(unified_diff("n.txt", old_text, new_text),
            "--- a/n.txt\n+++ b/n.txt\n"
            "@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n"
            "@@ -13,3 +13,4 @@\n 13\n 14\n 15\n+16\n\\ No newline at end of file\n");
  EXPECT_EQ(unified_diff("same.txt", "a\n", "a\n"), "");
  EXPECT_EQ(
      unified_diff(std::optional<std::string>("a"), std::optional<std::string>("b"), "x\n", "x\n"),
      "--- a/a\n+++ b/b\n")
      << "a pure rename still shows";
  EXPECT_EQ(unified_diff(std::nullopt, std::optional<std::string>("e"), "", ""),
            "--- /dev/null\n+++ b/e\n");
  // Changes 6 unchanged lines apart share one hunk; 7 apart do not.
  EXPECT_EQ(unified_diff("j", "a\n1\n2\n3\n4\n5\n6\nb\n", "A\n1\n2\n3\n4\n5\n6\nB\n"),
            "--- a/j\n+++ b/j\n@@ -1,8 +1,8 @@\n-a\n+A\n 1\n 2\n 3\n 4\n 5\n 6\n-b\n+B\n");
  EXPECT_EQ(unified_diff("k", "a\n1\n2\n3\n4\n5\n6\n7\nb\n", "A\n1\n2\n3\n4\n5\n6\n7\nB\n"),
            "--- a/k\n+++ b/k\n@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n@@ -6,4 +6,4 @@\n 5\n 6\n 7\n"
            "-b\n+B\n");
}

// Applies a unified diff produced above; only what the tests need.
std::string apply_unified(const std::string& old_text, const std::string& diff) {
  std::vector<std::string> old_lines;
  for (size_t pos = 0; pos < old_text.size();) {
    auto nl = old_text.find('\n', pos);
    auto end = nl == std::string::npos ? old_text.size() : nl + 1;
    old_lines.push_back(old_text.substr(pos, end - pos));
    pos = end;
  }
  std::string out;
  size_t next = 0;
  char last = 0;
  std::istringstream in(diff);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line.rfind("--- ", 0) == 0 || line.rfind("+++ ", 0) == 0) continue;
    if (line.rfind("@@ -", 0) == 0) {
      size_t start = std::stoul(line.substr(4));
      auto comma = line.find(',');
      auto space = line.find(' ', 4);
      size_t count = comma < space ? std::stoul(line.substr(comma + 1)) : 1;
      size_t first = count == 0 ? start : start - 1;
      for (; next < first; ++next) out += old_lines[next];
    } else if (line[0] == '\\') {
      if (last != '-') out.pop_back();
    } else if (line[0] == ' ') {
      out += line.substr(1) + "\n";
      ++next;
    } else if (line[0] == '-') {
      ++next;
    } else if (line[0] == '+') {
      out += line.substr(1) + "\n";
    }
    last = line[0];
  }
  for (; next < old_lines.size(); ++next) out += old_lines[next];
  return out;
}

size_t lcs(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::vector<size_t>> t(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j)
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
  return t[a.size()][b.size()];
}

TEST(apply_patch_diff, random_diffs_are_minimal_and_reproduce_the_new_text) {
  std::mt19937 rng(12345);
  auto random_text = [&](std::vector<std::string>& lines) {
    lines.clear();
    auto n = rng() % 14;
    std::string text;
    for (size_t i = 0; i < n; ++i)
      lines.push_back(std::string(1, static_cast<char>('a' + rng() % 3)) + "\n");
    if (!lines.empty() && rng() % 4 == 0) lines.back().pop_back();  // no final newline
    for (const auto& l : lines) text += l;
    return text;
  };
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::string> a;
    std::vector<std::string> b;
    auto old_text = random_text(a);
    auto new_text = random_text(b);
    auto diff = unified_diff("r", old_text, new_text);
    ASSERT_EQ(apply_unified(old_text, diff), new_text) << diff;
    size_t changed = 0;
    std::istringstream in(diff);
    for (std::string line; std::getline(in, line);)
      if ((line[0] == '-' || line[0] == '+') && line.rfind("--- ", 0) && line.rfind("+++ ", 0))
        ++changed;
    ASSERT_EQ(changed, a.size() + b.size() - 2 * lcs(a, b)) << diff;
  }
}

TEST(apply_patch_diff, large_rewrites_stay_correct) {
  std::string old_text;
  std::string new_text;
  for (int i = 0; i < 6000; ++i) {
    old_text += "old " + std::to_string(i) + "\n";
    new_text += "new " + std::to_string(i) + "\n";
  }
  auto diff = unified_diff("big", old_text, new_text);
  EXPECT_EQ(apply_unified(old_text, diff), new_text);
  EXPECT_EQ(diff.substr(0, 38), "--- a/big\n+++ b/big\n@@ -1,6000 +1,6000");
}

}  // namespace
}  // namespace parley::patch
