// A GFSL instance in host memory, and read-only inspection of any instance's
// words at quiescence (no team running). The inspection never trusts the words:
// chunk indexes are bounds-checked and walks are bounded, so a corrupt
// structure yields a report, not a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../invariants/snapshot.hpp"
#include "host_runner.hpp"
#include "../core/gfsl/algorithm.hpp"
#include "../core/host_team.hpp"
#include "../core/gfsl/layout.hpp"

namespace gfsl {

template <int N>
class host_structure {
 public:
  using shape = chunk_shape<N>;

  explicit host_structure(std::uint32_t capacity_chunks) : capacity_(capacity_chunks) {
    if (capacity_chunks < structure_view<N>::min_capacity) {
      throw std::invalid_argument("pool of " + std::to_string(capacity_chunks) + " chunks is too small: need at least " +
                                  std::to_string(structure_view<N>::min_capacity));
    }
    const std::size_t n = structure_view<N>::word_count(capacity_chunks);
    words_.reset(static_cast<std::uint64_t*>(::operator new[](n * sizeof(std::uint64_t), std::align_val_t{256})));
    word_count_ = n;
    for (std::size_t i = 0; i < n; ++i) words_[i] = initial_word<N>(i, capacity_chunks);
  }

  structure_view<N> view() const { return {words_.get(), capacity_}; }
  std::uint64_t* words() const { return words_.get(); }
  std::size_t word_count() const { return word_count_; }
  std::uint32_t capacity() const { return capacity_; }

 private:
  struct aligned_delete {
    void operator()(std::uint64_t* p) const { ::operator delete[](p, std::align_val_t{256}); }
  };
  std::uint32_t capacity_;
  std::size_t word_count_ = 0;
  std::unique_ptr<std::uint64_t[], aligned_delete> words_;
};

// ---- Inspection at quiescence ----------------------------------------------

template <int N>
struct chunk_image {
  chunk_index index = no_chunk;
  std::vector<entry_type> data;  // the DATA entries, EMPTY included
  key_type max = key_empty;
  chunk_index next = no_chunk;
  std::uint64_t lock = 0;
  bool zombie() const { return lock_is_zombie(lock); }
};

template <int N>
chunk_image<N> read_chunk_image(const structure_view<N>& s, chunk_index c) {
  chunk_image<N> img;
  img.index = c;
  const std::uint64_t* w = s.chunk(c);
  for (int i = 0; i < chunk_shape<N>::dsize; ++i) img.data.push_back(w[i]);
  img.max = entry_key(w[chunk_shape<N>::next_lane]);
  img.next = entry_value(w[chunk_shape<N>::next_lane]);
  img.lock = w[chunk_shape<N>::lock_lane];
  return img;
}

// The chunks of a level in list order, zombies included. Stops (and says so in
// `error`) on an out-of-pool index or a walk longer than the pool.
template <int N>
std::vector<chunk_index> level_chunks(const structure_view<N>& s, int level, std::string* error = nullptr) {
  std::vector<chunk_index> out;
  chunk_index c = static_cast<chunk_index>(s.heads()[level]);
  const std::uint64_t allocated = s.alloc_counter()[0] < s.capacity ? s.alloc_counter()[0] : s.capacity;
  while (c != no_chunk) {
    if (c >= allocated) {
      if (error) *error = "level " + std::to_string(level) + ": chunk index " + std::to_string(c) + " outside the allocated pool";
      return out;
    }
    if (out.size() > allocated) {
      if (error) *error = "level " + std::to_string(level) + ": NEXT pointers form a cycle";
      return out;
    }
    out.push_back(c);
    c = entry_value(s.chunk(c)[chunk_shape<N>::next_lane]);
  }
  return out;
}

// Keys and values of a level's live chunks in list order, -inf excluded.
template <int N>
std::vector<std::pair<key_type, std::uint32_t>> level_entries(const structure_view<N>& s, int level) {
  std::vector<std::pair<key_type, std::uint32_t>> out;
  for (chunk_index c : level_chunks(s, level)) {
    const std::uint64_t* w = s.chunk(c);
    if (lock_is_zombie(w[chunk_shape<N>::lock_lane])) continue;
    for (int i = 0; i < chunk_shape<N>::dsize; ++i) {
      const key_type k = entry_key(w[i]);
      if (k != key_empty && k != key_neg_inf) out.emplace_back(k, entry_value(w[i]));
    }
  }
  return out;
}

template <int N>
invariants::snapshot take_snapshot(const structure_view<N>& v, std::uint64_t stamp = 0);

// The snapshot invariants of invariants/snapshot.hpp at quiescence, as
// one line per violation (empty when the structure is well formed), all but
// the fill bound: that one is about the states runs reach, and hand-made
// structures (the thesis' figures draw three-key chunks) may sit below it.
template <int N>
std::vector<std::string> structural_problems(const structure_view<N>& s) {
  std::vector<std::string> out;
  for (const invariants::violation& v : invariants::check_snapshot(take_snapshot(s)).violations) {
    if (v.invariant != "fill-bound") out.push_back(v.describe());
  }
  return out;
}

template <int N>
final_state inspect_final_state(const structure_view<N>& v) {
  final_state f;
  f.chunks_allocated = v.alloc_counter()[0] < v.capacity ? v.alloc_counter()[0] : v.capacity;
  for (int level = 1; level < N; ++level) {
    if (static_cast<std::int64_t>(v.level_counts()[level]) > 0) f.height = level;
  }
  f.entries = level_entries(v, 0);
  f.problems = structural_problems(v);
  return f;
}

// A copy of the structure's header and allocated chunks (the unallocated
// rest of the pool is pristine and carries no information).
template <int N>
invariants::snapshot take_snapshot(const structure_view<N>& v, std::uint64_t stamp) {
  invariants::snapshot snap;
  snap.chunk = N;
  snap.capacity = v.capacity;
  snap.stamp = stamp;
  const std::uint64_t allocated = v.alloc_counter()[0] < v.capacity ? v.alloc_counter()[0] : v.capacity;
  snap.words.assign(v.words, v.words + header_offsets::pool + allocated * N);
  return snap;
}

}  // namespace gfsl
