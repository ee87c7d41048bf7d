// The fs/* methods of a session: params decoded here, the work done by the
// pure file operations (actors/files/file_ops.hpp) as jobs run through the
// session's file_port, confined to the roots this session has seen.

#include <utility>

#include "actors/core/log.hpp"
#include "protocol/ids.hpp"
#include "transport/rpc_session.hpp"

namespace parley::rpc {

using protocol::json;

namespace {

struct bad_params {
  std::string message;
};

std::string required_string(const json& p, const char* key) {
  auto i = p.find(key);
  if (i == p.end() || i->is_null())
    throw bad_params{std::string{"Invalid request: missing field `"} + key + "`"};
  if (!i->is_string())
    throw bad_params{std::string{"Invalid request: invalid type for `"} + key
                     + "`, expected a string"};
  return i->get<std::string>();
}

bool optional_bool(const json& p, const char* key, bool fallback) {
  auto i = p.find(key);
  if (i == p.end() || i->is_null()) return fallback;
  if (!i->is_boolean())
    throw bad_params{std::string{"Invalid request: invalid type for `"} + key
                     + "`, expected a boolean"};
  return i->get<bool>();
}

}  // namespace

void session::learn_roots(const protocol::thread_session_response& r) {
  roots_.add(r.cwd);
  for (const auto& root : r.sandbox.writable_roots) roots_.add(root);
}

void session::on_fs_changed(const std::string& watch_id, std::vector<std::string> paths) {
  if (opted_out_.count("fs/changed") > 0) return;
  write(protocol::encode_notification("fs/changed",
                                      json{{"watchId", watch_id}, {"changedPaths", std::move(paths)}},
                                      protocol::unix_ms()));
}

files::answer session::files_unavailable() {
  return files::failure{files::internal_error, "fs/* is not available on this connection"};
}

void session::file_method(const std::string& method, const protocol::request_id& id,
                          const json& p) {
  auto done = [this, alive = std::weak_ptr<bool>(alive_), id](files::answer a) {
    if (alive.expired()) return;
    if (auto* f = std::get_if<files::failure>(&a)) return reply_error(id, f->code, f->message);
    reply(id, std::get<json>(a));
  };
  if (!config_.files) return done(files_unavailable());
  auto& port = *config_.files;
  auto run = [&](std::function<files::answer()> job) { port.run({std::move(job)}, done); };
  try {
    if (method == "fs/readFile") {
      run([roots = roots_, path = required_string(p, "path")] {
        return files::read_file(roots, path);
      });
    } else if (method == "fs/writeFile") {
      run([roots = roots_, path = required_string(p, "path"),
           data = required_string(p, "dataBase64")] {
        return files::write_file(roots, path, data);
      });
    } else if (method == "fs/createDirectory") {
      run([roots = roots_, path = required_string(p, "path"),
           recursive = optional_bool(p, "recursive", true)] {
        return files::create_directory(roots, path, recursive);
      });
    } else if (method == "fs/getMetadata") {
      run([roots = roots_, path = required_string(p, "path")] {
        return files::get_metadata(roots, path);
      });
    } else if (method == "fs/readDirectory") {
      run([roots = roots_, path = required_string(p, "path")] {
        return files::read_directory(roots, path);
      });
    } else if (method == "fs/remove") {
      run([roots = roots_, path = required_string(p, "path"),
           recursive = optional_bool(p, "recursive", true), force = optional_bool(p, "force", true)] {
        return files::remove_path(roots, path, recursive, force);
      });
    } else if (method == "fs/copy") {
      run([roots = roots_, from = required_string(p, "sourcePath"),
           to = required_string(p, "destinationPath"),
           recursive = optional_bool(p, "recursive", false)] {
        return files::copy_path(roots, from, to, recursive);
      });
    } else if (method == "fs/watch") {
      auto path = required_string(p, "path");
      port.watch(required_string(p, "watchId"), roots_, std::move(path), done);
    } else if (method == "fs/unwatch") {
      port.unwatch(required_string(p, "watchId"), done);
    } else {
      reply_error(id, protocol::rpc_code::method_not_found, "method not found: " + method);
    }
  } catch (const bad_params& e) {
    reply_error(id, files::invalid_request, e.message);
  }
}

}  // namespace parley::rpc
