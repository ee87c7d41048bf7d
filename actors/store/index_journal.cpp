#include "actors/store/index_journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>

namespace parley::store {

namespace fs = std::filesystem;

index_journal::index_journal(std::string dir, std::string stamp, int shard)
    : dir_(std::move(dir)), prefix_(std::move(stamp) + "." + std::to_string(shard) + ".") {}

index_journal::~index_journal() {
  if (fd_ >= 0) ::close(fd_);
}

bool index_journal::open() {
  if (fd_ >= 0) return true;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  auto file = dir_ + "/" + prefix_ + std::to_string(generation_);
  fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  return fd_ >= 0;
}

bool index_journal::note(const std::string& path) {
  if (noted_.count(path) > 0) return true;
  if (!open()) return false;
  auto line = path + "\n";
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    auto n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<size_t>(n);
  }
  noted_.insert(path);
  unsynced_ = true;
  return true;
}

void index_journal::sync() {
  if (!unsynced_ || fd_ < 0) return;
  ::fdatasync(fd_);
  unsynced_ = false;
}

std::string index_journal::rotate() {
  if (fd_ < 0) return {};
  ::close(fd_);
  fd_ = -1;
  unsynced_ = false;
  noted_.clear();
  return dir_ + "/" + prefix_ + std::to_string(generation_++);
}

std::string journal_dir(const std::string& home) {
  return home + "/parley-index.journal";
}

std::string journal_stamp() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(now).count()) + "-"
         + std::to_string(::getpid());
}

std::vector<std::string> left_journals(const std::string& dir, const std::string& own_stamp) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name.rfind(own_stamp + ".", 0) == 0) continue;
    out.push_back(it->path().string());
  }
  return out;
}

std::vector<std::string> read_journal(const std::string& file) {
  std::vector<std::string> out;
  std::ifstream in(file, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t start = 0;
  while (start < data.size()) {
    auto end = data.find('\n', start);
    if (end == std::string::npos) break;  // torn: its change was never written
    if (end > start) out.push_back(data.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace parley::store
