#pragma once
// config/value/write and config/batchWrite on Codex's config.toml: edits by
// dotted key path, checked as parley would read the result, written whole
// (a temporary file, synced, renamed over the old one) or not at all.
// Writers take turns (an exclusive flock on the file's folder, from the read
// to the rename), so two edits at once both land.
// Pure: no actors, no logging; blocking file I/O (callers run it off the
// scheduler).
//
// What parley reads of config.toml applies at its next start: a write
// changes the file, not the running server (the reply says where it wrote).
// The file is rewritten by toml++: values and tables are kept, comments and
// the original formatting are not.

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace parley::model_config {

/// One edit: `replace` sets the value (null removes the key); `upsert`
/// merges a table into the table already there (other values replace).
struct config_edit {
  std::string key_path;
  nlohmann::json value;
  bool upsert = false;
};

/// Codex's config_write_error_code values.
enum class write_error { none, validation, version_conflict, layer_readonly };

/// "configValidationError", "configVersionConflict", "configLayerReadonly".
const char* to_string(write_error e);

struct write_result {
  write_error error = write_error::none;
  std::string message;  // why, when error != none
  std::string version;  // the file's version after the write ("sha256:<hex>")
  explicit operator bool() const { return error == write_error::none; }
};

/// A file's version from its bytes ("" when it does not exist). The caller
/// names it (Codex's: "sha256:" + the hex SHA-256), so this library needs no
/// hash of its own.
using version_fn = std::function<std::string(const std::string& content)>;

/// Applies `edits` in order to the file at `path` (missing: empty) unless
/// `expected_version` is given and is not the file's version now. The result
/// must still be a config parley can read; else nothing is written.
write_result write_config(const std::string& path, const std::vector<config_edit>& edits,
                          const std::optional<std::string>& expected_version,
                          const version_fn& version_of);

/// Sets `key = value` in the table named by `table_path` (each name as it
/// is: an MCP tool's name may hold a dot) of the file at `path`, written
/// whole or not at all, as write_config writes. The first `existing` names
/// must already be a table in the file (an MCP server's own table: a value
/// is never written for a server the file does not configure); else
/// nothing is written (validation). When the file has no such table yet,
/// its text is kept: the table is appended (`[a.b."c.d"]` then `key =
/// value`, as Codex's own edit of config.toml adds one), and the result must
/// read as the old file with the value set; otherwise toml++ rewrites the
/// file (values kept, comments not). A file that says so already is left
/// as it is. The result's version is "".
write_result set_table_value(const std::string& path, const std::vector<std::string>& table_path,
                             const std::string& key, const nlohmann::json& value,
                             size_t existing);

}  // namespace parley::model_config
