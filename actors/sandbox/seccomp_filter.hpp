#pragma once

// The system-call filter (libseccomp) loaded right before exec.

#include "actors/sandbox/failure.hpp"

namespace parley::sandbox {

/// Always: the keyring calls (keyctl, add_key, request_key: a session
/// keyring is inherited across every namespace) and the terminal injection
/// ioctls (TIOCSTI, TIOCLINUX) fail with EPERM. With `network` off also
/// socket(2) for every domain (AF_UNIX too: a socket file on a read-only
/// mount is still connectable; socketpair(2) stays) and io_uring, which can
/// open sockets without socket(2). Other architectures' calls kill the
/// process (libseccomp's default for a foreign ABI).
outcome install_seccomp(bool network);

} // namespace parley::sandbox
