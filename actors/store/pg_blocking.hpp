#pragma once
// A blocking libpq connection, for what runs before any actor or instead of
// one (`parley store migrate|export|import`, the server's start check).
// Never used from an actor: the store's own queries go through pg::client.

#include <libpq-fe.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace parley::pg {

struct conn_closer {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using conn_ptr = std::unique_ptr<PGconn, conn_closer>;

struct result_closer {
  void operator()(PGresult* r) const { PQclear(r); }
};
using result_ptr = std::unique_ptr<PGresult, result_closer>;

/// libpq's message as one line ("FATAL: ... DETAIL: ...").
std::string one_line(const char* msg);

/// A connection to `conninfo`, or nothing and `why`.
conn_ptr connect_blocking(const std::string& conninfo, std::string& why);

/// Runs `sql` (no parameters); false and `why` when it fails.
bool exec(PGconn* c, const std::string& sql, std::string& why);

/// Runs `sql` with text parameters; the result, or nothing and `why`.
result_ptr exec_params(PGconn* c, const std::string& sql,
                       const std::vector<std::optional<std::string>>& params, std::string& why);

}  // namespace parley::pg
