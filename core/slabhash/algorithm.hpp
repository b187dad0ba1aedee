// SlabHash (Ashkiani et al., IPDPS 2018, ../shared/papers/slabhash-ashkiani-2018.txt),
// written once against the team interface of core/team.hpp, in two variants
// from one source (docs/FINDINGS.md, "SlabHash"):
//
// `published`: upstream's concurrent operations, faults included. A slab is
//   read with relaxed loads (upstream: plain 4-byte loads, no fences); search
//   walks the whole chain; unique insert looks for k only in the slab it is
//   reading and claims that slab's first EMPTY pair by a 64-bit CAS from
//   EMPTY; delete empties the pair where it saw k with an unconditional
//   64-bit exchange. Two faults follow (docs/FINDINGS.md, "SlabHash"): deletes reopen holes that
//   inserts of one key claim at different places (upstream issues 27 and 17:
//   the same key twice), and a delete's exchange erases a pair that another
//   delete emptied and an insert of another key refilled in between (a
//   completed insert lost).
//
// `fixed` (the default): every pair goes EMPTY -> live -> TOMBSTONE and never
//   back while operations run (the paper's own remedy for unique keys,
//   section III-B3: "we must mark deleted elements differently than being
//   empty"); insert checks every pair before the one it claims; delete is a
//   CAS from the exact pair it read. It is linearizable when a slab read is
//   lane by lane, each lane's load at its own moment (the argument below).
//
// Pairs are read as whole 64-bit words here, one atomic per pair. Upstream
// reads the key (even lane) and the value (odd lane) with two 4-byte loads,
// so a value could tear from its key; the set semantics below depend on keys
// only (and a fixed tombstone keeps its value, so even a torn read of a pair
// being deleted shows the value it had).
//
// Work sharing (section IV-A: each lane of a warp brings an operation, the
// warp serves them one at a time) is the caller's: `apply` is one operation
// of the whole team.
//
// Bump pool instead of SlabAlloc (core/slabhash/layout.hpp). A team whose
// CAS to link its new slab loses keeps that slab for its operation's next
// append; an operation that ends with it unused leaks it (pristine and
// unreachable: the snapshot invariants accept it).
//
// ---- Why `fixed` is linearizable ----------------------------------------------
//
// Positions: the pairs of a bucket in chain order (slab by slab along next,
// pairs 0..14 inside a slab). A slab read is 16 loads at arbitrary moments.
//
// (S) A pair's word only moves EMPTY -> (k, v) -> (TOMBSTONE, v), each step
//     one successful CAS; next words only move none -> index, by one CAS. So
//     whatever a load saw non-EMPTY stays non-EMPTY, a pair seen live (k, v)
//     is later (k, v) or its tombstone, and a chain only grows at its end.
// (P) Prefix: at every moment the non-EMPTY pairs of a bucket are a prefix of
//     its positions. Insert claims position i only when its reads saw every
//     earlier position non-EMPTY: earlier slabs were each read with no EMPTY
//     lane (insert follows next only then), and i is the lowest EMPTY lane of
//     its read of i's slab. By (S) those positions are still non-EMPTY at the
//     CAS, so the prefix grows by one. An appended slab is all EMPTY, at the end.
// (U) At most one live pair of key k at any moment. Insert's CAS at position i
//     (time T): positions before i were seen non-EMPTY and not live k, so by
//     (S) none is live k at T (a pair seen holding j or a tombstone never
//     holds k later); position i is EMPTY just before T, so by (P) every later
//     position is EMPTY then. So no live k just before T, exactly one after.
//     Only bucket_of(k) ever holds k.
//
// Linearization points:
// - insert true: its successful claim CAS (k absent just before, by (U)'s
//   argument; present after).
// - insert false, contains true: the load of the lane that showed live k (k
//   was present at that moment, inside the operation). contains' value: that
//   pair's, which never changes while it lives.
// - delete true: its successful CAS from (k, v) to (TOMBSTONE, v): k present
//   before, absent after by (U).
// - delete false after a failed CAS: it saw (k, v) at pair p at time t1 and
//   its CAS at t2 failed, so by (S) another delete tombstoned p at some d in
//   (t1, t2); by (U) p was the only live k, so k is absent just after d: the
//   point is there, inside the operation.
// - contains false, delete false without a sighting: the walk ended at an
//   EMPTY lane (at m, seen EMPTY at time t_m) or at a next word seen "none".
//   Suppose k were present throughout the operation: by (U) and (S) one pair
//   p at position q, live from before the start to after the end (a gap
//   between two pairs of k would be a moment of absence). If m < q, (P) at
//   t_m puts an EMPTY before a non-EMPTY: impossible. Otherwise the walk
//   loaded q during the operation and saw it live k: it would have answered
//   "found". If the walk ended at next = none of slab L at time t, q's slab
//   was appended after t, so p was claimed after t: not live throughout.
//   So k is absent at some moment inside the operation: the point is there.
// None of these needs a slab read to be one instant: each uses single loads.
//
// Memory order (device): the argument's "moments" become happens-before. A
// claim at position i follows reads that saw the earlier positions
// non-EMPTY; with acquire slab reads and acq_rel CASes (the tombstone CAS is
// an RMW, so reading it still synchronizes with the claim before it), every
// claim of a bucket happens after the claims before it, and a team that sees
// a pair claimed sees every claim before it, so (P) and (U) hold in every
// team's view. The next word's CAS needs no release for the slab it links
// (pristine since before the run); it is acq_rel like the claims.
#pragma once

