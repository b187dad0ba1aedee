// A failure's interleaving.txt: the chunk accesses around its key.
#pragma once

#include <string>

#include "fuzz/campaign.hpp"

namespace gfsl::fuzz {

// The failing run as an interleaving of chunk accesses around the failing
// key: the run repeated (host runs repeat bit for bit) with its accesses
// recorded, and every access to a chunk that some access saw holding the key,
// in the order they happened. A team-wide read is one line while no other
// team writes that chunk during it. A read that writes land in the middle of
// (at line or lane granularity) is shown in pieces: the lanes it had loaded
// when each write landed, with what they held, then the writes, then the
// lanes it loaded after; its last line gives the whole chunk as the team saw
// it, marked TORN. That is the reading a person checks the answer against.
std::string interleaving_of(const failure& f, key_type key, const campaign_options& o);

}  // namespace gfsl::fuzz
