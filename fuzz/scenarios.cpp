#include "fuzz/scenarios.hpp"

#include "core/coverage.hpp"

#include "core/gfsl/types.hpp"
#include <algorithm>
#include <iterator>
#include <span>
#include <vector>

namespace gfsl::fuzz {

namespace {

// Keys 1..400 inserted in ascending order on 16-entry chunks, every split
// raising: level 1 holds every 7th key and level 2 every 49th
// (tests/test_fuzz.cpp checks this against the structure, both variants).
// thesis raises the key whose insert split the chunk (here always its
// largest): level 2 holds 105, 154, .., 350 and 399. 399 is left out: it
// points into the level-1 chunk that begins at 350, which still encloses
// the keys above 399 once it is deleted. robust raises the fresh chunk's
// minimum: level 2 holds 49, 98, .., 343, each the first key of the
// level-1 chunk it points to.
const key_type level2_keys_thesis[] = {105, 154, 203, 252, 301, 350};
const key_type level2_keys_robust[] = {49, 98, 147, 196, 245, 294, 343};
constexpr key_type restart_prefill_keys = 400;

// zombie_next: 10, 20, .., 350 ascending. Level 0 is then the head chunk
// (-inf, 10..60) and chunks of seven keys 70..130, 140..200, 210..270, ...;
// region r (1..3) is the chunk of the keys 70r .. 70r + 60 (checked by
// tests/test_fuzz.cpp).
constexpr int zombie_regions = 3;
constexpr int victims_per_region = 3;
constexpr key_type region_step = 70;
constexpr key_type zombie_prefill_top = 350;

// stale_upper_key: 1..1200 ascending. Its level-2 chunks, without the two
// keys that are also in level 3 (thesis: 742 and 1085; robust: 343 and
// 686; tests/test_fuzz.cpp checks the layouts).
const std::vector<std::vector<key_type>> stale_level2_chunks_thesis = {
    {105, 154, 203, 252, 301, 350},
    {399, 448, 497, 546, 595, 644, 693},
    {791, 840, 889, 938, 987, 1036, 1134, 1183},
};
const std::vector<std::vector<key_type>> stale_level2_chunks_robust = {
    {49, 98, 147, 196, 245, 294},
    {392, 441, 490, 539, 588, 637},
    {735, 784, 833, 882, 931, 980, 1029, 1078, 1127},
};
constexpr key_type stale_prefill_keys = 1200;
constexpr int stale_victims = 3;

// raise_race: 1..202 ascending. robust's layout (tests/test_fuzz.cpp
// checks it): the last level-0 chunk holds 189..202 and the last level-1
// chunk 98, 105, .., 189, both full; level 2 holds 49 and 98. Inserting
// 203 splits level 0 and raises 196 (the fresh chunk's minimum), which
// splits level 1 and raises 147, the minimum of its fresh chunk, to level
// 2. The deleter removes one of them meanwhile: 147 (in level 1 already,
// raised to level 2 by the other team's split of level 1) or 196 (raised
// to level 1 under the fresh level-0 chunk's lock).
constexpr key_type race_prefill_keys = 202;
constexpr key_type race_insert = 203;
constexpr key_type race_victims[] = {147, 196};

// validation_tear: keys 1..202 ascending (the raise_race layout, checked
// by tests/test_fuzz.cpp). Level-0 chunks begin at the multiples of 7; the
// regions of the level-0 shape are the chunks 7m .. 7m+6 for m in 2..25,
// whose keys 7m+1 and 7m+2 the writers shift the others with. The upper
// shape aims at level 1's last chunk, 98 .. 189, and the level-0 chunk past
// it, 189 .. 202, full, which the insert of 203 splits.
constexpr key_type tear_prefill_keys = 202;
constexpr key_type tear_chunk_keys = 12;
constexpr key_type tear_level1_first = 98, tear_level1_last = 189;

template <class T>
void shuffle(std::vector<T>& v, team_rng& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.next() % i]);
}

template <class T, std::size_t K>
T pick(const T (&from)[K], team_rng& rng) {
  return from[rng.next() % K];
}
template <class T>
T pick(std::span<const T> from, team_rng& rng) {
  return from[rng.next() % from.size()];
}

model::operation op(op_kind k, key_type key) { return {k, key, 0}; }

