#pragma once
// The Prometheus text exposition format (version 0.0.4), written by hand:
// a family's # HELP and # TYPE once, then its samples; label values escaped
// (\\, \", \n). prometheus-cpp's registry would hold the figures a second
// time, behind its own mutexes, and its civetweb server a second HTTP stack
// and thread pool; parley's figures already live in atomics read without
// asking any actor, so only this serializer is needed.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::metrics {

using labels = std::vector<std::pair<std::string, std::string>>;

struct sample {
  labels with;
  double value = 0;
};

class exposition {
 public:
  /// A counter family (`name` ends in _total) with its samples.
  void counter(std::string_view name, std::string_view help, const std::vector<sample>& samples);
  void counter(std::string_view name, std::string_view help, double value);
  void gauge(std::string_view name, std::string_view help, const std::vector<sample>& samples);
  void gauge(std::string_view name, std::string_view help, double value);
  /// A histogram: `cumulative[i]` observations at most `bounds[i]`; +Inf is
  /// `count`.
  void histogram(std::string_view name, std::string_view help, const std::vector<double>& bounds,
                 const std::vector<uint64_t>& cumulative, uint64_t count, double sum);

  const std::string& text() const { return out_; }

 private:
  void family(std::string_view name, std::string_view type, std::string_view help);
  void line(std::string_view name, const labels& with, double value);

  std::string out_;
};

/// A label value with \\, \" and newlines escaped.
std::string escape_label_value(std::string_view v);
/// A sample value: integers without a fraction, +Inf/-Inf/NaN spelled as
/// Prometheus reads them.
std::string format_value(double v);

/// The content type of the answer.
inline constexpr const char* content_type = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace parley::metrics
