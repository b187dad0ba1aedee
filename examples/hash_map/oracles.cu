// The checker-free oracles of gfsl/oracles.cuh on the example's map (map.cuh):
// stable keys, owned keys with shared churn keys, publication, and the
// final-state accounting of each; every answer judged on the device, no
// trace, no checker. Exit 0: no violation.
//   ./build/oracles [tiles] [operations per tile] [rounds]
#include <gfsl/oracles.cuh>

#include "map.cuh"

#include <cstdio>
#include <cstdlib>

namespace o = gfsl::oracles;

// Your kernel: the tile, your handle, and your three calls.
__global__ void oracles(map_ref m, o::launch l) {
  const auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  o::run(tile, m, l,
         [](auto& t, map_ref& m, unsigned k, unsigned v) { unsigned out; return m.apply(t, op::insert, k, v, out); },
         [](auto& t, map_ref& m, unsigned k) { unsigned out; return m.apply(t, op::erase, k, 0, out); },
         // find, and the window it read: a violation report prints it
         [](auto& t, map_ref& m, unsigned k, unsigned& v, o::seen& s) { s.count = 8; return m.apply(t, op::find, k, 0, v, s.words); });
}

int main(int argc, char** argv) {
  const unsigned tiles = argc > 1 ? std::atoi(argv[1]) : 4096, ops = argc > 2 ? std::atoi(argv[2]) : 4096;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 4;
  int failed = 0;
  for (o::kind kind : {o::kind::stable_keys, o::kind::owned_keys, o::kind::publication}) {
    o::config c;
    c.oracle = kind, c.tiles = tiles, c.ops_per_tile = ops;
    c.per_tile = 4, c.churn = 64;  // owned keys: 4 a tile, and 64 keys every tile races on
    o::harness h(c);
    map_ref m{nullptr, 4 * h.span() + 64};  // a claimed slot is its key's for good: room for every key
    cudaMalloc(&m.slots, m.capacity * sizeof(unsigned long long));
    for (int r = 0; r < rounds; ++r) {
      cudaMemset(m.slots, 0xFF, m.capacity * sizeof(unsigned long long));  // a fresh, empty map each round
      if (!h.round([&](const o::launch& l) { oracles<<<(tiles * 8 + 255) / 256, 256>>>(m, l); })) {
        h.print(stdout, "hash_map");  // a hang: the kernel cannot be stopped, so end here
        std::fflush(stdout);
        std::_Exit(1);
      }
    }
    h.print(stdout, "hash_map");
    failed |= !h.clean();
    cudaFree(m.slots);
  }
  return failed;
}