run_config base_run(const generator_limits& lim, mutant m, variant v, team_rng& rng, bool torn_reads) {
  run_config c;
  c.backend = "host";
  c.choice = gfsl_subject::choice_of(v, m);
  c.check_every = 61;
  c.w.chunk = 16;
  c.w.p_chunk = 1.0;
  c.w.seed = 1 + rng.next() % 1000000000;
  c.so.strat = sched::strategy::park;
  c.so.depth = 1;
  c.so.seed = 1 + rng.next() % 1000000000;
  static constexpr sched::granularity grans[] = {sched::granularity::chunk, sched::granularity::line, sched::granularity::lane};
  c.so.gran = !lim.vary_granularity ? lim.granularity : torn_reads ? sched::granularity::lane : pick(grans, rng);
  c.so.pct_steps = 1;
  c.so.mem = memory_of(lim.memory, c.so.seed);
  c.so.livelock_steps = 500000;
  c.so.max_steps = 50000000;
  return c;
}

void finish(run_config& c, model::script s, key_type range) {
  s.number_values();
  c.w.range = range;
  c.w.insert_pct = 0;
  c.w.delete_pct = 10;
  c.w.contains_pct = 90;
  model::fit_workload(s, c.w);
  c.script = std::move(s);
}

run_config restart_run(const generator_limits& lim, mutant m, variant v, team_rng& rng) {
  run_config c = base_run(lim, m, v, rng, false);
  model::script s;
  for (key_type k = 1; k <= restart_prefill_keys; ++k) s.prefill.push_back(op(op_kind::insert, k));
  // The reader looks up keys just above j (they step down at j); the deleter
  // first does one short operation, so that the reader's park can fall on
  // either side of the delete.
  const key_type j = pick(restart_level2_keys(v), rng);
  s.team_ops.resize(2);
  for (key_type k = j + 1; k <= j + 4; ++k) s.team_ops[0].push_back(op(op_kind::contains, k));
  s.team_ops[1].push_back(op(op_kind::contains, 1));
  s.team_ops[1].push_back(op(op_kind::remove, j));
  c.so.park_at = sched::park_point::after_read;
  c.so.park_ops = 1;
  c.so.park_every = 2 + static_cast<std::uint32_t>(rng.next() % 3);
  if (lim.targeted_parks) {
    // The reader's step down into the level-1 chunk that j begins is its
    // second (from level 3, or from level 2's head chunk) or third: held
    // there until the delete of j, which removes j from that chunk, has
    // completed, it reads a chunk whose keys are all above the one sought.
    c.so.hold.active = true;
    c.so.hold.window = static_cast<std::uint8_t>(gfsl_window::step_down);
    c.so.hold.effect = static_cast<std::uint8_t>(gfsl_effect::remove);
    c.so.hold.nth = 1 + static_cast<std::uint32_t>(rng.next() % 3);
    c.so.hold.team = 0;
  }
  finish(c, std::move(s), restart_prefill_keys);
  return c;
}

// unlink_split: keys 10..350 as in zombie_next, so level 0 holds the head
// chunk (-inf, 10..60), then A = 70..130, X = 140..200, Y = 210..270, ....
// Team 1 deletes four keys of X: the fourth finds X at the merge threshold
// and merges it into Y. Team 2 inserts eight keys of A's range: the eighth
// overflows A and splits it (after a few lookups, so that the split comes
// after the merge in most runs; in a third of the runs it deletes four keys
// of A instead, which merges A). Team 0 deletes keys of Y's range that are not
// there, walking H -> A -> X; once X is a zombie it unlinks it with A as
// predecessor, and is held there until team 2's split (or merge) of A has
// completed.
run_config unlink_split_run(const generator_limits& lim, mutant m, variant v, team_rng& rng) {
  run_config c = base_run(lim, m, v, rng, false);
  c.so.strat = sched::strategy::random;
  c.w.p_chunk = 0;
  model::script s;
  for (key_type k = 10; k <= zombie_prefill_top; k += 10) s.prefill.push_back(op(op_kind::insert, k));
  s.team_ops.resize(3);
  // Deletes of keys that are not there: an update's search unlinks the
  // zombies it passes (a lookup's only steps over them).
  for (int i = 0; i < 10; ++i) s.team_ops[0].push_back(op(op_kind::remove, 181 + static_cast<key_type>(rng.next() % 9)));
  model::operation_list merge = {op(op_kind::remove, 140), op(op_kind::remove, 150), op(op_kind::remove, 160), op(op_kind::remove, 170)};
  shuffle(merge, rng);
  s.team_ops[1] = merge;
  for (key_type k = 71; k <= 78; ++k) s.team_ops[2].push_back(op(op_kind::insert, k));
  shuffle(s.team_ops[2], rng);
  // Lookups first put the split after the merge in most runs.
  const int lead = 2 + static_cast<int>(rng.next() % 6);
  for (int i = 0; i < lead; ++i) s.team_ops[2].insert(s.team_ops[2].begin(), op(op_kind::contains, 10 * (1 + static_cast<key_type>(rng.next() % 6))));
  // In a third of the runs team 2 empties A instead, down to the merge
  // threshold, and merges it into Y (past the zombie X): the pair unlink x
  // merge, where the unlinker's try-lock finds A a zombie.
  const bool merge_a = rng.next() % 3 == 0;
  if (merge_a) {
    const int kept_lead = lead;
    s.team_ops[2].resize(static_cast<std::size_t>(kept_lead));
    for (key_type k : {70, 80, 90, 100}) s.team_ops[2].push_back(op(op_kind::remove, k));
  }
  if (lim.targeted_parks) {
    c.so.hold.active = true;
    c.so.hold.window = static_cast<std::uint8_t>(gfsl_window::unlink);
    c.so.hold.effect = static_cast<std::uint8_t>(merge_a ? gfsl_effect::merge : gfsl_effect::split);
    c.so.hold.nth = 1;
    c.so.hold.team = 0;
  }
  finish(c, std::move(s), zombie_prefill_top + region_step);
  return c;
}

