// The GFSL algorithm (thesis chapter 4, Alg. 4.1-4.12), written once against the
// team interface of core/team.hpp. Compiled by the host compiler for the CPU
// backend and by nvcc for the device backend; nothing here knows which.
//
// Conventions:
// - A chunk is read whole with `read` (one load per lane) into a `lanes` value
//   `kv`; lane i holds entry i. DATA lanes are 0..dsize-1, then NEXT, then LOCK.
// - Decisions come from ballots, and the highest lane that votes wins. Writers
//   order their stores so that a reader that sees a partly written chunk still
//   decides correctly under that rule (4.2.1, 4.2.2 executeInsert, 4.2.3).
// - Every store to a chunk that other teams can reach is a release store, made
//   one entry at a time in the order the thesis prescribes; the backend makes
//   each store visible after the team's earlier stores (see device_team.cuh).
// - Lock order, which keeps the algorithm deadlock-free: level 0 before upper
//   levels, lower levels before higher, and within a level left to right
//   (a chunk, then its successor). Try-locks (zombie unlinking) never wait.
#pragma once

#include <cstdint>
#include <type_traits>

#include "coverage.hpp"
#include "layout.hpp"
#include "mutants.hpp"
#include "../platform.hpp"
#include "stats.hpp"
#include "../team.hpp"
#include "../types.hpp"
#include "types.hpp"

namespace gfsl {

// Whether a team type makes the algorithm's calls apart (algorithm::apart),
// and the values it is detached into; teams that do not (the host's, and
// any with state of their own) say so by default.
struct team_not_detached {};
template <class T, bool Apart>
struct team_detached_as {
  using type = team_not_detached;
};
template <class T>
struct team_detached_as<T, true> {
  using type = typename T::detached;
};
template <class T, class = void>
struct team_calls_apart : std::false_type {
  using detached = team_not_detached;
};
template <class T>
struct team_calls_apart<T, std::void_t<decltype(T::calls_apart)>> : std::bool_constant<T::calls_apart> {
  using detached = typename team_detached_as<T, T::calls_apart>::type;
};

// Threshold for the p_chunk coin: p in [0, 1] -> random_u32() < threshold.
inline constexpr std::uint64_t p_chunk_threshold_of(double p) {
  if (!(p > 0.0)) return 0;
  if (p >= 1.0) return 1ull << 32;
  return static_cast<std::uint64_t>(p * 4294967296.0);
}
// The shape rule word an algorithm takes: the p_chunk threshold (at most
// 2^32) and, above it, the re-raise option (docs/ALGORITHM.md, "Re-raising
// on delete"): off, the thesis' rule.
inline constexpr std::uint64_t reraise_flag = 1ull << 40;
inline constexpr std::uint64_t p_chunk_threshold_mask = reraise_flag - 1;
inline constexpr std::uint64_t shape_rule_of(double p_chunk, bool reraise) {
  return p_chunk_threshold_of(p_chunk) | (reraise ? reraise_flag : 0);
}

// `Mutable` compiles in the seeded bugs of core/gfsl/mutants.hpp (one active at a
// time, chosen at construction); the default compiles them all away.
//
// `V` chooses the variant (core/gfsl/types.hpp, docs/ALGORITHM.md): `thesis` is the
// published algorithm, exactly, which assumes that a team reads a chunk in one
// instant; `robust` adds what keeps it linearizable when the read is lane by
// lane (every `if constexpr (robust)` below): a zombie's NEXT re-read after its
// mark, a write version in the LOCK word validating every "not here", and a
// backtrack that falls back to the level's head instead of restarting.
template <class Team, bool Mutable = false, variant V = default_variant>
class algorithm {
 public:
  static constexpr bool robust = V == variant::robust;
  static constexpr int N = Team::width;
  using shape = chunk_shape<N>;
  using lanes = typename Team::lanes;
  using row = typename Team::row;
  using view = structure_view<N>;

  static constexpr int dsize = shape::dsize;
  static constexpr int next_lane = shape::next_lane;
  static constexpr int lock_lane = shape::lock_lane;
  static constexpr int max_levels = shape::max_levels;
  static constexpr int none = -1;

  // shape_rule (see shape_rule_of): the p_chunk coin's threshold (a split
  // raises a key when random_u32() < threshold; 2^32 means always), and
  // whether a delete re-raises (reraise_flag). One word, so that the option
  // costs the device no register.
  GFSL_FN algorithm(Team& team, view structure, std::uint64_t shape_rule, mutant active = mutant::none)
      : t_(team), s_(structure), p_threshold_(shape_rule), mutant_(active) {}

  // contains (Alg. 4.1), insert (Alg. 4.5) and delete (Alg. 4.11). contains
  // keeps a search of its own (docs/TUNING.md, "contains' own search").
  GFSL_FN op_result contains(key_type k) {
    if (!is_user_key(k)) return {status::key_out_of_range, false, 0};
    const lanes header = read_header();
    const std::uint32_t votes = header_votes(header);
    if (stopped_in(votes)) return {status::stopped, false, 0};
    return contains_from(header, votes, k);
  }
  GFSL_FN op_result insert(key_type k, value_type v) { return apply(op_kind::insert, k, v); }
  GFSL_FN op_result remove(key_type k) { return apply(op_kind::remove, k, 0); }

  // Both updates begin with the same search (searchDown with a path, then
  // searchLateral), made here with their differences as run-time
  // arguments: insert's "not here" needs no validation (insert_to_level
  // re-checks under the lock). Both then lock the level-0 chunk enclosing k
  // with the same spin (Alg. 4.5 via insertToLevel, Alg. 4.11 line 8).
  // Each kind makes the accesses it made with a search of its own. Why one
  // call site: docs/TUNING.md, "One search for both updates".

  GFSL_FN op_result apply(op_kind kind, key_type k, value_type v) {
    if (!is_user_key(k)) return {status::key_out_of_range, false, 0};
    const lanes header = read_header();
    const std::uint32_t votes = header_votes(header);
    if (stopped_in(votes)) return {status::stopped, false, 0};
    if (kind == op_kind::contains) return contains_from(header, votes, k);
    const bool insert = kind == op_kind::insert;
    lanes path{};
    const int height = height_in_votes(votes);
    const chunk_index start = search_down(k, 0, path, true, height, head_in_header(header, height));
    const lateral hit = search_lateral(k, start, 0, true, !insert);
    if ((hit.tid != none) == insert) return {status::ok, false, 0};  // present / absent
    // robust: the spin starts from the search's read of the chunk (thesis:
    // a read of its own, the access sequence its reproductions replay).
    t_.mark(open_mark(gfsl_window::lock_enclosing), hit.chunk);
    const locked_chunk bottom = lock_enclosing_from(hit.chunk, hit.kv, robust, k);
    t_.mark(mark_close, bottom.chunk);
    if (insert) return insert_locked(bottom, path, k, v);
    return remove_locked(bottom, path, k);
  }

 private:
  struct lateral {
    chunk_index chunk;
    lanes kv;
    int tid;  // lane holding k, or none
  };
  struct locked_chunk {
    chunk_index chunk;
    lanes kv;  // read after the lock was taken
  };

  // contains' own search, from the header the operation read.
  GFSL_FN op_result contains_from(const lanes& header, std::uint32_t votes, key_type k) {
    lanes no_path{};
    const int height = height_in_votes(votes);
    const chunk_index start = search_down(k, 0, no_path, false, height, head_in_header(header, height));
    return contains_answer(search_lateral(k, start, 0, false, true));
  }
  GFSL_FN op_result contains_answer(const lateral& hit) const {
    if (hit.tid == none) return {status::ok, false, 0};
    return {status::ok, true, t_.shfl_high(hit.kv, hit.tid)};
  }

  // insert (Alg. 4.5) from the locked level-0 chunk enclosing k: insert-if-
  // absent, then raise.
  GFSL_FN op_result insert_locked(const locked_chunk& enclosing, lanes path, key_type k, value_type v) {
    const level_insert bottom = insert_into_locked(0, enclosing, k, v);
    if (bottom.st != status::ok) return {bottom.st, false, 0};
    if (!bottom.inserted) {  // k was inserted concurrently before we held the lock
      unlock(bottom.chunk);
      return {status::ok, false, 0};
    }
    // The bottom chunk (and, when the raised key lives in the new chunk of a
    // split, that chunk too) stays locked until every level is done, so no
    // other update of k, or of the raised key, can interleave (4.2.2).
    const bool unlocked_early = bug(mutant::bottom_unlocked_early);
    if (unlocked_early) {
      if (bottom.also_locked != no_chunk) unlock(bottom.also_locked);
      if (!bottom.unlocked) unlock(bottom.chunk);
    }
    // A split at level 0 may raise a key (the coin): rare, so apart.
    const status st =
        bottom.raise ? apart<&algorithm::raise_above>(path, k, bottom.raise_key, bottom.raise_down) : status::ok;
    if (!unlocked_early) {
      if (bottom.also_locked != no_chunk) unlock(bottom.also_locked);
      if (!bottom.unlocked) unlock(bottom.chunk);
    }
    return {st, true, 0};
  }

