// SlabHash's descriptor (core/subject.hpp): the warp-cooperative slab-list
// hash table of Ashkiani et al. (IPDPS 2018), its variants
// (core/slabhash/layout.hpp) and its mutant catalog (core/slabhash/mutants.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../subject.hpp"
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

inline constexpr subject_descriptor descriptor{
    subject_kind::slabhash,
    "slabhash",
    "SlabHash, the warp-cooperative slab-list hash table (Ashkiani et al., IPDPS 2018)",
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
};

}  // namespace gfsl::slabhash
