// Planning: resolves a parsed patch's paths against cwd and the writable
// roots, reads the files it changes and computes their new content and diff.

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "actors/patch/apply_patch.hpp"
#include "actors/patch/beneath.hpp"
#include "actors/patch/detail.hpp"

namespace parley::patch {
namespace {

namespace fs = std::filesystem;
using detail::describe;
using detail::read_all;

// -- paths --------------------------------------------------------------------

// Lexical normalisation without a trailing separator ("a/b/" -> "a/b").
fs::path normalised(const fs::path& p) {
  auto s = p.lexically_normal().native();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

fs::path resolve(const fs::path& base, const std::string& p) {
  fs::path path(p);
  return normalised(path.is_relative() ? base / path : path);
}

bool within(const fs::path& path, const fs::path& root) {
  auto [root_end, ignored] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  (void)ignored;
  return root_end == root.end();
}

// The name used in diffs: relative to cwd when inside it, else absolute.
std::string display_name(const fs::path& resolved, const fs::path& cwd) {
  if (within(resolved, cwd) && resolved != cwd) return resolved.lexically_relative(cwd).native();
  return resolved.native();
}

// -- reading the files to change ----------------------------------------------

// The current content of a file the patch updates or deletes.
result<std::string> read_existing(const fs::path& path, const std::string& shown,
                                  const char* verb) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  auto prefix = std::string("cannot ") + verb + " " + shown + ": ";
  if (st.type() == fs::file_type::not_found) return error{prefix + "no such file"};
  if (ec) return error{prefix + ec.message()};
  if (fs::is_directory(st)) return error{prefix + "it is a directory"};
  if (!fs::is_regular_file(st)) return error{prefix + "not a regular file"};
  int err = 0;
  auto content = read_all(path.native(), err);
  if (!content) return error{prefix + describe(err)};
  return std::move(*content);
}

// True when something (even a dangling symlink) is at `path`.
result<bool> occupied(const fs::path& path, const std::string& shown) {
  std::error_code ec;
  auto st = fs::symlink_status(path, ec);
  if (st.type() == fs::file_type::not_found) return false;
  if (ec) return error{"cannot check " + shown + ": " + ec.message()};
  return true;
}

/// Plans one patch's file sections against the roots, in order.
class planner {
 public:
  planner(fs::path base, std::vector<fs::path> roots)
      : base_(std::move(base)), roots_(std::move(roots)) {
    // A path must lie in a root as written and as it really is: a directory
    // symlink inside a root may lead anywhere. The last name is not followed
    // (apply() replaces or removes it, never writes through it), but plan()
    // does read through it. apply() then writes beneath the real root found
    // here, so a symlink swapped in later cannot lead out either.
    for (const auto& r : roots_) {
      std::error_code ec;
      auto real = fs::weakly_canonical(r, ec);
      real_roots_.push_back(ec ? r : normalised(real));
    }
  }

  /// Plans one file section; an error ends the whole plan.
  std::optional<error> add_section(const file_patch& f) {
    file_change c;
    c.kind = f.kind;
    c.path = f.path;
    c.move_to = f.move_to;
    auto path = resolve(base_, f.path);
    c.resolved_path = path.native();
    auto where = locate(path);
    if (!where) return refused(f.path);
    c.root = where->root;
    c.beneath_root = where->beneath;
    auto shown = display_name(path, base_);
    if (rewrites_a_deleted_file(path, f, shown)) return std::nullopt;
    if (auto err = claim(path, f.path)) return err;
    std::optional<error> err;
    switch (f.kind) {
      case change_kind::add:
        err = plan_add(c, path, f, shown);
        break;
      case change_kind::remove:
        err = plan_remove(c, path, f, shown);
        break;
      case change_kind::update:
        err = plan_update(c, path, f, shown);
        break;
    }
    if (err) return err;
    changes_.push_back(std::move(c));
    return std::nullopt;
  }

  std::vector<file_change> take() { return std::move(changes_); }

 private:
  struct place {
    std::string root;     // empty: unrestricted
    std::string beneath;  // the path below `root`
  };

  /// Where a path lies: within a root as written and as it really is.
  std::optional<place> locate(const fs::path& p) const {
    if (std::none_of(roots_.begin(), roots_.end(), [&](const auto& r) { return within(p, r); }))
      return std::nullopt;
    auto real = beneath::real_path_of(p);
    for (const auto& r : real_roots_) {
      if (!within(real, r)) continue;
      if (r == r.root_path()) return place{"", p.relative_path().native()};
      return place{r.native(), real.lexically_relative(r).native()};
    }
    return std::nullopt;
  }