  // insert's raise (Alg. 4.5): up_key, which `down` holds in
  // level 0, into level 1 and on up while each level's split raises again.
  // The level-0 chunks stay locked by the caller until it returns.
  GFSL_FN status raise_above(lanes path, key_type k, key_type up_key, chunk_index down) {
    status st = status::ok;
    bool raise = true;
    // robust: `path` leads to path_key; a raised key below it (a fresh
    // chunk's minimum) takes a path of its own. The chunks of the level
    // below that hold up_key stay locked until up_key is in this level.
    key_type path_key = k;
    chunk_index held = no_chunk, held_too = no_chunk;
    for (int level = 1; raise && level < max_levels; ++level) {
      chunk_index from;
      if (robust && up_key < path_key) {
        from = search_down(up_key, level, path, true);
        path_key = up_key;
      } else {
        from = static_cast<chunk_index>(t_.shfl_low(path, level));
      }
      const level_insert upper = insert_to_level(level, from, up_key, down);
      if constexpr (robust) {
        unlock_if_held(held);
        unlock_if_held(held_too);
        held = held_too = no_chunk;
      }
      if (upper.st != status::ok) {
        st = upper.st;  // the key is in the structure; it was not raised further
        break;
      }
      if (robust && upper.inserted && upper.raise) {
        held = upper.unlocked ? no_chunk : upper.chunk;
        held_too = upper.also_locked;
      } else if (!upper.unlocked) {
        unlock(upper.chunk);
      }
      if (!upper.inserted) break;
      t_.count(stat_of(path_stat::raised_keys));
      raise = upper.raise;
      up_key = upper.raise_key;
      down = upper.raise_down;
    }
    if constexpr (robust) {  // a raise that reached the top level
      unlock_if_held(held);
      unlock_if_held(held_too);
    }
    return st;
  }

  // delete (Alg. 4.11): the bottom chunk holding k is locked throughout; k is
  // removed from the upper levels top-down (lock-delete-unlock), then from the
  // bottom level, which is the moment it leaves the set.
  GFSL_FN op_result remove_locked(const locked_chunk& bottom, lanes path, key_type k) {
    const int bottom_tid = tid_with_key(bottom.kv, k);
    if (bottom_tid == none) {
      unlock(bottom.chunk);
      return {status::ok, false, 0};
    }
    const value_type old_value = t_.shfl_high(bottom.kv, bottom_tid);

    // Alg. 4.11 line 12 re-reads the height: levels above the height seen by
    // the search kept their head chunk in the path (search_down initialises it
    // so), and a head chunk always reaches every chunk of its level.
    const int height = robust ? highest_level_holding(k, path) : get_height();
    int removed_height = 0;  // the highest level k was removed from
    if (height > 0) {
      // robust: only a raised key, so apart; thesis: every delete once the
      // structure has an upper level (Alg. 4.11 walks every level), so in
      // place.
      // robust under the re-raise rule: k's places go to the next key of
      // its level-0 chunk in place (replace_above).
      upper_removal above{};
      if constexpr (robust) {
        above = reraises() ? apart<&algorithm::replace_above>(bottom.chunk, bottom.kv, k, path, height)
                           : apart<&algorithm::remove_above>(k, path, height, 1);
      } else {
        above = remove_above(k, path, height, 1);
      }
      if (above.st != status::ok) {
        unlock(bottom.chunk);
        return {above.st, false, 0};  // k is still in the set (level 0 untouched)
      }
      removed_height = above.removed_height;
    }
    if (!robust && removed_height > 0 && reraises()) apart<&algorithm::reraise_after>(bottom, path, k, removed_height);
    const status st = remove_from_chunk(0, bottom.chunk, robust ? bottom.kv : read(bottom.chunk), k);
    if (st != status::ok) return {st, false, 0};
    return {status::ok, true, old_value};
  }

  // Alg. 4.11 lines 13-16: k out of levels `height` down to 1, each under
  // its chunk's lock (the caller holds k's level-0 chunk throughout).
  struct upper_removal {
    status st;
    int removed_height;  // the highest level k was removed from
  };
  // Levels below `lowest` are left alone (replace_above has done them).
  GFSL_FN upper_removal remove_above(key_type k, lanes path, int height, int lowest) {
    int removed_height = 0;
    // robust: after each removal the level above is looked at again (a split
    // of k's chunk at this level raises k when k is the fresh chunk's
    // minimum, under that chunk's lock, which we have just held: such a
    // raise was complete before we removed k here, and no other can follow,
    // k being gone from this level), and on up while k is found there; then
    // the top-down pass goes on below where it was. One call of
    // remove_from_level for both (inlined, each call site is a copy of it).
    bool looking_up = false;
    int resume_at = 0;
    int level = height;
    while (level >= lowest) {
      status st = status::ok;
      const bool removed = remove_from_level(level, k, path, st);
      if (st != status::ok) return {st, removed_height};
      if (removed && removed_height < level) removed_height = level;
      if (robust && removed && level + 1 < max_levels && !bug(mutant::removed_key_not_sought_above)) {
        if (!looking_up) resume_at = level - 1;
        looking_up = true;
        ++level;
        continue;
      }
      if (looking_up) {
        looking_up = false;
        level = resume_at;
        continue;
      }
      --level;
    }
    return {status::ok, removed_height};
  }

  // The re-raise rules' r: the smallest key above k in a level-0 chunk read
  // as `kv`, or key_empty. Level 0 keeps its keys packed and ascending: the
  // first key above k sits at the count of those not above it.
  GFSL_FN key_type next_key_above(const lanes& kv, key_type k) const {
    const int above = popcount32(t_.ballot(kv, [k](int lane, std::uint64_t e) { return lane < dsize && entry_key(e) <= k; }));
    if (above >= dsize) return key_empty;
    const key_type r = key_at(kv, above);
    return r > k ? r : key_empty;
  }

  // robust, the re-raise rule in place (docs/ALGORITHM.md, "Re-raising in
  // place"): r, the next key above k in k's level-0 chunk (locked by this
  // delete throughout), takes k's entry at every level that holds k, bottom
  // up, one entry store under that level's lock where a removal would shift
  // the chunk's larger keys. No key lies between k and r at any level (a
  // key of an upper level is in level 0, and every level-0 key between them
  // would be in the locked chunk), so r keeps the chunk sorted wherever a
  // key follows k; r's down pointer is the chunk of the level below that
  // holds r (the locked level-0 chunk at level 1), so a down pointer still
  // reaches its key's enclosing chunk at every step. Where r already follows
  // k, k is removed; where k is its chunk's last key, or the removal would
  // merge, k leaves that level and those above as under the thesis' rule.
  // Bottom up, as insert raises: the level above is searched again after
  // each (a split of k's chunk below, made before we locked it, raises k
  // under the fresh chunk's lock, which we waited for).
  GFSL_FN upper_removal replace_above(chunk_index bottom_chunk, lanes bottom_kv, key_type k, lanes path, int height) {
    const key_type r = next_key_above(bottom_kv, k);
    if (r == key_empty) return remove_above(k, path, height, 1);
    chunk_index down = bottom_chunk;
    for (int level = 1; level < max_levels; ++level) {
      chunk_index from = static_cast<chunk_index>(t_.shfl_low(path, level));
      if (level > height) {
        const lateral in_level = search_lateral(k, from, level, false, true);
        if (in_level.tid == none) return {status::ok, level - 1};
        from = in_level.chunk;
      }
      const locked_chunk enc = find_and_lock_enclosing(from, k);
      const int idx = tid_with_key(enc.kv, k);
      if (idx == none) {
        unlock(enc.chunk);
        return {status::ok, level - 1};
      }
      const int n = count_keys(enc.kv);
      const key_type after = idx + 1 < n ? key_at(enc.kv, idx + 1) : key_empty;
      if (after == r && n > shape::merge_threshold) {
        execute_remove_no_merge(enc.chunk, enc.kv, k, true);
        t_.mark(effect_mark(gfsl_effect::remove), enc.chunk);
      } else if ((after != key_empty && after > r) ||
                 (after == key_empty && (is_final(enc.kv) || bug(mutant::replace_past_max)))) {
        // k last in the final chunk: its max is infinite, r fits.
        begin_burst(enc.chunk);
        store_entry(enc.chunk, idx, make_entry(r, down));
        end_burst_and_unlock(enc.chunk);
        t_.count(stat_of(path_stat::reraised_keys));
      } else {
        unlock(enc.chunk);
        t_.set_lane(path, level, enc.chunk);
        const upper_removal rest = remove_above(k, path, height > level ? height : level, level);
        return {rest.st, rest.removed_height > level - 1 ? rest.removed_height : level - 1};
      }
      down = enc.chunk;
    }
    return {status::ok, max_levels - 1};
  }

  // The re-raise rule (docs/ALGORITHM.md, "Re-raising on delete"): k, just
  // removed from levels 1..height, represented its level-0 chunk there. The
  // chunk's next key above k takes its place at the same levels, bottom up,
  // as insert raises a key: the chunk is locked by this delete from before
  // the first insertion to after the last, so no update of that key can
  // interleave, and "every key of level i+1 is in level i" holds throughout.
  // Only a key above k: the path's chunks precede k, so they precede it too.
  // Best effort: a full pool or a key already raised ends it, and the delete
  // goes on (the structure is whole at every step).
  GFSL_FN void reraise_after(const locked_chunk& bottom, const lanes& path, key_type k, int height) {
    const key_type r = next_key_above(bottom.kv, k);
    if (r == key_empty) return;
    chunk_index down = bottom.chunk;
    for (int level = 1; level <= height; ++level) {
      const chunk_index from = static_cast<chunk_index>(t_.shfl_low(path, level));
      const level_insert upper = insert_to_level(level, from, r, down);
      if (upper.st != status::ok) return;
      // A split here raises nothing further (upper.raise is not followed):
      // robust's fresh chunk, kept locked for a raise, is let go with it.
      unlock_if_held(upper.also_locked);
      if (!upper.unlocked) unlock(upper.chunk);
      if (!upper.inserted) return;
      t_.count(stat_of(path_stat::reraised_keys));
      down = upper.chunk;
    }
  }

