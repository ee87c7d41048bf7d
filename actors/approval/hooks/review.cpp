#include "actors/approval/hooks/review.hpp"

namespace parley::hooks {

nlohmann::json to_json(const review_request& r) {
  using nlohmann::json;
  json j{{"type", to_string(r.what)},
         {"approvalId", std::to_string(r.approval_key)},
         {"threadId", r.thread_id},
         {"turnId", r.turn_id},
         {"itemId", r.item_id},
         {"cwd", r.cwd},
         {"actionDigest", r.digest},
         {"reason", r.reason ? json(*r.reason) : json(nullptr)},
         {"metadata", r.metadata}};
  switch (r.what) {
    case action_kind::command:
      j["command"] = r.command;
      j["argv"] = r.argv ? json(*r.argv) : json(nullptr);
      break;
    case action_kind::file_change: {
      auto changes = json::array();
      for (const auto& c : r.changes)
        changes.push_back({{"path", c.path},
                           {"kind", c.kind},
                           {"movePath", c.move_path ? json(*c.move_path) : json(nullptr)},
                           {"diff", c.diff}});
      j["changes"] = std::move(changes);
      break;
    }
    case action_kind::tool:
      j["tool"] = r.tool;
      j["arguments"] = r.arguments;
      break;
  }
  return j;
}

}  // namespace parley::hooks
