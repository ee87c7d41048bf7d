// parley-mock-model: a loopback HTTP server that speaks the streaming subset of the OpenAI
// Responses API and Chat Completions, scripted by `mock:` lines in the last user message.
// Without them it answers today's two-step script, enough to run the real Codex CLI
// (0.169.0) app-server offline. bench/mock_model.md documents it all.
//
// stdout carries exactly one line, `listening on http://127.0.0.1:PORT`, once the socket is
// bound; requests are logged to stderr.

#include <httplib.h>
#include <pthread.h>
#include <sys/socket.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "bench/mock_model/connection_threads.hpp"
#include "bench/mock_model/model_endpoint.hpp"
#include "bench/mock_model/options.hpp"
#include "bench/mock_model/request_log.hpp"
#include "bench/mock_model/stream_writer.hpp"

namespace {

using namespace parley::mock_model;
using json = nlohmann::json;

// Keep-alive (--keep-alive, 120 s) outlives reqwest's default 90 s pool idle timeout (and
// curl's 118 s): the client closes idle connections first, never reusing one the server is
// closing.
constexpr time_t default_keep_alive_s = 120;
constexpr std::size_t keep_alive_requests = 1000000;
// Bodies kept for GET /mock/requests, at most (Codex sends ~50 KB per request).
constexpr std::size_t record_max_bytes = std::size_t{512} << 20;

// What every model request goes through before its endpoint: it is recorded, then checked
// for the key. Past 3/4 of the threads in use, answers ask the client to close the
// connection, so idle keep-alive connections cannot take every thread.
class front_desk {
 public:
  front_desk(const options& opts, std::shared_ptr<connection_threads::load> load)
      : require_key_(opts.require_key), load_(std::move(load)),
        log_(opts.record, record_max_bytes) {}

  void record(const httplib::Request& req) {
    recorded_request r;
    r.method = req.method;
    r.path = req.path;
    for (const auto& [name, value] : req.headers) {
      if (is_pseudo_header(name)) continue;
      r.headers.emplace_back(name, is_credential_header(name) ? mask_credential(value) : value);
    }
    r.body = req.body;
    log_.add(std::move(r));
  }

  // True if the request may go on; else `res` is the 401.
  bool admit(const httplib::Request& req, httplib::Response& res) {
    if (connection_threads::running(*load_) > load_->max_threads / 4 * 3)
      res.set_header("Connection", "close");
    if (require_key_.empty() || req.get_header_value("Authorization") == "Bearer " + require_key_)
      return true;
    error_response(res, 401, "mock: missing or wrong API key (--require-key)",
                   "invalid_request_error");
    return false;
  }

  request_log& log() { return log_; }

 private:
  // cpp-httplib adds the peer's and our address as headers; the client sent none of them.
  static bool is_pseudo_header(const std::string& name) {
    return name == "REMOTE_ADDR" || name == "REMOTE_PORT" || name == "LOCAL_ADDR"
           || name == "LOCAL_PORT";
  }

  std::string require_key_;
  std::shared_ptr<connection_threads::load> load_;
  request_log log_;
};

void send_json(httplib::Response& res, const json& body) {
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void add_routes(httplib::Server& server, front_desk& desk, model_endpoint& model) {
  auto model_route = [&desk, &model](wire_api api) {
    return [&desk, &model, api](const httplib::Request& req, httplib::Response& res) {
      desk.record(req);
      if (desk.admit(req, res)) model.handle(api, req, res);
    };
  };
  for (const char* path : {"/v1/responses", "/responses"})
    server.Post(path, model_route(wire_api::responses));
  for (const char* path : {"/v1/chat/completions", "/chat/completions"})
    server.Post(path, model_route(wire_api::chat));
  server.Get("/v1/models", [&desk](const httplib::Request& req, httplib::Response& res) {
    desk.record(req);
    if (desk.admit(req, res)) res.set_content(R"({"object":"list","data":[]})", "application/json");
  });

  // -- what tests read back (never recorded, never behind the key) --
  server.Get("/mock/requests", [&desk](const httplib::Request&, httplib::Response& res) {
    send_json(res, desk.log().all());
  });
  server.Get("/mock/requests/last", [&desk](const httplib::Request&, httplib::Response& res) {
    auto last = desk.log().last();
    if (last.is_null()) res.status = 404;
    send_json(res, last);
  });
  server.Get("/mock/stats", [](const httplib::Request&, httplib::Response& res) {
    auto counts = streams();
    send_json(res, json{{"streams_open", counts.open}, {"streams_most", counts.most}});
  });
  server.Delete("/mock/requests", [&desk](const httplib::Request&, httplib::Response& res) {
    desk.log().clear();
    res.status = 204;
  });
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

  auto load = std::make_shared<connection_threads::load>();
  load->max_threads = opts.threads;
  load->queue_connections = opts.queue_connections;
  front_desk desk(opts, load);
  model_endpoint model(opts.command, opts.dump_dir, opts.pace_ms);

  httplib::Server server;
  server.new_task_queue = [load] { return new connection_threads(load); };
  // --keep-alive=0: one request per connection, whose answer says `Connection: close`.
  // cpp-httplib's timeout also bounds the wait for a connection's first request, so it
  // never drops to 0 (a busy client would get an empty reply).
  server.set_keep_alive_timeout(opts.keep_alive_s > 0 ? opts.keep_alive_s : default_keep_alive_s);
  server.set_keep_alive_max_count(opts.keep_alive_s > 0 ? keep_alive_requests : 1);
  // SO_REUSEADDR but not cpp-httplib's default SO_REUSEPORT: a port in use must fail to bind
  // rather than be shared with another server. TCP_NODELAY (inherited by accepted sockets)
  // sends each event at once instead of holding small writes back.
  int listener = -1;
  server.set_socket_options([&listener](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    listener = sock;
  });
  add_routes(server, desk, model);
  // Successful model requests were logged by their endpoint with what they answered.
  server.set_logger([&desk](const httplib::Request& req, const httplib::Response& res) {
    if (res.status == 404) desk.record(req);
    bool quiet = (req.method == "POST" && res.status == 200)
                 || req.path.compare(0, 6, "/mock/") == 0;
    if (!quiet) log_line(req.method + " " + req.path + " -> " + std::to_string(res.status));
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
  // cpp-httplib listens with a backlog of 5; a thousand clients connecting at once need more
  // (--backlog). Listening again on a listening socket only changes its backlog (Linux).
  if (listener >= 0 && ::listen(listener, opts.backlog) != 0)
    log_line("cannot raise the listen backlog; many clients at once may wait");

  std::thread stopper([&server, &signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    log_line(std::string("stopping on ") + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
    server.stop();
  });
  stopper.detach();

  std::printf("listening on http://127.0.0.1:%d\n", port);
  std::fflush(stdout);
  log_line("default script: exec_command `" + opts.command
           + "` (require_escalated), then \"done\"; `mock:` lines in a user message script it");
  bool ok = server.listen_after_bind();
  // Connection threads may still sit in an idle keep-alive; leave without destroying what
  // they point to.
  std::fflush(stderr);
  std::_Exit(ok ? 0 : 1);
}