  struct level_insert {
    status st = status::ok;
    bool inserted = false;
    chunk_index chunk = no_chunk;         // locked chunk now holding k
    chunk_index also_locked = no_chunk;   // second chunk kept locked (level 0 only)
    bool unlocked = false;                // robust: `chunk` already unlocked (nothing left to do under it)
    bool raise = false;
    key_type raise_key = 0;
    chunk_index raise_down = no_chunk;    // chunk of this level holding raise_key
  };
  struct split_result {
    status st = status::ok;
    chunk_index fresh = no_chunk;  // the new chunk, locked by us
    key_type fresh_min = 0;        // smallest key moved into it
    key_type kept_max = 0;         // the split chunk's new max field
    chunk_index successor = no_chunk;  // the fresh chunk's NEXT
    lanes before;                  // the split chunk as it was before the split
    int moved_from = 0;            // lanes [moved_from, moved_from + moved) moved
    int moved = 0;
  };

  Team& t_;
  view s_;
  std::uint64_t p_threshold_;
  mutant mutant_;

  // ---- Calls made apart --------------------------------------------------------
  //
  // apart<&f>(args) runs f, one of the updates' rare paths, in a function of
  // its own, compiled once (why: docs/TUNING.md, "The rare paths apart").
  // The algorithm's state crosses the call by value, both ways, and so does
  // the team's (Team::detached). Every field that can change (the held
  // lock's word, the coin stream, the counters) comes back, so a call made
  // apart makes exactly the accesses and decisions of the inline one.
  // Teams that do not detach (the host's) call f in place.
  static constexpr bool calls_apart = team_calls_apart<Team>::value;
  struct apart_state {
    view s;
    std::uint64_t shape_rule;
    mutant active;
    chunk_index known_chunk;
    std::uint64_t known_word;
    typename team_calls_apart<Team>::detached team;
  };
  struct no_result {};
  template <class R>
  struct apart_outcome {
    apart_state state;
    R r;
  };
  GFSL_FN algorithm(Team& team, const apart_state& st)
      : t_(team), s_(st.s), p_threshold_(st.shape_rule), mutant_(st.active), known_chunk_(st.known_chunk),
        known_word_(st.known_word) {}
  GFSL_FN apart_state state_for_apart() const {
    return {s_, p_threshold_, mutant_, known_chunk_, known_word_, t_.detach()};
  }
  template <auto Member, class... A>
  GFSL_APART_FN static auto run_apart(apart_state st, A... args) {
    Team team(st.team);
    algorithm a(team, st);
    if constexpr (std::is_void_v<decltype((a.*Member)(args...))>) {
      (a.*Member)(args...);
      return apart_outcome<no_result>{a.state_for_apart(), {}};
    } else {
      const auto r = (a.*Member)(args...);
      return apart_outcome<std::remove_cv_t<decltype(r)>>{a.state_for_apart(), r};
    }
  }
  template <auto Member, class... A>
  GFSL_FN auto apart(A... args) {
    if constexpr (calls_apart) {
      const auto out = run_apart<Member>(state_for_apart(), args...);
      known_chunk_ = out.state.known_chunk;
      known_word_ = out.state.known_word;
      t_.reattach(out.state.team);
      if constexpr (!std::is_same_v<std::remove_cv_t<decltype(out.r)>, no_result>) return out.r;
    } else {
      return (this->*Member)(args...);
    }
  }

  // Whether seeded bug `m` is active; constant false in the correct core.
  GFSL_FN bool bug(mutant m) const {
    if constexpr (Mutable) return mutant_ == m;
    return false;
  }
  // The winning lane of a ballot: the highest (4.2.1), or, planted, the lowest.
  GFSL_FN int winner(std::uint32_t bits) const {
    if (bug(mutant::lowest_lane_precedence) && bits != 0) return highest_bit(bits & (~bits + 1));
    return highest_bit(bits);
  }

  // ---- Reading chunks --------------------------------------------------------

  // A chunk read and whether its LOCK lane showed the zombie mark: the
  // traversals branch on the mark, and asking it of the read once saves
  // them a second shuffle of the LOCK lane per step.
  struct marked_read {
    lanes kv;
    bool zombie;
  };
  GFSL_FN lanes read(chunk_index c) { return read_marked(c).kv; }
  GFSL_FN marked_read read_marked(chunk_index c) {
    lanes kv = load_chunk(c);
    const bool zombie = is_zombie(kv);
    if constexpr (robust) {
      // Lane by lane, NEXT may have been loaded before the LOCK lane saw the
      // zombie mark: a split and a merge in between (X -> F -> S, X merged
      // into F) would send us past the live chunk F. A zombie's NEXT never
      // changes after its mark (zombie-frozen), so one load after the LOCK
      // lane's (ordered by the barrier that ends the read) is its final value.
      if (zombie && !bug(mutant::zombie_next_not_reloaded)) t_.set_lane(kv, next_lane, load_next_entry(c));
    }
    return {kv, zombie};
  }
  GFSL_FN entry_type load_next_entry(chunk_index c) { return t_.load(s_.chunk(c) + next_lane, next_lane); }
  // A traversal's chunk read and its step, from one ballot: DATA and NEXT
  // lanes vote as getTidForNextStep (Alg. 4.3), or with `equal` as
  // isTidWithEqualKey (Alg. 4.4), and the LOCK lane votes the zombie mark.
  // The decisions are those of read_marked followed by equal_or_next, from
  // the same loads; the mark comes out of the ballot instead of a shuffle of
  // the LOCK lane (docs/TUNING.md, "The zombie mark in the step's vote").
  // A zombie's NEXT, the only entry a traversal uses of
  // it, comes from zombie_next (robust: reloaded, as read_marked does); `kv`
  // stays as read, so the live path keeps no second copy of it.
  // NEXT votes when k is beyond the max field, DATA lanes when their key is
  // <= k (or == k); EMPTY is +infinity so it never votes. The votes are
  // written without branches (docs/TUNING.md, "Branch-free votes").
  struct stepped_read {
    lanes kv;
    std::uint32_t votes;
    GFSL_FN bool zombie() const { return ((votes >> lock_lane) & 1u) != 0; }
  };
  // `pool`: pool_row(), taken by a search before its loop.
  GFSL_FN stepped_read read_step(row pool, chunk_index c, key_type k, bool equal) {
    const lanes kv = load_chunk(pool, c);
    return {kv, t_.ballot(kv, [k, equal](int lane, std::uint64_t e) {
              const key_type key = entry_key(e);
              return ((lane < dsize) & (equal ? key == k : key <= k)) | ((lane == next_lane) & (key < k)) |
                     ((lane == lock_lane) & lock_is_zombie(e));
            })};
  }
  // The step of a live chunk's read: its LOCK lane did not vote.
  GFSL_FN int step_of(const stepped_read& r) const { return winner(r.votes); }
  // Where a traversal goes from the zombie c it read as `kv`.
  GFSL_FN chunk_index zombie_next(chunk_index c, const lanes& kv) {
    if constexpr (robust) {
      if (!bug(mutant::zombie_next_not_reloaded)) return entry_value(load_next_entry(c));  // as in read_marked
    }
    return next_of(kv);
  }
  GFSL_FN lanes load_chunk(chunk_index c) { return load_chunk(pool_row(), c); }
  GFSL_FN lanes load_chunk(row pool, chunk_index c) {
    t_.count(stat_of(path_stat::chunk_reads));
    if constexpr (Mutable) {
      if (bug(mutant::load_relaxed)) return t_.load_lanes(s_.chunk(c), mem_order::relaxed);
    }
    return t_.load_row(pool, static_cast<std::uint64_t>(c) * N);
  }
  // The pool as the row of chunk 0 (Team::row_of): chunk c is the row c * N
  // words on. A search takes it once, before its loop, so that each of its
  // reads costs one multiply-add for the address.
  GFSL_FN row pool_row() const { return t_.row_of(s_.chunk(0)); }
  GFSL_FN std::uint64_t load_lock(chunk_index c) { return t_.load(s_.chunk(c) + lock_lane, lock_lane); }
  GFSL_FN key_type max_of(const lanes& kv) const { return t_.shfl_low(kv, next_lane); }
  GFSL_FN chunk_index next_of(const lanes& kv) const { return t_.shfl_high(kv, next_lane); }
  GFSL_FN std::uint64_t lock_of(const lanes& kv) const { return t_.shfl(kv, lock_lane); }
  GFSL_FN bool is_zombie(const lanes& kv) const { return lock_is_zombie(lock_of(kv)); }
  // The final chunk of a level is the one with an infinite max (thesis 3).
  GFSL_FN bool is_final(const lanes& kv) const { return max_of(kv) == key_empty; }
  GFSL_FN key_type key_at(const lanes& kv, int lane) const { return t_.shfl_low(kv, lane); }

  GFSL_FN int count_keys(const lanes& kv) const {
    return popcount32(t_.ballot(kv, [](int lane, std::uint64_t e) {
      return lane < dsize && entry_key(e) != key_empty;
    }));
  }
  GFSL_FN int tid_with_key(const lanes& kv, key_type k) const {
    return highest_bit(t_.ballot(kv, [k](int lane, std::uint64_t e) { return lane < dsize && entry_key(e) == k; }));
  }

