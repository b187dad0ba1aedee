#include "fuzz/word_names.hpp"

#include "core/gfsl/layout.hpp"
#include "core/slabhash/layout.hpp"

namespace gfsl::fuzz {

std::string describe_word(std::uint64_t word, int lane, int chunk_words, bool slab) {
  if (slab) {
    // A SlabHash slab (core/slabhash/layout.hpp): pairs, then the next-slab word.
    if (lane == slabhash::next_word) {
      const std::uint32_t next = slabhash::next_of(word);
      return "next " + (next == slabhash::no_slab ? std::string("none") : std::to_string(next));
    }
    const key_type k = slabhash::pair_key(word);
    return k == slabhash::empty_key ? std::string("-") : k == slabhash::tombstone_key ? std::string("tomb") : std::to_string(k);
  }
  if (lane == chunk_words - 1) {
    if (lock_is_zombie(word)) return "zombie";
    std::string v = lock_is_held(word) ? "held by team " + std::to_string(lock_owner(word)) : std::string("free");
    return lock_version(word) ? v + " v" + std::to_string(lock_version(word)) : v;
  }
  const key_type k = entry_key(word);
  const std::string key = k == key_empty ? std::string("-") : k == key_neg_inf ? std::string("-inf") : std::to_string(k);
  if (lane == chunk_words - 2) {
    const chunk_index next = entry_value(word);
    return "max " + key + " next " + (next == no_chunk ? std::string("none") : std::to_string(next));
  }
  return key;
}

}  // namespace gfsl::fuzz
