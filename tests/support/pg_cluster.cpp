#include "tests/support/pg_cluster.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace parley::test {

namespace pg_fixture {

std::string script() {
  return std::string{PARLEY_SOURCE_DIR} + "/tests/support/pg_cluster.py";
}

std::string bin_dir() {
  const char* b = std::getenv("PARLEY_PG_BIN");
  return b && *b ? b : "/usr/lib/postgresql/15/bin";
}

/// Runs the fixture's command; its stdout, or throws with the exit status.
std::string run(const std::string& args) {
  auto cmd = "/usr/bin/python3 " + script() + " " + args;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run " + cmd);
  std::string out;
  std::array<char, 4096> buf{};
  while (auto n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int status = ::pclose(p);
  if (status != 0)
    throw std::runtime_error(cmd + " failed (status " + std::to_string(status) + ")");
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace pg_fixture

bool pg_cluster::available() {
  return ::access((pg_fixture::bin_dir() + "/initdb").c_str(), X_OK) == 0
         && ::access((pg_fixture::bin_dir() + "/pg_ctl").c_str(), X_OK) == 0;
}

bool pg_cluster::required() {
  const char* ci = std::getenv("CI");
  return ci && *ci && std::string{ci} != "0" && std::string{ci} != "false";
}

pg_cluster& pg_cluster::shared() {
  static pg_cluster cluster;
  return cluster;
}

pg_cluster::pg_cluster() {
  char tmpl[] = "/tmp/parley-pg-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  auto described = nlohmann::json::parse(
      pg_fixture::run("start " + dir_ + " --owner-pid " + std::to_string(::getpid())));
  port_ = described.at("port").get<int>();
}

pg_cluster::~pg_cluster() {
  try {
    pg_fixture::run("stop " + dir_);
  } catch (...) {
    // The watchdog stops it once this process is gone.
  }
}

std::string pg_cluster::create_database(const std::string& name) {
  return pg_fixture::run("createdb " + dir_ + " " + name);
}

std::string pg_cluster::psql(const std::string& db, const std::string& sql) {
  // A file per call: tests run queries from several threads at once.
  static std::atomic<int> calls{0};
  auto file = dir_ + "/query-" + std::to_string(++calls) + ".sql";
  {
    std::ofstream out{file, std::ios::trunc};
    out << sql;
  }
  auto rows = pg_fixture::run("psql " + dir_ + " " + db + " " + file);
  std::remove(file.c_str());
  return rows;
}

void pg_cluster::restart() {
  pg_fixture::run("restart " + dir_);
}

}  // namespace parley::test