  // isTidWithEqualKey (Alg. 4.4) on a chunk already read (read_step votes
  // the same way on a fresh read).
  GFSL_FN int equal_or_next(key_type k, const lanes& kv) const {
    return winner(t_.ballot(kv, [k](int lane, std::uint64_t e) {
      return ((lane < dsize) & (entry_key(e) == k)) | ((lane == next_lane) & (entry_key(e) < k));
    }));
  }
  // getTidOfDownStep for a backtrack: the largest key <= k of a chunk.
  GFSL_FN int down_step_tid(key_type k, const lanes& kv) const {
    return winner(t_.ballot(kv, [k](int lane, std::uint64_t e) { return lane < dsize && entry_key(e) <= k; }));
  }

  // getHeight (4.2.1): lane i reads level i's counter; the highest non-empty
  // level wins. Level 0 is always searched, so lane 0 has no counter to
  // read: an operation's first read gives it the error word instead, and
  // one round trip answers both "has the structure failed" and the height.
  GFSL_FN int get_height() { return height_in(t_.load_lanes(s_.level_counts())); }
  // robust: the operation's first read also gives the head of every level
  // it can start from: lanes below header_levels read the error word and
  // the counters of levels 1 to header_levels - 1, the others the heads of
  // levels 0 to header_levels - 1, so the first chunk read no longer waits
  // for a read of the head. A head read before the height is as good as
  // one read after it: the head array only moves forward past zombies, and
  // a search from a zombie head steps over it. When the highest level this
  // read covers is in use, a level above it may be too, and the search
  // reads the counters and the head as before (height_in_header: -1). With
  // one key raised per chunk of the level below, level L holds keys once
  // level 0 holds about c^L, c the keys of a chunk: never at N = 32 (level
  // 15), at N = 16 from millions of keys (level 7), often on the host's
  // 8-entry chunks (level 3).
  // thesis: the error word and the counters in two reads, as before (its
  // access sequence is the one the pinned reproductions replay).
  static constexpr int header_levels = robust ? N / 2 : N;
  GFSL_FN lanes read_header() {
    if constexpr (!robust) {
      lanes header = t_.splat(t_.load(s_.error_word(), 0));
      if (t_.shfl(header, 0) != error_none) return header;
      header = t_.load_lanes(s_.level_counts());
      t_.set_lane(header, 0, error_none);
      return header;
    }
    // The word a lane reads, picked by two selects plus the lane, not a
    // branch per case (docs/TUNING.md, "The header read").
    return t_.gather([this](int lane) -> const std::uint64_t* {
      const std::size_t base = lane >= header_levels ? header_offsets::heads - header_levels
                               : lane == 0           ? header_offsets::error_word
                                                     : header_offsets::level_counts;
      return s_.words + base + static_cast<std::size_t>(lane);
    });
  }
  // One ballot answers both questions a header read is asked: lane 0 votes
  // "the structure has failed" (its word is the error word), lanes 1 to
  // header_levels - 1 "my level is in use" (one 64-bit shuffle and its test
  // fewer per operation than asking lane 0 apart).
  GFSL_FN std::uint32_t header_votes(const lanes& header) const {
    return t_.ballot(header, [](int lane, std::uint64_t w) {
      return ((lane == 0) & (w != error_none)) |
             ((lane > 0) & (lane < header_levels) & (static_cast<std::int64_t>(w) > 0));
    });
  }
  GFSL_FN static bool stopped_in(std::uint32_t votes) { return (votes & 1u) != 0; }
  GFSL_FN int height_in(const lanes& counts) const {
    const int h = highest_bit(t_.ballot(counts, [](int lane, std::uint64_t c) {
      return lane > 0 && static_cast<std::int64_t>(c) > 0;
    }));
    return h < 0 ? 0 : h;
  }
  // The height a header read gives (its votes, once not stopped), or -1:
  // read it again (see read_header).
  GFSL_FN static int height_in_votes(std::uint32_t votes) {
    const int h = highest_bit(votes & ~1u);
    if (robust && h == header_levels - 1) return -1;
    return h < 0 ? 0 : h;
  }
  // The head of `level` from a header read, or no_chunk (thesis: not read).
  GFSL_FN chunk_index head_in_header(const lanes& header, int level) const {
    if constexpr (!robust) return no_chunk;
    return level < 0 ? no_chunk : static_cast<chunk_index>(t_.shfl_low(header, header_levels + level));
  }
  GFSL_FN chunk_index head_of(int level) {
    return static_cast<chunk_index>(t_.load(s_.heads() + level, 0));
  }

  // ---- Traversal -------------------------------------------------------------

  // searchDown (Alg. 4.2) down to `target` level; `with_path`, searchSlow
  // (Alg. 4.6): records in lane i the chunk of level i it stepped down from
  // (levels it never visited keep their head chunk) and unlinks zombies.
  // `height_read`: the height the caller read (read_header), or -1 to read
  // it; `head_read`: that level's head from the same read, or no_chunk.
  GFSL_FN chunk_index search_down(key_type k, int target, lanes& path, bool with_path, int height_read = -1,
                                  chunk_index head_read = no_chunk) {
    for (;;) {
      int height = height_read >= 0 ? height_read : get_height();
      const chunk_index head_given = height_read >= 0 ? head_read : no_chunk;
      height_read = -1;  // a restart reads the height and the head again
      // robust: with a path, one read of the head array gives the path's
      // initial value and the head to start from.
      const bool head_in_path = robust && with_path;
      if (with_path) path = t_.load_lanes(s_.heads());
      if (height < target) return head_in_path ? static_cast<chunk_index>(t_.shfl_low(path, target)) : head_of(target);
      chunk_index curr = head_in_path           ? static_cast<chunk_index>(t_.shfl_low(path, height))
                         : head_given != no_chunk ? head_given
                                                  : head_of(height);
      // The chunk of this level we stepped laterally from, or no_chunk
      // (none yet): one register for "have a previous chunk" and which.
      chunk_index prev = no_chunk;
      lanes prev_kv{};
      bool restart = false;
      const row pool = pool_row();
      while (height > target) {
        const stepped_read r = read_step(pool, curr, k, false);
        t_.mark(mark_close, curr);
        const lanes& kv = r.kv;
        if (r.zombie()) [[unlikely]] {
          const chunk_index next = zombie_next(curr, kv);
          curr = with_path ? apart<&algorithm::unlink_zombie>(height, prev != no_chunk, prev, curr, next) : next;
          t_.count(stat_of(path_stat::zombies_skipped));
          continue;
        }
        const int step = step_of(r);
        if (step != none) {
          // A lateral step (NEXT won) and a down step (a DATA lane won) both
          // go where the winner's value points: one shuffle for either.
          const chunk_index to = t_.shfl_high(kv, step);
          if (step == next_lane) {  // lateral step
            prev = curr;
            prev_kv = kv;
          } else {  // down step
            if (with_path) t_.set_lane(path, height, curr);
            --height;
            prev = no_chunk;
            t_.mark(open_mark(gfsl_window::step_down), to);
          }
          curr = to;
        } else {  // every key here is above k: backtrack through the previous chunk
          const int back = prev != no_chunk ? down_step_tid(k, prev_kv) : none;
          if (back == none) {  // no previous chunk in this level (4.2.1): restart
            t_.count(stat_of(path_stat::restarts));
            if (bug(mutant::restart_steps_down)) {
              if (with_path) t_.set_lane(path, height, curr);
              --height;
              curr = t_.shfl_high(kv, 0);
              continue;
            }
            if constexpr (robust) {
              // A stale key above (a torn read of delete's upper-level check,
              // or a down pointer read mid-split) can send every attempt to
              // the same place: restarting from the top would loop forever.
              // The level's head chunk holds -inf <= k, so a lateral walk
              // from it reaches k's enclosing chunk at this level.
              if (!bug(mutant::head_fallback_wrong)) {
                curr = head_of(height);
                continue;
              }
            }
            restart = true;
            break;
          }
          t_.count(stat_of(path_stat::backtracks));
          if (with_path) t_.set_lane(path, height, prev);
          --height;
          prev = no_chunk;
          curr = t_.shfl_high(prev_kv, back);
        }
      }
      if (!restart) return curr;
    }
  }

  // searchLateral (Alg. 4.4): lateral steps until the enclosing chunk of k in
  // this level; zombies are skipped (and, with `unlink`, unlinked lazily).
  // `validate` (robust): a "k is not here" is concluded only from a read that
  // no burst of writes overlapped (validated_read).
  GFSL_FN lateral search_lateral(key_type k, chunk_index curr, int level, bool unlink, bool validate) {
    chunk_index prev = no_chunk;  // as in search_down
    const row pool = pool_row();
    for (;;) {
      const stepped_read r = read_step(pool, curr, k, true);
      t_.mark(mark_close, curr);
      lanes kv = r.kv;
      if (r.zombie() && !bug(mutant::zombies_not_skipped)) [[unlikely]] {
        const chunk_index next = zombie_next(curr, kv);
        curr = unlink ? apart<&algorithm::unlink_zombie>(level, prev != no_chunk, prev, curr, next) : next;
        t_.count(stat_of(path_stat::zombies_skipped));
        continue;
      }
      // A zombie not skipped (the planted bug) is searched like a live chunk.
      int tid = r.zombie() ? equal_or_next(k, kv) : step_of(r);
      if constexpr (robust) {
        if (tid == none && validate && !bug(mutant::absence_not_validated)) {
          if (!validated_read(curr, kv)) continue;  // a burst overlapped: read again
          tid = equal_or_next(k, kv);
        }
      }
      if (tid == next_lane) {
        prev = curr;
        curr = next_of(kv);
        continue;
      }
      return {curr, kv, tid};
    }
  }

