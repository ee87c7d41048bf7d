#include "bench/mock_model/options.hpp"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace parley::mock_model {

namespace {

constexpr const char* usage_text
    = "usage: parley-mock-model [--port=N] [--host=127.0.0.1] [--command=CMD] [--dump=DIR]\n"
      "                         [--pace-ms=MS] [--threads=N] [--require-key=KEY] [--record=N]\n"
      "                         [--keep-alive=SECONDS] [--backlog=N]\n"
      "                         [--queue-connections=0|1]\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "parley-mock-model: %s\n%s", message.c_str(), usage_text);
  std::exit(2);
}

unsigned long number(const std::string& name, const std::string& value, unsigned long max) {
  char* end = nullptr;
  unsigned long n = std::strtoul(value.c_str(), &end, 10);
  if (value.empty() || value[0] == '-' || *end != '\0' || n > max)
    usage_error("bad --" + name + ": " + value);
  return n;
}

}  // namespace

options parse_options(int argc, char** argv) {
  options opts;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("%s(a mock OpenAI model server; see bench/mock_model.md)\n", usage_text);
      std::exit(0);
    }
    if (arg.substr(0, 2) != "--") usage_error("unknown argument: " + std::string(arg));
    std::string name(arg.substr(2));
    std::string value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      usage_error("--" + name + " needs a value");
    }
    if (name == "port")
      opts.port = static_cast<int>(number(name, value, 65535));
    else if (name == "host")
      opts.host = value;
    else if (name == "command")
      opts.command = value;
    else if (name == "dump")
      opts.dump_dir = value;
    else if (name == "pace-ms")
      opts.pace_ms = static_cast<long>(number(name, value, 3600000));
    else if (name == "threads")
      opts.threads = number(name, value, 65536);
    else if (name == "require-key")
      opts.require_key = value;
    else if (name == "record")
      opts.record = number(name, value, 10000000);
    else if (name == "queue-connections")
      opts.queue_connections = number(name, value, 1) == 1;
    else if (name == "backlog")
      opts.backlog = static_cast<int>(number(name, value, 65535));
    else if (name == "keep-alive")
      opts.keep_alive_s = static_cast<long>(number(name, value, 86400));
    else
      usage_error("unknown argument: --" + name);
  }
  if (opts.host != "127.0.0.1") usage_error("refusing to bind " + opts.host + ": only 127.0.0.1");
  if (opts.command.empty()) usage_error("--command must not be empty");
  if (opts.threads == 0) usage_error("--threads must be at least 1");
  return opts;
}

}  // namespace parley::mock_model
