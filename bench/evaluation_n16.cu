#include "bench/evaluation_kernels.cuh"

namespace gfsl::bench::detail {

template <>
kernel_report describe_for<16>(const launch_config& lc, bool& found) {
  return describe_for_impl<16>(lc, found);
}
template <>
gfsl_bench_result run_for<16>(const gfsl_bench_config& c, bool& found) {
  return run_for_impl<16>(c, found);
}

}  // namespace gfsl::bench::detail
