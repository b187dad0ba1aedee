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

#include "algorithm.hpp"
#include "host_team.hpp"
#include "layout.hpp"

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

// Basic well-formedness at quiescence, used by the tests of this layer: every
// level a finite list ending in a final chunk; live chunks sorted, EMPTY
// grouped at the end, max field equal to the largest key; levels sorted across
// chunks; each level's first live chunk starts with -inf; every key of level
// i+1 present in level i with a down pointer from which it is reachable; no
// lock held; level counters matching the chunks present. Returns the problems
// found (empty when none).
template <int N>
std::vector<std::string> structural_problems(const structure_view<N>& s) {
  using shape = chunk_shape<N>;
  std::vector<std::string> problems;
  auto say = [&](std::string m) { problems.push_back(std::move(m)); };
  std::vector<std::vector<key_type>> keys_by_level(shape::max_levels);
  for (int level = 0; level < shape::max_levels; ++level) {
    std::string walk_error;
    const std::vector<chunk_index> chunks = level_chunks(s, level, &walk_error);
    if (!walk_error.empty()) {
      say(walk_error);
      continue;
    }
    if (chunks.empty()) {
      say("level " + std::to_string(level) + ": no chunks");
      continue;
    }
    const std::string at = "level " + std::to_string(level);
    bool first_live = true;
    std::int64_t live = 0;
    std::uint64_t prev_max = 0;
    bool has_prev = false;
    for (std::size_t pos = 0; pos < chunks.size(); ++pos) {
      const chunk_image<N> img = read_chunk_image(s, chunks[pos]);
      const std::string where = at + " chunk " + std::to_string(img.index);
      const bool last = pos + 1 == chunks.size();
      if (last && (img.max != key_empty || img.next != no_chunk)) say(where + ": list ends at a non-final chunk");
      if (!last && img.max == key_empty) say(where + ": final max field before the end of the level");
      if (img.zombie()) {
        if (last) say(where + ": the final chunk is a zombie");
        continue;
      }
      ++live;
      if (lock_is_held(img.lock)) say(where + ": locked by team " + std::to_string(lock_owner(img.lock)) + " at quiescence");
      int count = 0;
      bool seen_empty = false;
      key_type prev_key = 0;
      for (int i = 0; i < shape::dsize; ++i) {
        const key_type k = entry_key(img.data[i]);
        if (k == key_empty) {
          seen_empty = true;
          continue;
        }
        if (seen_empty) say(where + ": key " + std::to_string(k) + " after an EMPTY entry");
        if (count > 0 && k <= prev_key) say(where + ": keys not ascending at entry " + std::to_string(i));
        if (k == key_neg_inf && !(first_live && i == 0)) say(where + ": -inf away from the level's first entry");
        if (has_prev && k <= prev_max) say(where + ": key " + std::to_string(k) + " not above the previous chunk's max");
        if (k != key_neg_inf) keys_by_level[level].push_back(k);
        prev_key = k;
        ++count;
      }
      if (first_live && (count == 0 || entry_key(img.data[0]) != key_neg_inf)) say(where + ": first live chunk does not begin with -inf");
      if (img.max != key_empty) {
        if (count == 0) say(where + ": non-final chunk without keys");
        else if (img.max != prev_key) say(where + ": max field " + std::to_string(img.max) + " but largest key " + std::to_string(prev_key));
        prev_max = img.max;
        has_prev = true;
      }
      first_live = false;
    }
    const std::int64_t counter = static_cast<std::int64_t>(s.level_counts()[level]);
    const std::int64_t expected = keys_by_level[level].empty() ? 0 : live;
    if (counter != expected) {
      say(at + ": chunk counter " + std::to_string(counter) + " but " + std::to_string(expected) + " expected (" +
          std::to_string(live) + " live chunks, " + std::to_string(keys_by_level[level].size()) + " keys)");
    }
  }
  for (int level = 1; level < shape::max_levels; ++level) {
    std::size_t j = 0;
    const auto& below = keys_by_level[level - 1];
    for (key_type k : keys_by_level[level]) {
      while (j < below.size() && below[j] < k) ++j;
      if (j == below.size() || below[j] != k) {
        say("level " + std::to_string(level) + ": key " + std::to_string(k) + " missing from level " + std::to_string(level - 1));
      }
    }
  }
  // Down pointers: from the chunk a level-(i+1) entry points at, lateral steps
  // in level i reach a live chunk holding the key (thesis 4.3, "Order Between
  // Down Pointers").
  const std::uint64_t allocated = s.alloc_counter()[0] < s.capacity ? s.alloc_counter()[0] : s.capacity;
  for (int level = 1; level < shape::max_levels; ++level) {
    for (chunk_index c : level_chunks(s, level)) {
      const chunk_image<N> img = read_chunk_image(s, c);
      if (img.zombie()) continue;
      for (int i = 0; i < shape::dsize; ++i) {
        const key_type k = entry_key(img.data[i]);
        if (k == key_empty) continue;
        chunk_index d = entry_value(img.data[i]);
        bool reached = false;
        for (std::uint64_t steps = 0; d != no_chunk && d < allocated && steps <= allocated; ++steps) {
          const chunk_image<N> below = read_chunk_image(s, d);
          if (!below.zombie()) {
            for (entry_type e : below.data) reached = reached || entry_key(e) == k;
            if (reached || below.max >= k) break;
          }
          d = below.next;
        }
        if (!reached) {
          say("level " + std::to_string(level) + " chunk " + std::to_string(c) + ": down pointer of key " +
              std::to_string(k) + " does not reach it in level " + std::to_string(level - 1));
        }
      }
    }
  }
  return problems;
}

// What every executor reports about the structure it leaves behind.
struct final_state {
  std::uint64_t chunks_allocated = 0;
  int height = 0;  // highest non-empty level
  std::vector<std::pair<key_type, std::uint32_t>> entries;  // level 0, in key order
  std::vector<std::string> problems;                        // structural_problems()
};

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

}  // namespace gfsl
