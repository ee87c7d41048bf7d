#include "protocol/bounded_json.hpp"

#include <string>
#include <vector>

namespace parley::protocol {

namespace bounded_json_detail {

/// Builds the value from nlohmann's SAX events, leaving out containers
/// deeper than the bound (their contents are scanned, never built).
///
/// Why not json::parse with a callback: nlohmann 3.11.2's callback parser
/// looks through the enclosing container for discarded values at the end of
/// every object, so an array of N objects costs N^2 (a 0.5 MB line of
/// `[{"a":[0,1]},...]` took a scheduler thread 1.1 s; a 16 MiB one would
/// take it for half an hour). This builder is linear.
class builder {
 public:
  explicit builder(int max_depth) : max_depth_(max_depth) {}

  json root;
  bool too_deep = false;

  bool null() { return add(json(nullptr)); }
  bool boolean(bool b) { return add(json(b)); }
  bool number_integer(json::number_integer_t n) { return add(json(n)); }
  bool number_unsigned(json::number_unsigned_t n) { return add(json(n)); }
  bool number_float(json::number_float_t n, const json::string_t&) { return add(json(n)); }
  bool string(json::string_t& s) { return add(json(std::move(s))); }
  bool binary(json::binary_t& b) { return add(json::binary(std::move(b))); }

  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& k) {
    if (skipping_ == 0) key_ = std::move(k);
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

 private:
  /// Puts `v` where the parser is (the root, the array's end, the key's
  /// place); where it now lives.
  json* place(json v) {
    if (open_.empty()) {
      root = std::move(v);
      return &root;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }

  bool add(json v) {
    if (skipping_ == 0) place(std::move(v));
    return true;
  }

  bool open(json empty) {
    if (skipping_ > 0 || static_cast<int>(open_.size()) >= max_depth_) {
      // Too deep: scanned, not built, and not in its parent at all (as
      // if it had never been there: its key is dropped with it).
      too_deep = true;
      ++skipping_;
      return true;
    }
    open_.push_back(place(std::move(empty)));
    return true;
  }

  bool close() {
    if (skipping_ > 0)
      --skipping_;
    else
      open_.pop_back();
    return true;
  }

  int max_depth_;
  std::vector<json*> open_;  // the containers being built, outermost first
  int skipping_ = 0;         // levels inside a container left out
  json::string_t key_;
};

}  // namespace bounded_json_detail

bounded_json parse_bounded(std::string_view text, int max_depth) {
  bounded_json_detail::builder b{max_depth};
  bool ok = json::sax_parse(text.begin(), text.end(), &b);
  bounded_json out;
  out.too_deep = b.too_deep;
  // A root left out (a bound of 0) is no value either.
  out.value = ok && !(b.too_deep && max_depth <= 0) ? std::move(b.root)
                                                    : json(json::value_t::discarded);
  return out;
}

}  // namespace parley::protocol
