#pragma once
// parley-bench's --plot: latency CDFs and completed turns per second over
// time, as an SVG drawn by gnuplot (data files beside it either way).

#include <string>
#include <vector>

namespace parley::bench {

struct plot_data {
  int threads = 0;
  std::vector<double> turn_ms, approval_request_ms, answer_to_resolved_ms;
  std::vector<double> completions_ms;  // when each turn completed, from the start of the run
};

/// Writes `svg_path` and its .dat/.gp files; says on stderr when gnuplot fails.
void plot(const plot_data& data, const std::string& svg_path);

}  // namespace parley::bench