run_config zombie_next_run(const generator_limits& lim, mutant m, variant v, team_rng& rng) {
  run_config c = base_run(lim, m, v, rng, true);
  model::script s;
  for (key_type k = 10; k <= zombie_prefill_top; k += 10) s.prefill.push_back(op(op_kind::insert, k));
  std::vector<model::operation_list> victims, churn;
  for (int r = 1; r <= zombie_regions; ++r) {
    const key_type b = region_step * static_cast<key_type>(r);  // the chunk holds b, b+10, .., b+60
    // Seven inserts fill the chunk (14 keys), the eighth splits it: the
    // upper seven (b+30 .. b+60) move to a new chunk F, eight stay. Five
    // deletes of the lower keys then leave four, and the fifth merges the
    // chunk into F.
    model::operation_list fill;
    for (key_type d : {1, 11, 21, 31, 41, 51, 5}) fill.push_back(op(op_kind::insert, b + d));
    shuffle(fill, rng);
    fill.push_back(op(op_kind::insert, b + 15));
    for (key_type d : {0, 1, 5, 10, 11}) fill.push_back(op(op_kind::remove, b + d));
    churn.push_back(std::move(fill));
    // The victims insert keys of F's range, which they reach through the
    // chunk that splits and merges.
    std::vector<key_type> keys;
    for (key_type d = 32; d < 60; ++d) {
      if (d % 10 != 0 && d % 10 != 1 && d % 10 != 5) keys.push_back(b + d);
    }
    shuffle(keys, rng);
    for (int i = 0; i < victims_per_region; ++i) victims.push_back({op(op_kind::insert, keys[static_cast<std::size_t>(i)])});
  }
  shuffle(victims, rng);
  s.team_ops = victims;
  s.team_ops.insert(s.team_ops.end(), churn.begin(), churn.end());
  // A victim parks in one of its reads, about the fourth or fifth; for as
  // long as the other teams take to do everything, so that a chunk it was
  // reading can split and merge meanwhile.
  static constexpr std::uint32_t every[] = {30, 45, 60};
  c.so.park_at = sched::park_point::mid_read;
  c.so.park_teams = static_cast<std::uint32_t>(victims.size());
  c.so.park_ops = static_cast<std::uint32_t>(churn.size() * churn.front().size());
  c.so.park_every = pick(every, rng);
  finish(c, std::move(s), zombie_prefill_top + region_step);
  return c;
}

