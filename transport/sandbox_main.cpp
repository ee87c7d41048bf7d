// parley-sandbox: confines one command, then execs it
// (actors/sandbox/README.md). A standalone executable linked against the
// small sandbox library only, so it starts fast.

#include <cstdio>
#include <string>
#include <vector>

#include "actors/sandbox/confine.hpp"
#include "actors/sandbox/sandbox_plan.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = parley::sandbox::parse_arguments(args);
  if (!parsed.parsed) {
    std::fprintf(stderr, "parley-sandbox: %s\n", parsed.error.c_str());
    return parley::sandbox::setup_failed;
  }
  if (parsed.parsed->check)
    return parley::sandbox::run_check();
  return parley::sandbox::run_confined(*parsed.parsed);
}
