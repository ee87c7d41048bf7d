#pragma once
// What a caller of the streaming HTTP client hands over (a request and the
// sink that hears its response) and what it gets back (an outcome). Pure
// values: no curl, no threads. See client.hpp for who calls a sink and when.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::http {

/// Header lines as name/value pairs, in order (a name may repeat).
using header_list = std::vector<std::pair<std::string, std::string>>;

/// The request line's method.
enum class verb { get, post };

struct request {
  verb method = verb::post;
  /// Absolute http:// or https:// URL, query string included (see with_query).
  std::string url;
  /// Sent as given. Their values never appear in an outcome's message: an
  /// Authorization header carries an API key.
  header_list headers;
  /// The whole request body (POST); ignored for GET.
  std::string body;
  /// Limit on name resolution, TCP connect and TLS handshake; 0: libcurl's
  /// default (300 s). There is no limit on the whole transfer: a stream may
  /// run for minutes, and the caller aborts when it has waited long enough.
  long connect_timeout_ms = 10'000;
  /// A PEM file of CAs to trust instead of the system's (a private gateway,
  /// tests); empty: the system's bundle. Certificates and host names are
  /// always verified.
  std::string ca_file;
  /// The gate whose cap this request waits for (a provider's id; see
  /// fair_gate.hpp); empty: it starts at once, uncapped.
  std::string gate;
  /// How many of the gate's requests run at once (0: no cap).
  std::size_t gate_limit = 0;
  /// A transfer held (client::pause) this long while another request waits
  /// for its gate is cut: it ends released (outcome::kind::released) and
  /// its slot goes to the waiting one. 0: never; no gate: never.
  long hold_release_ms = 0;
  /// Whose turn it is while waiting: round-robin over tenants, then threads.
  std::string tenant;
  std::string thread;
};

/// How a transfer ended. An HTTP error status (429, 500) is still `ok` here:
/// the response arrived whole, and on_status said which it was.
struct outcome {
  /// released: cut while held, its gate slot given to a waiting request
  /// (request::hold_release_ms); the caller asks again later.
  enum class kind { ok, failed, aborted, released };
  kind result = kind::ok;
  /// Why it failed (libcurl's text, header values redacted); "aborted" for an
  /// abort; empty when ok.
  std::string message;

  bool ok() const { return result == kind::ok; }
  bool aborted() const { return result == kind::aborted; }
  bool released() const { return result == kind::released; }
};

/// Hears one request's response. Every call comes on the client's I/O thread,
/// which serves every other transfer too: a sink must not block (hand the
/// data on, e.g. to an actor, and return) and must not throw (a throw from
/// on_status or on_body fails the transfer; one from on_done is dropped).
/// Order: on_admitted at most once, on_status at most once, then on_body any
/// number of times, then on_done exactly once (also after a failure before
/// any headers).
class sink {
 public:
  virtual ~sink() = default;
  /// The final response's status and headers (informational 1xx responses
  /// and a proxy's CONNECT reply are skipped), once they are complete.
  virtual void on_status(int status, const header_list& headers) = 0;
  /// The next piece of the body as it came off the wire (dechunked, not
  /// decompressed); valid only during the call.
  virtual void on_body(std::string_view chunk) = 0;
  virtual void on_done(const outcome& result) = 0;
  /// The request leaves the client's queue and goes to the network (at once,
  /// or once its gate had room: see client::start), before on_status; not
  /// called for a request that fails before it starts. A caller timing the
  /// response counts from here.
  virtual void on_admitted() {}
  /// Whether it takes the next piece of the body now (asked before each
  /// on_body). False pauses the transfer, the piece kept by curl, until
  /// client::flow(id) says the sink has room again: flow control between
  /// the I/O thread and a sink that hands pieces on (issue 22), so what was
  /// read and not yet taken stays small. Must not block.
  virtual bool ready() { return true; }
};

/// Names one request for the client's whole life (never reused).
using request_id = uint64_t;

/// `url` with `params` appended as a query string, names and values
/// percent-encoded (RFC 3986 unreserved characters stay as they are); joins
/// an existing query with '&' and keeps a fragment at the end.
std::string with_query(std::string url, const header_list& params);

/// The first header named `name` (ASCII case-insensitive: HTTP/2 sends
/// lower-case names), or nullptr.
const std::string* find_header(const header_list& headers, std::string_view name);

/// `message` with every occurrence of a header's value (4 characters or
/// longer), and of each whitespace-separated word of it that is 8 characters
/// or longer (the key in "Bearer <key>"), replaced by "[redacted]".
std::string redact(std::string message, const header_list& headers);

}  // namespace parley::http
