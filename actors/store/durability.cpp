#include "actors/store/durability.hpp"

namespace parley::store {

bool must_sync(const runtime_config& cfg, const store_record& record) {
  switch (cfg.durability) {
    case runtime_config::durability_kind::item:
      return true;
    case runtime_config::durability_kind::turn:
      return std::holds_alternative<turn_completed_record>(record)
             || std::holds_alternative<action_record>(record);
    case runtime_config::durability_kind::none:
      return false;
  }
  return true;
}

}  // namespace parley::store
