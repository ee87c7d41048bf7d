#include "actors/core/log.hpp"

#include "actors/core/log_json.hpp"

#include <atomic>
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

namespace {
std::atomic<bool> json_lines{false};
}

bool set_format(const std::string& format) {
  if (format == "json") {
    get().set_formatter(std::make_unique<json_formatter>());
    json_lines = true;
    return true;
  }
  if (format == "text") {
    get().set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
    json_lines = false;
    return true;
  }
  return false;
}

bool json_format() { return json_lines.load(); }

}  // namespace parley::log
