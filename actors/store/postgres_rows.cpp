#include "actors/store/postgres_rows.hpp"

#include "actors/store/memory_store.hpp"
#include "actors/store/thread_index.hpp"

namespace parley::pg {

namespace postgres_rows_detail {

value text(const std::string& s) {
  return s;
}
value text(const std::optional<std::string>& s) {
  return s;
}
value number(int64_t n) {
  return std::to_string(n);
}
value boolean(bool b) {
  return std::string{b ? "true" : "false"};
}

const char* sort_column(const protocol::thread_list_params& p) {
  return p.sort_key == "created_at" ? "created_at" : "updated_at";
}

void set_pending(thread_row& row, const std::optional<action_record>& a) {
  row.pending = a ? 1 + static_cast<int>(a->at) : 0;
  row.pending_item = a ? a->item_id : std::string{};
  row.deadline_ms = a ? a->deadline_ms : 0;
}

/// The tenant a row names: the default one for a thread from before tenants.
std::string tenant_of(const protocol::thread& m) {
  return m.tenant.empty() ? std::string{"default"} : m.tenant;
}

/// `%term%` for LIKE, the term's own wildcards and escape character taken
/// literally.
std::string like_pattern(const std::string& term) {
  std::string out = "%";
  for (char c : term) {
    if (c == '%' || c == '_' || c == '\\') out += '\\';
    out += c;
  }
  return out + "%";
}

/// "($3,$4,$5)" for `n` parameters from `next` on.
std::string placeholders(size_t n, size_t& next) {
  std::string s = "(";
  for (size_t i = 0; i < n; ++i) s += (i ? ",$" : "$") + std::to_string(next++);
  return s + ")";
}

}  // namespace postgres_rows_detail

using namespace postgres_rows_detail;

thread_row row_of(const protocol::thread& meta) {
  thread_row row;
  row.meta = meta;
  row.meta.turns.clear();
  row.meta.path.reset();
  row.listed = !meta.turns.empty();
  return row;
}

thread_row row_of(const stored_thread& t, int64_t next_seq) {
  auto row = row_of(t.meta);
  row.archived = t.archived;
  set_pending(row, t.pending);
  row.next_seq = next_seq;
  return row;
}

bool fold(thread_row& row, const store_record& record) {
  auto before = std::make_tuple(row.meta.preview, row.meta.name, row.meta.updated_at, row.listed,
                                row.pending, row.deadline_ms);
  if (!std::holds_alternative<context_record>(record)
      && !std::holds_alternative<action_record>(record)) {  // these change no metadata
    stored_thread tracker;
    tracker.meta = row.meta;
    tracker.archived = row.archived;
    apply_record(tracker, record);
    row.meta = std::move(tracker.meta);
    row.meta.turns.clear();
  }
  if (std::holds_alternative<turn_started_record>(record)) row.listed = true;
  // The last turn's pending action, as the local store's index follows it.
  if (auto* a = std::get_if<action_record>(&record)) {
    set_pending(row, *a);
  } else if (row.pending != 0) {
    auto* item = std::get_if<item_record>(&record);
    if (std::holds_alternative<turn_started_record>(record)
        || std::holds_alternative<turn_completed_record>(record)
        || (item && protocol::item_id(item->item) == row.pending_item))
      set_pending(row, std::nullopt);
  }
  return before
         != std::make_tuple(row.meta.preview, row.meta.name, row.meta.updated_at, row.listed,
                            row.pending, row.deadline_ms);
}

statement insert_thread(const thread_row& row) {
  const auto& m = row.meta;
  return {
      "INSERT INTO threads (id, cwd, preview, name, source, model_provider, model, forked_from,"
      " created_at, updated_at, archived, listed, pending, deadline_ms, tenant)"
      " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15)",
      {text(m.id), text(m.cwd), text(m.preview), text(m.name), text(m.source),
       text(m.model_provider), text(m.model), text(m.forked_from_id), number(m.created_at),
       number(m.updated_at), boolean(row.archived), boolean(row.listed), number(row.pending),
       number(row.deadline_ms), text(tenant_of(m))}};
}

statement update_thread(const thread_row& row) {
  const auto& m = row.meta;
  return {
      "UPDATE threads SET preview=$2, name=$3, updated_at=$4, listed=$5, pending=$6,"
      " deadline_ms=$7 WHERE id=$1",
      {text(m.id), text(m.preview), text(m.name), number(m.updated_at), boolean(row.listed),
       number(row.pending), number(row.deadline_ms)}};
}

statement append_lines(const std::string& thread_id, int64_t first_seq,
                       const std::vector<std::string>& lines) {
  // One statement whatever the number of lines: they go as one JSON array.
  std::string array = "[";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) array += ',';
    array += lines[i];
  }
  array += ']';
  // The schema's function refuses lines that would not follow the
  // thread's last one (postgres_schema.cpp says why).
  return {"SELECT parley_append_lines($1, $2::integer, $3::jsonb)",
          {text(thread_id), number(first_seq), std::move(array)}};
}

statement next_line(const std::string& thread_id) {
  return {"SELECT coalesce(max(seq) + 1, 0) FROM thread_lines WHERE thread_id=$1",
          {text(thread_id)}};
}

