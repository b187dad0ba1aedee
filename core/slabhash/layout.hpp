// Shared memory of one SlabHash instance (Ashkiani et al., IPDPS 2018,
// ../shared/papers/slabhash-ashkiani-2018.txt, sections III and V): 64-bit
// words like GFSL's (core/gfsl/layout.hpp), so a snapshot is a copy of the array
// whatever backend produced it.
//
//   words 0..15   header: word 0 the bump allocation counter (next free slab),
//                 word 1 the error word (codes of core/types.hpp), the rest 0
//   words 16..    slabs of 16 words, slab s at 16 + 16 * s; slabs
//                 0..buckets-1 are the bucket heads (the paper's base slabs)
//
// A slab is upstream's 128 bytes. Upstream reads it as 32 lanes of 32 bits:
// even lane 2i the key of pair i, odd lane 2i+1 its value, lane 31 the next
// slab. Here word i (i < 15) is pair i with the key in its low half and the
// value in its high half, so one 64-bit word is exactly upstream's lanes 2i
// and 2i+1; word 15 holds the next slab in its high half (upstream lane 31)
// and upstream lane 30's constant 0xFFFFFFFF in its low half.
//
// The paper's SlabAlloc (section V) is replaced by a bump pool: allocation
// is one fetch_add of the counter and slabs are never freed. Every pool slab
// is initialised to all ones (EMPTY pairs, no next slab) before the run, so
// an allocated slab needs no write before it is linked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "../platform.hpp"
#include "../types.hpp"

