#include "actors/sandbox/sandbox_plan.hpp"

#include <cerrno>
#include <cstdlib>

namespace parley::sandbox {

namespace {

bool parse_count(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text.size() > 19)
    return false;
  for (char c : text)
    if (c < '0' || c > '9')
      return false;
  out = std::strtoull(text.c_str(), nullptr, 10);
  return out > 0;
}

std::optional<mode> parse_mode(const std::string& text) {
  if (text == "read-only")
    return mode::read_only;
  if (text == "workspace-write")
    return mode::workspace_write;
  if (text == "danger-full-access")
    return mode::danger_full_access;
  return std::nullopt;
}

parse_result plan_error(std::string what) {
  return parse_result{std::nullopt, std::move(what)};
}

} // namespace

const char* to_string(mode x) {
  switch (x) {
    case mode::read_only:
      return "read-only";
    case mode::workspace_write:
      return "workspace-write";
    case mode::danger_full_access:
      return "danger-full-access";
  }
  return "?";
}

parse_result parse_arguments(const std::vector<std::string>& args) {
  plan result;
  bool have_mode = false;
  bool have_separator = false;
  size_t i = 0;
  while (i < args.size()) {
    std::string name = args[i++];
    if (name == "--") {
      have_separator = true;
      break;
    }
    if (name == "--check") {
      result.check = true;
      continue;
    }
    if (name == "--isolate-reads") {
      result.isolate_reads = true;
      continue;
    }
    std::string value;
    if (auto eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (i < args.size()) {
      value = args[i++];
    } else {
      return plan_error(name + " needs a value");
    }
    if (name == "--mode") {
      auto parsed = parse_mode(value);
      if (!parsed)
        return plan_error("unknown --mode " + value);
      result.sandbox_mode = *parsed;
      have_mode = true;
    } else if (name == "--writable" || name == "--hide" || name == "--readable") {
      if (value.empty() || value[0] != '/')
        return plan_error(name + " needs an absolute path: " + value);
      auto& list = name == "--writable" ? result.writable
                   : name == "--hide"   ? result.hidden
                                        : result.readable;
      list.push_back(value);
    } else if (name == "--network") {
      if (value != "on" && value != "off")
        return plan_error("--network is on or off, not " + value);
      result.network = value == "on";
    } else if (name == "--max-memory" || name == "--max-cpu"
               || name == "--max-processes" || name == "--max-file-size") {
      std::uint64_t count = 0;
      if (!parse_count(value, count))
        return plan_error(name + " needs a positive number: " + value);
      auto& slot = name == "--max-memory"      ? result.limits.max_memory
                   : name == "--max-cpu"       ? result.limits.max_cpu
                   : name == "--max-processes" ? result.limits.max_processes
                                               : result.limits.max_file_size;
      slot = count;
    } else {
      return plan_error("unknown option " + name);
    }
  }
  result.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (result.check)
    return parse_result{std::move(result), {}};
  if (!have_mode)
    return plan_error("--mode is required");
  if (!have_separator || result.command.empty() || result.command[0].empty())
    return plan_error("no command: expected -- PROGRAM [ARGS...]");
  if (!result.writable.empty() && result.sandbox_mode != mode::workspace_write)
    return plan_error("--writable is only for --mode workspace-write");
  if (!result.readable.empty() && !result.isolate_reads)
    return plan_error("--readable needs --isolate-reads");
  return parse_result{std::move(result), {}};
}

} // namespace parley::sandbox
