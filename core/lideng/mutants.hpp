// Seeded bugs planted in the Li-Deng skiplist's `fixed` variant
// (core/lideng/algorithm.hpp), as core/slabhash/mutants.hpp plants them in
// SlabHash: `algorithm<Team, V, true>` asks at each planted point whether its
// mutant is active; the default compiles them away. Each names the step of
// the paper and the part of the argument at the top of algorithm.hpp that it
// breaks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gfsl::lideng {

enum class lideng_mutant : std::uint8_t {
  none = 0,
  insert_links_alone,
  delete_links_alone,
  delete_stops_at_deleted_next,
  group_in_slot_order,
  no_link_barrier,
  count_
};

struct lideng_mutant_info {
  lideng_mutant id;
  std::string_view name;
  std::string_view breaks;  // the argument it breaks, one line
  std::string_view equivalent = {};
  std::string_view variants = "fixed";
};

inline constexpr lideng_mutant_info lideng_mutant_catalog[] = {
    {lideng_mutant::insert_links_alone, "insert-links-alone",
     "insert step E5 without the sorted scan: every new node points at its own recorded successor and writes its own "
     "predecessor's forward[l], the \"simple repeated modification\" of section 3 (problem 2); two new keys between the "
     "same neighbours both write one word, and one is lost (one writer per predecessor word, lemma L)"},
    {lideng_mutant::delete_links_alone, "delete-links-alone",
     "delete without step E5's preprocessing: every deleted node's predecessor is linked to its successor even when "
     "that predecessor is itself deleted in the batch, so of two neighbouring deletes the first's link keeps the "
     "second reachable (the stable_partition of runs, lemma R)"},
    {lideng_mutant::delete_stops_at_deleted_next, "delete-stops-at-deleted-next",
     "the first delete of a run links its predecessor to its own recorded successor without skipping the run's other "
     "deleted nodes (next_eq[] not partitioned, lemma R): a deleted neighbour stays on the level"},
    {lideng_mutant::group_in_slot_order, "group-in-slot-order",
     "step E4 sorts mix_data[] by level only: the new nodes of one gap are chained in slot order instead of key order, "
     "so a level is no longer sorted (property 1 needs the keys sorted)"},
    {lideng_mutant::no_link_barrier, "no-link-barrier",
     "no barrier between step E1 and the linking steps: a team reads the batch's slots before the others have written "
     "them (the slot of the previous batch, or none) and links as if it were alone (phase separation, lemma S)"},
};

inline constexpr std::size_t lideng_mutant_count = sizeof(lideng_mutant_catalog) / sizeof(lideng_mutant_catalog[0]);
static_assert(lideng_mutant_count == static_cast<std::size_t>(lideng_mutant::count_) - 1,
              "every lideng_mutant has its catalog entry");

inline constexpr lideng_mutant_info lideng_mutant_none_info{lideng_mutant::none, "none", "", {}, "published,fixed"};

inline const lideng_mutant_info& info(lideng_mutant m) {
  for (const lideng_mutant_info& i : lideng_mutant_catalog) {
    if (i.id == m) return i;
  }
  return lideng_mutant_none_info;
}

// A catalog name, or "none"; nothing otherwise.
inline std::optional<lideng_mutant> parse_mutant(std::string_view name) {
  if (name == "none") return lideng_mutant::none;
  for (const lideng_mutant_info& i : lideng_mutant_catalog) {
    if (i.name == name) return i.id;
  }
  return std::nullopt;
}

}  // namespace gfsl::lideng
