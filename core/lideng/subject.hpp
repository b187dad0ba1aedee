// Li and Deng's GPU skiplist's descriptor (core/subject.hpp): the skiplist
// of "High Performance Skiplist for GPU Computing" (Microelectronics &
// Computer 31(12), 2014), its variants (core/lideng/layout.hpp), its mutant
// catalog (core/lideng/mutants.hpp), its one parameter (`levels`) and the
// shape its batches need (core/lideng/README.md, "Running it").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../../model/workload.hpp"
#include "../subject.hpp"
#include "layout.hpp"
#include "mutants.hpp"

namespace gfsl::invariants {
struct snapshot;
struct snapshot_report;
}  // namespace gfsl::invariants

namespace gfsl::lideng {

// By variant index: the algorithm's two designs (lideng_variant's values),
// then `mixed`, which runs `fixed` on the operations as drawn, batches of
// mixed kinds included: what the paper does not allow, run to see it fail
// (README.md, "Where the paper's claims stop").
inline constexpr std::string_view variant_names[] = {"published", "fixed", "mixed"};
inline constexpr int mixed_variant = 2;
static_assert(static_cast<int>(lideng_variant::published) == 0 && static_cast<int>(lideng_variant::fixed) == 1);

inline lideng_variant variant_of(int v) { return v == 0 ? lideng_variant::published : lideng_variant::fixed; }
inline lideng_variant variant_of(const subject_choice& c) { return variant_of(c.variant); }
inline bool phase_separated(const subject_choice& c) { return c.variant != mixed_variant; }
inline lideng_mutant mutant_of(int id) { return static_cast<lideng_mutant>(id); }
inline lideng_mutant mutant_of(const subject_choice& c) { return mutant_of(c.mutant); }

inline std::string_view mutant_name_of(int id) { return info(mutant_of(id)).name; }
inline std::optional<int> parse_mutant_name(std::string_view name) {
  const auto m = parse_mutant(name);
  if (!m) return std::nullopt;
  return static_cast<int>(*m);
}

inline std::vector<mutant_entry> mutant_entries() {
  std::vector<mutant_entry> out;
  for (const lideng_mutant_info& m : lideng_mutant_catalog) {
    mutant_entry e;
    e.id = static_cast<int>(m.id);
    e.name = m.name;
    e.backends = "host";
    e.variants = m.variants;
    e.breaks = m.breaks;
    out.push_back(std::move(e));
  }
  return out;
}

// None of the five is equivalent: each breaks a batch of one kind under
// sequentially consistent loads at every read granularity
// (tests/test_lideng.cpp, LiDengMutants.*).
inline std::string_view equivalence(int, int, bool, campaign_memory) { return {}; }

inline bool reraises(int) { return false; }  // heights are drawn per node

inline constexpr std::uint32_t default_levels = 8;

inline constexpr subject_parameter parameters[] = {
    {"levels", "levels of the list, 1 to 14 (0: 8); a node's height is geometric with p = 1/2, capped there",
     static_cast<std::uint32_t>(max_levels), [](const model::workload& w) { return w.levels; },
     [](model::workload& w, std::uint32_t v) { w.levels = v; }, [](const model::workload&) { return default_levels; }},
};

// The host run entry and gfsl run's summary lines (core/lideng/host.cpp),
// and the snapshot invariants in the testbed's report form
// (core/lideng/invariants.cpp).
std::string structure_summary(const host_run& r, const model::workload& w, const subject_choice& c, double ops_done);
host_run run_host(const model::workload& w, host_mode mode, std::uint32_t pool, bool keep_records, const sched::options* so,
                  sched::outcome* outcome, const run_extras& extras);
invariants::snapshot_report check_snapshot(const invariants::snapshot& s, bool quiescent,
                                           const std::vector<std::pair<key_type, value_type>>* expected,
                                           std::size_t max_violations);

// Nodes for `keys` inserts: nodes are never reused, and in `fixed` the
// losers of a key held twice in a batch allocate theirs too, so one per
// insert, plus the head and the tail.
inline std::uint32_t pool_for_keys(double keys, const model::workload&) {
  return static_cast<std::uint32_t>(std::min(keys + first_free_node + 16.0, 4.0e9));
}
// The run's operations are rewritten to batches of one kind (host.cpp), so
// any of them may become an insert.
inline std::uint32_t default_pool(const model::workload& w) {
  return pool_for_keys(static_cast<double>(std::llround(w.prefill * w.range)) + static_cast<double>(w.ops), w);
}

inline std::string check_workload(const model::workload& w) {
  if (w.chunk != node_words) return "chunk must be 16 for lideng (a node is one 128-byte line of 16 words, one per lane)";
  if (w.teams > static_cast<std::uint32_t>(max_batch)) {
    return "teams must be in [1, " + std::to_string(max_batch) + "] for lideng (a batch is one operation of every team, one slot each)";
  }
  if (w.levels < 1 || w.levels > static_cast<std::uint32_t>(max_levels)) {
    return "levels must be in [1, " + std::to_string(max_levels) + "] (forward[] of one 16-word node)";
  }
  if (w.reraise) return "upper=reraise is a gfsl rule; lideng draws each node's height";
  return {};
}

// The fuzzer's workloads: 2 to 16 teams (the batch), 16-lane teams, few
// levels as often as the default, so that short lists have tall nodes.
inline void fit_generated(model::workload& w) {
  w.subject = subject_kind::lideng;
  w.chunk = node_words;
  w.p_chunk = 1.0;
  w.reraise = false;
  w.teams = 2 + (w.teams - 2) % (max_batch - 1);
  w.ops = std::max<std::uint64_t>(w.ops, w.teams);
  constexpr std::uint32_t level_choices[] = {default_levels, 1, 2, 3, 4};
  w.levels = level_choices[model::mix64(w.seed ^ 0x4C69446E67ull) % 5];
}

inline constexpr subject_descriptor descriptor{
    subject_kind::lideng,
    "lideng",
    "Li and Deng's GPU skiplist of phase-separated batches (Microelectronics & Computer 31(12), 2014)",
    "Li and Deng's batch skiplist",
    node_words,
    variant_names,
    static_cast<std::uint8_t>(default_lideng_variant),
    static_cast<std::uint8_t>(default_lideng_variant),
    "fixed, published, mixed",
    &mutant_name_of,
    &parse_mutant_name,
    "no such lideng mutant (gfsl mutants --subject lideng --list)",
    &mutant_entries,
    &equivalence,
    &reraises,
    parameters,
    "lideng reads a node of 16 eight-byte words, one per lane (--chunk does not apply)",
    false,
    &check_snapshot,
    &check_workload,
    &run_host,
    &pool_for_keys,
    &default_pool,
    &structure_summary,
    &fit_generated,
    max_batch,
    true,
};

}  // namespace gfsl::lideng
