#include "actors/store/pg_connection.hpp"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>

namespace parley::pg {

namespace pg_connection_detail {

std::string trimmed(const char* msg) {
  // libpq's messages span lines ("FATAL: ...\nDETAIL: ..."): one line
  // for a log or a turn's error.
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

// libpq prints notices (e.g. "relation already exists, skipping") on stderr
// by default; the store has nothing to learn from them.
void ignore_notice(void*, const char*) {}

result rows_of(PGresult* r) {
  result out;
  int n = PQntuples(r), m = PQnfields(r);
  out.rows.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::vector<value> row;
    row.reserve(static_cast<size_t>(m));
    for (int j = 0; j < m; ++j)
      row.push_back(
          PQgetisnull(r, i, j)
              ? value{}
              : value{std::string(PQgetvalue(r, i, j), static_cast<size_t>(PQgetlength(r, i, j)))});
    out.rows.push_back(std::move(row));
  }
  const char* tuples = PQcmdTuples(r);
  out.affected = tuples && *tuples ? std::stoll(tuples) : 0;
  return out;
}

}  // namespace pg_connection_detail

using namespace pg_connection_detail;

connection::connection(std::string conninfo) : conninfo_(std::move(conninfo)) {}

connection::~connection() {
  if (conn_) PQfinish(conn_);
}

int connection::socket() const {
  return conn_ ? PQsocket(conn_) : -1;
}

void connection::start() {
  if (conn_) PQfinish(conn_);
  error_.clear();
  session_set_ = setting_session_ = false;
  conn_ = PQconnectStart(conninfo_.c_str());
  if (!conn_ || PQstatus(conn_) == CONNECTION_BAD) {
    error_ = conn_ ? trimmed(PQerrorMessage(conn_)) : "out of memory";
    if (conn_) PQfinish(conn_);
    conn_ = nullptr;
    state_ = state::closed;
    return;
  }
  PQsetNoticeProcessor(conn_, ignore_notice, nullptr);
  state_ = state::connecting;
  wanted_ = POLLOUT;  // as libpq asks: poll for writing before the first PQconnectPoll
}

void connection::advance_connect() {
  switch (PQconnectPoll(conn_)) {
    case PGRES_POLLING_READING:
      wanted_ = POLLIN;
      return;
    case PGRES_POLLING_WRITING:
      wanted_ = POLLOUT;
      return;
    case PGRES_POLLING_OK:
      if (PQsetnonblocking(conn_, 1) != 0 || PQenterPipelineMode(conn_) != 1) {
        close("cannot enter pipeline mode: " + trimmed(PQerrorMessage(conn_)));
        return;
      }
      state_ = state::ready;
      wanted_ = POLLIN;  // an idle connection the server ends is noticed at once
      return;
    default:
      close(trimmed(PQerrorMessage(conn_)));
      return;
  }
}

std::unique_ptr<finished_batch> connection::send(std::vector<job> batch) {
  jobs_ = std::move(batch);
  outcomes_.assign(jobs_.size(), outcome{});
  slots_.clear();
  next_slot_ = 0;
  first_error_.clear();
  first_sqlstate_.clear();
  failed_job_ = SIZE_MAX;
  state_ = state::busy;
  // Each batch says how its commit waits (a session setting: it holds for
  // this transaction and is set again by the next batch).
  bool durable = std::any_of(jobs_.begin(), jobs_.end(), [](const job& j) { return j.durable; });
  const char* commit_mode
      = durable ? "SET synchronous_commit TO on" : "SET synchronous_commit TO off";
  if (PQsendQueryParams(conn_, commit_mode, 0, nullptr, nullptr, nullptr, nullptr, 0) != 1)
    return close(trimmed(PQerrorMessage(conn_)));
  slots_.emplace_back(no_job, 0);
  // No JIT compilation for this session: the store's statements are short,
  // and a plan whose cost is overestimated (a LIMIT over a filter the
  // planner cannot judge) was compiled first, 0.2-0.5 s for a list of 50.
  // Sent until a batch carrying it commits (a batch rolled back undoes it).
  if (!session_set_) {
    if (PQsendQueryParams(conn_, "SET jit TO off", 0, nullptr, nullptr, nullptr, nullptr, 0) != 1)
      return close(trimmed(PQerrorMessage(conn_)));
    slots_.emplace_back(no_job, 0);
    setting_session_ = true;
  }
  for (size_t j = 0; j < jobs_.size(); ++j) {
    outcomes_[j].results.resize(jobs_[j].statements.size());
    for (size_t s = 0; s < jobs_[j].statements.size(); ++s) {
      const auto& st = jobs_[j].statements[s];
      std::vector<const char*> params;
      params.reserve(st.params.size());
      for (const auto& p : st.params) params.push_back(p ? p->c_str() : nullptr);
      if (PQsendQueryParams(conn_, st.sql.c_str(), static_cast<int>(params.size()), nullptr,
                            params.data(), nullptr, nullptr, 0)
          != 1)
        return close(trimmed(PQerrorMessage(conn_)));
      slots_.emplace_back(j, s);
    }
  }
  if (PQpipelineSync(conn_) != 1 || !flush()) return close(trimmed(PQerrorMessage(conn_)));
  return nullptr;
}

bool connection::flush() {
  int r = PQflush(conn_);
  if (r < 0) return false;
  wanted_ = r == 1 ? (POLLIN | POLLOUT) : POLLIN;
  return true;
}

std::unique_ptr<finished_batch> connection::on_events(short revents) {
  if (state_ == state::ready) {
    // Idle: the server only writes to say it is ending the connection
    // (terminated, shutting down): close now, so the next job connects
    // afresh instead of failing on a dead socket.
    if (PQconsumeInput(conn_) != 1 || PQstatus(conn_) == CONNECTION_BAD)
      return close(trimmed(PQerrorMessage(conn_)));
    return nullptr;
  }
  if (state_ != state::busy) return nullptr;
  if ((revents & POLLOUT) && !flush()) return close(trimmed(PQerrorMessage(conn_)));
  if (revents & (POLLIN | POLLERR | POLLHUP)) {
    if (PQconsumeInput(conn_) != 1) return close(trimmed(PQerrorMessage(conn_)));
    return read_results();
  }
  return nullptr;
}

std::unique_ptr<finished_batch> connection::read_results() {
  while (!PQisBusy(conn_)) {
    PGresult* r = PQgetResult(conn_);
    if (!r) {  // the end of one statement's results
      ++next_slot_;
      continue;
    }
    auto status = PQresultStatus(r);
    if (status == PGRES_PIPELINE_SYNC) {
      PQclear(r);
      if (setting_session_ && first_error_.empty()) session_set_ = true;
      setting_session_ = false;
      auto done = std::make_unique<finished_batch>();
      for (size_t j = 0; j < jobs_.size(); ++j) {
        if (!first_error_.empty()) {
          // The transaction rolled back: every job of it failed, the one
          // that failed with the server's reason.
          auto& o = outcomes_[j];
          o.ok = false;
          o.results.clear();
          o.error = j == failed_job_
                        ? first_error_
                        : "rolled back with a failed statement of the same batch: " + first_error_;
          if (j == failed_job_) o.sqlstate = first_sqlstate_;
        }
      }
      done->jobs = std::move(jobs_);
      done->outcomes = std::move(outcomes_);
      jobs_.clear();
      outcomes_.clear();
      state_ = state::ready;
      wanted_ = POLLIN;
      return done;
    }
    if (next_slot_ < slots_.size()) {
      auto [j, s] = slots_[next_slot_];
      if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
        if (j != no_job) outcomes_[j].results[s] = rows_of(r);
      } else if (status == PGRES_FATAL_ERROR && first_error_.empty()) {
        first_error_ = trimmed(PQresultErrorMessage(r));
        const char* code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        first_sqlstate_ = code ? code : "";
        failed_job_ = j;
      }
    }
    PQclear(r);
  }
  return nullptr;
}

std::unique_ptr<finished_batch> connection::fail_batch(const std::string& why) {
  if (jobs_.empty()) return nullptr;
  auto done = std::make_unique<finished_batch>();
  done->jobs = std::move(jobs_);
  for (size_t j = 0; j < done->jobs.size(); ++j)
    done->outcomes.push_back(failed("the database connection was lost: " + why, true));
  jobs_.clear();
  outcomes_.clear();
  return done;
}

std::unique_ptr<finished_batch> connection::close(const std::string& why) {
  error_ = why.empty() ? "the connection closed" : why;
  auto done = fail_batch(error_);
  if (conn_) PQfinish(conn_);
  conn_ = nullptr;
  state_ = state::closed;
  wanted_ = 0;
  return done;
}

}  // namespace parley::pg
