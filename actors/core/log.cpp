#include "actors/core/log.hpp"

#include <mutex>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace parley::log {

spdlog::logger& get() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    if (auto existing = spdlog::get("parley")) return existing;
    auto created = spdlog::stderr_color_mt("parley");
    created->set_level(spdlog::level::info);
    created->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
    return created;
  }();
  return *instance;
}

void set_level(const std::string& level) { get().set_level(spdlog::level::from_str(level)); }

}  // namespace parley::log
