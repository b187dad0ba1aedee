// Shared memory of one Li-Deng skiplist (Li and Deng, "High Performance
// Skiplist for GPU Computing", Microelectronics & Computer 31(12), 2014;
// ../shared/papers/gpu-skiplist-li-deng-2014.txt): 64-bit words like GFSL's
// (core/gfsl/layout.hpp), so a snapshot is a copy of the array whatever backend
// produced it.
//
//   words 0..15     header: word 0 the bump allocation counter (next free
//                   node), word 1 the error word (codes of core/types.hpp,
//                   at the offset host_team::lock_wait reads), word 2 the
//                   batch barrier's arrival counter, the rest 0
//   words 16..271   16 batch slots of 16 words: the paper's working arrays of
//                   Table 1, one slot per team of the batch (slot s at
//                   16 + 16 s); see "slots" below
//   words 272..     the node pool, 16 words per node, node n at 272 + 16 n;
//                   node 0 is the head (key 0, the paper's "head"), node 1 the
//                   tail (key 0xFFFFFFFF: every level ends there)
//
// A node (the paper's Fig. 3 `struct node`) is one 128-byte line: word 0 its
// key and value (core/types.hpp's entry layout: key low, value high), word 1
// its height (randomlevel, 1..levels), words 2..15 forward[0..13], each the
// index of the next node at that level (the paper's node* as an index into
// the pool: no_node where the node has no such level). Nodes are never
// reused: a delete unlinks its node and leaves it in the pool.
//
// A slot (the paper's data[], node_level[], pre[][], next[][] for one key):
//   word 0  kind << 32 | key            (slot_kind below; 0: no operation)
//   word 1  height << 32 | node          (height 0: nothing to link)
//   word 2+l  pre[l] << 32 | next[l]     for l < height (insert: the nodes
//                                         between which the new node goes at
//                                         level l; delete: the predecessor
//                                         and the deleted node's successor)
// A team writes only its own slot (its team id), and only before the batch's
// first barrier; every team reads every slot only after it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "../platform.hpp"
#include "../types.hpp"

