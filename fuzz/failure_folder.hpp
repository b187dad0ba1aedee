// Writing a failure's folder in place, as a campaign does (write_failure,
// fuzz/campaign.hpp, writes its files).
#pragma once

#include <string>

#include "fuzz/campaign_state.hpp"

namespace gfsl::fuzz {

// A failure's folder, written aside and renamed into place: an interrupted
// campaign leaves it whole or not at all, and a shrunk failure replaces the
// folder its first run wrote. Empty when it cannot be written (a full disk,
// a removed folder): the failure is still reported and journalled, without
// its folder, and the campaign stops (a search whose findings cannot be
// kept is not worth going on with); the first such error is the result's.
std::string write_failure_whole(const campaign_options& o, const failure& f, shared_state& s);

}  // namespace gfsl::fuzz
