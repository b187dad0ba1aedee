// Checks the per-thread skiplist baseline on this GPU, then times one small
// run of it.
//
//   mc_selfcheck [range] [ops] [repeats]
//
// Exit status: 0 OK, 1 a check or the run failed, 2 no CUDA device.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/mc_skiplist.hpp"

int main(int argc, char** argv) {
  int devices = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "mc_selfcheck: no CUDA device%s%s\n", e != cudaSuccess ? ": " : "",
                 e != cudaSuccess ? cudaGetErrorString(e) : "");
    return 2;
  }
  if (const std::string why = gfsl::bench::mc_self_check(); !why.empty()) {
    std::fprintf(stderr, "mc_selfcheck: self-check failed: %s\n", why.c_str());
    return 1;
  }
  std::printf("self-check: ok\n");

  gfsl::bench::mc_config c;
  c.range = argc > 1 ? static_cast<std::uint32_t>(std::strtoul(argv[1], nullptr, 10)) : 100000;
  c.ops = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
  c.repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  const gfsl::bench::mc_result r = gfsl::bench::run_mc_skiplist(c);
  std::printf("run: range %u, %llu ops, mix %d/%d/%d, prefill %.2f, %d threads per block\n", c.range,
              static_cast<unsigned long long>(c.ops), c.insert_pct, c.delete_pct, c.contains_pct, c.prefill,
              c.threads_per_block);
  std::printf("  timed kernel: %d registers, %d bytes local, %d blocks per SM\n", r.registers, r.local_bytes,
              r.blocks_per_sm);
  std::printf("  pool: %llu nodes, %llu used\n", static_cast<unsigned long long>(r.pool_nodes),
              static_cast<unsigned long long>(r.nodes_used));
  for (std::size_t i = 0; i < r.ms.size(); ++i) {
    std::printf("  repeat %zu: %.3f ms, %.1f Mops/s\n", i + 1, r.ms[i], r.ms[i] > 0 ? static_cast<double>(c.ops) / (r.ms[i] * 1e3) : 0.0);
  }
  if (!r.ok) {
    std::fprintf(stderr, "mc_selfcheck: run failed: %s\n", r.error.c_str());
    return 1;
  }
  std::printf("  final check: ok\n");
  return 0;
}