#include <cstdint>

#include "coverage.hpp"
#include "../platform.hpp"
#include "../team.hpp"
#include "../types.hpp"
#include "layout.hpp"
#include "mutants.hpp"

namespace gfsl::slabhash {

// Index of the lowest set bit (upstream's __ffs - 1); x != 0.
GFSL_FN int lowest_lane(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __ffs(x) - 1;
#else
  return __builtin_ctz(x);
#endif
}

template <class Team, slab_variant V = default_slab_variant, bool Mutable = false>
class algorithm {
 public:
  static constexpr bool fixed = V == slab_variant::fixed;
  using lanes = typename Team::lanes;
  static_assert(Team::width == slab_words, "one lane per slab word: a SlabHash team is 16 lanes");

  GFSL_FN algorithm(Team& team, std::uint64_t* words, const params& p, slab_mutant m = slab_mutant::none)
      : t_(team), words_(words), p_(p), capacity_(slab_capacity(p)), mutant_(m) {}

  GFSL_FN op_result apply(op_kind kind, key_type k, value_type v) {
    switch (kind) {
      case op_kind::insert: return insert(k, v);
      case op_kind::remove: return remove(k);
      case op_kind::contains: return contains(k);
    }
    return {status::key_out_of_range, false, 0};
  }

  // Search (Fig. 2 search): the lowest lane holding k wins, as upstream's __ffs.
  GFSL_FN op_result contains(key_type k) {
    if (!is_user_key(k)) return {status::key_out_of_range, false, 0};
    std::uint32_t s = bucket_of(k, p_);
    for (;;) {
      const lanes w = read_slab(s);
      const std::uint32_t found = lanes_with_key(w, k);
      if (found != 0) return {status::ok, true, static_cast<value_type>(t_.shfl_high(w, lowest_lane(found)))};
      if constexpr (fixed) {
        // An EMPTY lane ends the non-EMPTY prefix: every later pair is EMPTY (P).
        std::uint32_t end = empty_lanes(w);
        if (active(slab_mutant::contains_stops_at_tombstone)) end |= tombstone_lanes(w);
        if (end != 0) return {status::ok, false, 0};
      }
      const std::uint32_t next = t_.shfl_high(w, next_word);
      if (next == no_slab) return {status::ok, false, 0};
      if (next >= capacity_) return corrupt();
      s = next;
    }
  }

