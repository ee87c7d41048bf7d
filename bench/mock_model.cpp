// parley-mock-model: a loopback HTTP server that speaks the streaming subset of the
// OpenAI Responses API, enough to run the real Codex CLI (0.169.0) app-server offline.
//
//   parley-mock-model [--port=N] [--host=127.0.0.1] [--command=CMD] [--dump=DIR]
//
// Every turn gets the same two-step script (see bench/mock_model.md):
//   1. no function_call_output since the last user message: answer ONE `exec_command`
//      call with sandbox_permissions "require_escalated", so Codex asks for approval;
//   2. otherwise: answer the assistant message "done", which ends the turn.
//
// stdout carries exactly one line, `listening on http://127.0.0.1:PORT`, once the socket is
// bound; requests are logged to stderr. cpp-httplib does all HTTP (SSE goes out through its
// chunked content provider); nlohmann_json does all JSON.

#include <httplib.h>
#include <pthread.h>
#include <sys/socket.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <thread>

namespace {

using json = nlohmann::json;

constexpr const char* loopback = "127.0.0.1";

// Each open keep-alive connection holds one server thread, and Codex keeps one per concurrent
// model request, so allow many. Keep-alive outlives reqwest's default 90 s pool idle timeout:
// the client closes idle connections first, never reusing one the server is closing.
constexpr std::size_t server_threads = 256;
constexpr time_t keep_alive_seconds = 120;
constexpr std::size_t keep_alive_requests = 1000000;

struct options {
  int port = 0;
  std::string host = loopback;
  std::string command = "true";
  std::string dump_dir;  // if set, each request body is saved as DIR/request-N.json
};

// -- logging (stderr; one fwrite per line, so lines from server threads never interleave) --

void log_line(const std::string& line) {
  std::string out = "parley-mock-model: " + line + "\n";
  std::fwrite(out.data(), 1, out.size(), stderr);
}

// -- ids ----------------------------------------------------------------------------------

// A per-process nonce keeps ids from two runs apart (a resumed thread may carry old ones).
std::string make_nonce() {
  std::random_device rd;
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
  return buf;
}

const std::string nonce = make_nonce();
std::atomic<unsigned long> next_id{1};

std::string fresh_id(std::string_view prefix) {
  return std::string(prefix) + "_mock_" + nonce + "_" + std::to_string(next_id++);
}

// -- the script ---------------------------------------------------------------------------

// True when the input holds a function_call_output after its last user message, i.e. the
// command of this turn has been answered (run, declined or failed) and the turn may end.
bool turn_has_tool_output(const json& input) {
  bool seen = false;
  if (!input.is_array()) return false;
  for (const auto& item : input) {
    if (!item.is_object()) continue;
    auto type = item.value("type", std::string());
    if (type == "message" && item.value("role", std::string()) == "user")
      seen = false;
    else if (type == "function_call_output")
      seen = true;
  }
  return seen;
}

json function_call_item(const std::string& command) {
  json arguments = {{"cmd", command},
                    {"sandbox_permissions", "require_escalated"},
                    {"justification", "parley benchmark"}};
  json item = {{"type", "function_call"}, {"name", "exec_command"}, {"status", "completed"}};
  item["id"] = fresh_id("fc");
  item["call_id"] = fresh_id("call");    // fresh per call: Codex keys the approval on it
  item["arguments"] = arguments.dump();  // a JSON string, as the Responses API sends it
  return item;
}

json message_item(const std::string& text) {
  return {
      {"type", "message"},
      {"id", fresh_id("msg")},
      {"role", "assistant"},
      {"status", "completed"},
      {"content",
       json::array({{{"type", "output_text"}, {"text", text}, {"annotations", json::array()}}})}};
}

json usage(std::size_t input_tokens, std::size_t output_tokens) {
  return {{"input_tokens", input_tokens},
          {"input_tokens_details", {{"cached_tokens", 0}}},
          {"output_tokens", output_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", input_tokens + output_tokens}};
}

// One SSE event: `event: <type>` then `data: <json>`, as the Responses API frames them.
std::string sse_event(const json& event) {
  return "event: " + event.at("type").get<std::string>() + "\ndata: " + event.dump() + "\n\n";
}

// The SSE stream for one request: created, the one output item, completed.
std::string respond(const json& request, const options& opts, std::string& summary) {
  static const json no_input = json::array();
  const json& input = request.contains("input") ? request.at("input") : no_input;
  std::string id = fresh_id("resp");
  json item = turn_has_tool_output(input) ? message_item("done") : function_call_item(opts.command);
  std::string model = request.value("model", std::string("mock-model"));
  json response = {{"id", id},
                   {"object", "response"},
                   {"model", model},
                   {"status", "in_progress"},
                   {"output", json::array()}};

  std::string stream;
  stream
      += sse_event({{"type", "response.created"}, {"sequence_number", 0}, {"response", response}});
  stream += sse_event({{"type", "response.output_item.done"},
                       {"sequence_number", 1},
                       {"output_index", 0},
                       {"item", item}});
  response["status"] = "completed";
  response["output"] = json::array({item});
  // Small, deterministic usage (10 tokens per input item). Realistic counts (~10k tokens per
  // Codex request) could push long benchmark threads over Codex's auto-compaction limit, and
  // this script would answer the summarisation request with another command.
  std::size_t items = input.is_array() ? input.size() : 0;
  response["usage"] = usage(10 * items, 5);
  stream += sse_event(
      {{"type", "response.completed"}, {"sequence_number", 2}, {"response", response}});

  summary
      = std::to_string(items) + " input items -> " + id + " " + item.at("type").get<std::string>();
  if (item.contains("call_id")) summary += " " + item.at("call_id").get<std::string>();
  return stream;
}

void handle_responses(const options& opts, const httplib::Request& req, httplib::Response& res) {
  json request = json::parse(req.body, nullptr, false);
  if (request.is_discarded() || !request.is_object()) {
    log_line("POST " + req.path + ": body is not a JSON object");
    res.status = 400;
    res.set_content(
        R"({"error":{"message":"body is not a JSON object","type":"invalid_request_error"}})",
        "application/json");
    return;
  }
  if (!opts.dump_dir.empty()) {
    static std::atomic<unsigned> dumped{0};
    auto path = opts.dump_dir + "/request-" + std::to_string(++dumped) + ".json";
    if (!(std::ofstream(path) << request.dump(2) << "\n")) log_line("cannot write " + path);
  }
  std::string summary;
  auto stream = std::make_shared<std::string>(respond(request, opts, summary));
  log_line("POST " + req.path + ": " + summary);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream",
                                   [stream](std::size_t, httplib::DataSink& sink) {
                                     if (!sink.write(stream->data(), stream->size())) return false;
                                     sink.done();
                                     return true;
                                   });
}

// -- command line -------------------------------------------------------------------------

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

constexpr const char* usage_text
    = "usage: parley-mock-model [--port=N] [--host=127.0.0.1] [--command=CMD] [--dump=DIR]\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "parley-mock-model: %s\n%s", message.c_str(), usage_text);
  std::exit(2);
}

options parse_options(int argc, char** argv) {
  options opts;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (starts_with(arg, "--port=")) {
      std::string value(arg.substr(7));
      char* end = nullptr;
      long port = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || port < 0 || port > 65535)
        usage_error("bad --port: " + value);
      opts.port = static_cast<int>(port);
    } else if (starts_with(arg, "--host=")) {
      opts.host = std::string(arg.substr(7));
    } else if (starts_with(arg, "--command=")) {
      opts.command = std::string(arg.substr(10));
    } else if (starts_with(arg, "--dump=")) {
      opts.dump_dir = std::string(arg.substr(7));
    } else if (arg == "--help" || arg == "-h") {
      std::printf("%s(a mock Responses API server for Codex; see bench/mock_model.md)\n",
                  usage_text);
      std::exit(0);
    } else {
      usage_error("unknown argument: " + std::string(arg));
    }
  }
  if (opts.host != loopback) usage_error("refusing to bind " + opts.host + ": only 127.0.0.1");
  if (opts.command.empty()) usage_error("--command must not be empty");
  return opts;
}

}  // namespace

