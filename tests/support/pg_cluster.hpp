#pragma once
// A private PostgreSQL cluster for C++ tests: the same fixture as the python
// tests use (tests/support/pg_cluster.py, run as a command), started once per
// test binary on first use and stopped when the binary exits (or, if it is
// killed, by the fixture's watchdog). Register a suite that uses it as one
// ctest (not one per test case): each process starts a cluster of its own.

#include <optional>
#include <string>

namespace parley::test {

class pg_cluster {
 public:
  /// Whether PostgreSQL's server programs are installed here.
  static bool available();
  /// Whether a test must fail rather than skip without them (CI=1).
  static bool required();
  /// This process's cluster, started on first call; throws if it cannot start.
  static pg_cluster& shared();

  /// A new, empty database; its URL (postgresql://parley@127.0.0.1:PORT/NAME).
  std::string create_database(const std::string& name);
  /// Runs `sql` in database `db` (psql -At: one row a line, `|` between
  /// columns); throws when it fails.
  std::string psql(const std::string& db, const std::string& sql);
  /// Stops the server (immediate: as a crash would) and starts it again.
  void restart();
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }

  ~pg_cluster();
  pg_cluster(const pg_cluster&) = delete;
  pg_cluster& operator=(const pg_cluster&) = delete;

 private:
  pg_cluster();
  std::string dir_;
  int port_ = 0;
};

}  // namespace parley::test

/// Skips the test where PostgreSQL is not installed, fails it in CI.
#define PARLEY_REQUIRE_POSTGRES()                                                  \
  do {                                                                             \
    if (!::parley::test::pg_cluster::available()) {                                \
      if (::parley::test::pg_cluster::required())                                  \
        FAIL() << "PostgreSQL 15 is not installed (.ci/install-deps installs it)"; \
      GTEST_SKIP() << "PostgreSQL 15 is not installed";                            \
    }                                                                              \
  } while (false)
