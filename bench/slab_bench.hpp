// gfsl bench --subject slabhash: the concurrent benchmark of the SlabHash
// paper (Ashkiani et al., IPDPS 2018, section VI-C,
// ../shared/papers/slabhash-ashkiani-2018.txt): a table built with n
// elements at a chosen initial memory utilisation, then a random mixture of
// four kinds of operation run concurrently: a) insert a new element,
// b) delete a previously inserted one, c) search an existing one, d) search
// a non-existing one, in the proportions Gamma = (a, b, c, d):
//   Gamma0 = (0.5, 0.5, 0, 0), Gamma1 = (0.2, 0.2, 0.3, 0.3), Gamma2 = (0.1, 0.1, 0.4, 0.4).
// Figures in M operations per second, both variants, rows as the other
// suites' (bench/suite.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/suite.hpp"
#include "core/slabhash/layout.hpp"

namespace gfsl::bench {

struct slab_mix {
  std::string name;  // "gamma0"
  int a, b, c, d;    // percentages: insert new, delete existing, search existing, search absent
};
inline std::vector<slab_mix> slab_mixes() {
  return {{"gamma0", 50, 50, 0, 0}, {"gamma1", 20, 20, 30, 30}, {"gamma2", 10, 10, 40, 40}};
}

// Memory utilisation as the paper defines it (section III-C): the bytes of
// the stored pairs over the bytes of the slabs that hold them, 8 / 128 per
// pair, so at most 15/16.
inline double slab_utilisation(std::uint64_t elements, std::uint64_t chain_slabs) {
  return chain_slabs ? static_cast<double>(elements) / (16.0 * static_cast<double>(chain_slabs)) : 0;
}
// The slabs of the chains when these bucket sizes fill slabs in order (at
// least the head each).
inline std::uint64_t chain_slabs_of(const std::vector<std::uint32_t>& bucket_sizes) {
  std::uint64_t slabs = 0;
  for (std::uint32_t n : bucket_sizes) slabs += std::max<std::uint64_t>(1, (n + slabhash::pairs_per_slab - 1) / slabhash::pairs_per_slab);
  return slabs;
}
// The bucket count whose table of `keys` comes closest to `target`
// utilisation: utilisation falls as buckets grow (more heads, emptier
// slabs), so a bisection over the bucket count, each step hashing every key.
inline std::uint32_t buckets_for_utilisation(const std::vector<key_type>& keys, double target, std::uint64_t hash_seed) {
  auto at = [&](std::uint32_t b) {
    slabhash::params p;
    p.buckets = b;
    p.hash_seed = hash_seed;
    std::vector<std::uint32_t> sizes(b, 0);
    for (key_type k : keys) ++sizes[slabhash::bucket_of(k, p)];
    return slab_utilisation(keys.size(), chain_slabs_of(sizes));
  };
  std::uint32_t lo = 1, hi = static_cast<std::uint32_t>(std::max<std::size_t>(1, keys.size()));
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (at(mid) >= target) lo = mid;
    else hi = mid;
  }
  return std::abs(at(lo) - target) <= std::abs(at(hi) - target) ? lo : hi;
}

struct slab_suite_options {
  std::vector<int> utilisations{20, 30, 40, 50, 60, 70, 80};  // initial, percent
  std::vector<slabhash::slab_variant> variants{slabhash::slab_variant::fixed, slabhash::slab_variant::published};
  std::uint64_t elements = 1u << 22;  // n, as the paper's Fig. 4
  std::uint64_t ops = 1u << 22;
  int repeats = 5;
  std::uint64_t seed = 1;
};

// One row per (utilisation, mix, variant), printed to `log` and written to
// `csv` as measured, then a table of medians to `log`.
std::vector<row> run_slab_suite(const slab_suite_options& o, std::FILE* csv, std::FILE* log);

}  // namespace gfsl::bench