run_config stale_upper_key_run(const generator_limits& lim, mutant m, variant v, team_rng& rng) {
  run_config c = base_run(lim, m, v, rng, true);
  model::script s;
  for (key_type k = 1; k <= stale_prefill_keys; ++k) s.prefill.push_back(op(op_kind::insert, k));
  std::vector<key_type> aimed;
  model::operation_list lookups;
  std::vector<model::operation_list> shifters;
  for (const auto& chunk : stale_upper_level2_chunks(v)) {
    shifters.push_back({op(op_kind::remove, chunk[0]), op(op_kind::remove, chunk[1])});
    aimed.insert(aimed.end(), chunk.begin() + 2, chunk.end());
  }
  for (key_type j : aimed) lookups.push_back(op(op_kind::contains, j + 1));
  shuffle(aimed, rng);
  // Each victim deletes its share of the aimed keys, then, in half the runs,
  // looks up the key above every aimed one: the lookup that meets a key left
  // stale at level 2 never returns (mechanism 3, a hang). Without the
  // lookups the stale key is what the run leaves (mechanism 2,
  // level-subset).
  const bool look_up = rng.next() % 2 == 0;
  for (int t = 0; t < stale_victims; ++t) {
    model::operation_list ops;
    for (std::size_t i = static_cast<std::size_t>(t); i < aimed.size(); i += stale_victims) ops.push_back(op(op_kind::remove, aimed[i]));
    if (look_up) ops.insert(ops.end(), lookups.begin(), lookups.end());
    s.team_ops.push_back(std::move(ops));
  }
  s.team_ops.insert(s.team_ops.end(), shifters.begin(), shifters.end());
  static constexpr std::uint32_t every[] = {40, 60, 90};
  c.so.park_at = sched::park_point::mid_read;
  c.so.park_teams = stale_victims;
  c.so.park_ops = 1 + static_cast<std::uint32_t>(rng.next() % 3);
  c.so.park_every = pick(every, rng);
  // A search's restarts complete nothing: 100,000 points without a
  // completed operation is a hang here (an operation takes about 2,000).
  c.so.livelock_steps = 100000;
  finish(c, std::move(s), stale_prefill_keys);
  return c;
}

run_config raise_race_run(const generator_limits& lim, mutant m, variant v, team_rng& rng) {
  run_config c = base_run(lim, m, v, rng, false);
  c.so.strat = sched::strategy::random;
  model::script s;
  for (key_type k = 1; k <= race_prefill_keys; ++k) s.prefill.push_back(op(op_kind::insert, k));
  s.team_ops.resize(2);
  s.team_ops[0].push_back(op(op_kind::insert, race_insert));
  // Up to three lookups first move the delete's start against the raise.
  const int lead = static_cast<int>(rng.next() % 4);
  for (int i = 0; i < lead; ++i) s.team_ops[1].push_back(op(op_kind::contains, 1 + rng.next() % race_prefill_keys));
  s.team_ops[1].push_back(op(op_kind::remove, pick(race_victims, rng)));
  finish(c, std::move(s), race_insert);
  return c;
}

run_config validation_tear_run(const generator_limits& lim, mutant m, variant v, team_rng& rng) {
  run_config c = base_run(lim, m, v, rng, true);
  model::script s;
  std::vector<model::operation_list> victims, writers;
  key_type range = tear_prefill_keys + 2;
  if (rng.next() % 3 != 0) {
    // Level 0: one chunk, keys 1..tear_chunk_keys (the head chunk, with
    // -inf: a search reads the header and this chunk, so that most of the
    // victim's parks fall in the read that decides). A victim looks up
    // the keys above 2 (and, in half the runs, deletes one); a writer
    // deletes and re-inserts 1 and 2, each operation a shift of them all.
    for (key_type k = 1; k <= tear_chunk_keys; ++k) s.prefill.push_back(op(op_kind::insert, k));
    range = tear_chunk_keys;
    model::operation_list victim;
    for (int twice = 0; twice < 2; ++twice) {
      for (key_type k = 3; k <= tear_chunk_keys; ++k) victim.push_back(op(op_kind::contains, k));
    }
    shuffle(victim, rng);
    if (rng.next() % 2 == 0) victim.push_back(op(op_kind::remove, 3 + rng.next() % (tear_chunk_keys - 2)));
    victims.push_back(std::move(victim));
    model::operation_list writer;
    for (int round = 0; round < 10; ++round) {
      for (key_type k : {1, 2}) {
        writer.push_back(op(op_kind::remove, k));
        writer.push_back(op(op_kind::insert, k));
      }
    }
    writers.push_back(std::move(writer));
  } else {
    // Above: level 1's last chunk holds the multiples of 7 from 98 to 189.
    // Two victims delete upper ones (each delete looks for its key in level
    // 1, a validated read when the first read misses it, and in level 2, a
    // validated "not here"); a third inserts past 202, which splits the
    // full level-0 chunk 189..202, raises its fresh minimum into the full
    // level-1 chunk, splits that too and repoints the down pointers of the
    // keys it moved (validated reads of levels 1 and 2); a writer deletes
    // lower ones, each a shift of the level-1 chunk the others read.
    for (key_type k = 1; k <= tear_prefill_keys; ++k) s.prefill.push_back(op(op_kind::insert, k));
    std::vector<key_type> upper, lower;
    for (key_type k = tear_level1_first + 7; k < tear_level1_last; k += 7) (k >= 147 ? upper : lower).push_back(k);
    shuffle(upper, rng);
    shuffle(lower, rng);
    for (int i = 0; i < 2; ++i) victims.push_back({op(op_kind::remove, upper[static_cast<std::size_t>(i)])});
    victims.push_back({op(op_kind::insert, tear_prefill_keys + 1), op(op_kind::insert, tear_prefill_keys + 2)});
    writers.push_back({op(op_kind::remove, lower[0]), op(op_kind::remove, lower[1]), op(op_kind::remove, lower[2])});
  }
  s.team_ops = victims;
  s.team_ops.insert(s.team_ops.end(), writers.begin(), writers.end());
  // One park in 16 or 32 points: a victim's read is parked about halfway
  // through, where both lanes of a shifted key are as likely loaded as not
  // (of 600 runs, half of them at level 0, against
  // validation-lock-from-reread: 19 failed at 16, 17 at 32, 14 at 8, 1 at
  // 4, none at 2).
  static constexpr std::uint32_t every[] = {16, 32};
  c.so.park_at = sched::park_point::mid_read;
  c.so.park_teams = static_cast<std::uint32_t>(victims.size());
  c.so.park_ops = 1;
  c.so.park_every = pick(every, rng);
  c.so.tear = sched::tear_target::validation;
  finish(c, std::move(s), range);
  return c;
}

}  // namespace

