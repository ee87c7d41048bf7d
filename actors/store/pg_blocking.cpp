#include "actors/store/pg_blocking.hpp"

#include "actors/store/pg_client.hpp"

namespace parley::pg {

namespace pg_blocking_detail {
void ignore_notice(void*, const char*) {}
}  // namespace pg_blocking_detail

std::string one_line(const char* msg) {
  std::string s;
  for (const char* c = msg ? msg : ""; *c; ++c) {
    if (*c == '\n' || *c == '\t') {
      if (!s.empty() && s.back() != ' ') s += ' ';
    } else {
      s += *c;
    }
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

conn_ptr connect_blocking(const std::string& conninfo, std::string& why) {
  if (auto problem = conninfo_problem(conninfo)) {
    why = *problem;
    return nullptr;
  }
  conn_ptr c{PQconnectdb(conninfo.c_str())};
  if (!c || PQstatus(c.get()) != CONNECTION_OK) {
    why = "cannot connect to the database (" + describe_target(conninfo)
          + "): " + (c ? one_line(PQerrorMessage(c.get())) : "out of memory");
    return nullptr;
  }
  PQsetNoticeProcessor(c.get(), pg_blocking_detail::ignore_notice, nullptr);
  return c;
}

bool exec(PGconn* c, const std::string& sql, std::string& why) {
  result_ptr r{PQexec(c, sql.c_str())};
  auto st = PQresultStatus(r.get());
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return true;
  why = one_line(PQresultErrorMessage(r.get()));
  return false;
}

result_ptr exec_params(PGconn* c, const std::string& sql,
                       const std::vector<std::optional<std::string>>& params, std::string& why) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  result_ptr r{PQexecParams(c, sql.c_str(), static_cast<int>(values.size()), nullptr,
                            values.data(), nullptr, nullptr, 0)};
  auto st = PQresultStatus(r.get());
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
  why = one_line(PQresultErrorMessage(r.get()));
  return nullptr;
}

}  // namespace parley::pg
