// Records a concurrent run of MVGpuBTree's multiversion B-tree as its users
// have it (owensgroup/MVGpuBTree, include/gpu_versioned_blink_tree.hpp,
// unmodified apart from its private members made public on a copy, so that
// this kernel can reach its allocator and reclaimer as the tree's own
// kernels do) with gfsl/record.cuh, for `gfsl check --model
// ordered-upsert-map`. The tree's claim (Awad's dissertation, lines 748,
// 800-808, 848-854): range queries and finds at a snapshot are linearizable
// against concurrent updates.
//
//   record_versioned_tree OUT.jsonl [KEYS] [TILES] [OPS_PER_TILE] [WIDTH] [SEED] [UPSERT%] [FIND%] [host|device] [none|epochs]
//
// Every tile of 16 threads (the tree's branching factor) runs OPS_PER_TILE
// operations drawn from its seed: an insert (the tree's insert is
// insert-or-assign: an upsert, recorded answering nothing), a find of the
// newest version, or a snapshot followed by a range [lo, lo + WIDTH) and a
// find at it (UPSERT% 50 and FIND% 20 by default). Keys are 1..KEYS; every
// value written is unique (the writing tile and its operation number), which
// the checker needs. Before them the odd keys are inserted (below).
//
// Snapshot handles: take_snapshot returns the tree's version number, which
// two tiles may both be handed (one whose compare-and-swap lost is given the
// version the winner moved to). The record names each snapshot by its own
// number (tile, operation) so that every snapshot must hold at a point of its
// own call; the version the tree handed out is printed for the first few.
#include <gfsl/record.cuh>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gpu_btree.h>

namespace cg = cooperative_groups;
namespace rec = gfsl::record;

using tree_type = GpuBTree::gpu_versioned_btree<std::uint32_t, std::uint32_t, 16>;
using pair_t = tree_type::pair_type;
constexpr int tile_size = tree_type::branching_factor;
constexpr int block_size = tree_type::reclaimer_block_size_;

__device__ std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct run_params {
  std::uint32_t keys, ops_per_tile, width, tiles;
  std::uint64_t seed;
  bool prefill;
  std::uint32_t upsert_pct, find_pct;  // the rest: snapshot, range and find at it
  pair_t* range_buffers;        // per tile: 2 * WIDTH pairs (a range holds at most WIDTH keys; more is recorded up to 2 * WIDTH)
  std::uint32_t* versions_seen; // the first snapshots' versions, for the report
};

// The tiles' operations, with the tree's epoch reclaimer (DEBR, as its
// concurrent kernels use) or with none (as its out-of-place insert kernel
// does: "future queries may use old snapshots").
template <class Allocator, class Reclaimer, class BlockTile>
__device__ void run_tiles(tree_type& tree, rec::log_ref log, const run_params& p, Allocator& allocator, Reclaimer& reclaimer,
                          BlockTile& block_wide_tile, const cg::thread_block_tile<tile_size>& tile) {
  const std::uint32_t tile_id = (blockIdx.x * blockDim.x + threadIdx.x) / tile_size;
  const bool mine = tile_id < p.tiles;
  rec::recorder<tile_size> r(tile, log, mine ? tile_id : ~0u);
  pair_t* buffer = p.range_buffers + static_cast<std::size_t>(mine ? tile_id : 0) * 2 * p.width;
  const std::uint32_t rounds = p.prefill ? (p.keys / 2 + p.tiles - 1) / p.tiles : p.ops_per_tile;
  for (std::uint32_t j = 0; j < rounds; ++j) {
    // The reclaimer's quiescent states are block-wide: every thread of the
    // block passes them, with or without an operation.
    reclaimer.leave_qstate(block_wide_tile, blockIdx.x, allocator, tree.allocator_);
    const std::uint64_t x = mix(p.seed * 0x9E3779B97F4A7C15ull + (std::uint64_t{tile_id} << 32) + j);
    const std::uint32_t value = tile_id * (rounds + 1) + j + 1 + (p.prefill ? 0x80000000u : 0u);
    if (mine && p.prefill) {
      const std::uint32_t k = 2 * (j * p.tiles + tile_id) + 1;
      if (k <= p.keys) {
        const rec::handle h = r.call(rec::op::upsert, k, value);
        tree.cooperative_insert(k, value, tile, allocator, reclaimer);
        r.ret(h);
      }
    } else if (mine) {
      const std::uint32_t k = 1 + static_cast<std::uint32_t>((x >> 8) % p.keys);
      const std::uint32_t what = static_cast<std::uint32_t>(x % 100);
      if (what < p.upsert_pct) {
        const rec::handle h = r.call(rec::op::upsert, k, value);
        tree.cooperative_insert(k, value, tile, allocator, reclaimer);
        r.ret(h);
      } else if (what < p.upsert_pct + p.find_pct) {
        const rec::handle h = r.call(rec::op::find, k);
        const std::uint32_t v = tree.cooperative_find(k, tile, allocator, true);
        r.ret(h, v != tree_type::invalid_value, v != tree_type::invalid_value ? v : 0);
      } else {
        const std::uint32_t handle = tile_id * (rounds + 1) + j + 1;
        const rec::handle hs = r.call_snapshot();
        const std::uint32_t ts = tree.take_snapshot(tile);
        r.ret_snapshot(hs, handle);
        if (tile.thread_rank() == 0 && tile_id < 64 && j == 0) p.versions_seen[tile_id] = ts;
        const std::uint32_t hi = k + p.width;
        const rec::handle hr = r.call_range_at(k, hi, handle);
        const std::uint32_t n = tree.concurrent_cooperative_range_query(k, hi, tile, allocator, ts, buffer);
        tile.sync();  // the buffer, written lane by lane, read by every lane
        r.ret_range(hr, buffer, n < 2 * p.width ? n : 2 * p.width);
        const std::uint32_t k2 = k + static_cast<std::uint32_t>((x >> 40) % p.width);
        const rec::handle hf = r.call_find_at(k2, handle);
        const std::uint32_t v = tree.cooperative_find(k2, tile, allocator, ts, true);
        r.ret(hf, v != tree_type::invalid_value, v != tree_type::invalid_value ? v : 0);
      }
    }
    reclaimer.enter_qstate(block_wide_tile, blockIdx.x);
  }
  r.finish();
}

