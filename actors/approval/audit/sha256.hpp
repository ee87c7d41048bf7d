#pragma once
// SHA-256 (FIPS 180-4), small and dependency-free: the audit log chains its
// lines with it, and OpenSSL is not a project dependency.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace parley::audit {

/// Incremental SHA-256. Feed bytes with update() in any split, then call
/// finish() once; the object must not be updated after finish().
class sha256 {
 public:
  using digest = std::array<std::uint8_t, 32>;

  void update(std::string_view data);
  digest finish();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> h_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<std::uint8_t, 64> block_{};
  std::size_t used_ = 0;           // bytes waiting in block_
  std::uint64_t total_bytes_ = 0;  // message length so far, for the padding
};

/// Lowercase hex of a digest (64 characters).
std::string to_hex(const sha256::digest& d);

/// Lowercase hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace parley::audit