statement select_thread(const std::string& thread_id, bool for_update) {
  return {std::string{"SELECT archived, listed FROM threads WHERE id=$1"}
              + (for_update ? " FOR UPDATE" : ""),
          {text(thread_id)}};
}

statement select_lines(const std::string& thread_id) {
  return {"SELECT seq, line::text FROM thread_lines WHERE thread_id=$1 ORDER BY seq",
          {text(thread_id)}};
}

statement select_tenant(const std::string& thread_id) {
  return {"SELECT line->'payload'->>'tenant' FROM thread_lines WHERE thread_id=$1 AND seq=0",
          {text(thread_id)}};
}

statement set_archived(const std::string& thread_id, bool archived) {
  return {"UPDATE threads SET archived=$2 WHERE id=$1 AND listed AND archived <> $2",
          {text(thread_id), boolean(archived)}};
}

statement delete_lines(const std::string& thread_id) {
  return {"DELETE FROM thread_lines WHERE thread_id=$1", {text(thread_id)}};
}

statement delete_thread(const std::string& thread_id) {
  return {"DELETE FROM threads WHERE id=$1", {text(thread_id)}};
}

statement list_threads(const protocol::thread_list_params& p) {
  std::string key = sort_column(p);
  bool desc = p.sort_direction != "asc";
  statement st;
  st.sql
      = "SELECT id, cwd, preview, name, source, model_provider, model, forked_from, created_at,"
        " updated_at, CASE WHEN archived THEN 0 ELSE pending END"
        " FROM threads WHERE listed AND archived=$1";
  st.params.push_back(boolean(p.archived));
  size_t next = 2;
  int64_t cursor_value = 0;
  std::string cursor_id;
  if (p.cursor && store::decode_cursor(*p.cursor, cursor_value, cursor_id)) {
    // (key, id) past the cursor's, in the order asked: the row comparison
    // matches the (archived, key, id) index.
    st.sql += " AND (" + key + ", id) " + (desc ? "<" : ">") + " ($" + std::to_string(next)
              + "::bigint, $" + std::to_string(next + 1) + ")";
    next += 2;
    st.params.push_back(number(cursor_value));
    st.params.push_back(text(cursor_id));
  }
  auto any_of = [&](const char* column, const std::vector<std::string>& values) {
    if (values.empty()) return;
    st.sql += std::string{" AND "} + column + " IN " + placeholders(values.size(), next);
    for (auto& v : values) st.params.push_back(text(v));
  };
  any_of("cwd", p.cwds);
  any_of("model_provider", p.model_providers);
  any_of("source", p.source_kinds);
  if (p.tenant) {
    st.sql += " AND tenant = $" + std::to_string(next++);
    st.params.push_back(text(*p.tenant));
  }
  if (p.search_term) {
    // A case-insensitive substring of the preview or the name, said twice:
    // as ILIKE, which the trigram indexes answer (the schema's step 3 says
    // why), and as strpos, which a scan in list order (the planner's choice
    // for a common term) tests first: 0.6 us a row against ILIKE's 2.3.
    auto n = std::to_string(next++);
    auto m = std::to_string(next++);
    st.sql += " AND (strpos(lower(preview), lower($" + n + ")) > 0 OR strpos(lower(coalesce(name,"
              " '')), lower($" + n + ")) > 0) AND (preview ILIKE $" + m + " OR name ILIKE $" + m
              + ")";
    st.params.push_back(text(*p.search_term));
    st.params.push_back(text(like_pattern(*p.search_term)));
  }
  uint32_t limit = p.limit && *p.limit > 0 ? *p.limit : 25;
  st.sql += " ORDER BY " + key + (desc ? " DESC" : " ASC") + ", id" + (desc ? " DESC" : " ASC")
            + " LIMIT $" + std::to_string(next);
  st.params.push_back(number(static_cast<int64_t>(limit) + 1));
  return st;
}

statement pending_threads() {
  return {"SELECT id, pending, deadline_ms FROM threads WHERE pending <> 0 AND NOT archived", {}};
}

protocol::thread listed_thread(const std::vector<value>& r) {
  auto str = [&](size_t i) { return r.at(i).value_or(""); };
  protocol::thread t;
  t.id = str(0);
  t.cwd = str(1);
  t.preview = str(2);
  t.name = r.at(3);
  t.source = str(4);
  t.model_provider = str(5);
  t.model = r.at(6);
  t.forked_from_id = r.at(7);
  t.created_at = std::stoll(str(8));
  t.updated_at = std::stoll(str(9));
  int pending = std::stoi(str(10));
  // A thread whose turn waits on a person shows it before anything loads it.
  t.status = pending != 0
                 ? protocol::thread_status::active(pending == 1)
                 : protocol::thread_status{protocol::thread_status::kind::not_loaded, false, false};
  t.cli_version = "";
  return t;
}

std::string cursor_after(const protocol::thread& t, const protocol::thread_list_params& p) {
  return store::encode_cursor(p.sort_key == "created_at" ? t.created_at : t.updated_at, t.id);
}

}  // namespace parley::pg