  // robust: the seqlock of the write version. `kv` is a read of c whose LOCK
  // lane showed version v1. Only when v1 is even (no burst in progress) do we
  // read c again, then its LOCK word: if the version is still v1, no burst
  // began or ended between the first read's LOCK load and that last load,
  // and the second read, which lies between them, saw the chunk as it was at
  // one instant. Replaces kv by that read and returns true; false: read again.
  // The holder's version store precedes its data stores (they are release
  // stores after it), and our loads are acquire, so a second read that saw
  // any store of a burst makes the last load see the version it moved to.
  GFSL_FN bool validated_read(chunk_index c, lanes& kv) {
    const std::uint64_t first = lock_of(kv);
    if (lock_in_burst(first)) {
      // At most N stores away: wait as for a lock (the device watchdog and
      // the scheduler see it), never for the lock itself.
      t_.count(stat_of(path_stat::lock_waits));
      t_.lock_wait(c, first);
      return false;
    }
    t_.mark(open_mark(gfsl_window::validate), c);
    t_.hint(team_hint::validating);
    const lanes again = read(c);
    const std::uint64_t closing = bug(mutant::validation_lock_from_reread) ? lock_of(again) : load_lock(c);
    const bool same = lock_version(closing) == lock_version(first);
    t_.mark(mark_close, c);
    if (!same) return false;
    kv = again;
    return true;
  }

  // Lazy zombie removal of searchSlow (Alg. 4.6 lines 10-20): find the first
  // non-zombie after `zombie`, then redirect the previous chunk's NEXT pointer
  // past the zombies if its lock can be had at once, or move the head array
  // entry if the zombie headed the level. Never waits.
  GFSL_FN chunk_index unlink_zombie(int level, bool have_prev, chunk_index prev, chunk_index zombie,
                                    chunk_index zombie_successor) {
    if (have_prev) t_.mark(open_mark(gfsl_window::unlink), prev);
    chunk_index target = zombie_successor;
    for (;;) {  // a zombie is never written again, so its NEXT is final
      const marked_read r = read_marked(target);
      if (!r.zombie) break;
      target = next_of(r.kv);
    }
    if (have_prev && bug(mutant::unlink_without_lock)) {
      const lanes pkv = read(prev);
      if (next_of(pkv) == zombie) store_entry(prev, next_lane, make_entry(max_of(pkv), target));
    } else if (have_prev) {
      const bool locked = try_lock(prev, robust ? load_lock(prev) : lock_free_word);
      t_.mark(mark_close, prev);
      if (locked) {
        const lanes pkv = read(prev);
        // Under the lock prev cannot change; redirect only if it still points
        // at the zombie. max stays, next moves: one 8-byte store.
        if (next_of(pkv) == zombie || bug(mutant::unlink_without_recheck)) {
          store_entry(prev, next_lane, make_entry(max_of(pkv), target));
          t_.count(stat_of(path_stat::zombie_unlinks));
        }
        unlock(prev);
      }
    } else {
      std::uint64_t expected = zombie;
      // The head array is only ever moved forward past zombies; a CAS from the
      // zombie keeps concurrent unlinkers from moving it backwards.
      if (t_.cas(s_.heads() + level, 0, expected, target)) t_.count(stat_of(path_stat::head_unlinks));
    }
    return target;
  }

  // ---- Locks -----------------------------------------------------------------

  // `seen`: the chunk's LOCK word as the caller last read it (robust: the
  // free word carries the version, which the CAS must match).
  GFSL_FN bool try_lock(chunk_index c, std::uint64_t seen) {
    std::uint64_t expected = robust ? seen : lock_free_word;
    if (robust && !lock_is_free(seen)) return false;
    // Acquire: the CAS reads from the previous holder's release (its unlock,
    // or the merge's zombie mark it failed on), so its writes are visible to
    // us. robust: acquire only. The release half would order this team's
    // earlier accesses before the lock word; no reader of that word needs
    // them: whoever takes the lock next synchronizes with our unlock, a
    // release store after everything we did; a validating reader learns from
    // the word only its version, and the burst that follows orders the odd
    // version before its data by the data stores' own release; and what this
    // team wrote before the lock (the levels below, under other locks) was
    // published by those writes' release stores. On the GPU the release half
    // is a MEMBAR.ALL.GPU before every lock taken. thesis keeps acq_rel.
    if (!t_.cas(s_.chunk(c) + lock_lane, lock_lane, expected, expected | lock_word_of(t_.id()),
                robust ? mem_order::acquire : mem_order::acq_rel)) {
      return false;
    }
    remember_lock(c, expected);
    return true;
  }
  GFSL_FN void unlock_if_held(chunk_index c) {
    if (c != no_chunk) unlock(c);
  }
  // Release: every write made under the lock is visible before the lock frees.
  GFSL_FN void unlock(chunk_index c) {
    const std::uint64_t freed = robust ? lock_released(held_word(c)) : lock_free_word;
    forget_lock(c);
    t_.store(s_.chunk(c) + lock_lane, lock_lane, freed,
             bug(mutant::release_weakened) ? mem_order::relaxed : mem_order::release);
  }
  // Release: the merge's writes to the successor are visible before anyone can
  // see this chunk as a zombie and follow its NEXT pointer past it.
  GFSL_FN void mark_zombie(chunk_index c) {
    const std::uint64_t version = robust ? held_word(c) & lock_version_mask : 0;
    forget_lock(c);
    t_.store(s_.chunk(c) + lock_lane, lock_lane, version | zombie_word_of(t_.id()), mem_order::release);
  }

  // robust: the LOCK word of the chunk this team locked last. While a chunk
  // is locked its holder is the only writer of its LOCK word, so the holder
  // knows the word without loading it: the common sequence (lock c, a burst
  // on c, unlock c) stores the odd, even and unlocked words without an
  // acquire load before each (a round trip to L2, and an L1 invalidation on
  // the GPU, with the lock held). Any other held chunk is loaded as before,
  // which is equally correct, only slower. One entry, not a table: the
  // state lives in registers for the whole operation.
  chunk_index known_chunk_ = no_chunk;
  std::uint64_t known_word_ = 0;

  GFSL_FN void remember_lock(chunk_index c, std::uint64_t word) {
    if constexpr (robust) {
      known_chunk_ = c;
      known_word_ = word | lock_word_of(t_.id());
    }
  }
  GFSL_FN void forget_lock(chunk_index c) {
    if constexpr (robust) {
      if (known_chunk_ == c) known_chunk_ = no_chunk;
    }
  }
  GFSL_FN std::uint64_t held_word(chunk_index c) {
    if (known_chunk_ == c) return known_word_;
    return load_lock(c);
  }
  // robust: a burst of writes that changes which keys the chunk shows, or
  // its max, runs between an odd and an even version (validated_read). The
  // holder is the only writer of its LOCK word, so a load gives the current one.
  //
  // The odd store is relaxed: nothing written before it needs to be seen
  // with it, and the burst's own stores are release stores after the
  // barrier that follows it, so a reader that sees any of them sees the odd
  // version or a later one. The even store is release: it follows them.
  GFSL_FN void begin_burst(chunk_index c) {
    if constexpr (robust) bump_version(c, mem_order::relaxed);
  }
  GFSL_FN void end_burst(chunk_index c) {
    if constexpr (robust) bump_version(c, mem_order::release);
  }
  GFSL_FN void bump_version(chunk_index c, mem_order order) {
    if (bug(mutant::version_not_bumped)) return;
    const std::uint64_t bumped = lock_bumped(held_word(c));
    if (known_chunk_ == c) known_word_ = bumped;
    t_.store(s_.chunk(c) + lock_lane, lock_lane, bumped, order);
  }
  // robust: the even store of a burst and the unlock that follows it with no
  // wait between, as one release store of the unlocked word with the version
  // moved on. No reader can tell it from the two stores made back to back.
  // thesis: the unlock alone (it has no version).
  GFSL_FN void end_burst_and_unlock(chunk_index c) {
    if constexpr (robust) {
      std::uint64_t word = held_word(c);
      if (!bug(mutant::version_not_bumped)) word = lock_bumped(word);
      forget_lock(c);
      t_.store(s_.chunk(c) + lock_lane, lock_lane, lock_released(word),
               bug(mutant::release_weakened) ? mem_order::relaxed : mem_order::release);
    } else {
      unlock(c);
    }
  }
  // Lanes [first, last) as a ballot mask.
  GFSL_FN static std::uint32_t lane_range(int first, int last) {
    if (last <= first) return 0;
    const std::uint32_t upto = last >= 32 ? 0xFFFFFFFFu : (1u << last) - 1u;
    return upto & ~((1u << first) - 1u);
  }
  // The entries of `mask` in one store instruction; release, as every store
  // to a reachable chunk: each is ordered after the team's earlier writes
  // (the version's odd store first of all), none after another.
  GFSL_FN void store_wave(chunk_index c, const lanes& entries, std::uint32_t mask) {
    t_.store_lanes(s_.chunk(c), entries, mask,
                   bug(mutant::release_weakened) ? mem_order::relaxed : mem_order::release);
  }
  GFSL_FN void store_entry(chunk_index c, int lane, entry_type e) {
    t_.store(s_.chunk(c) + lane, lane, e, bug(mutant::release_weakened) ? mem_order::relaxed : mem_order::release);
  }

