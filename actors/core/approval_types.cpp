#include "actors/core/approval_types.hpp"

#include <algorithm>

namespace parley::hooks {

const char* to_string(verdict::kind x) {
  switch (x) {
    case verdict::kind::allow:
      return "allow";
    case verdict::kind::deny:
      return "deny";
    case verdict::kind::abstain:
      return "abstain";
  }
  return "abstain";
}

const char* to_string(action_kind x) {
  switch (x) {
    case action_kind::command:
      return "command";
    case action_kind::file_change:
      return "fileChange";
    case action_kind::tool:
      return "tool";
  }
  return "command";
}

bool external_hook_spec::reviews(action_kind k) const {
  return on.empty() || std::find(on.begin(), on.end(), k) != on.end();
}

}  // namespace parley::hooks
