// MVGpuBTree's node (../shared/peers/mvgpubtree/include/node.hpp), as
// shipped, through the layer: its inline PTX comes from the shadow of
// memory_utils.hpp in tests/cuda_on_cpu/mvgpubtree (first on the include
// path), its tiles from the cooperative-groups shadow. One tile of 16 lanes
// per half warp stores a node with release order and loads it back with
// acquire order. Exit 0 when every lane read its own pair back.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cstring>
#include <macros.hpp>
#include <pair_type.hpp>
#include <node.hpp>

namespace cg = cooperative_groups;
using pair_t = pair_type<uint32_t, uint32_t>;

__global__ void round_trip(pair_t* nodes, unsigned* ok) {
  auto tile = cg::tiled_partition<16>(cg::this_thread_block());
  pair_t* mine = nodes + tile.meta_group_rank() * 16;
  btree_node<pair_t, decltype(tile)> node(mine, tile, pair_t{tile.thread_rank() + 1, tile.meta_group_rank()}, false, false);
  node.store(cuda_memory_order::memory_order_release);
  tile.sync();
  btree_node<pair_t, decltype(tile)> back(mine, tile);
  back.load(cuda_memory_order::memory_order_acquire);
  const bool same = mine[tile.thread_rank()].first == tile.thread_rank() + 1 && mine[tile.thread_rank()].second == tile.meta_group_rank();
  atomicAdd(ok, same ? 1u : 0u);
}

int main() {
  pair_t* nodes = nullptr;
  cudaMalloc(&nodes, 4 * 16 * sizeof(pair_t));
  unsigned ok = 0;
  gfsl::cpu::options o;
  o.strategy = "pct";
  o.seed = 3;
  o.memory = "ptx";
  o.memory_base = nodes;
  o.memory_bytes = 4 * 16 * sizeof(pair_t);
  const auto r = gfsl::cpu::launch(o, 1, 64, round_trip, nodes, &ok);
  std::printf("mvgpubtree node through the layer: %s, %u of 64 lanes read their pair back\n", r.ok() ? "ok" : "faulted", ok);
  return r.ok() && ok == 64 ? 0 : 1;
}