  // Unique insert (Fig. 2 replace, without replacing: insert-if-absent).
  GFSL_FN op_result insert(key_type k, value_type v) {
    if (!is_user_key(k)) return {status::key_out_of_range, false, 0};
    std::uint32_t s = bucket_of(k, p_);
    std::uint32_t spare = no_slab;  // allocated, not linked: kept for this operation's next append
    for (;;) {
      const lanes w = read_slab(s);
      std::uint32_t claimable = empty_lanes(w);
      if (active(slab_mutant::insert_reuses_tombstone)) claimable |= tombstone_lanes(w);
      // published: k is looked for in this slab only, before claiming in it
      // (upstream issue 17). fixed: every slab walked is looked at, and a
      // slab is left only when it has no EMPTY lane, so the claim at i comes
      // after seeing every earlier position (P, U).
      const bool look_here = !(active(slab_mutant::insert_checks_claim_slab_only) && claimable == 0);
      if (look_here && lanes_with_key(w, k) != 0) return {status::ok, false, 0};
      if (claimable != 0) {
        int lane = active(slab_mutant::claim_last_empty) ? highest_bit(claimable) : lowest_lane(claimable);
        t_.mark(open_mark(slab_window::claim), s);
        for (;;) {
          std::uint64_t expected = t_.shfl(w, lane);  // EMPTY (a tombstone only under insert-reuses-tombstone)
          if (t_.cas(slab_ptr(s) + lane, lane, expected, make_pair(k, v), update_order)) {
            t_.mark(effect_mark(slab_effect::insert), s);
            return {status::ok, true, 0};
          }
          if (!active(slab_mutant::no_reread_after_failed_claim)) break;
          claimable &= ~(1u << lane);
          if (claimable == 0) break;
          lane = lowest_lane(claimable);
        }
        // Another team claimed that pair, maybe with k: read this slab again
        // (upstream does the same; fixed needs it for U).
        t_.mark(mark_close, s);
        continue;
      }
      const std::uint32_t next = t_.shfl_high(w, next_word);
      if (next != no_slab) {
        if (next >= capacity_) return corrupt();
        s = next;
        continue;
      }
      // The chain ends here, full: link a new slab, then read this slab again
      // and follow whichever slab won.
      if (spare == no_slab) {
        spare = allocate();
        if (spare == no_slab) return {status::pool_exhausted, false, 0};
      }
      std::uint64_t* next_ptr = slab_ptr(s) + next_word;
      if (active(slab_mutant::append_by_store)) {
        t_.store(next_ptr, next_word, next_word_of(spare), mem_order::release);
        spare = no_slab;
        continue;
      }
      std::uint64_t expected = last_next_word;
      if (t_.cas(next_ptr, next_word, expected, next_word_of(spare), update_order)) {
        spare = no_slab;
        t_.mark(effect_mark(slab_effect::append), s);
      }
    }
  }

  GFSL_FN op_result remove(key_type k) {
    if (!is_user_key(k)) return {status::key_out_of_range, false, 0};
    std::uint32_t s = bucket_of(k, p_);
    for (;;) {
      const lanes w = read_slab(s);
      const std::uint32_t found = lanes_with_key(w, k);
      if (found != 0) {
        const int lane = lowest_lane(found);
        const std::uint64_t seen = t_.shfl(w, lane);
        std::uint64_t* pair = slab_ptr(s) + lane;
        t_.mark(open_mark(slab_window::erase), s);
        if constexpr (!fixed) {
          // Upstream: atomicExch to EMPTY_PAIR, whatever the pair holds by
          // now (the lost insert of docs/FINDINGS.md), and the answer is true.
          t_.exchange(pair, lane, empty_pair, mem_order::relaxed);
          t_.mark(effect_mark(slab_effect::remove), s);
          return {status::ok, true, pair_value(seen)};
        } else {
          const std::uint64_t tombstone = make_pair(tombstone_key, pair_value(seen));
          if (active(slab_mutant::delete_by_exchange)) {
            t_.exchange(pair, lane, tombstone, update_order);
            t_.mark(effect_mark(slab_effect::remove), s);
            return {status::ok, true, pair_value(seen)};
          }
          std::uint64_t expected = seen;
          const std::uint64_t desired = active(slab_mutant::delete_empties_pair) ? empty_pair : tombstone;
          if (t_.cas(pair, lane, expected, desired, update_order)) {
            t_.mark(effect_mark(slab_effect::remove), s);
            return {status::ok, true, pair_value(seen)};
          }
          t_.mark(mark_close, s);
          // The pair was (k, v) and no longer is: only another delete moves
          // it on (S). k was absent just after that delete's CAS.
          if (active(slab_mutant::delete_true_on_failed_cas)) return {status::ok, true, pair_value(seen)};
          return {status::ok, false, 0};
        }
      }
      if constexpr (fixed) {
        if (empty_lanes(w) != 0) return {status::ok, false, 0};  // end of the prefix (P)
      }
      const std::uint32_t next = t_.shfl_high(w, next_word);
      if (next == no_slab) return {status::ok, false, 0};
      if (next >= capacity_) return corrupt();
      s = next;
    }
  }

