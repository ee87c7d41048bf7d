#include "actors/sandbox/failure.hpp"

#include <cerrno>
#include <cstring>

namespace parley::sandbox {

failure failed(std::string what) {
  return failure{std::move(what), errno};
}

std::string describe(const failure& x) {
  std::string line = "parley-sandbox: " + x.what;
  if (x.error != 0) {
    line += ": ";
    line += std::strerror(x.error);
  }
  return line;
}

} // namespace parley::sandbox
