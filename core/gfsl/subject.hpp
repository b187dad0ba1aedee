// GFSL's descriptor (core/subject.hpp): the GPU-friendly skiplist of
// Moscovici, Cohen and Petrank (PACT 2017), its variants (core/gfsl/types.hpp) and
// its mutant catalog (core/gfsl/mutants.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../../model/workload.hpp"
#include "mutants.hpp"
#include "../subject.hpp"
#include "coverage.hpp"
#include "types.hpp"

namespace gfsl::gfsl_subject {

// By variant index: the enum's values (core/gfsl/types.hpp).
inline constexpr std::string_view variant_names[] = {"thesis", "robust"};
static_assert(static_cast<int>(variant::thesis) == 0 && static_cast<int>(variant::robust) == 1);

inline variant variant_of(int v) { return v == 0 ? variant::thesis : variant::robust; }
inline mutant mutant_of(int id) { return static_cast<mutant>(id); }
inline variant variant_of(const subject_choice& c) { return variant_of(c.variant); }
inline mutant mutant_of(const subject_choice& c) { return mutant_of(c.mutant); }
inline subject_choice choice_of(variant v, mutant m = mutant::none) {
  return {static_cast<std::uint8_t>(v), static_cast<std::uint8_t>(m)};
}

inline std::string_view mutant_name_of(int id) { return mutant_name(mutant_of(id)); }
// Catalog names only: "none" is not a gfsl mutant name (--mutant none is refused).
inline std::optional<int> parse_mutant_name(std::string_view name) {
  const mutant_info* m = find_mutant(name);
  if (!m) return std::nullopt;
  return static_cast<int>(m->id);
}

inline std::vector<mutant_entry> mutant_entries() {
  std::vector<mutant_entry> out;
  for (const mutant_info& m : mutant_catalog) {
    mutant_entry e;
    e.id = static_cast<int>(m.id);
    e.name = m.name;
    e.backends = m.backends;
    e.variants = m.variants;
    e.breaks = m.breaks;
    if (!m.equivalent.empty()) e.notes += " (equivalent under whole-chunk reads)";
    if (!m.robust_equivalent.empty()) {
      e.notes += m.robust_equivalent_whole_chunk_only ? " (equivalent in robust under whole-chunk reads)" : " (equivalent in robust)";
    }
    out.push_back(std::move(e));
  }
  return out;
}

// Under ptx a whole-chunk read is not one instant: the mutants whose argument
// needs it (equivalence_needs_sc) are equivalent only when every run is under sc.
inline std::string_view equivalence(int id, int v, bool whole_chunk_reads, campaign_memory memory) {
  for (const mutant_info& i : mutant_catalog) {
    if (static_cast<int>(i.id) == id) return equivalence_of(i, variant_of(v), whole_chunk_reads, memory == campaign_memory::sc);
  }
  return {};
}

inline bool reraises(int v) { return reraises_by_default(variant_of(v)); }

// Its snapshot invariants (core/gfsl/invariants.cpp, thesis 4.3).
}  // namespace gfsl::gfsl_subject
namespace gfsl::invariants {
snapshot_report check_gfsl_snapshot(const snapshot& s, bool quiescent, const std::vector<std::pair<key_type, value_type>>* expected,
                                    std::size_t max_violations);
}  // namespace gfsl::invariants
namespace gfsl::gfsl_subject {

// The host run entry and gfsl run's summary lines (core/gfsl/host.cpp).
std::string structure_summary(const host_run& r, const model::workload& w, const subject_choice& c, double ops_done);
host_run run_host(const model::workload& w, host_mode mode, std::uint32_t pool, bool keep_records, const sched::options* so,
                  sched::outcome* outcome, const run_extras& extras);

// Chunks for `keys` inserts: every split is caused by an insert or by a
// merge, and merged chunks are never reused.
inline std::uint32_t pool_for_keys(double keys, const model::workload& w) {
  const double per_split = (w.chunk - 2) / 2.0;  // a split leaves two half-full chunks
  const double chunks = 2.0 * keys / per_split * 2.0 + 4.0 * w.chunk + 64.0;
  return static_cast<std::uint32_t>(std::min(chunks, 4.0e9));
}
// A delete may split too (a merge into a full neighbour): every update counts.
inline std::uint32_t default_pool(const model::workload& w) {
  const double updates = static_cast<double>(w.ops) * (w.insert_pct + w.delete_pct) / 100.0;
  return pool_for_keys(std::llround(w.prefill * w.range) + updates, w);
}

inline std::string check_workload(const model::workload&) { return {}; }

inline constexpr subject_descriptor descriptor{
    subject_kind::gfsl,
    "gfsl",
    "GFSL, the GPU-friendly skiplist (Moscovici, Cohen and Petrank, PACT 2017)",
    "the skiplist",
    0,
    variant_names,
    static_cast<std::uint8_t>(default_variant),
    static_cast<std::uint8_t>(variant::thesis),  // lines written before the robust variant existed ran the published algorithm
    "robust, thesis",
    &mutant_name_of,
    &parse_mutant_name,
    "no such mutant (gfsl mutants --list)",
    &mutant_entries,
    &equivalence,
    &reraises,
    {},
    {},
    false,
    &invariants::check_gfsl_snapshot,
    &check_workload,
    &run_host,
    &pool_for_keys,
    &default_pool,
    &structure_summary,
    nullptr,
    0,      // max_teams: no limit of its own
    false,  // batched
    true,   // stores_values
    {gfsl_window_names, gfsl_effect_names},
};

}  // namespace gfsl::gfsl_subject