namespace gfsl::slabhash {

inline constexpr int slab_words = 16;
inline constexpr int pairs_per_slab = 15;
inline constexpr int next_word = 15;                    // the word of lane 31
inline constexpr std::uint32_t pair_lanes_mask = 0x7FFFu;  // words 0..14 in a ballot
inline constexpr std::size_t header_words = 16;
inline constexpr std::size_t alloc_counter_word = 0;
inline constexpr std::size_t error_word_index = error_word_offset;

inline constexpr key_type empty_key = 0xFFFFFFFFu;       // upstream EMPTY_KEY
inline constexpr key_type tombstone_key = 0xFFFFFFFEu;   // fixed variant only
inline constexpr key_type max_user_key = 0xFFFFFFFDu;    // user keys: 0 .. max_user_key
inline constexpr std::uint64_t empty_pair = 0xFFFFFFFFFFFFFFFFull;  // upstream EMPTY_PAIR
inline constexpr std::uint32_t no_slab = 0xFFFFFFFFu;
// Word 15 of a slab that is the last of its chain: no next slab, lane 30's constant.
inline constexpr std::uint64_t last_next_word = 0xFFFFFFFFFFFFFFFFull;

GFSL_FN constexpr bool is_user_key(key_type k) { return k <= max_user_key; }
GFSL_FN constexpr std::uint64_t make_pair(key_type k, value_type v) {
  return (static_cast<std::uint64_t>(v) << 32) | k;
}
GFSL_FN constexpr key_type pair_key(std::uint64_t w) { return static_cast<key_type>(w & 0xFFFFFFFFu); }
GFSL_FN constexpr value_type pair_value(std::uint64_t w) { return static_cast<value_type>(w >> 32); }
// A live pair: neither EMPTY nor a tombstone (whatever its value half).
GFSL_FN constexpr bool is_live_key(key_type k) { return k <= max_user_key; }
GFSL_FN constexpr std::uint64_t next_word_of(std::uint32_t next) {
  return (static_cast<std::uint64_t>(next) << 32) | 0xFFFFFFFFull;
}
GFSL_FN constexpr std::uint32_t next_of(std::uint64_t w) { return static_cast<std::uint32_t>(w >> 32); }

// The two designs built from one source (core/slabhash/algorithm.hpp):
// `published` is upstream's behaviour with its faults (issue 38), `fixed`
// the linearizable one.
enum class slab_variant : std::uint8_t { published = 0, fixed = 1 };
inline constexpr slab_variant default_slab_variant = slab_variant::fixed;

GFSL_FN constexpr const char* variant_name(slab_variant v) { return v == slab_variant::published ? "published" : "fixed"; }
inline std::optional<slab_variant> parse_variant(std::string_view name) {
  if (name == "published") return slab_variant::published;
  if (name == "fixed") return slab_variant::fixed;
  return std::nullopt;
}

struct params {
  std::uint32_t buckets = 1;
  // Slabs in the pool, the bucket heads included; fewer than `buckets` is
  // read as `buckets` (heads only, no room to grow).
  std::uint32_t pool_slabs = 0;
  std::uint64_t hash_seed = 0;
};

GFSL_FN constexpr std::uint32_t slab_capacity(const params& p) {
  return p.pool_slabs > p.buckets ? p.pool_slabs : p.buckets;
}
inline std::size_t word_count(const params& p) {
  return header_words + static_cast<std::size_t>(slab_capacity(p)) * slab_words;
}
GFSL_FN constexpr std::size_t slab_offset(std::uint32_t s) {
  return header_words + static_cast<std::size_t>(s) * slab_words;
}

// The paper's universal hash (section III-C): h(k) = ((a k + b) mod p) mod B,
// p = 2^32 - 5 (the largest 32-bit prime, as upstream's prime divisor), a
// and b drawn from the seed (a never 0 mod p).
inline constexpr std::uint64_t hash_prime = 4294967291ull;
GFSL_FN constexpr std::uint64_t hash_mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
GFSL_FN std::uint32_t bucket_of(key_type k, const params& p) {
  if (p.buckets <= 1) return 0;
  const std::uint64_t a = 1 + hash_mix(p.hash_seed) % (hash_prime - 1);
  const std::uint64_t b = hash_mix(p.hash_seed ^ 0x5851F42D4C957F2Dull) % hash_prime;
  // a, k < 2^32: the product fits in 64 bits.
  const std::uint64_t h = (a * static_cast<std::uint64_t>(k) % hash_prime + b) % hash_prime;
  return static_cast<std::uint32_t>(h % p.buckets);
}

// Word i of a fresh table: the counter past the bucket heads, healthy, and
// every slab all ones. Word by word, so the device can fill a pool in parallel.
GFSL_FN std::uint64_t initial_word(std::size_t i, const params& p) {
  if (i < header_words) return i == alloc_counter_word ? static_cast<std::uint64_t>(p.buckets) : 0;
  return empty_pair;  // pairs EMPTY; word 15 = last_next_word, the same bits
}

// "bucket 3 slab 12 lane 7 (pair 3 key)", "header: allocation counter".
// Lanes are upstream's 32-bit lanes: pair i is lanes 2i (key) and 2i+1
// (value), word 15 is lane 31 (next). Without the words, a slab past the
// heads is named without its bucket; `bucket` names it when the caller knows.
inline std::string describe_word(const params& p, std::uint64_t word_offset,
                                 std::optional<std::uint32_t> bucket = std::nullopt) {
  if (word_offset < header_words) {
    if (word_offset == alloc_counter_word) return "header: allocation counter";
    if (word_offset == error_word_index) return "header: error word";
    return "header: word " + std::to_string(word_offset) + " (unused)";
  }
  const std::uint64_t rel = word_offset - header_words;
  const std::uint64_t slab = rel / slab_words;
  const int word = static_cast<int>(rel % slab_words);
  std::string out;
  if (slab >= slab_capacity(p)) return "word " + std::to_string(word_offset) + " (past the pool)";
  if (bucket) {
    out = "bucket " + std::to_string(*bucket) + " ";
  } else if (slab < p.buckets) {
    out = "bucket " + std::to_string(slab) + " ";
  }
  out += "slab " + std::to_string(slab);
  if (word == next_word) return out + " lane 31 (next)";
  return out + " lane " + std::to_string(2 * word) + " (pair " + std::to_string(word) + ")";
}

}  // namespace gfsl::slabhash
