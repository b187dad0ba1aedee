// Directed runs: workloads written to reach interleavings that random
// workloads almost never make, given to the campaign as a coverage-guided
// fuzzer is given a seed corpus. Each is a listed workload (model/script.hpp)
// on a structure built from ascending keys, whose layout is therefore known,
// run under the park strategy with a fresh schedule and judged like any
// other run. Every kind passes on the robust variant; the last two are
// torn-read interleavings of the published one (docs/FINDINGS.md).
//
// restart (searchDown's backtrack with no previous chunk, thesis 4.2.1; in
// robust the fall back to the level's head): a search reads a level-2 chunk,
// decides to step down at key j, and before it reads the level-1 chunk that
// j points to, another team deletes j from every level. The level-1 chunk
// then holds only keys above the one sought, and there is no chunk of that
// level to go back to. 2 of 1,000 random runs of the most favourable
// generated shape reached it, and no campaign did; about one directed run
// in six does.
//
// zombie_next (mechanism 1 of the robust-variant review): a team loads a
// chunk X's NEXT (= S) lane, is parked inside that read, and meanwhile
// another team splits X (X -> F -> S) and merges X into F; the parked team
// then loads X's LOCK lane, sees a zombie, and follows the stale NEXT past
// the live chunk F. Three regions of level 0, each with one team that
// fills its chunk until it splits and empties the lower half until it
// merges, and three teams that insert keys of the half that moves, parked
// inside reads (only they park, so the others' operations run while they
// sleep). 98 of 400 runs broke the published algorithm at lane
// granularity (`lateral-order`, or `level-counters` when the chunk is the
// level's head), none of 400 the robust one.
//
// stale_upper_key (mechanisms 2 and 3): delete's unlocked check of an upper
// level (Alg. 4.11 l.15-16) reads the level-2 chunk lane by lane while
// another delete removes a smaller key of that chunk and shifts the larger
// ones left: the check misses k, k stays at level 2 after it left level 0
// (`level-subset`), and a later search for the key above k steps down at k
// into keys that are all larger and restarts from the top for ever (a hang:
// livelock). Three parked teams delete level-2 keys and then, in half the
// runs, look up the key above each; three others delete the two smallest
// keys of each level-2 chunk. Of 400 runs on the published algorithm, 13
// hung and 13 left a stale key; none of 400 on the robust one failed.
//
// With targeted parks (generator_limits::targeted_parks) the restart run
// also holds its reader at a step down (the hold step-down,remove on team
// 0) until the delete has completed: the park strategy alone holds it for
// one operation, usually the deleter's short lookup, and the delete lands
// inside the window in few runs.
//
// unlink_split (pairs unlink x split and unlink x merge, core/coverage.hpp):
// one level (p_chunk 0), so that every search walks level 0 from its head.
// A chunk X merges into its successor and becomes a zombie; an update
// walking past it from its predecessor A unlinks it, and is held there (hold
// unlink,split,1 on team 0) until another team's insert splits A. Under A's
// lock the unlinker must see that A's NEXT names the fresh chunk, not X any
// more. In a third of the runs the other team merges A instead (hold
// unlink,merge,1), and the unlinker's try-lock must fail on the zombie.
//
// raise_race (robust's raised-key rule, docs/ALGORITHM.md): a split of an
// upper level raises its fresh chunk's minimum m while another team deletes
// m, which it found in that level but not yet in the one above. The delete
// must look above again after each removal, or m stays in level i+1 and
// leaves level i (`level-subset`); and the raiser must hold m's chunk
// until m is above (bottom-unlocked-early). One insert at the end of a
// structure whose last chunks of levels 0 and 1 are full, against one
// delete of the key it raises from level 0 or from level 1.
//
// validation_tear (robust's validated reads, docs/ALGORITHM.md): a "not
// here" is taken only from a second read of the chunk that the chunk's
// write version vouches for. A fault in that check shows only when both
// reads are torn: the first misses a key a burst moved, and the second
// misses it again without the check noticing. The run holds every
// validation's second read open after a random number of its lanes
// (sched::tear_target::validation, `tear=validation` in the replay line,
// kept by shrinking) until another team has written the chunk and
// completed an operation, and parks the victims inside their other reads
// (mid-read) so that first reads tear too; only the victims' reads are
// held (park_teams). Two shapes. At level 0, two thirds of the runs: keys
// 1..12 in the head chunk (a search reads the header, then that chunk); a
// victim looks up the keys above 2 and may delete one (contains' and
// delete's "not here"), while a writer deletes and re-inserts 1 and 2,
// each operation a shift of them all. Above: keys 1..202 (robust: level 1
// the multiples of 7, its last chunk 98..189 full, as the raise_race
// layout); two victims delete level-1 keys of that chunk (delete's look at
// levels 1 and 2), a third inserts past 202 and splits levels 0 and 1
// (the split's down-pointer updates, validated "not in level i+1"), while
// a writer deletes smaller level-1 keys of the chunk, each a shift.
#pragma once

#include <span>
#include <vector>

#include "core/team.hpp"
#include "fuzz/generators.hpp"

namespace gfsl::fuzz {

enum class scenario : std::uint8_t { restart, zombie_next, stale_upper_key, raise_race, unlink_split, validation_tear };
const char* name(scenario s);

// A directed run of kind `s` for the campaign (host backend: the park
// strategy and the listed workload are the scheduled backend's), drawn with
// `rng`. At a fixed granularity (lim.vary_granularity false) it keeps that
// granularity: a campaign at chunk granularity makes no torn reads, directed
// or not. Otherwise the torn-read kinds run at lane granularity.
run_config directed_run(scenario s, const generator_limits& lim, mutant m, variant v, team_rng& rng);
// The same for a choice of the limits' subject (GFSL's: the scenarios are its shapes).
run_config directed_run(scenario s, const generator_limits& lim, const subject_choice& c, team_rng& rng);

// The directed runs of one batch: restart, raise_race and (with targeted
// parks) unlink_split once; the torn-read kinds twice
// each (a few milliseconds a run), where the campaign reads lane by lane
// (lane granularity, or varied): at chunk or line granularity no read of a
// 16-entry chunk is torn, and they would only be costly random runs.
// validation_tear four times, on the variant that validates (robust) and
// while lim.validation_tears is on.
std::vector<scenario> directed_runs_of(const generator_limits& lim, variant v = default_variant);
std::vector<scenario> directed_runs_of(const generator_limits& lim, const subject_choice& c);

// The level-2 keys of the restart run's structure, which its deletes aim at
// (they differ by variant: the raised-key rules differ).
std::span<const key_type> restart_level2_keys(variant v);
// The stale_upper_key run's level-2 chunks, less the keys also in level 3.
std::span<const std::vector<key_type>> stale_upper_level2_chunks(variant v);

}  // namespace gfsl::fuzz