  // findAndLockEnclosing (Alg. 4.8): spin until the chunk enclosing k (first
  // non-zombie with max >= k) is locked by us, re-checking after the lock.
  GFSL_FN locked_chunk find_and_lock_enclosing(chunk_index curr, key_type k) {
    return lock_enclosing_from(curr, lanes{}, false, k);
  }
  // The same spin, its first decision taken from `seen` when `have_seen`: a
  // read of curr the caller made (robust: the search's last read, which
  // found curr to enclose k). Nothing the spin returns comes from that
  // read: it only chooses the chunk to lock and the LOCK word the CAS
  // expects, and a read that old is one the scheduler could have delayed
  // the spin's own first read to; the chunk is read again under the lock
  // and re-checked, as always. One read fewer per update that locks.
  // A lock `seen` shows taken is read again rather than waited on: a wait
  // (Team::lock_wait) names a holder the team has just seen, and the
  // deterministic scheduler parks the waiter until another team writes;
  // on an older read the holder may have let go since, and nobody may write
  // again (found by the fuzz campaign at lane granularity as a deadlock).
  GFSL_FN locked_chunk lock_enclosing_from(chunk_index curr, lanes seen, bool have_seen, key_type k) {
    for (;;) {
      lanes kv = have_seen ? seen : read(curr);
      const bool just_read = !have_seen;
      have_seen = false;
      if (is_zombie(kv) || max_of(kv) < k) {
        curr = next_of(kv);
        continue;
      }
      const std::uint64_t lock = lock_of(kv);
      if (!lock_is_free(lock)) {
        if (just_read) wait_until_unlocked(curr, lock);
        continue;
      }
      if (!try_lock(curr, lock)) continue;
      if (bug(mutant::no_recheck_after_lock)) return {curr, kv};
      kv = read(curr);
      if (max_of(kv) < k) {  // split or removal moved the range on before we locked
        unlock(curr);
        curr = next_of(kv);
        continue;
      }
      return {curr, kv};
    }
  }

  // The spin of findAndLockEnclosing and lockNextChunk: poll c's LOCK word
  // alone, one load a spin instead of a whole chunk, until the holder lets
  // go (or marked it a zombie); the caller then reads the chunk again and
  // decides afresh, as the thesis' spin does after every read.
  // thesis: one wait, then the whole chunk again (its access sequence is the
  // one the pinned reproductions replay).
  GFSL_FN void wait_until_unlocked(chunk_index c, std::uint64_t lock) {
    t_.count(stat_of(path_stat::lock_waits));
    t_.lock_wait(c, lock);
    if constexpr (robust) {
      for (lock = load_lock(c); lock_is_held(lock); lock = load_lock(c)) {
        t_.count(stat_of(path_stat::lock_waits));
        t_.lock_wait(c, lock);
      }
    }
  }

  // lockNextChunk (Alg. 4.9 line 17, 4.12 line 9): lock the successor of the
  // locked chunk c, unlinking zombies on the way (we hold c, so the redirect
  // needs no further lock). no_chunk when c is the final chunk.
  GFSL_FN chunk_index lock_next_chunk(chunk_index c, bool for_merge = false) {
    for (;;) {
      const lanes ckv = read(c);
      const chunk_index next = next_of(ckv);
      if (next == no_chunk) return no_chunk;
      const lanes nkv = read(next);
      if (is_zombie(nkv)) {
        store_entry(c, next_lane, make_entry(max_of(ckv), next_of(nkv)));
        t_.count(stat_of(path_stat::zombie_unlinks));
        continue;
      }
      if (for_merge && bug(mutant::merge_into_unlocked)) return next;
      const std::uint64_t lock = lock_of(nkv);
      if (!lock_is_free(lock)) {
        wait_until_unlocked(next, lock);
        continue;
      }
      if (try_lock(next, lock)) return next;
    }
  }

  // ---- Pool and counters -----------------------------------------------------

  // thesis keeps the acq_rel RMWs it was measured with.
  static constexpr mem_order counter_order = robust ? mem_order::relaxed : mem_order::acq_rel;

  GFSL_FN chunk_index allocate() {
    // Relaxed: the index is all we take from the counter; the chunk it names
    // is pristine since before the run and reaches others only through our
    // later release stores.
    const std::uint64_t idx = t_.fetch_add(s_.alloc_counter(), 0, 1, counter_order);
    if (idx >= s_.capacity) {
      std::uint64_t expected = error_none;
      t_.cas(s_.error_word(), 0, expected, error_pool_exhausted);  // first error wins
      return no_chunk;
    }
    return static_cast<chunk_index>(idx);
  }
  GFSL_FN void add_to_level_count(int level, std::int64_t delta) {
    // Relaxed: every update is made under a lock of the level, whose release
    // orders it for the next holder; a search reading a stale counter only
    // starts at another level, and every level's head leads down correctly.
    t_.fetch_add(s_.level_counts() + level, 0, static_cast<std::uint64_t>(delta), counter_order);
  }
  GFSL_FN bool level_is_empty(int level) {
    return static_cast<std::int64_t>(t_.load(s_.level_counts() + level, 0)) <= 0;
  }
  GFSL_FN bool coin() { return static_cast<std::uint64_t>(t_.random_u32()) < (p_threshold_ & p_chunk_threshold_mask); }
  GFSL_FN bool reraises() const { return (p_threshold_ & reraise_flag) != 0; }

  // ---- Insert ----------------------------------------------------------------

  // insertToLevel (Alg. 4.5 lines 28-46). Returns with `chunk` locked.
  GFSL_FN level_insert insert_to_level(int level, chunk_index from, key_type k, value_type v) {
    return insert_into_locked(level, find_and_lock_enclosing(from, k), k, v);
  }
  GFSL_FN level_insert insert_into_locked(int level, const locked_chunk& enc, key_type k, value_type v) {
    level_insert r;
    r.chunk = enc.chunk;
    if (!bug(mutant::insert_without_duplicate_check) && tid_with_key(enc.kv, k) != none) return r;  // inserted = false
    const int n = count_keys(enc.kv);
    if (n < dsize) {
      execute_insert(enc.chunk, enc.kv, k, v, !robust);
      // Counter semantics: 0 exactly when the level holds nothing but -inf;
      // the level has a single chunk then, and we hold its lock.
      // robust: asked only when our chunk held at most one key. With two,
      // one is not -inf: the level holds a key and its counter is not 0
      // (each change to it is made under the lock of a chunk it counts,
      // before that lock's release). The load it saves is a round trip
      // inside the burst, which readers validating a "not here" in this
      // chunk wait out.
      if ((!robust || n <= 1) && level_is_empty(level)) add_to_level_count(level, 1);
      r.inserted = true;
      if constexpr (robust) {
        // Without a split nothing is raised: every caller unlocks now.
        end_burst_and_unlock(enc.chunk);
        r.unlocked = true;
      }
      return r;
    }
    return apart<&algorithm::split_insert>(level, enc.chunk, k, v);
  }

  // executeInsert (Alg. 4.7): shift the larger keys one entry right, from the
  // last key down to the insertion index, then write k. Right to left so that
  // no key is ever absent from the chunk; a key seen twice is harmless because
  // readers take the highest lane. The max field never changes: the chunk
  // encloses k.
  //
  // robust: the burst is one wave (every shifted entry and k in one store
  // instruction), because no answer depends on the order inside a burst
  // (docs/ALGORITHM.md): a validated "not here" saw no burst, and a positive
  // answer shows an entry some store wrote whole.
  // `end`: false leaves the burst open for end_burst_and_unlock, after work
  // that never waits.
  GFSL_FN void execute_insert(chunk_index c, const lanes& kv, key_type k, value_type v, bool end = true) {
    const int n = count_keys(kv);
    const int idx = popcount32(t_.ballot(kv, [k](int lane, std::uint64_t e) {
      return lane < dsize && entry_key(e) < k;
    }));
    begin_burst(c);
    if (robust && !bug(mutant::insert_left_to_right)) {
      lanes shifted = t_.shfl_from(kv, [](int lane) { return lane > 0 ? lane - 1 : 0; });
      t_.set_lane(shifted, idx, make_entry(k, v));
      store_wave(c, shifted, lane_range(idx, n + 1));
    } else {
      if (bug(mutant::insert_left_to_right)) {
        for (int i = idx + 1; i <= n; ++i) store_entry(c, i, t_.shfl(kv, i - 1));
      } else {
        for (int i = n; i > idx; --i) store_entry(c, i, t_.shfl(kv, i - 1));
      }
      store_entry(c, idx, make_entry(k, v));
    }
    if (end) end_burst(c);
    t_.mark(effect_mark(gfsl_effect::insert), c);
  }

