#include "bench/evaluation_kernels.cuh"

namespace gfsl::bench {

std::vector<launch_config> compiled_launch_configs(int /*chunk*/) {
  std::vector<launch_config> out;
  std::apply([&](auto... v) { (out.push_back({decltype(v)::threads, decltype(v)::blocks}), ...); }, detail::variants{});
  return out;
}

bool parse_launch_config(const std::string& text, int chunk, launch_config& out) {
  int t = 0, b = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%d/%d%c", &t, &b, &extra) != 2) return false;
  for (const launch_config& lc : compiled_launch_configs(chunk)) {
    if (lc.threads_per_block == t && lc.min_blocks_per_sm == b) {
      out = lc;
      return true;
    }
  }
  return false;
}

kernel_report describe_kernel(int chunk, const launch_config& lc) {
  bool found = false;
  const kernel_report k = chunk == 16 ? detail::describe_for<16>(lc, found) : detail::describe_for<32>(lc, found);
  if (!found) throw std::invalid_argument("launch configuration " + lc.name() + " is not compiled in");
  return k;
}

std::vector<gfsl_bench_result> run_gfsl_bench_variants(const gfsl_bench_config& c,
                                                      const std::vector<measured_variant>& variants) {
  std::vector<gfsl_bench_result> res;
  try {
    bool found = false;
    res = c.chunk == 16 ? detail::run_for<16>(c, variants, found) : detail::run_for<32>(c, variants, found);
    if (!found) {
      res.assign(variants.size(), gfsl_bench_result{});
      for (gfsl_bench_result& r : res) r.error = "launch configuration " + c.launch.name() + " is not compiled in";
    }
  } catch (const std::exception& e) {
    res.assign(variants.size(), gfsl_bench_result{});
    for (gfsl_bench_result& r : res) r.error = e.what();
  }
  return res;
}

gfsl_bench_result run_gfsl_bench(const gfsl_bench_config& c) { return run_gfsl_bench_variants(c, {{c.var, c.reraise}}).front(); }

}  // namespace gfsl::bench
