// The public entry points that tie the steps together; the steps live in
// parse.cpp, plan.cpp (with match.cpp and diff.cpp) and write.cpp.

#include "actors/patch/apply_patch.hpp"

namespace parley::patch {

status apply(const std::vector<file_change>& changes) {
  return detail::apply(changes, nullptr);
}

result<std::vector<file_change>> apply_patch(const std::string& text, const std::string& cwd,
                                             const std::vector<std::string>& writable_roots) {
  auto parsed = parse(text);
  if (!parsed) return parsed.error();
  auto changes = plan(parsed.value(), cwd, writable_roots);
  if (!changes) return changes.error();
  if (auto applied = apply(changes.value()); !applied) return applied.error();
  return changes;
}

}  // namespace parley::patch
