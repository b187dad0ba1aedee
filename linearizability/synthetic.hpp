// Histories that are linearizable by construction, for benchmarks and tests:
// teams run operations back to back, each operation gets an interval, a point
// is drawn inside every interval, and the answers are those of the sequential
// map applied in the order of the points. Nothing here runs GFSL.
#pragma once

#include <cstdint>
#include <vector>

#include "model/history.hpp"

namespace gfsl::lin {

struct synthetic_options {
  std::uint64_t ops = 1000000;      // operations after the prefill, over all teams
  std::uint32_t keys = 1000;        // keys uniform in [1, keys]
  double prefill = 0.5;             // fraction of the keys inserted first, one at a time
  int insert_pct = 10;              // the rest of the mix is contains
  int delete_pct = 10;
  std::uint32_t teams = 64;         // operations in flight at once
  std::uint64_t max_duration = 64;  // an interval lasts 1..max_duration stamps
  std::uint64_t max_gap = 4;        // a team waits 1..max_gap stamps between operations
  std::uint32_t pending = 0;        // this many teams leave their last operation pending
  std::uint64_t seed = 1;
};

// Records team by team (as the threads backend writes them), prefill first.
// A pending operation took effect or not, at random.
std::vector<model::op_record> synthetic_history(const synthetic_options& o);

}  // namespace gfsl::lin
