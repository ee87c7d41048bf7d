// The home lock: one parley per home. A parley killed a moment ago may leave
// the lock held briefly by a command it was starting (its copies of parley's
// files close at the command's exec): a restart waits for that, while a
// parley that is alive is refused at once. Found by the store crash test,
// whose restart right after kill -9 failed under load.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>

#include "actors/core/errors.hpp"
#include "actors/store/rollout_file.hpp"

namespace parley::store {
namespace {

namespace fs = std::filesystem;

std::string fresh_home(const char* name) {
  auto dir = fs::temp_directory_path()
             / (std::string{"parley-"} + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

/// A pid that no process has now: a child that has exited and been reaped.
pid_t gone_pid() {
  pid_t p = ::fork();
  if (p == 0) ::_exit(0);
  ::waitpid(p, nullptr, 0);
  return p;
}

/// Forks a child that takes the home's lock with `named` written in it,
/// tells the parent through a pipe, and holds it until `release_fd` reads.
pid_t hold_lock(const std::string& home, pid_t named, int ready_fd, int release_fd) {
  pid_t p = ::fork();
  if (p != 0) return p;
  int fd = ::open((home + "/parley.lock").c_str(), O_RDWR | O_CREAT, 0644);
  if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(1);
  auto text = std::to_string(named == 0 ? ::getpid() : named);
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) ::_exit(1);
  char c = 1;
  if (::write(ready_fd, &c, 1) != 1) ::_exit(1);
  if (::read(release_fd, &c, 1) < 0) ::_exit(1);
  ::_exit(0);
}

struct lock_holder {
  int ready[2], release[2];
  pid_t child = -1;
  lock_holder(const std::string& home, pid_t named) {
    EXPECT_EQ(::pipe(ready), 0);
    EXPECT_EQ(::pipe(release), 0);
    child = hold_lock(home, named, ready[1], release[0]);
    char c;
    EXPECT_EQ(::read(ready[0], &c, 1), 1);  // the lock is held now
  }
  void let_go() {
    char c = 1;
    EXPECT_EQ(::write(release[1], &c, 1), 1);
  }
  ~lock_holder() {
    let_go();
    ::waitpid(child, nullptr, 0);
    for (int fd : {ready[0], ready[1], release[0], release[1]}) ::close(fd);
  }
};

TEST(home_lock, a_lock_left_by_a_parley_that_is_gone_is_waited_for) {
  auto home = fresh_home("lock-gone");
  lock_holder holder{home, gone_pid()};
  std::thread later{[&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    holder.let_go();
  }};
  auto lock = home_lock::acquire(home);
  later.join();
  EXPECT_TRUE(lock) << (lock ? "" : to_string(lock.error()));
}

TEST(home_lock, a_parley_that_is_alive_is_refused_at_once) {
  auto home = fresh_home("lock-alive");
  lock_holder holder{home, 0};  // the holder names itself
  auto lock = home_lock::acquire(home);
  ASSERT_FALSE(lock);
  EXPECT_NE(
      message_of(lock.error()).find("another parley process (pid " + std::to_string(holder.child)),
      std::string::npos)
      << message_of(lock.error());
}

}  // namespace
}  // namespace parley::store