__global__ void tree_ops_epochs(tree_type tree, rec::log_ref log, run_params p) {
  auto block = cg::this_thread_block();
  auto tile = cg::tiled_partition<tile_size>(block);
  using allocator_type = tree_type::device_allocator_context_type;
  allocator_type allocator{tree.allocator_, tile};
  using reclaimer_type = smr::DEBR_device<tree_type::reclaimer_max_ptrs_count_>;
  static constexpr std::uint32_t required_shmem = reclaimer_type::compute_shmem_requirements();
  __shared__ std::uint32_t reclaimer_shmem[required_shmem];
  __shared__ cg::block_tile_memory<block_size> block_tile_shmem;
  auto thb = cg::this_thread_block(block_tile_shmem);
  auto block_wide_tile = cg::tiled_partition<block_size>(thb);
  auto reclaimer = reclaimer_type{tree.host_reclaimer_, &reclaimer_shmem[0], gridDim.x, block_wide_tile};
  run_tiles(tree, log, p, allocator, reclaimer, block_wide_tile, tile);
}

__global__ void tree_ops(tree_type tree, rec::log_ref log, run_params p) {
  auto block = cg::this_thread_block();
  auto tile = cg::tiled_partition<tile_size>(block);
  using allocator_type = tree_type::device_allocator_context_type;
  allocator_type allocator{tree.allocator_, tile};
  dummy_reclaimer reclaimer;
  run_tiles(tree, log, p, allocator, reclaimer, block, tile);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.jsonl [KEYS] [TILES] [OPS_PER_TILE] [WIDTH] [SEED] [UPSERT%%] [FIND%%] [host|device] [none|epochs]\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  run_params p{};
  p.keys = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1024;
  p.tiles = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 2048;
  p.ops_per_tile = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 64;
  p.width = argc > 5 ? std::strtoul(argv[5], nullptr, 10) : 32;
  p.seed = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 1;
  p.upsert_pct = argc > 7 ? std::strtoul(argv[7], nullptr, 10) : 50;
  p.find_pct = argc > 8 ? std::strtoul(argv[8], nullptr, 10) : 20;
  const bool device_prefill = argc > 9 && std::string(argv[9]) == "device";
  const bool epochs = argc > 10 && std::string(argv[10]) == "epochs";
  if (p.keys < 2 || p.keys > (1u << 28) || p.tiles == 0 || p.ops_per_tile == 0 || p.width == 0 || p.width > 4096 || p.upsert_pct + p.find_pct > 100) {
    std::fprintf(stderr, "record_versioned_tree: KEYS in [2, 2^28], TILES and OPS_PER_TILE at least 1, WIDTH in [1, 4096], UPSERT%% + FIND%% at most 100\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "record_versioned_tree: no CUDA device\n");
    return 3;
  }
  try {
    tree_type tree;
    const std::uint32_t prefill_rounds = (p.keys / 2 + p.tiles - 1) / p.tiles;
    const std::uint32_t per_tile = prefill_rounds + 3 * p.ops_per_tile;
    const std::uint64_t pair_words = std::uint64_t{p.tiles} * p.ops_per_tile * (2 * p.width + 1);
    rec::device_log log(p.tiles, per_tile, rec::clock_kind::counter, pair_words);
    log.set_model(rec::trace_model::ordered_upsert_map);
    cudaMalloc(&p.range_buffers, std::size_t{p.tiles} * 2 * p.width * sizeof(pair_t));
    cudaMalloc(&p.versions_seen, 64 * sizeof(std::uint32_t));
    cudaMemset(p.versions_seen, 0xFF, 64 * sizeof(std::uint32_t));
    const unsigned blocks = (p.tiles * tile_size + block_size - 1) / block_size;
    // The odd keys, before the run: by the tree's own bulk insert (its
    // benchmarks build the tree so), written into the history as upserts
    // that returned before the run's first call (stamps 0 and 1: the log's
    // first stamp is 3); or, with "device", by recorded tiles.
    std::vector<rec::entry> prefilled;
    if (device_prefill) {
      p.prefill = true;
      std::fprintf(stderr, "record_versioned_tree: prefill, %u blocks of %d\n", blocks, block_size);
      if (epochs) tree_ops_epochs<<<blocks, block_size>>>(tree, log.ref(), p);
      else tree_ops<<<blocks, block_size>>>(tree, log.ref(), p);
      if (cudaDeviceSynchronize() != cudaSuccess) throw std::runtime_error(std::string("prefill: ") + cudaGetErrorString(cudaGetLastError()));
    } else {
      std::vector<std::uint32_t> keys, values;
      for (std::uint32_t k = 1; k <= p.keys; k += 2) keys.push_back(k), values.push_back(0x80000000u + k);
      std::uint32_t *d_keys = nullptr, *d_values = nullptr;
      cudaMalloc(&d_keys, keys.size() * sizeof(std::uint32_t));
      cudaMalloc(&d_values, keys.size() * sizeof(std::uint32_t));
      cudaMemcpy(d_keys, keys.data(), keys.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice);
      cudaMemcpy(d_values, values.data(), keys.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice);
      tree.insert(d_keys, d_values, static_cast<std::uint32_t>(keys.size()));
      if (cudaDeviceSynchronize() != cudaSuccess) throw std::runtime_error(std::string("bulk insert: ") + cudaGetErrorString(cudaGetLastError()));
      cudaFree(d_keys);
      cudaFree(d_values);
      for (std::size_t i = 0; i < keys.size(); ++i) {
        rec::entry e{};
        e.who = p.tiles;  // a team of its own: the host
        e.kind = static_cast<std::uint8_t>(rec::op::upsert);
        e.key = keys[i], e.arg = values[i], e.call = 0, e.ret = 1;
        prefilled.push_back(e);
      }
    }
    p.prefill = false;
    std::fprintf(stderr, "record_versioned_tree: prefill done; run\n");
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start);
    if (epochs) tree_ops_epochs<<<blocks, block_size>>>(tree, log.ref(), p);
    else tree_ops<<<blocks, block_size>>>(tree, log.ref(), p);
    cudaEventRecord(stop);
    if (cudaDeviceSynchronize() != cudaSuccess) throw std::runtime_error(std::string("run: ") + cudaGetErrorString(cudaGetLastError()));
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    std::vector<std::uint32_t> seen(64);
    cudaMemcpy(seen.data(), p.versions_seen, 64 * sizeof(std::uint32_t), cudaMemcpyDeviceToHost);
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    std::vector<rec::entry> records = log.records();
    records.insert(records.begin(), prefilled.begin(), prefilled.end());
    rec::device_log::write_json_lines_of(records, log.pairs(), out, prop.name, rec::trace_model::ordered_upsert_map);
    std::printf("versioned tree: %u keys, %u tiles x %u operations, ranges of width %u, seed %llu: %zu records in %.2f ms on %s -> %s\n",
                p.keys, p.tiles, p.ops_per_tile, p.width, static_cast<unsigned long long>(p.seed), records.size(), ms, prop.name, out.c_str());
    std::printf("versions handed to the first snapshots:");
    for (int i = 0; i < 16; ++i) std::printf(" %d", static_cast<int>(seen[i]));
    std::printf("\n");
    cudaFree(p.range_buffers);
    cudaFree(p.versions_seen);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "record_versioned_tree: %s\n", e.what());
    return 1;
  }
  return 0;
}
