// The workloads of the thesis evaluation (5.1), generated on the device so that
// a structure of 100M keys needs no host-side key list:
// - the initial structure: the first `count` keys of a random permutation of
//   [1, range], i.e. a uniform random subset inserted in random order (half the
//   range before the mixed runs, all of it before contains-only and
//   delete-only, nothing before insert-only);
// - the timed operations: model::operation_at, the same function every
//   backend of the testbed uses, so GFSL and the baseline run the very same
//   operations.
#pragma once

#include <cstdint>

#include "../core/platform.hpp"
#include "../model/workload.hpp"

namespace gfsl::bench {

// A bijection of [0, range): a 4-round Feistel network on the smallest even
// power-of-two domain that holds `range`, walked until it lands inside the
// range (cycle walking keeps it a bijection; the expected walk is below 4).
struct key_permutation {
  std::uint32_t range = 1;
  std::uint64_t seed = 0;
  int half_bits = 1;  // the domain is 2^(2*half_bits)

  GFSL_FN key_permutation(std::uint32_t r, std::uint64_t s) : range(r), seed(s) {
    while ((std::uint64_t{1} << (2 * half_bits)) < r) ++half_bits;
  }
  GFSL_FN std::uint64_t round_fn(std::uint64_t x, int round) const {
    return model::mix64(x ^ (seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(round + 1)));
  }
  GFSL_FN std::uint64_t once(std::uint64_t x) const {
    const std::uint64_t mask = (std::uint64_t{1} << half_bits) - 1;
    std::uint64_t l = x >> half_bits, r = x & mask;
    for (int round = 0; round < 4; ++round) {
      const std::uint64_t next = l ^ (round_fn(r, round) & mask);
      l = r;
      r = next;
    }
    return (l << half_bits) | r;
  }
  // The i-th key of the permutation, in [1, range].
  GFSL_FN key_type key(std::uint64_t i) const {
    std::uint64_t x = once(i);
    while (x >= range) x = once(x);
    return static_cast<key_type>(x + 1);
  }
};

}  // namespace gfsl::bench