namespace gfsl::lideng {

inline constexpr int node_words = 16;
inline constexpr int max_levels = 14;     // forward[] of one 16-word node
inline constexpr int max_batch = 16;      // slots: one lane per slot in a team-wide read of the slots
inline constexpr std::size_t header_words = 16;
inline constexpr std::size_t alloc_counter_word = 0;
inline constexpr std::size_t error_word_index = error_word_offset;
inline constexpr std::size_t barrier_word = 2;
inline constexpr std::size_t slot_words = 16;
inline constexpr std::size_t slots_offset = header_words;
inline constexpr std::size_t pool_offset = slots_offset + max_batch * slot_words;

inline constexpr std::uint32_t head_node = 0;
inline constexpr std::uint32_t tail_node = 1;
inline constexpr std::uint32_t first_free_node = 2;
inline constexpr std::uint32_t no_node = 0xFFFFFFFFu;
inline constexpr key_type head_key = key_neg_inf;   // 0
inline constexpr key_type tail_key = key_empty;     // 0xFFFFFFFF
inline constexpr int entry_word = 0;
inline constexpr int height_word = 1;
inline constexpr int forward_word0 = 2;
// Every word of a node never handed out.
inline constexpr std::uint64_t pristine_word = 0xFFFFFFFFFFFFFFFFull;

static_assert(forward_word0 + max_levels == node_words, "forward[] fills the node's line");

enum slot_kind : std::uint32_t { slot_none = 0, slot_insert = 1, slot_remove = 2, slot_contains = 3 };

GFSL_FN constexpr std::uint64_t slot_op_word(std::uint32_t kind, key_type k) {
  return (static_cast<std::uint64_t>(kind) << 32) | k;
}
GFSL_FN constexpr std::uint32_t slot_kind_of(std::uint64_t w) { return static_cast<std::uint32_t>(w >> 32); }
GFSL_FN constexpr key_type slot_key_of(std::uint64_t w) { return static_cast<key_type>(w & 0xFFFFFFFFu); }
GFSL_FN constexpr std::uint64_t pair_word(std::uint32_t high, std::uint32_t low) {
  return (static_cast<std::uint64_t>(high) << 32) | low;
}
GFSL_FN constexpr std::uint32_t high_of(std::uint64_t w) { return static_cast<std::uint32_t>(w >> 32); }
GFSL_FN constexpr std::uint32_t low_of(std::uint64_t w) { return static_cast<std::uint32_t>(w & 0xFFFFFFFFu); }

// The two designs built from one source (core/lideng/algorithm.hpp):
// `published` is the paper's steps as written, which do not say what a batch
// holding one key twice does (both copies are linked, both answer true);
// `fixed`, the default, lets the lowest slot of a key act for it and answers
// false for the others.
enum class lideng_variant : std::uint8_t { published = 0, fixed = 1 };
inline constexpr lideng_variant default_lideng_variant = lideng_variant::fixed;

GFSL_FN constexpr const char* variant_name(lideng_variant v) {
  return v == lideng_variant::published ? "published" : "fixed";
}
inline std::optional<lideng_variant> parse_variant(std::string_view name) {
  if (name == "published") return lideng_variant::published;
  if (name == "fixed") return lideng_variant::fixed;
  return std::nullopt;
}

struct params {
  // Levels of the list (the paper: "up to 32"; here at most 14, the
  // forward[] of one line); a new node's height is geometric with p = 1/2
  // (Fig. 3 random_level), capped at `levels`.
  int levels = 8;
  // Teams in a batch: every batch is one operation of each of teams
  // 0 .. batch-1, and the barriers wait for that many arrivals.
  std::uint32_t batch = 1;
  // Nodes in the pool, head and tail included.
  std::uint32_t pool_nodes = 64;
};

// Empty when usable; otherwise one line naming the bad field.
inline std::string validate(const params& p) {
  if (p.levels < 1 || p.levels > max_levels) {
    return "levels " + std::to_string(p.levels) + " is outside 1.." + std::to_string(max_levels);
  }
  if (p.batch < 1 || p.batch > static_cast<std::uint32_t>(max_batch)) {
    return "batch " + std::to_string(p.batch) + " is outside 1.." + std::to_string(max_batch) + " (one slot per team)";
  }
  if (p.pool_nodes < first_free_node) return "pool of " + std::to_string(p.pool_nodes) + " nodes has no room for head and tail";
  return {};
}

inline std::size_t word_count(const params& p) {
  return pool_offset + static_cast<std::size_t>(p.pool_nodes) * node_words;
}
GFSL_FN constexpr std::size_t node_offset(std::uint32_t n) {
  return pool_offset + static_cast<std::size_t>(n) * node_words;
}
GFSL_FN constexpr std::size_t slot_offset(std::uint32_t s) { return slots_offset + static_cast<std::size_t>(s) * slot_words; }

// Word i of a fresh list: the counter past head and tail, empty slots, the
// head pointing at the tail on every level, the rest of the pool pristine.
// Word by word, so the device can fill a pool in parallel.
GFSL_FN std::uint64_t initial_word(std::size_t i, const params& p) {
  if (i < header_words) return i == alloc_counter_word ? first_free_node : 0;
  if (i < pool_offset) return 0;
  const std::size_t rel = i - pool_offset;
  const std::size_t node = rel / node_words;
  const int w = static_cast<int>(rel % node_words);
  if (node == head_node || node == tail_node) {
    if (w == entry_word) return make_entry(node == head_node ? head_key : tail_key, 0);
    if (w == height_word) return static_cast<std::uint64_t>(p.levels);
    const int level = w - forward_word0;
    if (node == head_node && level < p.levels) return tail_node;
    return no_node;
  }
  return pristine_word;
}

// "node 12 forward[3]", "slot 2 pre/next[1]", "header: barrier".
inline std::string describe_word(const params& p, std::uint64_t word_offset) {
  if (word_offset < header_words) {
    if (word_offset == alloc_counter_word) return "header: allocation counter";
    if (word_offset == error_word_index) return "header: error word";
    if (word_offset == barrier_word) return "header: barrier";
    return "header: word " + std::to_string(word_offset) + " (unused)";
  }
  if (word_offset < pool_offset) {
    const std::uint64_t rel = word_offset - slots_offset;
    const std::string slot = "slot " + std::to_string(rel / slot_words);
    const int w = static_cast<int>(rel % slot_words);
    if (w == 0) return slot + " kind/key";
    if (w == 1) return slot + " height/node";
    return slot + " pre/next[" + std::to_string(w - 2) + "]";
  }
  const std::uint64_t rel = word_offset - pool_offset;
  const std::uint64_t node = rel / node_words;
  if (node >= p.pool_nodes) return "word " + std::to_string(word_offset) + " (past the pool)";
  const int w = static_cast<int>(rel % node_words);
  const std::string name = node == head_node ? "node 0 (head)" : node == tail_node ? "node 1 (tail)" : "node " + std::to_string(node);
  if (w == entry_word) return name + " key/value";
  if (w == height_word) return name + " height";
  return name + " forward[" + std::to_string(w - forward_word0) + "]";
}

}  // namespace gfsl::lideng
