// Shared memory of one GFSL instance: a header (allocation counter, error word,
// head array, per-level chunk counters) followed by the chunk pool, all 64-bit
// words. The same layout is used by every backend, so a snapshot of the
// structure is a copy of this array whatever produced it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../platform.hpp"
#include "../types.hpp"

#include "types.hpp"
namespace gfsl {

// Compile-time shape of a chunk of N entries (thesis Fig. 3.1, Table 4.1).
// On the GPU N is the team's width, 16 or 32 lanes of a warp. The host
// backends also run N = 8: nothing in the algorithm depends on N beyond
// these constants, and a chunk that splits after 7 inserts and merges after
// a few deletes lets a counterexample about splits and merges be a handful
// of operations (fuzz/shrink_failure.cpp shrinks towards it).
template <int N>
struct chunk_shape {
  static_assert(N == 8 || N == 16 || N == 32, "GFSL chunks hold 8 (host only), 16 or 32 entries");
  static constexpr int width = N;           // entries per chunk = lanes per team
  static constexpr int dsize = N - 2;       // data entries
  static constexpr int next_lane = N - 2;   // NEXT entry: max field + next index
  static constexpr int lock_lane = N - 1;   // LOCK entry
  static constexpr int max_levels = N;      // the path is held one level per lane (4.2.2)
  static constexpr int merge_threshold = dsize / 3;  // merge when a removal leaves a chunk at or below this (4.2.3)
  static constexpr int split_moved = dsize / 2;      // keys moved to the new chunk by a split (4.2.2)
  static constexpr std::size_t chunk_bytes = sizeof(entry_type) * N;
};

// Word offsets of the header. Head and counter arrays have 32 slots whatever N
// is, so that a team of any width loads them with one lane per level.
struct header_offsets {
  static constexpr std::size_t alloc_counter = 0;  // next free chunk index (bump allocation)
  static constexpr std::size_t error_word = error_word_offset;  // first error code, 0 while healthy (core/types.hpp)
  static constexpr std::size_t heads = 32;         // heads[level]: first chunk of the level
  static constexpr std::size_t level_counts = 64;  // chunks in use at the level (0: level empty)
  static constexpr std::size_t pool = 128;         // first word of chunk 0 (1 KiB: keeps chunks aligned)
};

// Non-owning view of a structure's words; trivially copyable, passed by value
// to kernels and to host teams alike.
template <int N>
struct structure_view {
  using shape = chunk_shape<N>;
  std::uint64_t* words = nullptr;
  std::uint32_t capacity = 0;  // chunks in the pool

  GFSL_FN std::uint64_t* chunk(chunk_index c) const {
    return words + header_offsets::pool + static_cast<std::size_t>(c) * N;
  }
  GFSL_FN std::uint64_t* alloc_counter() const { return words + header_offsets::alloc_counter; }
  GFSL_FN std::uint64_t* error_word() const { return words + header_offsets::error_word; }
  GFSL_FN std::uint64_t* heads() const { return words + header_offsets::heads; }
  GFSL_FN std::uint64_t* level_counts() const { return words + header_offsets::level_counts; }

  static constexpr std::size_t word_count(std::uint32_t capacity_chunks) {
    return header_offsets::pool + static_cast<std::size_t>(capacity_chunks) * N;
  }
  // The initial structure holds one chunk per level, chunk i heading level i
  // (thesis 4.1), so the pool must have room for at least those.
  static constexpr std::uint32_t min_capacity = N + 1;
};

// Initial value of word `i` of a structure of `capacity` chunks: one chunk per
// level with the minus-infinity key (pointing at the chunk below), unlocked and
// final; heads point at them; counters 0; the rest of the pool pristine: EMPTY
// entries, a final NEXT entry and a free lock, so that an allocation only has to
// write its LOCK and NEXT entries. Computed word by word so that the device can
// initialise a large pool in parallel.
template <int N>
GFSL_FN std::uint64_t initial_word(std::size_t i, std::uint32_t /*capacity*/) {
  using shape = chunk_shape<N>;
  if (i < header_offsets::pool) {
    if (i == header_offsets::alloc_counter) return N;  // chunks 0..N-1 are the level heads
    if (i >= header_offsets::heads && i < header_offsets::heads + N) return i - header_offsets::heads;
    return 0;
  }
  const std::size_t rel = i - header_offsets::pool;
  const std::size_t c = rel / N;
  const int lane = static_cast<int>(rel % N);
  if (lane == shape::lock_lane) return lock_free_word;
  if (lane == shape::next_lane) return final_next_entry;
  if (c < static_cast<std::size_t>(N) && lane == 0) {
    // Level c's first entry: minus infinity, down pointer to the level below.
    return make_entry(key_neg_inf, c == 0 ? 0u : static_cast<std::uint32_t>(c - 1));
  }
  return empty_entry;
}

}  // namespace gfsl
