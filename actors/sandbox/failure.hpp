#pragma once

// How a confinement step reports that it failed: what it tried and the
// errno it got. The launcher prints `parley-sandbox: <what>: <strerror>` and
// exits 125 without running the command.

#include <optional>
#include <string>

namespace parley::sandbox {

struct failure {
  std::string what;
  /// errno of the failed call; 0 when there is none.
  int error = 0;
};

/// Empty when the step succeeded.
using outcome = std::optional<failure>;

/// Builds a failure from the current errno.
failure failed(std::string what);

/// `parley-sandbox: <what>: <strerror>`, without a newline.
std::string describe(const failure& x);

} // namespace parley::sandbox
