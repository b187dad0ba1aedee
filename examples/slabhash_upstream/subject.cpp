// Upstream SlabHash (owensgroup/SlabHash with SlabAlloc, as shipped: include
// paths only) as a subject of gfsl: the one file its user writes. Linked
// with gfsl::cpu_subject, the program speaks gfsl's command line for the
// table (docs/YOUR-STRUCTURE.md, "Your CUDA structure on the CPU"):
//
//   slabhash_upstream fuzz --max-runs 1000 --keep-going --out fz
//   slabhash_upstream replay 'gfsl1:...:subject=slabhash_upstream:...'
//
// One bucket, so that every key collides and chains grow past one slab.
// Each operation is one warp's: upstream's batched_operations kernel has all
// 32 lanes call insertPairUnique, deleteKey and searchKey with per-lane
// to-do flags; here lane 0 has the work and every lane takes part.
#include "gfsl/cpu/cuda.hpp"
#include "gfsl/cpu/subject.hpp"

#include "slab_hash_global.cuh"
#include "concurrent_map/cmap_class.cuh"
#include "concurrent_map/warp/delete.cuh"
#include "concurrent_map/warp/insert.cuh"
#include "concurrent_map/warp/search.cuh"

namespace {

using Map = GpuSlabHashContext<std::uint32_t, std::uint32_t, SlabHashTypeT::ConcurrentMap>;
using Slab = ConcurrentMapT<std::uint32_t, std::uint32_t>;
// The allocator's hash, fixed (upstream's owner class draws it from time(0),
// which no replay survives).
constexpr std::uint32_t hash_coef = 0x9E3779B9u;
constexpr std::uint32_t max_warps = 32;

// The table and its allocator, built once (SlabAlloc's 32 super blocks are
// about 1 GiB of address space, mapped on demand) and emptied before each run.
struct table {
  Slab::SlabTypeT* buckets = nullptr;
  std::uint32_t* super_blocks = nullptr;
  AllocatorContextT alloc;
  Map map;

  table() {
    cudaMalloc(&buckets, sizeof(Slab::SlabTypeT));
    cudaMalloc(&super_blocks, std::size_t{AllocatorContextT::SUPER_BLOCK_SIZE_} * AllocatorContextT::num_super_blocks_ * 4);
    alloc.initParameters(super_blocks, hash_coef);
    map.initParameters(1, 0, 0, reinterpret_cast<int8_t*>(buckets), &alloc);
  }
  // An empty bucket; the memory blocks that warps allocate from
  // (initAllocator's choice, SlabAlloc's createMemBlockIndex) all free.
  void reset() {
    cudaMemset(buckets, 0xFF, sizeof(Slab::SlabTypeT));
    for (std::uint32_t warp = 0; warp < max_warps; ++warp) {
      const std::uint32_t super = warp % AllocatorContextT::num_super_blocks_;
      const std::uint32_t resident = (hash_coef * warp) >> (32 - slab_alloc_par::log_num_mem_blocks);
      std::uint32_t* sb = super_blocks + std::size_t{super} * AllocatorContextT::SUPER_BLOCK_SIZE_;
      cudaMemset(sb + resident * AllocatorContextT::BITMAP_SIZE_, 0, AllocatorContextT::BITMAP_SIZE_ * 4);
      cudaMemset(sb + AllocatorContextT::MEM_BLOCK_OFFSET_ + std::size_t{resident} * AllocatorContextT::MEM_BLOCK_SIZE_, 0xFF,
                 std::size_t{AllocatorContextT::MEM_BLOCK_SIZE_} * 4);
    }
  }
  // Every pair stored, read slab by slab along the bucket's chain (a key
  // stored twice is listed twice).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> contents() {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
    const std::uint32_t* slab = reinterpret_cast<const std::uint32_t*>(buckets);
    for (int hops = 0; slab && hops < 1024; ++hops) {
      for (std::uint32_t lane = 0; lane < 32; ++lane) {
        if (((Slab::REGULAR_NODE_KEY_MASK >> lane) & 1u) && slab[lane] != EMPTY_KEY) out.emplace_back(slab[lane], slab[lane + 1]);
      }
      const std::uint32_t next = slab[31];
      slab = next == Slab::EMPTY_INDEX_POINTER ? nullptr : alloc.getPointerFromSlab(next, 0);
    }
    return out;
  }
};

table* the_table = nullptr;

// The lane's allocator context, as batched_operations makes it.
AllocatorContextT lane_allocator() {
  AllocatorContextT ctx(the_table->map.getAllocatorContext());
  std::uint32_t tid = threadIdx.x + blockIdx.x * blockDim.x, lane = threadIdx.x & 0x1F;
  ctx.initAllocator(tid, lane);
  return ctx;
}

}  // namespace

int main(int argc, char** argv) {
  table t;
  the_table = &t;
  gfsl::cpu::structure s;
  s.name = "slabhash_upstream";
  s.summary = "upstream SlabHash's concurrent map (owensgroup/SlabHash, SlabAlloc), one bucket";
  // Set: deleteKey does not return the value it removed, so values are not
  // judged; every fault here is one of presence.
  s.model = "set";
  s.max_key = 1000;
  s.max_warps = max_warps;
  s.reset = [] { the_table->reset(); };
  s.insert = [](std::uint32_t key, std::uint32_t value) {
    AllocatorContextT ctx = lane_allocator();
    const std::uint32_t lane = threadIdx.x & 0x1F;
    bool todo = lane == 0;
    return the_table->map.insertPairUnique(todo, lane, key, value, the_table->map.computeBucket(key), ctx);
  };
  s.erase = [](std::uint32_t key) {
    const std::uint32_t lane = threadIdx.x & 0x1F;
    bool todo = lane == 0;
    return the_table->map.deleteKey(todo, lane, key, the_table->map.computeBucket(key));
  };
  s.find = [](std::uint32_t key, std::uint32_t& value) {
    const std::uint32_t lane = threadIdx.x & 0x1F;
    bool todo = lane == 0;
    value = SEARCH_NOT_FOUND;
    the_table->map.searchKey(todo, lane, key, value, the_table->map.computeBucket(key));
    return value != SEARCH_NOT_FOUND;
  };
  s.contents = [] { return the_table->contents(); };
  s.memory = [] { return std::pair<const void*, std::size_t>(the_table->buckets, sizeof(Slab::SlabTypeT)); };
  return gfsl::cpu::main(argc, argv, s);
}
