#include "actors/sandbox/mount_plan.hpp"

#include <algorithm>

namespace parley::sandbox {

bool is_within(const std::string& path, const std::string& root) {
  if (root == "/")
    return true;
  return path.compare(0, root.size(), root) == 0
         && (path.size() == root.size() || path[root.size()] == '/');
}

std::vector<std::string> outermost(std::vector<std::string> roots) {
  std::sort(roots.begin(), roots.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  std::vector<std::string> kept;
  for (auto& root : roots) {
    bool inside = std::any_of(kept.begin(), kept.end(),
                              [&](const std::string& k) { return is_within(root, k); });
    if (!inside)
      kept.push_back(std::move(root));
  }
  return kept;
}

mount_layout make_layout(const plan& x, const probe_function& probe,
                         const std::vector<std::string>& top_level) {
  mount_layout layout;
  if (x.sandbox_mode == mode::workspace_write) {
    std::vector<std::string> roots;
    for (const auto& root : x.writable)
      if (probe(root) == entry_kind::directory)
        roots.push_back(root);
    // Protected names under every root, nested ones included.
    for (const auto& root : roots) {
      for (const char* name : protected_names) {
        std::string path = root == "/" ? "/" + std::string(name) : root + "/" + name;
        if (std::find(layout.protect.begin(), layout.protect.end(), path)
            != layout.protect.end())
          continue;
        switch (probe(path)) {
          case entry_kind::missing:
            // As Codex: a name that is not there is not pinned (`git init`
            // in a fresh workspace must work).
            break;
          case entry_kind::symlink:
            layout.error = "protected path is a symlink (cannot be pinned read-only): " + path;
            return layout;
          case entry_kind::directory:
          case entry_kind::other:
            layout.protect.push_back(path);
            break;
        }
      }
    }
    layout.writable = outermost(std::move(roots));
  }
  if (x.isolate_reads) {
    for (const auto& root : x.readable)
      if (probe(root) == entry_kind::directory)
        layout.readable.push_back(root);
    layout.readable = outermost(std::move(layout.readable));
    for (const auto& name : top_level) {
      if (name.empty() || name == "." || name == "..")
        continue;
      if (std::find(std::begin(system_paths), std::end(system_paths), name)
          != std::end(system_paths))
        continue;
      std::string path = "/" + name;
      switch (probe(path)) {
        case entry_kind::directory:
          layout.isolate_dirs.push_back(path);
          break;
        case entry_kind::other:
          layout.isolate_files.push_back(path);
          break;
        case entry_kind::missing:
        case entry_kind::symlink: // resolves into a visible or covered place
          break;
      }
    }
  }
  for (const auto& path : x.hidden) {
    switch (probe(path)) {
      case entry_kind::directory:
        layout.hide_dirs.push_back(path);
        break;
      case entry_kind::other:
        layout.hide_files.push_back(path);
        break;
      case entry_kind::missing: // nothing to read
      case entry_kind::symlink: // canonical paths name no symlink
        break;
    }
  }
  return layout;
}

} // namespace parley::sandbox
