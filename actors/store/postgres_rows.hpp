#pragma once
// The PostgreSQL store's statements and rows: what the store keeps of each
// thread it has touched (the threads row, followed record by record as the
// local store follows its index entry), the SQL that writes and reads them,
// and a listed row as thread/list shows it. Pure: no actors, no libpq.

#include <string>
#include <vector>

#include "actors/core/messages.hpp"
#include "actors/store/pg_types.hpp"

namespace parley::pg {

/// A thread's row in `threads`, and where its next line goes.
struct thread_row {
  protocol::thread meta;  // no turns, no path
  bool archived = false;
  bool listed = false;  // it has a turn (listed from then on, as Codex lists)
  /// The last turn's pending action: 0 none, else 1 + its phase; its item.
  int pending = 0;
  std::string pending_item;
  int64_t deadline_ms = 0;
  int64_t next_seq = 0;
};

/// The row of a thread being created (a fork comes with its turns).
thread_row row_of(const protocol::thread& meta);
/// The row of a thread read back (`lines` lines so far).
thread_row row_of(const stored_thread& t, int64_t next_seq);

/// Follows `record` in `row`; true when the threads row changed.
bool fold(thread_row& row, const store_record& record);

statement insert_thread(const thread_row& row);
statement update_thread(const thread_row& row);
/// The lines (JSON texts) as the thread's lines from `first_seq` on; fails
/// unless the thread's last stored line is the one before `first_seq`.
statement append_lines(const std::string& thread_id, int64_t first_seq,
                       const std::vector<std::string>& lines);
/// Rows: (archived, listed) of the thread; then its lines in order.
statement select_thread(const std::string& thread_id, bool for_update = false);
/// Rows: the number of the line after the thread's last one.
statement next_line(const std::string& thread_id);
statement select_lines(const std::string& thread_id);
/// The tenant a thread's session metadata (its first line) names: one row,
/// none when the thread is not stored, a NULL value before tenants.
statement select_tenant(const std::string& thread_id);
statement set_archived(const std::string& thread_id, bool archived);
/// thread/revert: every line of the thread (its row stays).
statement delete_lines(const std::string& thread_id);
/// thread/delete: the thread's row, and with it (ON DELETE CASCADE) its lines.
statement delete_thread(const std::string& thread_id);
/// thread/list: one more row than the page (is there a next page?).
statement list_threads(const protocol::thread_list_params& params);
statement pending_threads();

/// A listed row (list_threads' columns) as thread/list shows it.
protocol::thread listed_thread(const std::vector<value>& row);
/// The cursor after a listed thread (for the sort key asked).
std::string cursor_after(const protocol::thread& t, const protocol::thread_list_params& params);

}  // namespace parley::pg
