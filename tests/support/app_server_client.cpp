#include "tests/support/app_server_client.hpp"

#include <fstream>
#include <iterator>

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace parley::test {

std::string parley_binary() { return PARLEY_BINARY; }

std::string make_temp_dir(const std::string& name) {
  auto base = std::filesystem::temp_directory_path() / ("parley-tests-" + std::to_string(::getpid()));
  auto dir = base / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const std::string& data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

bool file_exists(const std::string& path) { return std::filesystem::exists(path); }

namespace {

/// Each server gets its own home unless the test names one (one process
/// owns a home at a time, and tests run in parallel).
std::vector<std::string> server_argv(std::vector<std::string> extra) {
  std::vector<std::string> argv{parley_binary(), "app-server", "--log-level=warn"};
  bool has_home = false;
  for (auto& a : extra) has_home = has_home || a.rfind("--home=", 0) == 0;
  if (!has_home) {
    static int counter = 0;
    argv.push_back("--home=" + make_temp_dir("home-" + std::to_string(++counter)));
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

}  // namespace

app_server_client::app_server_client(std::vector<std::string> extra_args)
    : proc_(server_argv(std::move(extra_args))) {}

int64_t app_server_client::send(const std::string& method, const json& params) {
  auto id = next_id_++;
  json msg{{"id", id}, {"method", method}};
  if (!params.is_null()) msg["params"] = params;
  send_raw(msg.dump());
  return id;
}

void app_server_client::send_raw(const std::string& line) {
  EXPECT_TRUE(proc_.write_line(line)) << "server stopped reading";
}

bool app_server_client::read_one(std::chrono::milliseconds timeout) {
  auto line = proc_.read_line(timeout);
  if (!line) return false;
  auto j = json::parse(*line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    bad_lines_.push_back(*line);
    ADD_FAILURE() << "stdout carried a non-protocol line: " << *line;
    return true;
  }
  log_.push_back(std::move(j));
  consumed_.push_back(false);
  return true;
}

json app_server_client::next(std::chrono::milliseconds timeout) {
  return wait_for([](const json&) { return true; }, timeout);
}

bool app_server_client::arrives(const std::function<bool(const json&)>& pred,
                                std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t i = cursor_;
  for (;;) {
    for (; i < log_.size(); ++i) {
      if (consumed_[i] || !pred(log_[i])) continue;
      consumed_[i] = true;
      while (cursor_ < log_.size() && consumed_[cursor_]) ++cursor_;
      return true;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !read_one(left)) {
      if (std::chrono::steady_clock::now() >= deadline || proc_.eof()) return false;
    }
  }
}

json app_server_client::wait_for(const std::function<bool(const json&)>& pred,
                                 std::chrono::milliseconds timeout) {
  json found;
  auto matcher = [&](const json& m) {
    if (!pred(m)) return false;
    found = m;
    return true;
  };
  if (!arrives(matcher, timeout)) {
    ADD_FAILURE() << "expected message did not arrive; last messages:\n"
                  << (log_.empty() ? std::string{"(none)"} : log_.back().dump());
    return json{};
  }
  return found;
}

json app_server_client::wait_for_method(const std::string& method,
                                        std::chrono::milliseconds timeout) {
  return wait_for([&](const json& m) { return method_of(m) == method; }, timeout);
}

json app_server_client::call(const std::string& method, const json& params) {
  auto id = send(method, params);
  return wait_for(
      [id](const json& m) { return !m.contains("method") && m.value("id", json()) == json(id); });
}

json app_server_client::call_ok(const std::string& method, const json& params) {
  auto r = call(method, params);
  EXPECT_TRUE(r.contains("result")) << method << " failed: " << r.dump();
  return r.value("result", json::object());
}

void app_server_client::initialize(const json& capabilities) {
  json params{{"clientInfo", {{"name", "parley-tests"}, {"version", "1.0"}}}};
  if (!capabilities.empty()) params["capabilities"] = capabilities;
  call_ok("initialize", params);
  send_raw(R"({"method":"initialized"})");
}

std::string app_server_client::start_thread(const json& params) {
  auto r = call_ok("thread/start", params);
  auto id = r["thread"]["id"].get<std::string>();
  wait_for([&](const json& m) { return method_of(m) == "thread/started" && thread_of(m) == id; });
  return id;
}

std::string app_server_client::start_turn(const std::string& thread_id, const std::string& text,
                                          const json& extra) {
  json params{{"threadId", thread_id},
              {"input", json::array({{{"type", "text"}, {"text", text}, {"text_elements", json::array()}}})}};
  for (auto& [k, v] : extra.items()) params[k] = v;
  auto r = call_ok("turn/start", params);
  return r["turn"]["id"].get<std::string>();
}

void app_server_client::respond(const json& id, const json& result) {
  send_raw(json{{"id", id}, {"result", result}}.dump());
}

void app_server_client::respond_error(const json& id, int code, const std::string& message) {
  send_raw(json{{"id", id}, {"error", {{"code", code}, {"message", message}}}}.dump());
}

void app_server_client::answer(const json& request, const std::string& decision) {
  respond(request["id"], json{{"decision", decision}});
}

int app_server_client::close_and_wait(std::chrono::milliseconds timeout) {
  proc_.close_stdin();
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!proc_.eof() && std::chrono::steady_clock::now() < deadline) read_one(100ms);
  EXPECT_TRUE(proc_.eof()) << "server did not exit after its input closed";
  return proc_.wait();
}

std::vector<json> app_server_client::thread_log(const std::string& thread_id) const {
  std::vector<json> out;
  for (auto& m : log_)
    if (thread_of(m) == thread_id) out.push_back(m);
  return out;
}

std::string thread_of(const json& m) {
  if (!m.contains("params") || !m["params"].is_object()) return {};
  const auto& p = m["params"];
  if (p.contains("threadId") && p["threadId"].is_string()) return p["threadId"];
  if (p.contains("thread") && p["thread"].is_object()) return p["thread"].value("id", "");
  return {};
}

std::string method_of(const json& m) { return m.value("method", ""); }

std::string error_message(const json& r) {
  return r.contains("error") ? r["error"]["message"].get<std::string>() : std::string{};
}

std::vector<std::string> rollouts(const std::string& home, const std::string& sub) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  if (!fs::exists(home + "/" + sub)) return out;
  for (auto& e : fs::recursive_directory_iterator(home + "/" + sub))
    if (e.is_regular_file()) out.push_back(e.path().string());
  return out;
}

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return out + "'";
}

}  // namespace parley::test
