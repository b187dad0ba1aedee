// A memory word as the interleaving of a failure shows it
// (fuzz/interleaving.hpp): a GFSL chunk's entry (its key), NEXT word (max,
// next chunk) or LOCK word; a SlabHash slab's pair (its key) or next-slab
// word.
#pragma once

#include <cstdint>
#include <string>

namespace gfsl::fuzz {

// `word` at lane `lane` of a chunk of `chunk_words` words; `slab`: a slab.
std::string describe_word(std::uint64_t word, int lane, int chunk_words, bool slab = false);

}  // namespace gfsl::fuzz
