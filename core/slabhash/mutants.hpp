// Seeded bugs planted in SlabHash's `fixed` variant (core/slabhash/algorithm.hpp),
// as core/gfsl/mutants.hpp plants them in GFSL: `algorithm<Team, V, true>` asks at
// each planted point whether its mutant is active; the default compiles them
// away. The first three are the published faults (issue 38, upstream issues 27
// and 17) put back into the fixed design: positive controls that every
// campaign must kill. Each names the argument of algorithm.hpp it breaks.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gfsl::slabhash {

enum class slab_mutant : std::uint8_t {
  none = 0,
  delete_by_exchange,
  delete_empties_pair,
  insert_checks_claim_slab_only,
  claim_last_empty,
  no_reread_after_failed_claim,
  contains_stops_at_tombstone,
  append_by_store,
  delete_true_on_failed_cas,
  insert_reuses_tombstone,
  slab_reads_relaxed,
  count_
};

struct slab_mutant_info {
  slab_mutant id;
  std::string_view name;
  std::string_view breaks;  // the argument or invariant it breaks, one line
  // Non-empty where it cannot be told from the correct design at some
  // granularity of reads or memory model: why.
  std::string_view equivalent = {};
  std::string_view variants = "fixed";
};

inline constexpr slab_mutant_info slab_mutant_catalog[] = {
    {slab_mutant::delete_by_exchange, "delete-by-exchange",
     "upstream's delete: an unconditional exchange to TOMBSTONE instead of a CAS from the pair it read, so a delete "
     "whose pair another delete already took still answers true (\"a failed CAS means another delete took it\")"},
    {slab_mutant::delete_empties_pair, "delete-empties-pair",
     "upstream's hole reuse: delete CASes the pair to EMPTY instead of TOMBSTONE, so pairs go back to EMPTY and the "
     "prefix property falls: an insert claims a hole before a live k further on (duplicates), a search stops at a "
     "hole before k (upstream issue 27)"},
    {slab_mutant::insert_checks_claim_slab_only, "insert-checks-claim-slab-only",
     "upstream issue 17: insert looks for k only in the slab where it claims, not in the full slabs it walked past, "
     "so \"no live k before the claimed pair\" is not established and k is inserted twice"},
    {slab_mutant::claim_last_empty, "claim-last-empty",
     "insert claims the highest EMPTY pair of a slab instead of the lowest: the prefix property (P) in lane order "
     "falls from the first insert, which only the prefix invariant reports (the answers stay right: claims go down "
     "from lane 14, inside a slab the non-EMPTY pairs are a suffix, and every linearization point goes through with "
     "the order mirrored); a detector that reads the structure is needed to kill it"},
    {slab_mutant::no_reread_after_failed_claim, "no-reread-after-failed-claim",
     "after a failed claim CAS insert tries the next EMPTY pair of the same stale read: the pair it lost may now hold "
     "k, which it never sees (\"no live k before the claimed pair\")"},
    {slab_mutant::contains_stops_at_tombstone, "contains-stops-at-tombstone",
     "contains answers absent at the first tombstone, as if it were EMPTY: only EMPTY ends the non-EMPTY prefix, and "
     "live pairs follow tombstones"},
    {slab_mutant::append_by_store, "append-by-store",
     "a new slab is linked with a plain store of the next word instead of a CAS from \"none\": two appends to one "
     "tail both succeed and the first slab, with the pairs claimed in it, falls out of the chain (chains only grow)"},
    {slab_mutant::delete_true_on_failed_cas, "delete-true-on-failed-cas",
     "delete answers true when its CAS from the pair it read fails: another delete took the pair, both answer true "
     "for one insert (the linearization point of a failed delete is the other delete's CAS)"},
    {slab_mutant::insert_reuses_tombstone, "insert-reuses-tombstone",
     "insert claims a tombstone as if it were EMPTY (reusing deleted pairs): the pairs after a tombstone are not "
     "EMPTY, so a live k further down the chain is inserted again (\"non-EMPTY is permanent\")"},
    {slab_mutant::slab_reads_relaxed, "slab-reads-relaxed",
     "slab reads are relaxed instead of acquire: on the device a team that sees a pair claimed need not see the "
     "claims before it (the happens-before chain of a bucket's claims), so it may claim past an EMPTY it still sees",
     "on the host every access is an atomic of one sequentially consistent interleaving (one scheduler or x86 "
     "threads): acquire and relaxed loads give the same values there; only the device's weak memory tells them "
     "apart"},
};

inline constexpr std::size_t slab_mutant_count = sizeof(slab_mutant_catalog) / sizeof(slab_mutant_catalog[0]);
static_assert(slab_mutant_count == static_cast<std::size_t>(slab_mutant::count_) - 1,
              "every slab_mutant has its catalog entry");

inline constexpr slab_mutant_info slab_mutant_none_info{slab_mutant::none, "none", "", {}, "published,fixed"};

inline const slab_mutant_info& info(slab_mutant m) {
  for (const slab_mutant_info& i : slab_mutant_catalog) {
    if (i.id == m) return i;
  }
  return slab_mutant_none_info;
}

// A catalog name, or "none"; nothing otherwise.
inline std::optional<slab_mutant> parse_mutant(std::string_view name) {
  if (name == "none") return slab_mutant::none;
  for (const slab_mutant_info& i : slab_mutant_catalog) {
    if (i.name == name) return i.id;
  }
  return std::nullopt;
}

}  // namespace gfsl::slabhash
