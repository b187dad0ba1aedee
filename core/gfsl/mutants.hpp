// Seeded bugs: realistic faults planted in the GFSL core, switched at run time
// to measure what the testbed catches. The algorithm takes them through a
// template parameter: `algorithm<Team, true>` asks at each planted point
// whether its mutant is active; `algorithm<Team>` (the default) compiles every
// such point away, so the correct core pays nothing.
//
// Each entry names the thesis argument (4.2-4.3) the fault breaks. Sources:
// ConMAn-style operators (shift / shrink / split a critical region, remove or
// weaken synchronisation) and GFSL's own ordering arguments.
#pragma once

#include <cstdint>
#include <string_view>

#include "../platform.hpp"
#include "../types.hpp"

#include "types.hpp"
namespace gfsl {

enum class mutant : std::uint8_t {
  none = 0,
  insert_left_to_right,
  remove_right_to_left,
  split_empty_before_next,
  merge_left_to_right,
  zombie_mark_before_copy,
  bottom_unlocked_early,
  no_recheck_after_lock,
  zombies_not_skipped,
  merge_into_unlocked,
  raised_key_points_past,
  merge_final_chunk,
  unlink_without_lock,
  insert_without_duplicate_check,
  merge_threshold_too_low,
  level_counter_not_decremented,
  zombie_unlocked_after_merge,
  lowest_lane_precedence,
  max_after_removal,
  release_weakened,
  load_relaxed,
  zombie_next_not_reloaded,
  absence_not_validated,
  version_not_bumped,
  head_fallback_wrong,
  removed_key_not_sought_above,
  unlink_without_recheck,
  restart_steps_down,
  validation_lock_from_reread,
  replace_past_max,
  count_
};

struct mutant_info {
  mutant id;
  std::string_view name;
  std::string_view backends;  // where it can take effect: "host,cuda" or "cuda"
  std::string_view breaks;    // the argument or invariant it breaks
  // Non-empty for a mutant that behaves like the correct core whenever a
  // chunk read is one atomic event (the only granularity at which the
  // correct core is itself linearizable, docs/FINDINGS.md): why.
  std::string_view equivalent = {};
  // The variants it plants a bug in: the robust variant's own mechanisms do
  // not exist in the thesis variant, where such a mutant changes nothing.
  std::string_view variants = "thesis,robust";
  // Non-empty for a mutant that the robust variant's mechanisms make behave
  // like the correct core: why. At every read granularity, unless
  // `robust_equivalent_whole_chunk_only`.
  std::string_view robust_equivalent = {};
  bool robust_equivalent_whole_chunk_only = false;
  // The argument needs sc memory as well as whole-chunk reads: under ptx a
  // whole-chunk read is not one instant (each lane's load may return an
  // older store of its own), and campaigns drawing ptx runs kill it.
  bool equivalence_needs_sc = false;
};

// Why mutant `m` behaves like the correct core of `v` when chunk reads are
// `whole_chunk` (one instant) or not; empty when it can be told apart, and
// then a campaign that does not kill it has missed a bug.
// `sc_memory`: every run of the campaign under sc.
inline std::string_view equivalence_of(const mutant_info& m, variant v, bool whole_chunk, bool sc_memory = true) {
  if (m.equivalence_needs_sc && !sc_memory) return {};
  if (whole_chunk && !m.equivalent.empty()) return m.equivalent;
  if (v == variant::robust && !m.robust_equivalent.empty() && (whole_chunk || !m.robust_equivalent_whole_chunk_only)) {
    return m.robust_equivalent;
  }
  return {};
}

// The robust variant concludes "k is not here" only from a read that no burst
// of writes overlapped (the write version, docs/ALGORITHM.md), and a positive
// answer shows an entry some store wrote, each entry one word, copied but never
// invented: the order of the stores inside a burst is seen by no answer.
inline constexpr std::string_view robust_hides_write_order =
    "robust: every \"not here\" comes from a read no burst of writes overlapped (the write version), and every entry "
    "a read shows was written whole; the order of the stores inside a burst is seen by no answer, and the mid-run "
    "invariants (lists, final chunk, level head, down reachability) do not depend on it";

inline constexpr mutant_info mutant_catalog[] = {
    {mutant::insert_left_to_right, "insert-left-to-right", "host,cuda",
     "executeInsert (Alg. 4.7) shifts from the insertion index upwards: a key is overwritten before its copy exists, "
     "so a reader can miss it (4.2.2: writes right to left so no key temporarily disappears)",
     {}, "thesis,robust", robust_hides_write_order},
    {mutant::remove_right_to_left, "remove-right-to-left", "host,cuda",
     "removal shifts from the top down: a key is overwritten before its copy one entry left exists (4.2.3: writes left "
     "to right)",
     {}, "thesis,robust", robust_hides_write_order},
    {mutant::split_empty_before_next, "split-empty-before-next", "host,cuda",
     "splitCopy empties the moved entries before the single NEXT store links the new chunk: the moved keys are in no "
     "reachable chunk for a while (Alg. 4.9 lines 30-32)",
     {}, "thesis,robust", robust_hides_write_order},
    {mutant::merge_left_to_right, "merge-left-to-right", "host,cuda",
     "executeRemoveMerge writes the successor from the lowest index up: its own keys are overwritten before they are "
     "copied right (4.2.3: higher indexes first)",
     {}, "thesis,robust", robust_hides_write_order},
    {mutant::zombie_mark_before_copy, "zombie-mark-before-copy", "host,cuda",
     "the merging chunk is marked a zombie before its keys are copied: readers skip it while its successor does not "
     "have the keys yet (Alg. 4.12 lines 21-22)"},
    {mutant::bottom_unlocked_early, "bottom-unlocked-early", "host,cuda",
     "insert releases the bottom chunk before raising the key: a concurrent delete of the key can run between, leaving "
     "it in level i+1 but not in level i (4.2.2: the bottom lock is held until all levels are done)"},
    {mutant::no_recheck_after_lock, "no-recheck-after-lock", "host,cuda",
     "findAndLockEnclosing does not re-read the chunk after taking its lock: a split or removal that moved the range on "
     "goes unnoticed and the key lands in a chunk that no longer encloses it (Alg. 4.8 lines 16-21)",
     {}, "thesis,robust",
     "robust, whole-chunk reads: the lock CAS expects the LOCK word the read saw, version included, so it succeeds only "
     "if no burst began or ended since that read, which is then the chunk as it is under the lock (with lane-by-lane "
     "reads the data lanes may predate the LOCK lane, and the re-read is needed)",
     true, true},
    {mutant::zombies_not_skipped, "zombies-not-skipped", "host,cuda",
     "lateral searches treat zombies as live: a deleted key still physically in its zombie is found again (4.2.1: "
     "zombies are ignored by taking lateral steps)"},
    {mutant::merge_into_unlocked, "merge-into-unlocked", "host,cuda",
     "lockNextChunk returns the successor without locking it: the merge writes into a chunk another team may be "
     "changing (removal of synchronisation; 4.2.3)"},
    {mutant::raised_key_points_past, "raised-key-points-past", "host,cuda",
     "a key raised by a split points at the chunk after the one holding it: keys between are unreachable through it "
     "(4.3, Order Between Down Pointers)"},
    {mutant::merge_final_chunk, "merge-final-chunk", "host,cuda",
     "an underfull final chunk is marked a zombie like any other: the level ends in a zombie and its keys are lost "
     "(4.2.3, Deleting From Last Chunk in Level)"},
    {mutant::unlink_without_lock, "unlink-without-lock", "host,cuda",
     "lazy zombie unlinking rewrites the previous chunk's NEXT without its lock: it races with a split of that chunk "
     "and can unlink the new chunk (Alg. 4.6 lines 10-20: try-lock)"},
    {mutant::insert_without_duplicate_check, "insert-without-duplicate-check", "host,cuda",
     "insertToLevel does not check, under the lock, whether the key arrived meanwhile: two inserts of one key both "
     "succeed (Alg. 4.5 line 32)"},
    {mutant::merge_threshold_too_low, "merge-threshold-too-low", "host,cuda",
     "an off-by-two in the merge test (merge only below DSIZE/3 - 1): live chunks fall under the fill bound "
     "(Alg. 4.12 line 4)"},
    {mutant::level_counter_not_decremented, "level-counter-not-decremented", "host,cuda",
     "a merge does not decrement the level's chunk counter (Alg. 4.12 line 24): counters drift from the chunks present"},
    {mutant::zombie_unlocked_after_merge, "zombie-unlocked-after-merge", "host,cuda",
     "Alg. 4.12 line 26 read literally: the zombie is unlocked after the merge, which erases its mark; the stale chunk "
     "with the deleted key becomes live again"},
    {mutant::lowest_lane_precedence, "lowest-lane-precedence", "host,cuda",
     "ballots give precedence to the lowest voting lane, not the highest: transient duplicates and stale entries win "
     "over the NEXT lane (4.2.1: precedence to higher tIds). Not equivalent even with whole-chunk reads: removing a "
     "chunk's max key lowers the max field first (4.2.3), so a read between those two writes sees the key in a DATA "
     "lane and NEXT voting to go on; with the DATA lane winning, another team's delete and then insert of that key "
     "both answered false (docs/FINDINGS.md)",
     {}, "thesis,robust",
     "robust: a removal lowers the max in the same wave as its shift, so a DATA lane shows k while NEXT votes past it "
     "only in a read cut by that wave (a reader that sees k there loaded k's lane before the wave reached it, and any "
     "answer \"absent\" comes after) or between a split's NEXT store and the emptying of the moved entries (k is then "
     "also in the fresh chunk, which stays locked until they are empty, so \"k is here\" is true). Duplicates of a "
     "key among DATA lanes, mid-shift, carry one entry; upper-level steps taken from a lower lane lengthen the "
     "lateral walk below, nothing else"},
    {mutant::max_after_removal, "max-after-removal", "host,cuda",
     "removal lowers the max field after the max key is gone, not before (4.2.3: so that searches never see a max "
     "that is not in the chunk)",
     "with whole-chunk reads a reader that sees the key gone and the old max still in place answers as it would after "
     "the max drops: keys between the new and the old max are in no chunk, and the max key itself is being deleted"},
    {mutant::release_weakened, "release-weakened", "cuda",
     "every release store of the device team becomes relaxed: another SM may see a NEXT pointer before the chunk it "
     "publishes, or an unlock before the writes it protects (the device memory-order argument of docs/ALGORITHM.md)"},
    {mutant::load_relaxed, "load-relaxed", "cuda",
     "every lane of a chunk read loads relaxed instead of acquire: a reader may see a NEXT pointer or an entry without "
     "the writes published before it (the device memory-order argument of docs/ALGORITHM.md); an amplifier of torn "
     "reads for gfsl stress"},
    // The robust variant's own mechanisms (docs/ALGORITHM.md, "Reads that are
    // not one instant"); under the thesis variant they plant nothing.
    {mutant::zombie_next_not_reloaded, "zombie-next-not-reloaded", "host,cuda",
     "robust: a read that shows a zombie mark follows the NEXT lane loaded with the read, which may predate a split "
     "and the merge that made the zombie: the live chunk between is skipped and its keys lost", "a whole-chunk read is one instant: nothing for this mechanism to repair", "robust"},
    {mutant::absence_not_validated, "absence-not-validated", "host,cuda",
     "robust: a search concludes \"k is not here\" from a lane-by-lane read without the write-version check, so a "
     "shift that moves k between two lanes' loads hides it (false contains and delete)", "a whole-chunk read is one instant: nothing for this mechanism to repair", "robust",
     {}, false, true},
    {mutant::version_not_bumped, "version-not-bumped", "host,cuda",
     "robust: the lock holder never moves the write version around its bursts, so the validation of a \"not here\" "
     "passes over a read that overlapped a shift", "a whole-chunk read is one instant: nothing for this mechanism to repair", "robust",
     {}, false, true},
    {mutant::head_fallback_wrong, "head-fallback-wrong", "host,cuda",
     "robust: a backtrack with no previous chunk restarts from the top instead of going on from the level's head "
     "chunk, so a stale upper-level key makes a search loop forever", "a whole-chunk read is one instant: nothing for this mechanism to repair", "robust"},
    {mutant::removed_key_not_sought_above, "removed-key-not-sought-above", "host,cuda",
     "robust: a delete that removes its key from an upper level does not look for it again one level up; a split of "
     "that level which made the key its fresh chunk's minimum raised it there after the delete's first look, and the "
     "key stays in level i+1 without being in level i", {}, "robust"},
    // Faults whose interleaving is a coverage pair (core/coverage.hpp): a
    // team inside a window of its operation while another team's operation
    // makes one effect on the same chunk. The campaign's targeted parks
    // reach them (docs/FUZZING.md, "Interleaving coverage").
    {mutant::unlink_without_recheck, "unlink-without-recheck", "host,cuda",
     "lazy zombie unlinking takes the predecessor's lock but does not check that its NEXT still names the zombie: a "
     "split of the predecessor between the search's read and the lock (pair unlink x split) has moved its NEXT to the "
     "fresh chunk, which the redirect unlinks with its keys (Alg. 4.6 lines 14-17: the re-check under the lock)"},
    {mutant::restart_steps_down, "restart-steps-down", "host,cuda",
     "a search that finds every key of an upper-level chunk above k and has no previous chunk in the level steps down "
     "through the chunk's lowest key instead of restarting (or, robust, walking from the level's head): the key it "
     "stepped down at was deleted after its upper read (pair step-down x remove), and the chunk below holds only larger "
     "keys, so a present key is reported absent (4.2.1, Lock-Freedom)"},
    {mutant::validation_lock_from_reread, "validation-lock-from-reread", "host,cuda",
     "robust: a validation closes on the LOCK lane of its own second read instead of loading the LOCK word after "
     "that read (one load saved): lane by lane the LOCK lane may be loaded before the data lanes it vouches for, so a "
     "burst that lands in the second read after its LOCK lane goes unseen and a torn read answers \"not here\"",
     "a whole-chunk read is one instant: nothing for this mechanism to repair", "robust"},
    {mutant::replace_past_max, "replace-past-max", "host,cuda",
     "robust, re-raise rule: a delete puts the next key of its level-0 chunk in place of its key at an upper level "
     "even where that key is its chunk's last and the chunk is not the level's final one: the entry rises past the "
     "chunk's max, so a search for it at that level goes on to the next chunk, and the max field no longer names the "
     "chunk's largest key (4.3)", {}, "robust"},
};

inline constexpr std::size_t mutant_count = sizeof(mutant_catalog) / sizeof(mutant_catalog[0]);

inline const mutant_info* find_mutant(std::string_view name) {
  for (const mutant_info& m : mutant_catalog) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

inline std::string_view mutant_name(mutant m) {
  for (const mutant_info& i : mutant_catalog) {
    if (i.id == m) return i.name;
  }
  return "none";
}

}  // namespace gfsl
