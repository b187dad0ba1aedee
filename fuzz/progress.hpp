// The campaign's live progress line on stderr: redrawn on a terminal, one
// line at a time in a log.
#pragma once

#include <string>

#include "fuzz/campaign_state.hpp"

namespace gfsl::fuzz {

// Once shrinking begins the search's counts stop moving: the line then says
// what is being shrunk instead of showing frozen rates.
void print_progress(const campaign_options& o, shared_state& s, bool tty);

// Sets the phase and shows it at once (a log gets one line per phase).
void enter_phase(const campaign_options& o, shared_state& s, std::string phase);

}  // namespace gfsl::fuzz
