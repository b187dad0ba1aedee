// The campaign's side of interleaving coverage (core/coverage.hpp): pairs by
// name, the targeted park (sched::hold_directive) as the replay line writes
// it, and which pairs a campaign's configuration rules out.
//
// A hold is written `WINDOW,EFFECT,NTH` or `WINDOW,EFFECT,NTH,TEAM` with the
// subject's names: `unlink,split,3` holds whichever team opens the unlink
// window third, until another team's operation splits the chunk it holds
// there; `step-down,remove,1,0` holds team 0 at its first step down.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/coverage.hpp"
#include "core/subject.hpp"
#include "exec/sched/scheduler.hpp"

namespace gfsl::fuzz {

struct campaign_options;

// "unlink,split,3" (the team appended when the hold names one).
std::string hold_text(subject_kind s, const sched::hold_directive& h);
// Parses `text` into `out` (active); empty, or one line saying what is wrong.
std::string parse_hold(subject_kind s, const std::string& text, sched::hold_directive& out);

// The subject's pairs as bits of sched::outcome::pairs, in window-major order.
std::vector<int> pair_bits(subject_kind s);
int pair_window(int bit);
int pair_effect(int bit);
// "unlink x split".
std::string pair_name(subject_kind s, int bit);
// Why the campaign's configuration rules out pair `bit`, e.g. "--variant
// thesis" for robust's validated read; empty when its runs can reach it.
std::string pair_disabled_by(const campaign_options& o, int bit);

}  // namespace gfsl::fuzz
