#include "actors/patch/turn_diff.hpp"

namespace parley::patch {

void turn_diff::record(const std::vector<file_change>& applied) {
  for (const auto& c : applied) {
    auto i = files_.find(c.resolved_path);
    tracked t;
    if (i != files_.end()) {
      t = std::move(i->second);
      files_.erase(i);
    } else if (c.kind != change_kind::add) {
      t.original_path = c.resolved_path;
      t.baseline = c.old_content;
    }
    std::string key = c.resolved_path;
    switch (c.kind) {
      case change_kind::add:
        t.current_path = c.resolved_path;
        t.current = c.new_content;
        break;
      case change_kind::update:
        if (!c.resolved_move_to.empty()) key = c.resolved_move_to;
        t.current_path = key;
        t.current = c.new_content;
        break;
      case change_kind::remove:
        t.current_path.reset();
        t.current.clear();
        break;
    }
    files_[key] = std::move(t);
  }
}

std::string turn_diff::render() const {
  std::string out;
  for (const auto& [key, t] : files_) {
    if (!t.original_path && !t.current_path) continue;  // created and deleted again
    out += unified_diff(t.original_path, t.current_path, t.baseline.value_or(std::string{}),
                        t.current);
  }
  return out;
}

}  // namespace parley::patch
