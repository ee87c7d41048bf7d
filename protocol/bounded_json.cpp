#include "protocol/bounded_json.hpp"

namespace parley::protocol {

bounded_json parse_bounded(std::string_view text, int max_depth) {
  bounded_json out;
  // `depth` is the number of containers around the event, so a container
  // starting at `depth` is at level depth + 1.
  auto keep_shallow = [&out, max_depth](int depth, json::parse_event_t event, json&) {
    bool opens = event == json::parse_event_t::object_start
                 || event == json::parse_event_t::array_start;
    if (opens && depth >= max_depth) {
      out.too_deep = true;
      return false;  // not built; the parser still scans it (iteratively)
    }
    return true;
  };
  out.value = json::parse(text.begin(), text.end(), keep_shallow, /*allow_exceptions=*/false);
  return out;
}

}  // namespace parley::protocol
