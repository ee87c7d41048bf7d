#include "transport/metrics_text.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace parley::metrics {

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 9e15) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
    return buf;
  }
  // The shortest form that reads back as the same double (0.005, not
  // 0.0050000000000000001).
  char buf[40];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

void exposition::family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  // HELP text escapes only \\ and newlines.
  for (char c : help) out_ += c == '\n' ? std::string("\\n") : c == '\\' ? std::string("\\\\") : std::string(1, c);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void exposition::line(std::string_view name, const labels& with, double value) {
  out_ += name;
  if (!with.empty()) {
    out_ += '{';
    bool first = true;
    for (const auto& [k, v] : with) {
      if (!first) out_ += ',';
      first = false;
      out_ += k;
      out_ += "=\"";
      out_ += escape_label_value(v);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  out_ += format_value(value);
  out_ += '\n';
}

void exposition::counter(std::string_view name, std::string_view help,
                         const std::vector<sample>& samples) {
  family(name, "counter", help);
  for (const auto& s : samples) line(name, s.with, s.value);
}

void exposition::counter(std::string_view name, std::string_view help, double value) {
  counter(name, help, std::vector<sample>{{{}, value}});
}

void exposition::gauge(std::string_view name, std::string_view help,
                       const std::vector<sample>& samples) {
  family(name, "gauge", help);
  for (const auto& s : samples) line(name, s.with, s.value);
}

void exposition::gauge(std::string_view name, std::string_view help, double value) {
  gauge(name, help, std::vector<sample>{{{}, value}});
}

void exposition::histogram(std::string_view name, std::string_view help,
                           const std::vector<double>& bounds,
                           const std::vector<uint64_t>& cumulative, uint64_t count, double sum) {
  family(name, "histogram", help);
  std::string bucket = std::string(name) + "_bucket";
  for (size_t i = 0; i < bounds.size() && i < cumulative.size(); ++i)
    line(bucket, {{"le", format_value(bounds[i])}}, static_cast<double>(cumulative[i]));
  line(bucket, {{"le", "+Inf"}}, static_cast<double>(count));
  line(std::string(name) + "_sum", {}, sum);
  line(std::string(name) + "_count", {}, static_cast<double>(count));
}

}  // namespace parley::metrics
