#include "bench/harness/options.hpp"

#include "transport/listen_address.hpp"

namespace parley::bench {

const char* const usage = R"(usage: parley-bench --server CMD [options]
  --server CMD          the app-server command line (run with /bin/sh -c)
  --connect URL         talk WebSocket to ws://HOST:PORT[/path] or unix://PATH, which
                        CMD listens on (its --listen); default: CMD's stdin/stdout
  --connections K       WebSocket connections, each its own session (default 1);
                        threads are spread over them round-robin
  --clients-per-thread C  every thread is also resumed on the next C-1 connections;
                        each approval is answered on one of them, at random (default 1)
  --idle-connections N  before the run, open N more connections that only
                        initialize, and report the server's memory per idle connection
  --threads N           threads to run (default 100)
  --turns M             turns per thread (default 1; 0 = only load idle threads)
  --approvals K         approvals asked per turn (scripted text; default 1)
  --concurrency C       threads in flight at once (default: all)
  --mix SPEC            answers, e.g. accept=3,decline=1,cancel=0,late=0,never=0 (default accept=1)
  --think-ms T          wait T ms before answering (default 0)
  --late-ms L           how late a `late` answer comes (default 2000)
  --text scripted|plain turn text: parley's `run[escalate]: CMD` lines, or plain text for a model (default scripted)
  --confined            the commands run confined, unasked (`run: CMD`), not as
                        escalations each asked and accepted (`run[escalate]: CMD`)
  --command CMD         the command the turn asks to run (default true)
  --sandbox MODE        every thread's sandbox: read-only, workspace-write or
                        danger-full-access (default: the server's, workspace-write)
  --prompt TEXT         every turn's text, verbatim, instead of --text's (e.g.
                        'mock: say ...' for parley-mock-model)
  --timeout S           give up after S seconds (default 300)
  --json FILE           write every figure as JSON
  --plot FILE.svg       latency CDFs and throughput over time (needs gnuplot)
  --server-log FILE     the server's stderr (default /dev/null)
  --seed S              seed for the answer mix (default 1)
  --quiet               no progress line
)";

namespace {

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

bool parse_mix(const std::string& v, std::map<std::string, int>& mix) {
  mix.clear();
  size_t pos = 0;
  while (pos < v.size()) {
    auto comma = v.find(',', pos);
    auto part = v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    auto eq = part.find('=');
    if (eq == std::string::npos) return false;
    auto kind = part.substr(0, eq);
    if (kind != "accept" && kind != "decline" && kind != "cancel" && kind != "late" && kind != "never")
      return false;
    mix[kind] = std::stoi(part.substr(eq + 1));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

bool makes_sense(options& o) {
  if (o.concurrency <= 0 || o.concurrency > o.threads) o.concurrency = o.threads;
  if (o.server.empty() || o.threads <= 0 || o.turns < 0) return false;
  if (o.connections < 1 || o.clients_per_thread < 1 || o.idle_connections < 0) return false;
  if (o.clients_per_thread > o.connections) return false;  // each copy on a connection of its own
  bool stdio = o.connect.what == endpoint::kind::stdio;
  return !stdio || (o.connections == 1 && o.idle_connections == 0);
}

}  // namespace

std::string endpoint::transport() const {
  switch (what) {
    case kind::tcp: return tls ? "wss" : "ws";
    case kind::unix_socket: return "unix";
    case kind::stdio: break;
  }
  return "stdio";
}

std::optional<endpoint> parse_endpoint(const std::string& url) {
  // The server's own --listen parser reads the address; the harness adds the
  // handshake's target and refuses what it cannot connect to (port 0, a
  // unix:// without its path).
  std::string address = url;
  std::string target = "/";
  if (starts_with(url, "ws://") || starts_with(url, "wss://")) {
    auto slash = url.find('/', starts_with(url, "wss://") ? 6 : 5);
    if (slash != std::string::npos) {
      target = url.substr(slash);
      address = url.substr(0, slash);
    }
  }
  std::string error;
  auto a = ws::parse_listen_address(address, "", error);
  if (!a || a->what == ws::listen_address::kind::stdio) return std::nullopt;
  endpoint e;
  if (a->what == ws::listen_address::kind::tcp) {
    if (a->port == 0) return std::nullopt;
    e.what = endpoint::kind::tcp;
    e.host = a->host;
    e.port = a->port;
    e.tls = a->tls;
    e.target = target;
  } else {
    if (address == "unix://") return std::nullopt;
    e.what = endpoint::kind::unix_socket;
    e.path = a->path;
  }
  return e;
}

bool parse_options(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string& out) {
      auto eq = a.find('=');
      if (eq != std::string::npos) {
        out = a.substr(eq + 1);
        return true;
      }
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    auto name = a.substr(0, a.find('='));
    std::string v;
    if (name == "--quiet") {
      o.quiet = true;
      continue;
    }
    if (name == "--confined") {
      o.confined = true;
      continue;
    }
    if (name == "--help" || name == "-h" || !value(v)) return false;
    if (name == "--server") o.server = v;
    else if (name == "--connect") {
      auto e = parse_endpoint(v);
      if (!e) return false;
      o.connect = *e;
    } else if (name == "--connections") o.connections = std::stoi(v);
    else if (name == "--clients-per-thread") o.clients_per_thread = std::stoi(v);
    else if (name == "--idle-connections") o.idle_connections = std::stoi(v);
    else if (name == "--threads") o.threads = std::stoi(v);
    else if (name == "--turns") o.turns = std::stoi(v);
    else if (name == "--approvals") o.approvals = std::stoi(v);
    else if (name == "--concurrency") o.concurrency = std::stoi(v);
    else if (name == "--think-ms") o.think_ms = std::stod(v);
    else if (name == "--late-ms") o.late_ms = std::stod(v);
    else if (name == "--text") o.plain = v == "plain";
    else if (name == "--command") o.command = v;
    else if (name == "--sandbox") o.sandbox = v;
    else if (name == "--prompt") o.prompt = v;
    else if (name == "--timeout") o.timeout_s = std::stod(v);
    else if (name == "--json") o.json_path = v;
    else if (name == "--plot") o.plot_path = v;
    else if (name == "--server-log") o.server_log = v;
    else if (name == "--seed") o.seed = static_cast<unsigned>(std::stoul(v));
    else if (name == "--mix") {
      if (!parse_mix(v, o.mix)) return false;
    } else {
      return false;
    }
  }
  return makes_sense(o);
}

}  // namespace parley::bench
