#include "bench/mock_model/ids.hpp"

#include <atomic>
#include <cstdio>
#include <random>

namespace parley::mock_model {

namespace {

std::string make_nonce() {
  std::random_device rd;
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
  return buf;
}

const std::string nonce = make_nonce();
std::atomic<unsigned long> next_id{1};

}  // namespace

std::string fresh_id(std::string_view prefix) {
  return std::string(prefix) + "_mock_" + nonce + "_" + std::to_string(next_id++);
}

}  // namespace parley::mock_model
