#include "actors/approval/audit_writer.hpp"

#include "actors/core/handlers.hpp"

namespace parley {

audit_actor::behavior_type audit_writer(audit_actor::stateful_pointer<audit_writer_state> self,
                                        std::string path) {
  install_default_handlers(self, "audit_writer");
  auto opened = audit::audit_log::open(path);
  if (!opened) {
    PARLEY_ERROR("audit event=open_failed path={} error={}", path, opened.error);
  } else {
    if (!opened.torn_tail.empty())
      PARLEY_WARN("audit event=torn_tail_dropped path={} bytes={}", path, opened.torn_tail.size());
    self->state.log = std::move(opened.log);
  }
  return {
      [self](atom::append, const audit::record& r) -> caf::result<atom::ok> {
        // Auditing asked for but not possible: no accept runs unrecorded.
        if (!self->state.log) return make_error(errc::internal, "the audit log is not open");
        if (auto err = self->state.log->append(r)) {
          PARLEY_ERROR("audit event=append_failed error={}", *err);
          return make_error(errc::internal, *err);
        }
        return atom::ok::value;
      },
  };
}

}  // namespace parley
