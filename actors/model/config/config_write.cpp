#include "actors/model/config/config_write.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "actors/model/config/model_config.hpp"
#include "actors/model/config/toml_reading.hpp"

namespace parley::model_config {

namespace config_write_detail {

using nlohmann::json;

struct edit_problem {
  write_error error;
  std::string message;
};

write_result failed(write_error e, std::string message) {
  write_result r;
  r.error = e;
  r.message = std::move(message);
  return r;
}

/// `text` read into `root`; the failure to answer when it is not TOML.
std::optional<write_result> parse_table(const std::string& text, const std::string& path,
                                        toml::table& root) {
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return failed(write_error::validation,
                  "Invalid configuration: " + std::string{e.description()});
  }
  return std::nullopt;
}

/// `table` as TOML text, with basic ("...") strings, as Codex and most
/// people write them.
std::string toml_text(const toml::table& table) {
  constexpr auto flags
      = toml::toml_formatter::default_flags & ~toml::format_flags::allow_literal_strings;
  std::ostringstream out;
  out << toml::toml_formatter{table, flags} << "\n";
  return out.str();
}

/// A JSON value as a TOML node; nulls inside a table or array are left out
/// (TOML has no null).
std::unique_ptr<toml::node> to_toml(const json& v, const std::string& key) {
  switch (v.type()) {
    case json::value_t::string:
      return std::make_unique<toml::value<std::string>>(v.get<std::string>());
    case json::value_t::boolean:
      return std::make_unique<toml::value<bool>>(v.get<bool>());
    case json::value_t::number_integer:
      return std::make_unique<toml::value<int64_t>>(v.get<int64_t>());
    case json::value_t::number_unsigned:
      if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        throw edit_problem{write_error::validation, key + ": integer out of range"};
      return std::make_unique<toml::value<int64_t>>(static_cast<int64_t>(v.get<uint64_t>()));
    case json::value_t::number_float:
      return std::make_unique<toml::value<double>>(v.get<double>());
    case json::value_t::array: {
      auto arr = std::make_unique<toml::array>();
      for (const auto& x : v)
        if (!x.is_null()) arr->push_back(std::move(*to_toml(x, key)));
      return arr;
    }
    case json::value_t::object: {
      auto table = std::make_unique<toml::table>();
      for (const auto& [k, x] : v.items())
        if (!x.is_null()) table->insert_or_assign(k, std::move(*to_toml(x, key + "." + k)));
      return table;
    }
    default:
      throw edit_problem{write_error::validation, key + ": unsupported value"};
  }
}

std::vector<std::string> split_path(const std::string& path) {
  if (path.empty()) throw edit_problem{write_error::validation, "keyPath must not be empty"};
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    auto dot = path.find('.', start);
    auto part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty())
      throw edit_problem{write_error::validation, "keyPath segments must not be empty"};
    out.push_back(std::move(part));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

/// Merges `from` into `into`: tables merge key by key, anything else replaces.
void merge_into(toml::table& into, toml::table& from) {
  for (auto& [k, v] : from) {
    auto* existing = into.get(k);
    if (existing && existing->is_table() && v.is_table())
      merge_into(*existing->as_table(), *v.as_table());
    else
      into.insert_or_assign(k, std::move(v));
  }
}

void apply_at(toml::table& root, const std::vector<std::string>& path, const config_edit& e) {
  toml::table* at = &root;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    auto* next = at->get(path[i]);
    if (!next) {
      if (e.value.is_null()) return;  // removing what is not there
      at->insert_or_assign(path[i], toml::table{});
      next = at->get(path[i]);
    }
    if (!next->is_table())
      throw edit_problem{write_error::validation,
                         "keyPath `" + e.key_path + "`: `" + path[i] + "` is not a table"};
    at = next->as_table();
  }
  const auto& leaf = path.back();
  if (e.value.is_null()) {
    at->erase(leaf);
    return;
  }
  auto node = to_toml(e.value, e.key_path);
  auto* existing = at->get(leaf);
  if (e.upsert && existing && existing->is_table() && node->is_table()) {
    merge_into(*existing->as_table(), *node->as_table());
    return;
  }
  at->insert_or_assign(leaf, std::move(*node));
}

void apply(toml::table& root, const config_edit& e) { apply_at(root, split_path(e.key_path), e); }

