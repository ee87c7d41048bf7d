#include "tests/actors/cluster/cluster_fixture.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace parley::cluster::testing {

namespace fixture_detail {

void run(const std::string& command) {
  if (std::system((command + " >/dev/null 2>&1").c_str()) != 0)
    throw std::runtime_error("failed: " + command);
}

// An EC key and a certificate for CN=name signed by ca (ca.pem/ca.key in dir).
void issue(const std::string& dir, const std::string& ca, const std::string& name) {
  auto d = "'" + dir + "/";
  run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + d + name +
      ".key' -out " + d + name + ".csr' -subj /CN=" + name);
  run("openssl x509 -req -in " + d + name + ".csr' -CA " + d + ca + ".pem' -CAkey " + d + ca +
      ".key' -CAcreateserial -out " + d + name + ".pem' -days 2");
}

void make_ca(const std::string& dir, const std::string& name) {
  auto d = "'" + dir + "/";
  run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + d +
      name + ".key' -out " + d + name + ".pem' -days 2 -subj /CN=" + name);
}

}  // namespace fixture_detail

tls_material::tls_material() {
  char tmpl[] = "/tmp/parley-cluster-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  fixture_detail::make_ca(dir_, "ca");
  for (auto* n : {"n1", "n2", "n3"}) fixture_detail::issue(dir_, "ca", n);
  fixture_detail::make_ca(dir_, "other-ca");
  fixture_detail::issue(dir_, "other-ca", "rogue");
}

tls_material::~tls_material() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("no free port");
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string write_cluster_file(const std::string& dir, const std::string& name,
                               const cluster_file_spec& spec) {
  auto path = dir + "/" + name;
  std::ofstream out{path};
  out << "cluster = \"" << spec.cluster << "\"\n"
      << "node = \"" << spec.node << "\"\n"
      << "postgres = \"postgresql://parley@127.0.0.1:5432/parley\"\n"
      << "lease_ttl_ms = " << spec.lease_ttl_ms << "\n"
      << "heartbeat_ms = " << spec.heartbeat_ms << "\n"
      << "connection_timeout_ms = " << spec.connection_timeout_ms << "\n"
      << "[tls]\n"
      << "ca = \"" << spec.ca << "\"\n"
      << "cert = \"" << (spec.cert.empty() ? spec.node + ".pem" : spec.cert) << "\"\n"
      << "key = \"" << (spec.key.empty() ? spec.node + ".key" : spec.key) << "\"\n";
  for (auto& m : spec.members)
    out << "[[members]]\nname = \"" << m.name << "\"\naddress = \"127.0.0.1:" << m.port << "\"\n";
  return path;
}

}  // namespace parley::cluster::testing
