// Speed of upstream SlabHash (../shared/peers/slabhash, unmodified) under the
// CUDA-on-CPU layer: scheduling points per second, runs per second and
// operations per second, on one core, at the workload of
// tests/test_upstream_slabhash.cpp (one bucket, key 1 stored first, then 4
// warps of one operation each under PCT over warps, depth 2, pct_steps 200).
//
//   build/bench/cuda_on_cpu_speed [seeds]
//
// Built only where the peers folder is present (GFSL_PEERS_DIR).
#include "gfsl/cpu/cuda.hpp"

#include "slab_hash_global.cuh"
#include "concurrent_map/cmap_class.cuh"
#include "concurrent_map/warp/delete.cuh"
#include "concurrent_map/warp/insert.cuh"
#include "concurrent_map/warp/search.cuh"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Map = GpuSlabHashContext<std::uint32_t, std::uint32_t, SlabHashTypeT::ConcurrentMap>;
using Slab = ConcurrentMapT<std::uint32_t, std::uint32_t>;
enum : std::uint32_t { op_none = 0, op_insert = 1, op_delete = 2, op_search = 3 };
struct lane_op {
  std::uint32_t kind = op_none, key = 0, value = 0;
};

__global__ void operations(const lane_op* ops, std::uint32_t n, Map slab_hash) {
  std::uint32_t tid = threadIdx.x + blockIdx.x * blockDim.x;
  std::uint32_t lane = threadIdx.x & 0x1F;
  AllocatorContextT alloc(slab_hash.getAllocatorContext());
  alloc.initAllocator(tid, lane);
  const lane_op op = tid < n ? ops[tid] : lane_op{};
  const std::uint32_t bucket = slab_hash.computeBucket(op.key);
  bool to_insert = op.kind == op_insert, to_delete = op.kind == op_delete, to_search = op.kind == op_search;
  slab_hash.insertPairUnique(to_insert, lane, op.key, op.value, bucket, alloc);
  slab_hash.deleteKey(to_delete, lane, op.key, bucket);
  std::uint32_t value = 0;
  slab_hash.searchKey(to_search, lane, op.key, value, bucket);
  if (op.kind != op_none) gfsl::cpu::completed_operation();
}

constexpr std::uint32_t hash_coef = 0x9E3779B9u;

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t seeds = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000;
  Slab::SlabTypeT* buckets = nullptr;
  std::uint32_t* super_blocks = nullptr;
  cudaMalloc(&buckets, sizeof(Slab::SlabTypeT));
  cudaMalloc(&super_blocks, std::size_t{AllocatorContextT::SUPER_BLOCK_SIZE_} * AllocatorContextT::num_super_blocks_ * 4);
  AllocatorContextT alloc;
  alloc.initParameters(super_blocks, hash_coef);
  Map map;
  map.initParameters(1, 0, 0, reinterpret_cast<int8_t*>(buckets), &alloc);

  std::uint64_t steps = 0, ops = 0, failed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    cudaMemset(buckets, 0xFF, sizeof(Slab::SlabTypeT));
    for (std::uint32_t warp = 0; warp < 4; ++warp) {
      const std::uint32_t super = warp % AllocatorContextT::num_super_blocks_;
      const std::uint32_t resident = (hash_coef * warp) >> (32 - slab_alloc_par::log_num_mem_blocks);
      std::uint32_t* sb = super_blocks + std::size_t{super} * AllocatorContextT::SUPER_BLOCK_SIZE_;
      cudaMemset(sb + resident * AllocatorContextT::BITMAP_SIZE_, 0, AllocatorContextT::BITMAP_SIZE_ * 4);
      cudaMemset(sb + AllocatorContextT::MEM_BLOCK_OFFSET_ + std::size_t{resident} * AllocatorContextT::MEM_BLOCK_SIZE_, 0xFF,
                 std::size_t{AllocatorContextT::MEM_BLOCK_SIZE_} * 4);
    }
    gfsl::cpu::options o;
    o.strategy = "pct";
    o.depth = 2;
    o.pct_steps = 200;
    o.seed = seed;
    o.quiet = true;
    std::vector<lane_op> pre(1, lane_op{op_insert, 1, 10});
    auto r = gfsl::cpu::launch(o, 1, 1, operations, pre.data(), 1u, map);
    steps += r.steps;
    ops += 1;
    std::vector<lane_op> phase(4 * 32);
    std::mt19937_64 rng(seed);
    for (std::uint32_t w = 0; w < 4; ++w) {
      const std::uint32_t k = static_cast<std::uint32_t>(rng() % 3);
      phase[w * 32] = k == 0 ? lane_op{op_insert, 2, 20} : k == 1 ? lane_op{op_delete, 1, 0} : lane_op{op_search, 1 + (w & 1), 0};
    }
    r = gfsl::cpu::launch(o, 1, 4 * 32, operations, phase.data(), 4u * 32, map);
    steps += r.steps;
    ops += 4;
    failed += r.ok() ? 0 : 1;
  }
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("upstream SlabHash under the layer: %llu seeds (runs), %.3f s\n", static_cast<unsigned long long>(seeds), sec);
  std::printf("  %.0f scheduling points/s, %.0f runs/s, %.0f operations/s, %.1f points per operation, %llu runs stopped or faulted\n",
              steps / sec, seeds / sec, ops / sec, static_cast<double>(steps) / ops, static_cast<unsigned long long>(failed));
  cudaFree(buckets);
  cudaFree(super_blocks);
  return 0;
}
