// The per-thread baseline of the benchmarks: the lock-free skiplist of
// Herlihy and Shavit (after Fraser) ported to the GPU as Misra and Chaudhuri
// (2012) did, one CUDA thread per operation. It runs the same operations as
// GFSL (model::operation_at) on the same initial structure (bench_workload.hpp),
// so the two can be compared op for op.
//
// Callable from host code compiled without nvcc: no CUDA header here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gfsl::bench {

struct mc_config {
  std::uint32_t range = 1000000;   // keys in [1, range]
  std::uint64_t ops = 10000000;    // timed operations
  int insert_pct = 10, delete_pct = 10, contains_pct = 80;
  double prefill = 0.5;            // fraction of the range inserted before the timed phase
  std::uint64_t seed = 1;
  int threads_per_block = 512;     // thesis: 16 warps per block
  int repeats = 1;                 // timed runs on copies of one prefilled structure
  // Nodes in the pool, the two sentinels included. 0: exactly what the run can
  // need, 2 + prefill keys + insert operations of the timed phase (each insert
  // takes at most one node). A smaller pool makes the run fail cleanly.
  std::uint64_t pool_nodes = 0;
};

struct mc_result {
  bool ok = false; std::string error;  // one line when !ok (pool full, CUDA error, ...)
  std::vector<double> ms;             // CUDA-event time of the timed kernel, one per repeat
  std::uint64_t pool_nodes = 0, nodes_used = 0;
  // Of the timed kernel (no per-operation recording), for threads_per_block.
  int registers = 0; int local_bytes = 0; int blocks_per_sm = 0;
  int max_warps_per_sm = 0;  // of the device: occupancy is blocks_per_sm * threads_per_block / 32 over this
  // The check of the final structure after the last repeat: 0 when its bottom
  // level is strictly sorted and holds exactly prefill + successful inserts -
  // successful deletes unmarked keys; otherwise order violations + broken
  // stretches of the bottom level + |keys found - keys expected|.
  std::uint64_t final_keys_expected_check_failures = 0;
};

mc_result run_mc_skiplist(const mc_config&);

// A self-check on the device: short concurrent and one-thread runs whose every
// answer, or every key's tally where the order of operations is not fixed, is
// checked against the sequential map, plus the repeat restore and a pool too
// small. Empty when OK; otherwise one line.
std::string mc_self_check();

}  // namespace gfsl::bench