  // preSplit + splitCopy (Alg. 4.9 lines 16-34) for the locked chunk c: lock
  // its successor, allocate the new chunk, copy the top half of c's keys into
  // it, publish it, then empty the moved entries of c. c stays locked; the new
  // chunk is returned locked; the successor is unlocked again.
  GFSL_FN split_result split_chunk(chunk_index c) {
    split_result r;
    const chunk_index next = lock_next_chunk(c);
    const chunk_index fresh = allocate();
    if (fresh == no_chunk) {
      if (next != no_chunk) unlock(next);
      r.st = status::pool_exhausted;
      return r;
    }
    const lanes kv = read(c);  // after lock_next_chunk: NEXT may have been redirected
    const int n = count_keys(kv);
    r.before = kv;
    r.moved = shape::split_moved < n ? shape::split_moved : n - 1;
    r.moved_from = n - r.moved;
    r.fresh = fresh;
    r.fresh_min = key_at(kv, r.moved_from);
    r.kept_max = key_at(kv, r.moved_from - 1);
    r.successor = next;

    // The fresh chunk is unreachable until c's NEXT names it, so its
    // initialisation may be relaxed: the release store of c's NEXT below
    // publishes all of it. It takes over c's max (4.3) and points at c's
    // successor.
    // Its LOCK entry first (the chunk is ours before anything is written in
    // it), then its NEXT entry and the moved keys; robust makes those one wave (the thesis' copyToNewChunk, Alg. 4.9
    // lines 27-28, is one parallel write too; the thesis variant keeps the
    // entry-by-entry stores its pinned reproductions replay).
    t_.store(s_.chunk(fresh) + lock_lane, lock_lane, lock_word_of(t_.id()), mem_order::relaxed);
    remember_lock(fresh, lock_word_of(t_.id()));
    if constexpr (robust) {
      const int from = r.moved_from;
      lanes copy = t_.shfl_from(kv, [from](int lane) { return lane + from < N ? lane + from : lane; });
      t_.set_lane(copy, next_lane, make_entry(max_of(kv), next));
      t_.store_lanes(s_.chunk(fresh), copy, lane_range(0, r.moved) | (1u << next_lane), mem_order::relaxed);
    } else {
      t_.store(s_.chunk(fresh) + next_lane, next_lane, make_entry(max_of(kv), next), mem_order::relaxed);
      for (int j = 0; j < r.moved; ++j) {
        t_.store(s_.chunk(fresh) + j, j, t_.shfl(kv, r.moved_from + j), mem_order::relaxed);
      }
    }
    // One 8-byte store lowers c's max to its largest remaining key and links
    // the fresh chunk: from here readers looking for a moved key go lateral,
    // whatever stale copies the DATA lanes of c still show (NEXT outranks them).
    const bool empty_first = bug(mutant::split_empty_before_next);
    // robust: one burst from the NEXT store to the last emptied entry, so
    // that no validated read sees the old max with the moved keys gone.
    begin_burst(c);
    if (empty_first) {
      for (int j = r.moved_from; j < n; ++j) store_entry(c, j, empty_entry);
    }
    store_entry(c, next_lane, make_entry(r.kept_max, fresh));
    if (next != no_chunk) unlock(next);
    // robust: the moved entries empty in one wave (setMovedValsEmpty, Alg.
    // 4.9 line 32, is one parallel write too): after the NEXT store every
    // reader of a moved key goes lateral (NEXT outranks the DATA lanes),
    // whichever of them it still sees, and the burst covers the rest.
    if (robust && !empty_first) {
      store_wave(c, t_.splat(empty_entry), lane_range(r.moved_from, n));
    } else if (!empty_first) {
      for (int j = r.moved_from; j < n; ++j) store_entry(c, j, empty_entry);
    }
    end_burst(c);
    t_.count(stat_of(path_stat::splits));
    t_.mark(effect_mark(gfsl_effect::split), c);
    return r;
  }

  // splitInsert (Alg. 4.9 lines 1-14).
  GFSL_FN level_insert split_insert(int level, chunk_index c, key_type k, value_type v) {
    level_insert r;
    if (level > 0) t_.count(stat_of(path_stat::upper_splits));
    const split_result sp = split_chunk(c);
    if (sp.st != status::ok) {
      unlock(c);
      r.st = sp.st;
      return r;
    }
    // insertNewData: k belongs to the chunk that now encloses it, which is the
    // fresh one as soon as k is above the split chunk's lowered max.
    const bool into_fresh = k > sp.kept_max;
    const chunk_index target = into_fresh ? sp.fresh : c;
    const chunk_index other = into_fresh ? c : sp.fresh;
    execute_insert(target, read(target), k, v);
    add_to_level_count(level, 1);

    r.inserted = true;
    r.chunk = target;
    r.raise = coin();
    if constexpr (robust) {
      // robust raises the fresh chunk's minimum at every level (docs/
      // ALGORITHM.md, robust point 5), so that a search
      // stepping down at minK lands in the fresh chunk itself, not in the
      // chunk before it. minK is protected by the fresh chunk's lock, held
      // until minK is in the level above (insert_locked): an update of minK
      // needs that lock at this level (a delete removes it here only under
      // it, and then looks above again, remove_locked).
      r.raise_key = sp.fresh_min;
      r.raise_down = bug(mutant::raised_key_points_past) && sp.successor != no_chunk ? sp.successor : sp.fresh;
      if (r.raise && !into_fresh) {
        r.also_locked = sp.fresh;
      } else {
        unlock(other);
      }
    } else if (level == 0) {
      // Raised-key rule (Alg. 4.9 line 11): raise max(k, minK). The raised key
      // always lives in the fresh chunk; when that is minK (k stayed in c) the
      // fresh chunk stays locked until the raise is done, so that minK cannot
      // be deleted from level 0 while it is being inserted above (the thesis
      // unlocks it here; holding it keeps "every key of level i+1 is in level
      // i" true at all times, and respects the lock order).
      r.raise_key = k > sp.fresh_min ? k : sp.fresh_min;
      r.raise_down = bug(mutant::raised_key_points_past) && sp.successor != no_chunk ? sp.successor : sp.fresh;
      if (r.raise && !into_fresh) {
        r.also_locked = sp.fresh;
      } else {
        unlock(other);
      }
    } else {
      // Upper levels raise k itself: only k is protected by the bottom lock.
      r.raise_key = k;
      r.raise_down = target;
      unlock(other);
    }
    apart<&algorithm::update_down_ptrs>(level, sp.before, sp.moved_from, sp.moved, key_empty, sp.fresh);
    return r;
  }

  // updateDownPtrs (Alg. 4.10): keys held by lanes [first, first+count) of
  // `moved` (ascending, skipping `skip`) now live in or after `lower` in
  // `level`; repoint their entries in level+1 to their enclosing chunk.
  GFSL_FN void update_down_ptrs(int level, const lanes& moved, int first, int count, key_type skip,
                                chunk_index lower) {
    if (level + 1 >= max_levels || count <= 0) return;
    int j = first;
    while (j < first + count && key_at(moved, j) == skip) ++j;
    if (j >= first + count) return;
    lanes unused_path{};
    chunk_index upper = search_down(key_at(moved, j), level + 1, unused_path, false);
    // robust: one validated read of an upper chunk answers "not in level+1"
    // for every moved key it encloses (the moved keys ascend), where a search
    // per key would read and validate the same chunk up to N/2 times. Still
    // valid: the read the answer is taken from is the chunk at one instant,
    // and no later than the thesis' own per-key read would be.
    lanes upper_kv{};
    bool upper_read = false;
    for (; j < first + count; ++j) {
      const key_type mk = key_at(moved, j);
      if (mk == skip) continue;
      if constexpr (robust) {
        if (!upper_read || max_of(upper_kv) < mk) {
          const lateral above = search_lateral(mk, upper, level + 1, false, true);
          upper = above.chunk;
          upper_kv = above.kv;
          upper_read = above.tid == none;  // a validated negative: reusable for the next keys
          if (above.tid == none) continue;
        } else if (tid_with_key(upper_kv, mk) == none) {
          continue;  // mk is not in level+1 (same validated read)
        }
        upper_read = false;  // mk is there: lock it below, and read afresh after
      } else {
        const lateral above = search_lateral(mk, upper, level + 1, false, true);
        upper = above.chunk;
        if (above.tid == none) continue;  // mk is not in level+1
      }
      const locked_chunk enc = find_and_lock_enclosing(upper, mk);
      upper = enc.chunk;
      const int tid = tid_with_key(enc.kv, mk);
      if (tid != none) {
        const lateral below = search_lateral(mk, lower, level, false, true);
        if (below.tid != none && t_.shfl_high(enc.kv, tid) != below.chunk) {
          store_entry(enc.chunk, tid, make_entry(mk, below.chunk));
          t_.count(stat_of(path_stat::down_ptr_updates));
          if (level > 0) t_.count(stat_of(path_stat::upper_down_ptr_updates));
        }
      }
      unlock(enc.chunk);
    }
  }

  // ---- Delete ----------------------------------------------------------------

  // robust: the highest level holding k, for a delete that holds k's level-0
  // chunk locked. While that lock is held no other operation removes k from
  // any level (inserts and deletes of k lock the same chunk), and k enters
  // level i+1 only while it is in level i, in a chunk its raiser holds
  // locked (a split raises the minimum of its fresh chunk, see insert), so
  // until this delete removes k anywhere "every key of level i+1 is in
  // level i" holds for k at every instant. So the first level without k
  // ends the search (a raise of k that lands after it is found again after
  // each removal, remove_locked): one
  // validated "not here" per delete, where the thesis' top-down scan
  // (Alg. 4.11 lines 12-16) concludes one at every level. Levels are searched
  // from the path's chunks, and the chunk found at each level replaces the
  // path's entry, so the removals that follow start at it.
  GFSL_FN int highest_level_holding(key_type k, lanes& path) {
    int level = 1;
    for (; level < max_levels; ++level) {
      const chunk_index from = static_cast<chunk_index>(t_.shfl_low(path, level));
      const lateral in_level = search_lateral(k, from, level, false, true);
      if (in_level.tid == none) break;
      t_.set_lane(path, level, in_level.chunk);
    }
    return level - 1;
  }

