#include "fuzz/scenarios.hpp"

#include <algorithm>
#include <iterator>

namespace gfsl::fuzz {

// Keys 1..400 inserted in ascending order on 16-entry chunks, every split
// raising: level 1 holds every 7th key from 14 and level 2 every 49th from
// 105, and 399 (tests/test_fuzz.cpp checks this against the structure, both
// variants). 399 is left out: it points into the level-1 chunk that begins
// at 350, which still encloses the keys above 399 once it is deleted.
namespace {
const key_type level2_keys[] = {105, 154, 203, 252, 301, 350};
constexpr key_type restart_prefill_keys = 400;
}  // namespace

std::span<const key_type> restart_level2_keys() { return level2_keys; }

run_config directed_run(const generator_limits& lim, mutant m, variant v, team_rng& rng) {
  run_config c;
  c.backend = "host";
  c.mut = m;
  c.var = v;
  c.check_every = 61;
  c.w.chunk = 16;
  c.w.p_chunk = 1.0;
  c.w.seed = 1 + rng.next() % 1000000000;
  model::script s;
  for (key_type k = 1; k <= restart_prefill_keys; ++k) s.prefill.push_back({op_kind::insert, k, 0});
  // The reader looks up keys just above j (they step down at j); the deleter
  // first does one short operation, so that the reader's park can fall on
  // either side of the delete.
  const key_type j = level2_keys[rng.next() % std::size(level2_keys)];
  s.team_ops.resize(2);
  for (key_type k = j + 1; k <= j + 4; ++k) s.team_ops[0].push_back({op_kind::contains, k, 0});
  s.team_ops[1].push_back({op_kind::contains, 1, 0});
  s.team_ops[1].push_back({op_kind::remove, j, 0});
  s.number_values();
  c.w.range = restart_prefill_keys;
  c.w.insert_pct = 0;
  c.w.delete_pct = 10;
  c.w.contains_pct = 90;
  model::fit_workload(s, c.w);
  c.script = std::move(s);
  c.so.strat = sched::strategy::park;
  c.so.park_at = sched::park_point::after_read;
  c.so.park_ops = 1;
  c.so.park_every = 2 + static_cast<std::uint32_t>(rng.next() % 3);
  c.so.depth = 1;
  c.so.seed = 1 + rng.next() % 1000000000;
  static constexpr sched::granularity grans[] = {sched::granularity::chunk, sched::granularity::line, sched::granularity::lane};
  c.so.gran = lim.vary_granularity ? grans[rng.next() % 3] : lim.granularity;
  c.so.pct_steps = 1;
  c.so.livelock_steps = 500000;
  c.so.max_steps = 50000000;
  return c;
}

}  // namespace gfsl::fuzz
