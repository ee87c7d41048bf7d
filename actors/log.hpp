#pragma once
// Logging: spdlog, always to stderr (stdout carries the protocol).

#include <memory>
#include <spdlog/spdlog.h>
#include <string>

namespace parley::log {

/// The "parley" logger. Created on first use with a stderr sink unless the
/// host registered its own logger under that name first.
spdlog::logger& get();

/// Sets the level from a name ("trace", "debug", "info", "warn", "error", "off").
void set_level(const std::string& level);

}  // namespace parley::log

#define PARLEY_TRACE(...) ::parley::log::get().trace(__VA_ARGS__)
#define PARLEY_DEBUG(...) ::parley::log::get().debug(__VA_ARGS__)
#define PARLEY_INFO(...) ::parley::log::get().info(__VA_ARGS__)
#define PARLEY_WARN(...) ::parley::log::get().warn(__VA_ARGS__)
#define PARLEY_ERROR(...) ::parley::log::get().error(__VA_ARGS__)