 private:
  // published: upstream's relaxed atomics. fixed: acq_rel, for the
  // happens-before chain of a bucket's claims (see the top).
  static constexpr mem_order update_order = fixed ? mem_order::acq_rel : mem_order::relaxed;

  GFSL_FN bool active(slab_mutant m) const {
    if constexpr (Mutable && fixed) {
      return mutant_ == m;
    } else {
      (void)m;
      return false;
    }
  }

  GFSL_FN std::uint64_t* slab_ptr(std::uint32_t s) const { return words_ + slab_offset(s); }

  // published: plain loads upstream, relaxed here (a weak-load variant is a
  // later issue). fixed: acquire, for (P) and (U) on the device.
  GFSL_FN lanes read_slab(std::uint32_t s) {
    const bool relaxed = !fixed || active(slab_mutant::slab_reads_relaxed);
    return t_.load_lanes(slab_ptr(s), relaxed ? mem_order::relaxed : mem_order::acquire);
  }

  GFSL_FN std::uint32_t lanes_with_key(const lanes& w, key_type k) const {
    return t_.ballot(w, [k](int lane, std::uint64_t x) { return lane < pairs_per_slab && pair_key(x) == k; });
  }
  // Upstream tests the key lane against EMPTY_KEY; an EMPTY key comes only
  // with an all-ones pair (the snapshot invariants check it).
  GFSL_FN std::uint32_t empty_lanes(const lanes& w) const {
    return t_.ballot(w, [](int lane, std::uint64_t x) { return lane < pairs_per_slab && pair_key(x) == empty_key; });
  }
  GFSL_FN std::uint32_t tombstone_lanes(const lanes& w) const {
    return t_.ballot(w, [](int lane, std::uint64_t x) { return lane < pairs_per_slab && pair_key(x) == tombstone_key; });
  }

  GFSL_FN std::uint32_t allocate() {
    // Relaxed: the index is all we take from the counter; the slab is
    // pristine since before the run and reaches others only through the
    // CAS that links it.
    const std::uint64_t idx = t_.fetch_add(words_ + alloc_counter_word, 0, 1, mem_order::relaxed);
    if (idx >= capacity_) {
      std::uint64_t expected = error_none;
      t_.cas(words_ + error_word_index, 0, expected, error_pool_exhausted);  // first error wins
      return no_slab;
    }
    return static_cast<std::uint32_t>(idx);
  }

  // A next index past the pool: only a corrupt table (or a planted bug) has
  // one. Stop before touching memory outside the table.
  GFSL_FN op_result corrupt() {
    std::uint64_t expected = error_none;
    t_.cas(words_ + error_word_index, 0, expected, error_corrupt);
    return {status::corrupt, false, 0};
  }

  Team& t_;
  std::uint64_t* words_;
  params p_;
  std::uint32_t capacity_;
  slab_mutant mutant_;
};

}  // namespace gfsl::slabhash
