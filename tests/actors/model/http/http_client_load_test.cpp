// The HTTP client under many streams at once, across requests (connection
// reuse), and in the environment it meets (a proxy from http_proxy, TLS).

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

#include "actors/model/http/client.hpp"
#include "tests/actors/model/http/httplib_server.hpp"
#include "tests/actors/model/http/raw_server.hpp"
#include "tests/actors/model/http/recording_sink.hpp"

namespace parley::http {
namespace {

using namespace std::chrono_literals;
using testing::httplib_server;
using testing::raw_server;
using testing::read_request_head;
using testing::recording_sink;
using testing::send_all;

// Loopback servers are reached directly whatever proxy the machine that runs
// the tests has configured (set before main: no thread reads it yet).
[[maybe_unused]] const bool loopback_without_proxy = [] {
  ::setenv("no_proxy", "127.0.0.1,localhost", 1);
  ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
  return true;
}();

request plain_post(std::string url, std::string body) {
  request req;
  req.url = std::move(url);
  req.headers = {{"Content-Type", "text/plain"}};
  req.body = std::move(body);
  return req;
}

// Every handler holds its stream open until all of them have begun: the test
// passes only if the client has all 1,000 in flight at once.
TEST(http_client_load, a_thousand_concurrent_streams_share_the_one_io_thread) {
  constexpr int streams = 1000;
  std::mutex mtx;
  std::condition_variable cv;
  int begun = 0;
  int gave_up = 0;
  httplib_server server;
  server.svr.new_task_queue = [] { return new httplib::ThreadPool(streams + 100); };
  server.svr.Post("/stream", [&](const httplib::Request& req, httplib::Response& res) {
    res.set_chunked_content_provider("text/plain", [&, tag = req.body](size_t, httplib::DataSink& out) {
      auto first = "begin " + tag + "\n";
      out.write(first.data(), first.size());
      std::unique_lock<std::mutex> lock{mtx};
      ++begun;
      cv.notify_all();
      if (!cv.wait_for(lock, 60s, [&] { return begun >= streams; })) ++gave_up;
      lock.unlock();
      auto last = "end " + tag + "\n";
      out.write(last.data(), last.size());
      out.done();
      return true;
    });
  });
  server.start();
  client http;
  std::vector<std::shared_ptr<recording_sink>> sinks;
  for (int i = 0; i < streams; ++i) {
    sinks.push_back(std::make_shared<recording_sink>());
    http.start(plain_post(server.url("/stream"), std::to_string(i)), sinks.back());
  }
  int ok = 0;
  for (int i = 0; i < streams; ++i) {
    auto& sink = *sinks[static_cast<size_t>(i)];
    ASSERT_TRUE(sink.wait_done(90s)) << "stream " << i;
    if (sink.done().ok() && sink.status() == 200
        && sink.body() == "begin " + std::to_string(i) + "\nend " + std::to_string(i) + "\n")
      ++ok;
    else
      ADD_FAILURE() << "stream " << i << ": " << sink.done().message << " " << sink.body();
  }
  EXPECT_EQ(ok, streams);
  std::lock_guard<std::mutex> guard{mtx};
  EXPECT_EQ(begun, streams);
  EXPECT_EQ(gave_up, 0);
  EXPECT_EQ(http.live_transfers(), 0u);
}

TEST(http_client_load, sequential_requests_to_one_host_reuse_the_connection) {
  httplib_server server;
  server.svr.Post("/port", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(std::to_string(req.remote_port), "text/plain");
  });
  server.start();
  client http;
  std::vector<std::string> ports;
  for (int i = 0; i < 3; ++i) {
    auto sink = std::make_shared<recording_sink>();
    http.start(plain_post(server.url("/port"), "{}"), sink);
    ASSERT_TRUE(sink->wait_done());
    ASSERT_TRUE(sink->done().ok()) << sink->done().message;
    ports.push_back(sink->body());
  }
  EXPECT_FALSE(ports[0].empty());
  EXPECT_NE(ports[0], "-1");
  EXPECT_EQ(ports[1], ports[0]);
  EXPECT_EQ(ports[2], ports[0]);
}

// Sets an environment variable for one test, before the client's thread
// exists, and takes it back after.
struct scoped_env {
  std::string name;
  scoped_env(std::string n, const std::string& value) : name(std::move(n)) {
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~scoped_env() { ::unsetenv(name.c_str()); }
};

TEST(http_client_env, takes_its_proxy_from_http_proxy) {
  std::mutex mtx;
  std::string request_line;
  raw_server proxy([&](int fd) {
    auto head = read_request_head(fd);
    {
      std::lock_guard<std::mutex> guard{mtx};
      request_line = head.substr(0, head.find("\r\n"));
    }
    send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nproxied\r\n");
  });
  scoped_env env("http_proxy", proxy.url(""));
  auto sink = std::make_shared<recording_sink>();
  {
    client http;
    request req;
    req.method = verb::get;
    req.url = "http://model.example.invalid/v1/models";
    http.start(req, sink);
    ASSERT_TRUE(sink->wait_done());
  }
  EXPECT_TRUE(sink->done().ok()) << sink->done().message;
  EXPECT_EQ(sink->body(), "proxied\r\n");
  std::lock_guard<std::mutex> guard{mtx};
  EXPECT_EQ(request_line, "GET http://model.example.invalid/v1/models HTTP/1.1");
}

// A self-signed certificate for 127.0.0.1, made by the openssl command.
struct test_certificate {
  std::filesystem::path dir = std::filesystem::temp_directory_path()
                              / ("parley-http-tls-" + std::to_string(::getpid()));
  std::string cert = (dir / "cert.pem").string();
  std::string key = (dir / "key.pem").string();
  bool made = false;
  test_certificate() {
    std::filesystem::create_directories(dir);
    auto command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1"
                   " -addext subjectAltName=IP:127.0.0.1 -keyout " + key + " -out " + cert
                   + " >/dev/null 2>&1";
    made = std::system(command.c_str()) == 0;
  }
  ~test_certificate() { std::filesystem::remove_all(dir); }
};

TEST(http_client_env, https_works_and_verifies_the_certificate) {
  test_certificate tls;
  if (!tls.made) GTEST_SKIP() << "no openssl command to make a certificate";
  httplib_server server(tls.cert, tls.key);
  server.svr.Post("/v1/responses", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content("over tls: " + req.body, "text/plain");
  });
  server.start();
  client http;
  auto trusted = std::make_shared<recording_sink>();
  auto req = plain_post(server.url("/v1/responses"), "hello");
  req.ca_file = tls.cert;
  http.start(req, trusted);
  auto untrusted = std::make_shared<recording_sink>();
  http.start(plain_post(server.url("/v1/responses"), "hello"), untrusted);
  ASSERT_TRUE(trusted->wait_done());
  ASSERT_TRUE(untrusted->wait_done());
  EXPECT_TRUE(trusted->done().ok()) << trusted->done().message;
  EXPECT_EQ(trusted->body(), "over tls: hello");
  EXPECT_EQ(untrusted->done().result, outcome::kind::failed);
  EXPECT_EQ(untrusted->status_calls(), 0);
  EXPECT_NE(untrusted->done().message.find("certificate"), std::string::npos)
      << untrusted->done().message;
}

}  // namespace
}  // namespace parley::http
