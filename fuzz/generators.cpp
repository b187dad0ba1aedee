#include "fuzz/generators.hpp"

#include "fuzz/coverage.hpp"

#include <algorithm>
#include <array>
#include <sstream>

namespace gfsl::fuzz {

std::string run_config::describe() const {
  std::ostringstream s;
  s << backend << " " << w.describe() << " sched=" << sched::name(so.strat) << " depth=" << so.depth
    << " granularity=" << sched::name(so.gran) << " sched-seed=" << so.seed;
  if (so.mem != sched::memory::sc) s << " memory=" << sched::name(so.mem);
  if (so.strat == sched::strategy::park) {
    s << " park-at=" << sched::name(so.park_at) << " park-ops=" << so.park_ops << " park-every=" << so.park_every;
    if (so.park_teams) s << " park-teams=" << so.park_teams;
  }
  if (so.hold.active) s << " hold=" << hold_text(w.subject, so.hold);
  if (so.tear != sched::tear_target::none) s << " tear=" << sched::name(so.tear);
  if (choice.mutated()) s << " mutant=" << mutant_label(w.subject, choice);
  s << " variant=" << variant_label(w.subject, choice);
  if (script) s << " script: " << script->describe();
  return s.str();
}

namespace {
// Small ranges are favoured: they make chunks split, merge and empty often.
rc::Gen<std::uint32_t> gen_range(std::uint32_t max_range) {
  using rc::gen::inRange;
  const std::uint32_t top = std::max<std::uint32_t>(max_range, 2);
  return rc::gen::weightedOneOf<std::uint32_t>({
      {6, inRange<std::uint32_t>(2, std::min<std::uint32_t>(17, top + 1))},
      {4, inRange<std::uint32_t>(2, std::min<std::uint32_t>(201, top + 1))},
      {2, inRange<std::uint32_t>(2, std::min<std::uint32_t>(5001, top + 1))},
      {1, inRange<std::uint32_t>(2, top + 1)},
  });
}
}  // namespace

namespace {

// Swarm testing (Groce et al., ISSTA 2012): each run enables a random subset
// of the operation kinds and one key shape. A run without contains, or
// without inserts, or on hot or sequential keys, makes interleavings (and
// structures) a run with everything mixed in makes too rarely: inserts only
// keep splitting, deletes only keep merging, one hot key keeps every team on
// one chunk.
enum class key_shape : int { uniform, hot_low, hot_spread, sequential };

// Percentages from the enabled kinds' weights (bit 0 insert, 1 delete, 2
// contains); an enabled kind keeps at least 1%.
std::array<int, 3> mix_of(int kinds, std::array<int, 3> weight) {
  std::array<int, 3> pct{};
  int total = 0;
  for (int k = 0; k < 3; ++k) total += (kinds >> k & 1) ? weight[k] : 0;
  int left = 100, last = -1;
  for (int k = 0; k < 3; ++k) {
    if (!(kinds >> k & 1)) continue;
    pct[k] = std::max(1, weight[k] * 100 / total);
    left -= pct[k];
    last = k;
  }
  pct[last] += left;
  return pct;
}

}  // namespace

const char* upper_choice_name(upper_choice c) {
  return c == upper_choice::reraise ? "reraise" : c == upper_choice::mixed ? "mixed" : "thesis";
}
bool parse_upper_choice(const std::string& text, upper_choice& out) {
  for (upper_choice c : {upper_choice::thesis, upper_choice::reraise, upper_choice::mixed}) {
    if (text == upper_choice_name(c)) {
      out = c;
      return true;
    }
  }
  return false;
}

const char* memory_choice_name(memory_choice c) {
  return c == memory_choice::ptx ? "ptx" : c == memory_choice::mixed ? "mixed" : "sc";
}
bool parse_memory_choice(const std::string& text, memory_choice& out) {
  for (memory_choice c : {memory_choice::sc, memory_choice::ptx, memory_choice::mixed}) {
    if (text == memory_choice_name(c)) {
      out = c;
      return true;
    }
  }
  return false;
}
sched::memory memory_of(memory_choice c, std::uint64_t schedule_seed) {
  if (c == memory_choice::mixed) return (model::mix64(schedule_seed) >> 41) % ptx_share_of_mixed == 0 ? sched::memory::ptx : sched::memory::sc;
  return c == memory_choice::ptx ? sched::memory::ptx : sched::memory::sc;
}

rc::Gen<model::workload> gen_workload(const generator_limits& lim) {
  using namespace rc;
  // Kinds: all three in half the runs, each other subset in the rest.
  const auto kinds = gen::weightedOneOf<int>({{6, gen::just(7)}, {1, gen::element(1, 2, 3, 4, 5, 6)}});
  const auto weights = gen::apply([](int i, int d, int c) { return std::array<int, 3>{i, d, c}; }, gen::inRange(1, 61),
                                  gen::inRange(1, 61), gen::inRange(1, 61));
  const auto shape = gen::weightedOneOf<key_shape>({{4, gen::just(key_shape::uniform)},
                                                    {1, gen::element(key_shape::hot_low, key_shape::hot_spread, key_shape::sequential)}});
  return gen::mapcat(gen_range(lim.max_range), [lim, kinds, weights, shape](std::uint32_t range) {
    return gen::apply(
        [range, upper = lim.upper](std::uint64_t ops, std::uint32_t teams, int enabled, std::array<int, 3> weight, double prefill, int chunk,
                double p_chunk, std::uint64_t seed, key_shape keys, std::pair<int, std::uint32_t> hot) {
          model::workload w;
          w.ops = ops;
          w.teams = teams;
          w.range = range;
          const std::array<int, 3> pct = mix_of(enabled, weight);
          w.insert_pct = pct[0];
          w.delete_pct = pct[1];
          w.contains_pct = pct[2];
          // A prefill of a huge range would dwarf the run: at most 2,000 keys.
          w.prefill = prefill * range > 2000.0 ? 2000.0 / range : prefill;
          w.chunk = chunk;
          w.p_chunk = p_chunk;
          w.seed = seed;
          if (keys == key_shape::hot_low || keys == key_shape::hot_spread) {
            w.hot_pct = hot.first;
            w.hot_keys = std::min(hot.second, range);
            w.hot_spread = keys == key_shape::hot_spread;
          }
          w.sequential_keys = keys == key_shape::sequential;
          // From the seed, not a generator of its own: the other fields of a
          // campaign seed's runs stay what they were before the option.
          w.reraise = upper == upper_choice::reraise || (upper == upper_choice::mixed && (model::mix64(seed) >> 17 & 1));
          return w;
        },
        gen::inRange<std::uint64_t>(4, lim.max_ops + 1), gen::inRange<std::uint32_t>(2, lim.max_teams + 1), kinds, weights,
        gen::element(0.0, 0.5, 0.25, 0.9), gen::element(16, 32), gen::element(1.0, 0.5, 0.25),
        gen::inRange<std::uint64_t>(1, 1000000000), shape,
        gen::apply([](int pct, std::uint32_t keys) { return std::pair<int, std::uint32_t>{pct, keys}; }, gen::inRange(50, 96),
                   gen::inRange<std::uint32_t>(1, 9)));
  });
}

rc::Gen<sched::options> gen_schedule(const generator_limits& lim, std::uint64_t ops) {
  using namespace rc;
  auto gran = lim.vary_granularity
                  ? gen::element(sched::granularity::chunk, sched::granularity::line, sched::granularity::lane)
                  : gen::just(lim.granularity);
  return gen::apply(
      [ops, mem = lim.memory](sched::strategy s, int depth, sched::granularity g, std::uint64_t seed, sched::park_point at, std::uint32_t park_ops,
            std::uint32_t park_every, std::uint32_t stale_pct, std::uint64_t stale_seed) {
        sched::options o;
        o.strat = s;
        o.depth = depth;
        o.gran = g;
        o.mem = memory_of(mem, seed);
        o.seed = seed;
        // ptx: the stale choices a dimension of their own, shrinking
        // towards the model's half and the first seed (the arguments come
        // after the others, so that the other fields of a campaign seed's
        // runs are what they were before them).
        if (o.mem == sched::memory::ptx) {
          o.stale_pct = stale_pct;
          o.stale_seed = stale_seed;
        }
        // PCT's k and fair-pct's bound are measured when the run is
        // executed (a dry run of the same workload: fuzz/detectors.hpp): an
        // estimate from the operation count overshoots, and change points
        // past the end of the run are never made.
        o.pct_steps = s == sched::strategy::pct || s == sched::strategy::fair_pct
                          ? 0
                          : std::max<std::uint64_t>(1, ops * (g == sched::granularity::lane ? 200 : 25));
        o.fair_after = 0;
        o.park_at = at;
        o.park_ops = park_ops;
        o.park_every = park_every;
        o.livelock_steps = 500000;
        o.max_steps = 50000000;
        return o;
      },
      gen::element(sched::strategy::random, sched::strategy::fair_pct, sched::strategy::pct, sched::strategy::park),
      gen::inRange(1, 5), gran, gen::inRange<std::uint64_t>(1, 1000000000),
      gen::element(sched::park_point::lock_cas, sched::park_point::after_read, sched::park_point::before_write),
      gen::inRange<std::uint32_t>(1, 4), gen::element<std::uint32_t>(10, 3, 50, 1), gen::element<std::uint32_t>(50, 25, 75, 10, 90),
      gen::inRange<std::uint64_t>(1, 1000000000));
}

namespace {
// SlabHash's runs: the workload as GFSL's generator draws it (kinds, mixes,
// key shapes, small ranges), on 16-lane teams, with few buckets so that keys
// collide and chains grow past one slab (15 pairs), where deletes leave
// holes before later pairs.
rc::Gen<model::workload> gen_subject_workload(const generator_limits& lim) {
  using namespace rc;
  if (const auto fit = subject_of(lim.subject).fit_generated) {
    return gen::map(gen_workload(lim), [fit](model::workload w) {
      fit(w);
      return w;
    });
  }
  if (lim.subject != subject_kind::slabhash) return gen_workload(lim);
  return gen::mapcat(gen_workload(lim), [](model::workload w) {
    return gen::map(gen::element<std::uint32_t>(1, 2, 1, 3, 4, 8, 64), [w](std::uint32_t buckets) {
      model::workload s = w;
      s.subject = subject_kind::slabhash;
      s.chunk = 16;
      s.p_chunk = 1.0;
      s.reraise = false;
      s.buckets = buckets;
      return s;
    });
  });
}
}  // namespace

namespace {
model::operation slab_op(op_kind k, key_type key) { return {k, key, 0}; }

// SlabHash's scenarios: the interleavings of its published faults, written
// down so that a campaign meets them in its first runs and shrinks from a
// handful of operations (docs/FINDINGS.md, "SlabHash"). One bucket; the slab's layout is known
// from the ascending prefill; only team 0 parks, after its first slab reads,
// for the whole operations of the others that make the fault.
//  0 lost insert: team 0's delete(5) reads 5 in pair 1 and parks; team 1
//    deletes 5 and inserts 2, which claims pair 1; team 0's delete empties
//    pair 1 (an exchange) and a completed insert(2) is gone (key 2, below
//    5, is the first key the checker finds not linearizable).
//  1 duplicate (upstream issue 27): team 0's insert(9) reads the slab (no 9,
//    first EMPTY pair 3) and parks; team 1 deletes 1 (a hole at pair 0) and
//    inserts 9 there; team 0 claims pair 3: 9 twice, and after its own
//    delete(9) its contains(9) still finds the other copy.
//  2 insert past a hole (upstream issue 17): keys 1..16 fill slab 0 and
//    start slab 1; delete(1) leaves a hole in slab 0, and insert(16) claims
//    it without looking at slab 1. One team suffices.
run_config slab_scenario(int kind, std::uint64_t seed, const generator_limits& lim, const std::string& backend, const run_config& base) {
  run_config c = base;
  c.backend = backend;
  c.check_every = backend == "host" ? 61 : 0;
  model::script s;
  c.w = model::workload{};
  c.w.subject = subject_kind::slabhash;
  c.w.chunk = 16;
  c.w.buckets = 1;
  c.w.seed = 1 + seed % 1000000000;
  c.so.strat = sched::strategy::park;
  c.so.depth = 1;
  c.so.seed = 1 + (seed >> 20) % 1000000000;
  c.so.gran = lim.vary_granularity ? static_cast<sched::granularity>(seed % 3) : lim.granularity;
  c.so.mem = memory_of(lim.memory, c.so.seed);
  c.so.pct_steps = 1;
  c.so.park_at = sched::park_point::after_read;
  c.so.park_every = 1;
  c.so.park_teams = 1;
  c.so.livelock_steps = 500000;
  c.so.max_steps = 50000000;
  if (kind == 0) {
    for (key_type k : {3, 5, 7}) s.prefill.push_back(slab_op(op_kind::insert, k));
    s.team_ops = {{slab_op(op_kind::remove, 5)},
                  {slab_op(op_kind::remove, 5), slab_op(op_kind::insert, 2), slab_op(op_kind::contains, 2)}};
    c.so.park_ops = 2;
  } else if (kind == 1) {
    for (key_type k = 1; k <= 3; ++k) s.prefill.push_back(slab_op(op_kind::insert, k));
    s.team_ops = {{slab_op(op_kind::insert, 9), slab_op(op_kind::remove, 9), slab_op(op_kind::contains, 9)},
                  {slab_op(op_kind::remove, 1), slab_op(op_kind::insert, 9)}};
    c.so.park_ops = 2;
  } else {
    for (key_type k = 1; k <= 16; ++k) s.prefill.push_back(slab_op(op_kind::insert, k));
    s.team_ops = {{slab_op(op_kind::remove, 1), slab_op(op_kind::insert, 16)}, {slab_op(op_kind::contains, 16)}};
    c.so.park_ops = 1;
  }
  s.number_values();
  c.w.range = 32;
  c.w.insert_pct = 40;
  c.w.delete_pct = 30;
  c.w.contains_pct = 30;
  model::fit_workload(s, c.w);
  c.script = std::move(s);
  return c;
}
}  // namespace

rc::Gen<run_config> gen_run(const generator_limits& lim, const std::string& backend, const run_config& base) {
  using namespace rc;
  if (lim.subject == subject_kind::slabhash && backend == "host") {
    // One run in eight is a scenario (the scheduled host backend's park
    // strategy and listed workloads make them), the rest generated.
    run_config generated_base = base;
    generator_limits generated = lim;
    generated.subject = subject_kind::slabhash;
    return gen::weightedOneOf<run_config>(
        {{7, gen_run_generated(generated, backend, generated_base)},
         {1, gen::map(gen::pair(gen::inRange(0, 3), gen::inRange<std::uint64_t>(0, 1ull << 62)),
                      [lim, backend, base](const std::pair<int, std::uint64_t>& p) { return slab_scenario(p.first, p.second, lim, backend, base); })}});
  }
  return gen_run_generated(lim, backend, base);
}

rc::Gen<run_config> gen_run_generated(const generator_limits& lim, const std::string& backend, const run_config& base) {
  using namespace rc;
  const subject_choice choice = base.choice;
  return gen::mapcat(gen_subject_workload(lim), [lim, backend, choice](model::workload w) {
    return gen::map(gen_schedule(lim, w.ops), [w, backend, choice](sched::options so) {
      run_config c;
      c.backend = backend;
      c.w = w;
      c.so = so;
      c.choice = choice;
      c.check_every = backend == "host" ? 61 : 0;
      return c;
    });
  });
}

}  // namespace gfsl::fuzz
