// Graphviz DOT of a snapshot, for people to look at: one rank per level (top
// level first), chunks as records of their keys, NEXT edges within a level,
// down edges between levels; zombies dashed and grey, locked chunks red.
#pragma once

#include <string>

#include "snapshot.hpp"

namespace gfsl::invariants {

// `max_chunks_per_level` keeps huge structures drawable: levels longer than it
// are cut (the cut is drawn as a note).
std::string to_dot(const snapshot& s, std::size_t max_chunks_per_level = 200);

}  // namespace gfsl::invariants
