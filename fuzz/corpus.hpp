// The coverage corpus of a campaign's batch: the runs it keeps, and the
// runs it makes of them (another schedule, a targeted park).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "fuzz/campaign.hpp"

namespace gfsl::fuzz {

// Coverage feedback: runs that reached a new combination of rare paths are
// kept, and between RapidCheck's batches the kept runs that reached the paths
// the campaign has hit least are run again under another schedule (seed,
// strategy, granularity), as coverage-guided fuzzers mutate their corpus.
// A kept run also carries its interleaving coverage (fuzz/coverage.hpp):
// the pairs it reached, and the windows it opened (how often each) and the
// effects it made, which tell whether a targeted park on it can aim at a
// pair it missed.
struct corpus_entry {
  run_config config;
  std::uint32_t mask = 0;
  std::uint64_t pairs = 0;
  std::uint32_t windows = 0, effects = 0;
  std::array<std::uint32_t, 8> window_opens{};
};

// The rare paths (core/gfsl/stats.hpp) a run reached, one bit each.
std::uint32_t path_mask(const path_stats& p);

// Paths, and pairs, that the batch reached least weigh most.
double rarity(const corpus_entry& e, const path_stats& totals, const std::array<std::uint64_t, 64>& pair_counts);

// A targeted park aimed at a pair the batch has reached least (never, first
// of all): a kept run that opened the pair's window and made its effect,
// made again with its `nth` opening of the window held until another team's
// operation makes the effect on the held chunk. The schedule is the kept
// run's until the hold: the same seed makes the same choices up to it.
// Among the kept runs that can aim at the pair, those that open the window
// least are preferred: a directed run's few openings are each likely to be
// the one its scenario is about, a long run's are mostly elsewhere.
std::optional<run_config> targeted_run(const std::vector<corpus_entry>& corpus, const std::array<std::uint64_t, 64>& pair_counts,
                                       subject_kind subject, team_rng& rng);

// The kept run `e` under a new schedule: seed, strategy, PCT depth, park
// point and (where the campaign varies it) granularity.
run_config reschedule(const corpus_entry& e, const campaign_options& o, team_rng& rng);

}  // namespace gfsl::fuzz
