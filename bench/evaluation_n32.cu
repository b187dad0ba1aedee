#include "bench/evaluation_kernels.cuh"

namespace gfsl::bench::detail {

template <>
kernel_report describe_for<32>(const launch_config& lc, bool& found) {
  return describe_for_impl<32>(lc, found);
}
template <>
std::vector<gfsl_bench_result> run_for<32>(const gfsl_bench_config& c, const std::vector<measured_variant>& variants,
                                          bool& found) {
  return run_for_impl<32>(c, variants, found);
}

}  // namespace gfsl::bench::detail
