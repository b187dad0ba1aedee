// A workload: what a run does, independent of the backend that executes it.
// Operation j of a run is a pure function of (workload, j), so every backend
// (sequential, OS threads, CUDA) executes the same operations, and the same
// seed gives the same workload anywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../core/platform.hpp"
#include "../core/subject.hpp"
#include "../core/types.hpp"
#include "sequential_map.hpp"

namespace gfsl::model {

// SlabHash's bucket count bound: the base slabs are allocated up front.
inline constexpr std::uint32_t max_buckets = 1u << 24;

struct workload {
  std::uint64_t ops = 100000;       // operations in the concurrent phase, over all teams
  int insert_pct = 10;              // the thesis' [i, d, c] mix
  int delete_pct = 10;
  int contains_pct = 80;
  std::uint32_t range = 100000;     // keys uniform in [1, range]
  double prefill = 0.5;             // fraction of the range inserted before the concurrent phase (thesis 5.1)
  std::uint32_t teams = 1;
  int chunk = 32;                   // N: 16 or 32 (8 on the host backends: core/gfsl/layout.hpp)
  double p_chunk = 1.0;             // thesis 5.2: p_chunk ~ 1 gave the best results
  std::uint64_t seed = 1;
  // Hot keys: hot_pct percent of the operations pick their key uniformly
  // from [1, hot_keys] instead of [1, range] (0: uniform over the range).
  std::uint32_t hot_keys = 0;
  int hot_pct = 0;
  // The hot keys scattered over the range (drawn from the seed) instead of
  // [1, hot_keys]: keys low in the range sit in the first chunks and are
  // never raised, scattered ones land anywhere, upper levels included.
  bool hot_spread = false;
  // Sequential keys: operation j that is not hot uses key 1 + j mod range, so
  // each team walks the keys upwards from where its share of the operations
  // starts (ascending inserts split the last chunk of a run of keys over and
  // over, a shape uniform keys never make).
  bool sequential_keys = false;
  // The upper levels' rule: false is the thesis' (a delete removes a raised
  // key and nothing takes its place, so upper levels drain under churn);
  // true re-raises the next key of the deleted key's level-0 chunk in its
  // place (docs/ALGORITHM.md, "Re-raising on delete").
  bool reraise = false;
  // The structure under test (core/subject.hpp) and its parameters beyond
  // `chunk`: SlabHash's bucket count (its team is 16 lanes, one per 8-byte
  // word of a 128-byte slab, so `chunk` is 16 for it).
  subject_kind subject = default_subject;
  std::uint32_t buckets = 0;
  // Li and Deng's skiplist's levels (core/lideng/layout.hpp), 0 for the others.
  std::uint32_t levels = 0;

  // One line naming every field, e.g. for a replay string.
  std::string describe() const;
  // Empty when valid; otherwise one line naming the bad field.
  std::string validate() const;
};

// splitmix64 finaliser: the stateless hash that turns (seed, index) into an operation.
GFSL_FN constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Operation j (0-based) of the concurrent phase. Inline so that the device
// generates the same operations as the host.
GFSL_FN operation operation_at(const workload& w, std::uint64_t j) {
  const std::uint64_t h1 = mix64(w.seed * 0x9E3779B97F4A7C15ull + 2 * j + 1);
  const std::uint64_t h2 = mix64(h1 ^ 0xA0761D6478BD642Full);
  operation op;
  const int pct = static_cast<int>(h1 % 100);
  op.kind = pct < w.insert_pct ? op_kind::insert : pct < w.insert_pct + w.delete_pct ? op_kind::remove : op_kind::contains;
  const bool hot = w.hot_keys != 0 && static_cast<int>((h2 >> 40) % 100) < w.hot_pct;
  const std::uint64_t pick = hot ? (h1 >> 8) % w.hot_keys : w.sequential_keys ? j % w.range : (h1 >> 8) % w.range;
  op.key = static_cast<key_type>(hot && w.hot_spread ? 1 + mix64(w.seed ^ (0xD1B54A32D192ED03ull * (pick + 1))) % w.range
                                                     : 1 + pick);
  op.value = op.kind == op_kind::insert ? static_cast<value_type>(h2) : 0;
  return op;
}

// First operation of `count` dealt to team t of `teams` in contiguous blocks,
// as evenly as possible; team t runs [first(t), first(t+1)). (The CPU
// backends and the GPU prefill deal this way; the GPU's concurrent phase
// hands out batches from one cursor, exec/cuda/device_runner.cuh.)
GFSL_FN std::uint64_t block_first(std::uint64_t count, std::uint32_t teams, std::uint32_t t) {
  const std::uint64_t base = count / teams, extra = count % teams;
  return t * base + (t < extra ? t : extra);
}
GFSL_FN std::uint64_t team_first_op(const workload& w, std::uint32_t t) { return block_first(w.ops, w.teams, t); }

// The prefill: round(prefill * range) distinct keys, a uniform random subset of
// the range in random order, each with its value.
std::vector<operation> prefill_operations(const workload& w);

}  // namespace gfsl::model
