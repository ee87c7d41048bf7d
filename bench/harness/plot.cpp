#include "bench/harness/plot.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

namespace parley::bench {

namespace {

void write_cdf(const std::vector<double>& v, const std::string& file) {
  auto s = v;
  std::sort(s.begin(), s.end());
  std::ofstream f{file};
  for (size_t i = 0; i < s.size(); ++i)
    f << s[i] << ' ' << static_cast<double>(i + 1) / static_cast<double>(s.size()) << '\n';
}

}  // namespace

void plot(const plot_data& data, const std::string& base) {
  write_cdf(data.turn_ms, base + ".turn.dat");
  write_cdf(data.approval_request_ms, base + ".request.dat");
  write_cdf(data.answer_to_resolved_ms, base + ".resolved.dat");
  {
    std::map<int, int> per_100ms;
    for (auto t : data.completions_ms) per_100ms[static_cast<int>(t / 100)]++;
    std::ofstream f{base + ".rate.dat"};
    for (auto& [bucket, n] : per_100ms) f << bucket / 10.0 << ' ' << n * 10 << '\n';
  }
  std::ofstream g{base + ".gp"};
  g << "set terminal svg size 1000,420 dynamic\nset output '" << base << "'\n"
    << "set multiplot layout 1,2 title 'parley-bench: " << data.threads << " threads'\n"
    << "set title 'latency CDF'\nset xlabel 'ms'\nset logscale x\nset ylabel 'fraction'\nset key bottom right\n"
    << "plot '" << base << ".turn.dat' w l t 'turn', '" << base << ".request.dat' w l t 'turn/start -> approval', '"
    << base << ".resolved.dat' w l t 'answer -> resolved'\n"
    << "unset logscale x\nset title 'throughput'\nset xlabel 's'\nset ylabel 'turns/s'\n"
    << "plot '" << base << ".rate.dat' w steps t 'completed turns/s'\nunset multiplot\n";
  g.close();
  auto rc = std::system(("gnuplot '" + base + ".gp' 2>/dev/null").c_str());
  if (rc != 0) std::fprintf(stderr, "parley-bench: gnuplot failed (is it installed?); data in %s.*.dat\n", base.c_str());
}

}  // namespace parley::bench
