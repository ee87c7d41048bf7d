#pragma once
// `--log-format=json`: each log line as one JSON object on stderr, for log
// collectors. parley's lines read "component key=value key=\"quoted value\" ...";
// the pairs become fields of their own (thread, turn, client, tenant, ...)
// beside time (UTC, ISO 8601), level, component and the whole message.

#include <spdlog/formatter.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::log {

/// The key=value pairs of a log message, in order (a value in double quotes
/// may hold spaces and \" escapes; words that are not pairs are skipped).
std::vector<std::pair<std::string, std::string>> parse_fields(std::string_view message);

/// One JSON object per line.
class json_formatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;
};

}  // namespace parley::log
