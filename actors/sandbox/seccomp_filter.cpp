#include "actors/sandbox/seccomp_filter.hpp"

#include <cerrno>
#include <seccomp.h>
#include <sys/ioctl.h>

namespace parley::sandbox {

namespace {

struct filter_context {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  ~filter_context() {
    if (ctx)
      seccomp_release(ctx);
  }
};

} // namespace

outcome install_seccomp(bool network) {
  filter_context filter;
  if (!filter.ctx)
    return failure{"seccomp_init", ENOMEM};
  auto deny = SCMP_ACT_ERRNO(EPERM);
  int rules[] = {SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key)};
  for (int nr : rules)
    if (int rc = seccomp_rule_add(filter.ctx, deny, nr, 0); rc < 0)
      return failure{"seccomp: deny the keyring calls", -rc};
  for (unsigned long request : {static_cast<unsigned long>(TIOCSTI),
                                static_cast<unsigned long>(TIOCLINUX)})
    if (int rc = seccomp_rule_add(filter.ctx, deny, SCMP_SYS(ioctl), 1,
                                  SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, request));
        rc < 0)
      return failure{"seccomp: deny TIOCSTI", -rc};
  if (!network) {
    int calls[] = {SCMP_SYS(socket), SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter),
                   SCMP_SYS(io_uring_register)};
    for (int nr : calls)
      if (int rc = seccomp_rule_add(filter.ctx, deny, nr, 0); rc < 0)
        return failure{"seccomp: deny socket", -rc};
  }
  if (int rc = seccomp_load(filter.ctx); rc < 0)
    return failure{"seccomp: load the filter", -rc};
  return std::nullopt;
}

} // namespace parley::sandbox