  // Alg. 4.11 lines 13-16 at one level: k is looked for from the path's
  // chunk and, when there, removed under its chunk's lock. True when k was
  // removed; false with `st` ok when k is not in the level.
  GFSL_FN bool remove_from_level(int level, key_type k, const lanes& path, status& st) {
    const chunk_index from = static_cast<chunk_index>(t_.shfl_low(path, level));
    const lateral in_level = search_lateral(k, from, level, false, true);
    if (in_level.tid == none) return false;
    const locked_chunk enc = find_and_lock_enclosing(in_level.chunk, k);
    // No re-check is needed by the thesis (our bottom lock excludes other
    // updates of k); we still confirm before touching the chunk.
    if (tid_with_key(enc.kv, k) == none) {
      unlock(enc.chunk);
      return false;
    }
    st = remove_from_chunk(level, enc.chunk, robust ? enc.kv : read(enc.chunk), k);
    return st == status::ok;
  }

  // removeFromChunk (Alg. 4.12) for the locked chunk c holding k, which we
  // read as `kv` while holding its lock. Unlocks c (or leaves it a zombie)
  // and every other chunk it locks.
  // robust: `kv` is the read findAndLockEnclosing made under the lock, not
  // a read of its own: no team writes a chunk it does not hold (a DATA
  // entry, a NEXT redirect or a LOCK word: every writer holds the chunk,
  // and try-locks fail while we do), and between that read and this one
  // the delete writes only other levels (its upper removals and re-raises),
  // so a second read would return the same entries. thesis: read again
  // (Alg. 4.12 line 1, the access sequence its reproductions replay).
  GFSL_FN status remove_from_chunk(int level, chunk_index c, const lanes& kv, key_type k) {
    const int n = count_keys(kv);
    const int threshold = bug(mutant::merge_threshold_too_low) ? shape::merge_threshold - 2 : shape::merge_threshold;
    if (n > threshold) {
      execute_remove_no_merge(c, kv, k, true);
      t_.mark(effect_mark(gfsl_effect::remove), c);
      return status::ok;
    }
    const status st = apart<&algorithm::remove_merging>(level, c, kv, n, k);
    if (st == status::ok) t_.mark(effect_mark(gfsl_effect::remove), c);
    return st;
  }
  // The rest of removeFromChunk (Alg. 4.12 lines 5-21): c, read as `kv`
  // with n keys, is at the merge threshold.
  GFSL_FN status remove_merging(int level, chunk_index c, const lanes& kv, int n, key_type k) {
    const chunk_index next = lock_next_chunk(c, true);
    if (next == no_chunk) {
      // The final chunk of a level is never merged (it has no successor) and
      // never becomes a zombie; it may empty out completely.
      t_.count(stat_of(path_stat::last_chunk_removals));
      execute_remove_no_merge(c, kv, k);
      if (bug(mutant::merge_final_chunk)) {
        mark_zombie(c);
        return status::ok;
      }
      if (n == 2 && key_at(kv, 0) == key_neg_inf) add_to_level_count(level, -1);  // only -inf left
      unlock(c);
      return status::ok;
    }
    lanes nkv = read(next);
    int nn = count_keys(nkv);
    if (nn + n - 1 > dsize) {  // the successor cannot take our keys: split it first
      const split_result sp = split_chunk(next);
      if (sp.st != status::ok) {
        unlock(next);
        unlock(c);
        return sp.st;
      }
      unlock(sp.fresh);
      t_.count(stat_of(path_stat::merge_presplits));
      add_to_level_count(level, 1);
      apart<&algorithm::update_down_ptrs>(level, sp.before, sp.moved_from, sp.moved, key_empty, sp.fresh);
      nkv = read(next);
      nn = count_keys(nkv);
    }
    if (bug(mutant::zombie_mark_before_copy)) mark_zombie(c);
    execute_remove_merge(kv, next, nkv, k);
    if (!bug(mutant::zombie_mark_before_copy)) mark_zombie(c);
    if (!bug(mutant::level_counter_not_decremented)) add_to_level_count(level, -1);
    if (nn + n - 1 == 1 && is_final(nkv) && key_at(kv, 0) == key_neg_inf) {
      add_to_level_count(level, -1);  // the level now holds nothing but -inf
    }
    unlock(next);
    if (bug(mutant::zombie_unlocked_after_merge)) unlock(c);
    t_.count(stat_of(path_stat::merges));
    t_.mark(effect_mark(gfsl_effect::merge), c);
    apart<&algorithm::update_down_ptrs>(level, kv, 0, n, k, next);
    return status::ok;
  }

  // executeRemoveNoMerge (4.2.3, Fig. 4.6): when k is the chunk's largest key
  // the max field drops first, so no reader sees a max that is not in the
  // chunk; then the larger keys shift left, from k's index upwards, so that no
  // key is ever absent; the last key's old entry becomes EMPTY (the NEXT
  // lane's job in the thesis when the chunk was full).
  // `then_unlock`: c is unlocked with the burst's end (end_burst_and_unlock).
  GFSL_FN void execute_remove_no_merge(chunk_index c, const lanes& kv, key_type k, bool then_unlock = false) {
    const int n = count_keys(kv);
    const int idx = tid_with_key(kv, k);
    const bool lower_max = idx == n - 1 && !is_final(kv) && n >= 2;
    const bool max_late = bug(mutant::max_after_removal);
    begin_burst(c);
    const bool wave = robust && !bug(mutant::remove_right_to_left) && !max_late;
    if (wave) {
      // robust: one wave, the lowered max included. The thesis' two stores
      // let a whole-chunk read see k in a DATA lane with NEXT voting past it
      // (then only lane precedence keeps k's answers consistent); one wave
      // closes that window, and a read cut by the burst never decides a
      // negative answer (validated_read).
      lanes shifted = t_.shfl_from(kv, [](int lane) { return lane + 1 < N ? lane + 1 : lane; });
      t_.set_lane(shifted, n - 1, empty_entry);
      std::uint32_t mask = lane_range(idx, n);
      if (lower_max) {
        t_.set_lane(shifted, next_lane, make_entry(key_at(kv, n - 2), next_of(kv)));
        mask |= 1u << next_lane;
      }
      store_wave(c, shifted, mask);
    } else {
      if (lower_max && !max_late) store_entry(c, next_lane, make_entry(key_at(kv, n - 2), next_of(kv)));
      if (bug(mutant::remove_right_to_left)) {
        for (int i = n - 1; i >= idx; --i) store_entry(c, i, i + 1 < n ? t_.shfl(kv, i + 1) : empty_entry);
      } else {
        for (int i = idx; i < n; ++i) store_entry(c, i, i + 1 < n ? t_.shfl(kv, i + 1) : empty_entry);
      }
      if (lower_max && max_late) store_entry(c, next_lane, make_entry(key_at(kv, n - 2), next_of(kv)));
    }
    if (then_unlock) {
      end_burst_and_unlock(c);
    } else {
      end_burst(c);
    }
  }

  // executeRemoveMerge (4.2.3, Fig. 4.5c): the successor receives our keys
  // (all but k) in its low entries and its own keys move right; written from
  // the highest index down, so that every key stays visible at some index and
  // readers, taking the highest lane, ignore the transiently unsorted part.
  GFSL_FN void execute_remove_merge(const lanes& kv, chunk_index next, const lanes& nkv, key_type k) {
    const int n = count_keys(kv);
    const int idx = tid_with_key(kv, k);
    const int m = n - 1;
    const int total = m + count_keys(nkv);
    const bool ascending = bug(mutant::merge_left_to_right);
    begin_burst(next);
    if (robust && !ascending) {
      // robust: one wave of the entries that change, as for an insert.
      const lanes ours = t_.shfl_from(kv, [idx](int lane) { return lane < idx ? lane : (lane + 1 < N ? lane + 1 : lane); });
      const lanes theirs = t_.shfl_from(nkv, [m](int lane) { return lane >= m ? lane - m : 0; });
      const lanes merged = t_.map(ours, theirs, [m](int lane, std::uint64_t a, std::uint64_t b) { return lane < m ? a : b; });
      const lanes changed = t_.map(merged, nkv, [](int, std::uint64_t a, std::uint64_t b) -> std::uint64_t { return a != b; });
      const std::uint32_t mask = t_.ballot(changed, [](int, std::uint64_t d) { return d != 0; }) & lane_range(0, total);
      store_wave(next, merged, mask);
      end_burst(next);
      return;
    }
    for (int step = 0; step < total; ++step) {
      const int i = ascending ? step : total - 1 - step;
      const entry_type e = i < m ? t_.shfl(kv, i < idx ? i : i + 1) : t_.shfl(nkv, i - m);
      if (e != t_.shfl(nkv, i)) store_entry(next, i, e);
    }
    end_burst(next);
  }
};

// One operation by kind, for executors that replay a list of operations.
template <class Algo>
GFSL_INLINE_FN op_result apply_operation(Algo& a, op_kind kind, key_type k, value_type v) {
  return a.apply(kind, k, v);
}

}  // namespace gfsl
