// How a campaign shrinks a failure past RapidCheck: a greedy pass over the
// generated run, then its operations listed, cut in time (fuzz/shrink.hpp)
// and taken out by delta debugging. shrink_failure (fuzz/campaign.hpp) is
// the same for a caller outside a campaign.
#pragma once

#include "fuzz/campaign_state.hpp"

namespace gfsl::fuzz {

// RapidCheck shrinks the generated values, but a smaller key range or team
// count regenerates every operation, and the prefill only takes the
// generator's few fractions: what it settles on is often far from minimal.
// On the scheduled host backend a run repeats bit for bit, so a greedy pass
// goes on from there: fewer operations, fewer teams, a smaller prefill,
// each step kept only when the run still fails with the same signature,
// until no step helps or the time is up.
// Stops at `until` (campaign time) or when the campaign is cancelled.
void shrink_further(failure& f, const campaign_options& o, double until, const shared_state& s);

}  // namespace gfsl::fuzz