const char* name(scenario s) {
  switch (s) {
    case scenario::restart: return "restart";
    case scenario::zombie_next: return "zombie-next";
    case scenario::stale_upper_key: return "stale-upper-key";
    case scenario::raise_race: return "raise-race";
    case scenario::unlink_split: return "unlink-split";
    case scenario::validation_tear: return "validation-tear";
  }
  return "?";
}

std::vector<scenario> directed_runs_of(const generator_limits& lim, variant v) {
  if (lim.subject != subject_kind::gfsl) return {};  // the scenarios are GFSL's shapes (chunks, levels, zombies)
  std::vector<scenario> kinds = {scenario::restart, scenario::raise_race};
  if (lim.targeted_parks) kinds.push_back(scenario::unlink_split);
  if (lim.vary_granularity || lim.granularity == sched::granularity::lane) {
    for (int twice = 0; twice < 2; ++twice) {
      kinds.push_back(scenario::zombie_next);
      kinds.push_back(scenario::stale_upper_key);
      // Twice each time: one run in 25 or so fails on a faulty validation,
      // and a run takes about 10 ms.
      if (lim.validation_tears && v == variant::robust) kinds.insert(kinds.end(), 2, scenario::validation_tear);
    }
  }
  return kinds;
}

std::span<const key_type> restart_level2_keys(variant v) {
  if (v == variant::robust) return level2_keys_robust;
  return level2_keys_thesis;
}
std::span<const std::vector<key_type>> stale_upper_level2_chunks(variant v) {
  if (v == variant::robust) return stale_level2_chunks_robust;
  return stale_level2_chunks_thesis;
}

std::vector<scenario> directed_runs_of(const generator_limits& lim, const subject_choice& c) {
  return directed_runs_of(lim, gfsl_subject::variant_of(c));
}

run_config directed_run(scenario s, const generator_limits& lim, const subject_choice& c, team_rng& rng) {
  return directed_run(s, lim, gfsl_subject::mutant_of(c), gfsl_subject::variant_of(c), rng);
}

run_config directed_run(scenario s, const generator_limits& lim, mutant m, variant v, team_rng& rng) {
  switch (s) {
    case scenario::restart: return restart_run(lim, m, v, rng);
    case scenario::zombie_next: return zombie_next_run(lim, m, v, rng);
    case scenario::stale_upper_key: return stale_upper_key_run(lim, m, v, rng);
    case scenario::raise_race: return raise_race_run(lim, m, v, rng);
    case scenario::unlink_split: return unlink_split_run(lim, m, v, rng);
    case scenario::validation_tear: return validation_tear_run(lim, m, v, rng);
  }
  return restart_run(lim, m, v, rng);
}

}  // namespace gfsl::fuzz