/// A key as TOML writes it: bare when it can be, else a basic string.
std::string toml_key(const std::string& name) {
  bool bare = !name.empty();
  for (unsigned char c : name)
    bare = bare && (std::isalnum(c) || c == '_' || c == '-');
  if (bare) return name;
  std::string out = "\"";
  for (unsigned char c : name) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/// `before` with `[table] key = value` appended, or "" when that would not
/// read as `expected` (the table is there already, or defined another way).
std::string appended(const std::string& before, const std::vector<std::string>& table_path,
                     const std::string& key, const json& value, const toml::table& expected,
                     const std::string& path) {
  std::string header = "[";
  for (size_t i = 0; i < table_path.size(); ++i)
    header += (i ? "." : "") + toml_key(table_path[i]);
  header += "]\n";
  toml::table one;
  one.insert_or_assign(key, std::move(*to_toml(value, key)));
  auto after = before;
  if (!after.empty() && after.back() != '\n') after += '\n';
  after += header + toml_text(one);
  try {
    if (toml::parse(after, path) == expected) return after;
  } catch (const toml::parse_error&) {
  }
  return {};
}

/// Reads the whole file; "" when it does not exist.
bool read_file(const std::string& path, std::string& out, std::string& why) {
  std::ifstream in{path, std::ios::binary};
  if (!in) {
    if (errno == ENOENT) return true;
    why = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  out = text.str();
  return true;
}

/// Holds the config file's folder locked (flock, exclusive) from the read to
/// the rename: a `config/value/write` and an MCP "always" approval (or two
/// parley processes sharing a CODEX_HOME) would otherwise each read the old
/// file and the last rename would drop the other's edit. The folder, not the
/// file, because the file is replaced (a new inode) by every write. Each
/// open() is its own open file description, so two threads of one process
/// exclude each other too. Without a folder to lock (it cannot be made or
/// opened) the write goes on unlocked, as before: the lock narrows a race, it
/// is not a reason to refuse a write.
class folder_lock {
 public:
  explicit folder_lock(const std::string& path) {
    auto dir = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    fd_ = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) return;
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      ::close(fd_);
      fd_ = -1;
      return;
    }
  }
  ~folder_lock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  }
  folder_lock(const folder_lock&) = delete;
  folder_lock& operator=(const folder_lock&) = delete;

 private:
  int fd_ = -1;
};

/// Replaces the file whole: a temporary file beside it, synced, renamed over
/// it, and the folder synced. The temporary's name is the writer's own (pid
/// and a counter), so two writers never write into one temporary file.
bool replace_file(const std::string& path, const std::string& content, std::string& why) {
  static std::atomic<unsigned> writes{0};
  auto dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  auto tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(++writes);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    why = "cannot write " + tmp + ": " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < content.size()) {
    auto n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      why = "cannot write " + tmp + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    done += static_cast<size_t>(n);
  }
  bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || ::rename(tmp.c_str(), path.c_str()) != 0) {
    why = "cannot replace " + path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

}  // namespace config_write_detail

const char* to_string(write_error e) {
  switch (e) {
    case write_error::none: return "none";
    case write_error::validation: return "configValidationError";
    case write_error::version_conflict: return "configVersionConflict";
    case write_error::layer_readonly: return "configLayerReadonly";
  }
  return "configValidationError";
}

write_result write_config(const std::string& path, const std::vector<config_edit>& edits,
                          const std::optional<std::string>& expected_version,
                          const version_fn& version_of) {
  using namespace config_write_detail;
  folder_lock locked(path);
  std::string before, why;
  if (!read_file(path, before, why)) return failed(write_error::validation, why);
  auto version = version_of(before);
  if (expected_version && *expected_version != version)
    return failed(write_error::version_conflict,
                  "Configuration was modified since last read. Fetch latest version and retry.");
  toml::table root;
  if (auto problem = parse_table(before, path, root)) return *problem;
  try {
    for (const auto& e : edits) apply(root, e);
  } catch (const edit_problem& p) {
    return failed(p.error, p.message);
  }
  if (edits.empty()) {  // nothing to change (Codex answers the version as it is)
    write_result r;
    r.version = version;
    return r;
  }
  auto after = toml_text(root);
  // The file must stay one parley can start with.
  auto check = parse(after, path);
  if (!check) return failed(write_error::validation, "Invalid configuration: " + check.error);
  if (!replace_file(path, after, why)) return failed(write_error::validation, why);
  write_result r;
  r.version = version_of(after);
  return r;
}

write_result set_table_value(const std::string& path, const std::vector<std::string>& table_path,
                             const std::string& key, const nlohmann::json& value,
                             size_t existing) {
  using namespace config_write_detail;
  folder_lock locked(path);
  std::string before, why;
  if (!read_file(path, before, why)) return failed(write_error::validation, why);
  toml::table root;
  if (auto problem = parse_table(before, path, root)) return *problem;
  const toml::table* at = &root;
  for (size_t i = 0; i < existing && i < table_path.size(); ++i) {
    const auto* next = at->get(table_path[i]);
    if (!next || !next->is_table())
      return failed(write_error::validation, path + " has no table `" + table_path[i] + "` there");
    at = next->as_table();
  }
  auto segments = table_path;
  segments.push_back(key);
  config_edit edit{key, value, false};
  auto unchanged = root;
  try {
    apply_at(root, segments, edit);
  } catch (const edit_problem& p) {
    return failed(p.error, p.message);
  }
  if (root == unchanged) return {};  // says so already: the file as it is
  auto after = appended(before, table_path, key, value, root, path);
  if (after.empty()) after = toml_text(root);  // the table is in the file already: rewritten
  auto check = parse(after, path);
  if (!check) return failed(write_error::validation, "Invalid configuration: " + check.error);
  if (!replace_file(path, after, why)) return failed(write_error::validation, why);
  return {};
}

}  // namespace parley::model_config