int main(int argc, char** argv) {
  const options opts = parse_options(argc, argv);

  // Block SIGINT/SIGTERM before any thread exists; one thread waits for them and stops the
  // server (server threads inherit the mask, so no handler runs in signal context).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up mid-stream is not fatal

  httplib::Server server;
  server.new_task_queue = [] { return new httplib::ThreadPool(server_threads); };
  server.set_keep_alive_timeout(keep_alive_seconds);
  server.set_keep_alive_max_count(keep_alive_requests);
  // SO_REUSEADDR but not cpp-httplib's default SO_REUSEPORT: a port in use must fail to bind
  // rather than be shared with another server.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server.Post("/v1/responses", [&opts](const httplib::Request& req, httplib::Response& res) {
    handle_responses(opts, req, res);
  });
  server.Post("/responses", [&opts](const httplib::Request& req, httplib::Response& res) {
    handle_responses(opts, req, res);
  });
  server.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"object":"list","data":[]})", "application/json");
  });
  // Successful POSTs were logged by handle_responses with what they answered.
  server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    if (req.method == "POST" && res.status == 200) return;
    log_line(req.method + " " + req.path + " -> " + std::to_string(res.status));
  });

  int port = opts.port;
  if (port == 0)
    port = server.bind_to_any_port(opts.host);
  else if (!server.bind_to_port(opts.host, port))
    port = -1;
  if (port <= 0) {
    log_line("cannot bind " + opts.host + ":" + std::to_string(opts.port));
    return 1;
  }

  std::thread stopper([&server, &signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    log_line(std::string("stopping on ") + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
    server.stop();
  });
  stopper.detach();

  std::printf("listening on http://%s:%d\n", loopback, port);
  std::fflush(stdout);
  log_line("script: exec_command `" + opts.command + "` (require_escalated), then \"done\"");
  return server.listen_after_bind() ? 0 : 1;
}
