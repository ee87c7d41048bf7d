#pragma once
// Logging: spdlog, always to stderr (stdout carries the protocol).

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace parley::log {

/// The "parley" logger. Created on first use with a stderr sink unless the
/// host registered its own logger under that name first.
spdlog::logger& get();

/// Sets the level from a name ("trace", "debug", "info", "warn", "error", "off").
void set_level(const std::string& level);

/// "text" (the default: time, level, message) or "json" (one object a line,
/// see log_json.hpp). False for another name.
bool set_format(const std::string& format);
/// Whether lines are JSON (then nothing else may write to stderr in prose).
bool json_format();

}  // namespace parley::log

// The arguments are evaluated only when the level is on: a disabled trace
// line costs one load and a compare. Levels below PARLEY_LOG_COMPILED_LEVEL
// (an SPDLOG_LEVEL_* value; default: all of them) are removed at compile time.
#ifndef PARLEY_LOG_COMPILED_LEVEL
#define PARLEY_LOG_COMPILED_LEVEL SPDLOG_LEVEL_TRACE
#endif
#define PARLEY_LOG_AT(severity, ...)                                                       \
  do {                                                                                     \
    if constexpr (PARLEY_LOG_COMPILED_LEVEL <= (severity)) {                               \
      auto& parley_logger_ = ::parley::log::get();                                         \
      if (parley_logger_.should_log(static_cast<spdlog::level::level_enum>(severity)))     \
        parley_logger_.log(static_cast<spdlog::level::level_enum>(severity), __VA_ARGS__); \
    }                                                                                      \
  } while (false)

#define PARLEY_TRACE(...) PARLEY_LOG_AT(SPDLOG_LEVEL_TRACE, __VA_ARGS__)
#define PARLEY_DEBUG(...) PARLEY_LOG_AT(SPDLOG_LEVEL_DEBUG, __VA_ARGS__)
#define PARLEY_INFO(...) PARLEY_LOG_AT(SPDLOG_LEVEL_INFO, __VA_ARGS__)
#define PARLEY_WARN(...) PARLEY_LOG_AT(SPDLOG_LEVEL_WARN, __VA_ARGS__)
#define PARLEY_ERROR(...) PARLEY_LOG_AT(SPDLOG_LEVEL_ERROR, __VA_ARGS__)
