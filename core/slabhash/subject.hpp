// SlabHash's descriptor (core/subject.hpp): the warp-cooperative slab-list
// hash table of Ashkiani et al. (IPDPS 2018), its variants
// (core/slabhash/layout.hpp) and its mutant catalog (core/slabhash/mutants.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../../model/workload.hpp"
#include "../subject.hpp"
#include "coverage.hpp"
#include "layout.hpp"
#include "mutants.hpp"

namespace gfsl::slabhash {

// By variant index: the enum's values (core/slabhash/layout.hpp).
inline constexpr std::string_view variant_names[] = {"published", "fixed"};
static_assert(static_cast<int>(slab_variant::published) == 0 && static_cast<int>(slab_variant::fixed) == 1);

inline slab_variant variant_of(int v) { return v == 0 ? slab_variant::published : slab_variant::fixed; }
inline slab_mutant mutant_of(int id) { return static_cast<slab_mutant>(id); }
inline slab_variant variant_of(const subject_choice& c) { return variant_of(c.variant); }
inline slab_mutant mutant_of(const subject_choice& c) { return mutant_of(c.mutant); }
inline subject_choice choice_of(slab_variant v, slab_mutant m = slab_mutant::none) {
  return {static_cast<std::uint8_t>(v), static_cast<std::uint8_t>(m)};
}

inline std::string_view mutant_name_of(int id) { return info(mutant_of(id)).name; }
// Catalog names and "none".
inline std::optional<int> parse_mutant_name(std::string_view name) {
  const auto m = parse_mutant(name);
  if (!m) return std::nullopt;
  return static_cast<int>(*m);
}

inline std::vector<mutant_entry> mutant_entries() {
  std::vector<mutant_entry> out;
  for (int i = 1; i < static_cast<int>(slab_mutant::count_); ++i) {
    const slab_mutant_info& m = info(static_cast<slab_mutant>(i));
    mutant_entry e;
    e.id = i;
    e.name = m.name;
    e.backends = "host,cuda";
    e.variants = m.variants;
    e.breaks = m.breaks;
    if (!m.equivalent.empty()) e.notes = " (equivalent on the CPU)";
    out.push_back(std::move(e));
  }
  return out;
}

// SlabHash's equivalent mutants weaken an order the CPU's sequentially
// consistent memory gives anyway (core/slabhash/mutants.hpp), whatever the
// variant and read granularity: only campaigns all under ptx judge them
// (mixed ones keep them equivalent).
inline std::string_view equivalence(int id, int, bool, campaign_memory memory) {
  return memory == campaign_memory::ptx ? std::string_view() : info(mutant_of(id)).equivalent;
}

inline bool reraises(int) { return false; }  // no upper levels

// About 20 keys of the range per bucket, so that a full range makes chains
// of two slabs (docs/SUBJECTS.md).
inline std::uint32_t default_buckets(std::uint32_t range) { return std::max<std::uint32_t>(1, (range + 19) / 20); }

inline constexpr subject_parameter parameters[] = {
    {"buckets", "buckets of the table (0: one per 20 keys of the range)", model::max_buckets,
     [](const model::workload& w) { return w.buckets; }, [](model::workload& w, std::uint32_t v) { w.buckets = v; },
     [](const model::workload& w) { return default_buckets(w.range); }},
};

}  // namespace gfsl::slabhash
namespace gfsl::invariants {
// Its snapshot invariants (core/slabhash/invariants.cpp), reported as GFSL's are.
snapshot_report check_slabhash_snapshot(const snapshot& s, bool quiescent,
                                        const std::vector<std::pair<key_type, value_type>>* expected, std::size_t max_violations);
}  // namespace gfsl::invariants
namespace gfsl::slabhash {

// The host run entry and gfsl run's summary lines (core/slabhash/host.cpp).
std::string structure_summary(const host_run& r, const model::workload& w, const subject_choice& c, double ops_done);
host_run run_host(const model::workload& w, host_mode mode, std::uint32_t pool, bool keep_records, const sched::options* so,
                  sched::outcome* outcome, const run_extras& extras);

// Slabs for `keys` inserts. The fixed variant never reuses a pair while
// operations run, so every successful insert takes one; each bucket may end
// with a part-filled slab, and an insert that allocated a slab to append and
// found the chain longer (a lost race, or under ptx a stale read of the last
// slab's next word) leaks it: at most one an insert.
inline std::uint32_t pool_for_keys(double keys, const model::workload& w) {
  const double slabs = 2.0 * w.buckets + keys / pairs_per_slab + keys + 2.0 * w.teams + 64.0;
  return static_cast<std::uint32_t>(std::min(slabs, 4.0e9));
}
// Deletes take no slab.
inline std::uint32_t default_pool(const model::workload& w) {
  const double inserts = static_cast<double>(w.ops) * w.insert_pct / 100.0;
  return pool_for_keys(std::llround(w.prefill * w.range) + inserts, w);
}

inline std::string check_workload(const model::workload& w) {
  if (w.chunk != 16) return "chunk must be 16 for slabhash (a 128-byte slab is 16 words of 8 bytes, one per lane)";
  if (w.buckets < 1 || w.buckets > model::max_buckets) return "buckets must be in [1, " + std::to_string(model::max_buckets) + "]";
  if (w.reraise) return "upper=reraise is a gfsl rule; slabhash has no upper levels";
  if (w.range > 0xFFFFFFFDu) return "range must be in [1, 4294967293] for slabhash (its EMPTY and TOMBSTONE keys are the two above)";
  return {};
}

inline constexpr subject_descriptor descriptor{
    subject_kind::slabhash,
    "slabhash",
    "SlabHash, the warp-cooperative slab-list hash table (Ashkiani et al., IPDPS 2018)",
    "the slab-list hash table",
    slab_words,
    variant_names,
    static_cast<std::uint8_t>(default_slab_variant),
    static_cast<std::uint8_t>(default_slab_variant),
    "fixed, published",
    &mutant_name_of,
    &parse_mutant_name,
    "no such slabhash mutant (gfsl mutants --subject slabhash --list)",
    &mutant_entries,
    &equivalence,
    &reraises,
    parameters,
    "slabhash reads a slab of 16 eight-byte words, one per lane (--chunk does not apply)",
    true,
    &invariants::check_slabhash_snapshot,
    &check_workload,
    &run_host,
    &pool_for_keys,
    &default_pool,
    &structure_summary,
    nullptr,
    0,      // max_teams: no limit of its own
    false,  // batched
    true,   // stores_values
    {slab_window_names, slab_effect_names},
};

}  // namespace gfsl::slabhash
