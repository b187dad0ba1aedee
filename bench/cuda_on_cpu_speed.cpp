// Speed of upstream SlabHash (../shared/peers/slabhash, unmodified) under the
// CUDA-on-CPU layer against the native `slabhash` subject (core/slabhash) at
// the same workload: scheduling points per second, runs per second and
// operations per second, on one core. The workload is that of
// tests/test_upstream_slabhash.cpp: one bucket, key 1 stored first, then 4
// warps (teams) of one operation each (insert, delete or search, a third
// each), under PCT over warps, depth 2, with pct_steps about one operation.
// Each figure is the median of `repeats` passes over the seeds; the ratio is
// seconds per operation, layer over native.
//
//   build/bench/cuda_on_cpu_speed [seeds] [repeats]        the layer as built
//   build/bench/cuda_on_cpu_speed_plain [seeds] [repeats]  plain loads and stores instrumented
//
// Built only where the peers folder is present (GFSL_PEERS_DIR).
#include "gfsl/cpu/cuda.hpp"

#include "slab_hash_global.cuh"
#include "concurrent_map/cmap_class.cuh"
#include "concurrent_map/warp/delete.cuh"
#include "concurrent_map/warp/insert.cuh"
#include "concurrent_map/warp/search.cuh"

#include "exec/host_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
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

struct rate {
  double seconds = 0;
  std::uint64_t steps = 0, ops = 0, runs = 0, failed = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

#ifdef GFSL_CPU_PLAIN_ACCESSES
constexpr std::uint64_t layer_pct_steps = 250;  // 260 points an operation (plain accesses are points too)
constexpr const char* layer_name = "layer, plain accesses instrumented";
#else
constexpr std::uint64_t layer_pct_steps = 200;  // 209 points an operation
constexpr const char* layer_name = "layer";
#endif

rate layer_pass(std::uint64_t seeds, Slab::SlabTypeT* buckets, std::uint32_t* super_blocks, Map& map) {
  rate out;
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
    o.pct_steps = layer_pct_steps;
    o.seed = seed;
    o.quiet = true;
    std::vector<lane_op> pre(1, lane_op{op_insert, 1, 10});
    auto r = gfsl::cpu::launch(o, 1, 1, operations, pre.data(), 1u, map);
    out.steps += r.steps;
    out.ops += 1;
    std::vector<lane_op> phase(4 * 32);
    std::mt19937_64 rng(seed);
    for (std::uint32_t w = 0; w < 4; ++w) {
      const std::uint32_t k = static_cast<std::uint32_t>(rng() % 3);
      phase[w * 32] = k == 0 ? lane_op{op_insert, 2, 20} : k == 1 ? lane_op{op_delete, 1, 0} : lane_op{op_search, 1 + (w & 1), 0};
    }
    r = gfsl::cpu::launch(o, 1, 4 * 32, operations, phase.data(), 4u * 32, map);
    out.steps += r.steps;
    out.ops += 4;
    out.failed += r.ok() ? 0 : 1;
    ++out.runs;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

// The native subject: `gfsl run --subject slabhash --buckets 1 --teams 4
// --ops 4 --range 2 --prefill 0.5 --mix 34,33,33 --schedule pct --depth 2`,
// one seed a run, at lane granularity (a team-wide slab read is one point a lane).
rate native_pass(std::uint64_t seeds) {
  rate out;
  gfsl::model::workload w;
  w.subject = gfsl::subject_kind::slabhash;
  w.buckets = 1;
  w.chunk = 16;
  w.teams = 4;
  w.ops = 4;
  w.range = 2;
  w.prefill = 0.5;
  w.insert_pct = 34;
  w.delete_pct = 33;
  w.contains_pct = 33;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    w.seed = seed;
    gfsl::sched::options o;
    o.strat = gfsl::sched::strategy::pct;
    o.depth = 2;
    o.seed = seed;
    o.pct_steps = 20;
    const auto run = gfsl::run_scheduled(w, o, 0, false);
    out.steps += run.outcome.steps;
    out.ops += w.ops + static_cast<std::uint64_t>(run.run.prefill.size());
    out.failed += run.outcome.reason == gfsl::sched::stop_reason::completed ? 0 : 1;
    ++out.runs;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

void print(const char* name, const std::vector<rate>& passes) {
  std::vector<double> sec;
  for (const rate& r : passes) sec.push_back(r.seconds);
  const double s = median(sec);
  const rate& r = passes.front();
  std::printf("%-36s %8.0f scheduling points/s, %7.0f runs/s, %8.0f operations/s, %6.1f points per operation, %llu runs stopped\n",
              name, r.steps / s, r.runs / s, r.ops / s, static_cast<double>(r.steps) / r.ops, static_cast<unsigned long long>(r.failed));
}

double seconds_per_op(const std::vector<rate>& passes) {
  std::vector<double> v;
  for (const rate& r : passes) v.push_back(r.seconds / static_cast<double>(r.ops));
  return median(v);
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t seeds = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000;
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  Slab::SlabTypeT* buckets = nullptr;
  std::uint32_t* super_blocks = nullptr;
  cudaMalloc(&buckets, sizeof(Slab::SlabTypeT));
  cudaMalloc(&super_blocks, std::size_t{AllocatorContextT::SUPER_BLOCK_SIZE_} * AllocatorContextT::num_super_blocks_ * 4);
  AllocatorContextT alloc;
  alloc.initParameters(super_blocks, hash_coef);
  Map map;
  map.initParameters(1, 0, 0, reinterpret_cast<int8_t*>(buckets), &alloc);

  std::vector<rate> layer, native;
  for (int i = 0; i < repeats; ++i) {
    layer.push_back(layer_pass(seeds, buckets, super_blocks, map));
    native.push_back(native_pass(seeds));
  }
  std::printf("%llu seeds (runs) a pass, median of %d passes\n", static_cast<unsigned long long>(seeds), repeats);
  print(layer_name, layer);
  print("native slabhash subject", native);
  std::printf("seconds per operation, layer / native: %.1fx\n", seconds_per_op(layer) / seconds_per_op(native));
  cudaFree(buckets);
  cudaFree(super_blocks);
  return 0;
}