  static error refused(const std::string& shown) {
    return error{"refused by policy: " + shown + " is outside the writable roots",
                 error::kind::outside_roots};
  }

  /// Two sections on one file would make the result depend on their order,
  /// and apply() could not restore the file exactly; Codex's own map of
  /// changes keeps only one of them. Refuse instead.
  std::optional<error> claim(const fs::path& p, const std::string& shown) {
    if (touched_.emplace(p, changes_.size()).second) return std::nullopt;
    return error{"invalid patch: " + shown + " is changed by more than one file section"};
  }

  /// "Delete File" then "Add File" of one path, which models use to rewrite
  /// a file: the two become one update.
  bool rewrites_a_deleted_file(const fs::path& path, const file_patch& f,
                               const std::string& shown) {
    auto it = touched_.find(path);
    if (it == touched_.end() || f.kind != change_kind::add
        || changes_[it->second].kind != change_kind::remove)
      return false;
    auto& rewrite = changes_[it->second];
    rewrite.kind = change_kind::update;
    rewrite.new_content = f.content;
    rewrite.unified_diff = unified_diff(shown, rewrite.old_content, rewrite.new_content);
    return true;
  }

  std::optional<error> plan_add(file_change& c, const fs::path& path, const file_patch& f,
                                const std::string& shown) {
    auto exists = occupied(path, f.path);
    if (!exists) return exists.error();
    if (*exists) return error{"cannot add " + f.path + ": it already exists"};
    c.new_content = f.content;
    c.unified_diff = unified_diff(std::nullopt, shown, "", c.new_content);
    return std::nullopt;
  }

  std::optional<error> plan_remove(file_change& c, const fs::path& path, const file_patch& f,
                                   const std::string& shown) {
    auto old = read_existing(path, f.path, "delete");
    if (!old) return old.error();
    c.old_content = std::move(old).value();
    c.unified_diff = unified_diff(shown, std::nullopt, c.old_content, "");
    return std::nullopt;
  }

  std::optional<error> plan_update(file_change& c, const fs::path& path, const file_patch& f,
                                   const std::string& shown) {
    auto old = read_existing(path, f.path, "update");
    if (!old) return old.error();
    c.old_content = std::move(old).value();
    auto updated = detail::apply_hunks(c.old_content, f);
    if (!updated) return updated.error();
    c.new_content = std::move(updated).value();
    auto shown_to = shown;
    if (f.move_to) {
      auto to = resolve(base_, *f.move_to);
      if (auto err = plan_move(c, path, to, f)) return err;
      if (to != path) shown_to = display_name(to, base_);
    }
    c.unified_diff = unified_diff(shown, shown_to, c.old_content, c.new_content);
    return std::nullopt;
  }

  /// An update's destination: within the roots, not changed elsewhere, and
  /// free (Codex overwrites an existing destination; like an Add onto an
  /// existing file, that would discard content the diff never showed).
  std::optional<error> plan_move(file_change& c, const fs::path& from, const fs::path& to,
                                 const file_patch& f) {
    auto to_where = locate(to);
    if (!to_where) return refused(*f.move_to);
    if (to == from) return std::nullopt;
    c.move_root = to_where->root;
    c.move_beneath_root = to_where->beneath;
    if (auto err = claim(to, *f.move_to)) return err;
    auto exists = occupied(to, *f.move_to);
    if (!exists) return exists.error();
    if (*exists)
      return error{"cannot move " + f.path + " to " + *f.move_to
                   + ": the destination already exists"};
    c.resolved_move_to = to.native();
    return std::nullopt;
  }

  fs::path base_;
  std::vector<fs::path> roots_;
  std::vector<fs::path> real_roots_;
  std::map<fs::path, size_t> touched_;  // -> index in `changes_`
  std::vector<file_change> changes_;
};

}  // namespace

result<std::vector<file_change>> plan(const parsed_patch& patch, const std::string& cwd,
                                      const std::vector<std::string>& writable_roots) {
  if (cwd.empty()) return error{"cannot plan a patch without a working directory"};
  std::error_code ec;
  auto base = fs::absolute(cwd, ec);
  if (ec) return error{"cannot resolve the working directory " + cwd + ": " + ec.message()};
  base = normalised(base);
  std::vector<fs::path> roots;
  for (const auto& root : writable_roots) roots.push_back(resolve(base, root));
  if (roots.empty()) roots.push_back(base);
  planner p{base, std::move(roots)};
  for (const auto& f : patch.files)
    if (auto err = p.add_section(f)) return *err;
  return p.take();
}

}  // namespace parley::patch
