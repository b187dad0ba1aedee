// The Li-Deng GPU skiplist (Li and Deng 2014,
// ../shared/papers/gpu-skiplist-li-deng-2014.txt), written once against the
// team interface of core/team.hpp. What the paper does, line by line, and
// what the testbed found: core/lideng/README.md.
//
// The paper's operations come in batches of one kind (Algorithm 1: insert of
// data[], Algorithm 2: delete of data[]), each batch a sequence of parallel
// steps with a barrier between them (one kernel per step). Here a batch is
// one operation of each of teams 0 .. batch-1 (the paper's thread i is team
// i), and `apply` is one team's share of it:
//
//   E1   search the key from the head down (searchkey): the predecessor and
//        successor at each level below the node's height, the height drawn
//        before the search (section 3.2); an insert of a present key gets
//        height 0 ("其对应高度设为 0"); the new node is allocated and its key
//        and height written. The team writes its slot (layout.hpp).
//   ---- barrier 1 (the end of E1's kernel)
//   E2-E5 (insert) / E2-E6 (delete): each team reads every slot (one lane per
//        slot: the paper's prefix sum, mix_data[] and its sort become each
//        team ranking its own entries among the batch's) and writes its own
//        links. Insert, at level l: the new nodes with the same recorded
//        predecessor form a group, chained in key order; the last points at
//        the recorded successor, the first is written into the predecessor's
//        forward[l] (Algorithm 1, E5). Delete, at level l: a deleted node
//        whose predecessor is deleted at l in the batch writes nothing (E5's
//        preprocessing, pre_eq[i+1] = mix_data[i]); the first of a run writes
//        its predecessor's forward[l] with the successor of the run's last
//        node (E6 after stable_partition).
//   ---- barrier 2 (the end of the batch: the next batch's searches see it)
//
// Searches (contains) are the paper's searchkey alone, in a batch of their
// own. Every operation, of any kind, crosses both barriers, so that every
// team of a batch counts the same arrivals whatever its operation.
//
// ---- Why a batch of one kind is linearizable --------------------------------
//
// Let S0 be the list when barrier 2 of the previous batch opens (the empty
// list, or the prefill, for the first).
// (S) Every write of a batch is made after barrier 1 opens, every E1 read
//     before its team arrives there. The node a team writes before barrier 1
//     (allocated: key, height, forward[l] = its recorded successor) is
//     reachable from no node of the list until barrier 1. So every
//     E1 read sees S0, and each answer is a function of S0 and the key only.
// (L) Insert, level l: the new nodes that go between two neighbours p -> n
//     of S0 are exactly the group with pre = p (property 1 of section 3.2:
//     the keys in p's gap are those between p and n). The group is chained
//     in key order, its last node points at n, and only its first writes p's
//     forward[l]: one writer per word, so the order of the batch's writes
//     does not matter, and level l ends up S0's level with each gap filled
//     in order: sorted, each key once (keys distinct, below).
// (R) Delete, level l: the deleted nodes on level l form runs of S0
//     neighbours; the node before a run is not deleted, and only the run's
//     first node writes its forward[l], with the first node after the run.
//     One writer per word again, and level l is S0's without the deleted
//     nodes. (A node of height h is on levels 0 .. h-1 only; the run is
//     found from the slots: a delete's recorded successor is the node's own
//     forward[l], read in E1.)
// (D) Keys of a batch are distinct in `fixed`: of the slots holding one key,
//     the lowest acts; the others answer false. `published` does not, and a
//     key twice in one insert batch is linked twice (both answer true: the
//     list holds it twice); twice in one delete batch both answer true.
// (B) Barrier 2 opens only after every team's writes; the next batch's E1
//     reads follow it (acq_rel arrival, acquire wait), so its S0 is this
//     batch's result.
// Linearization points: every operation of the batch is running at the
// moment barrier 1 opens (each was called before it arrived, none returns
// before barrier 2). Put them all there, in slot order, each `fixed` loser
// after its winner. With distinct keys the operations commute, and each
// answer, computed against S0 (S), is the answer against S0 plus the effects
// of the others (other keys). Between barrier 1 and barrier 2 the list is
// half-linked, but no operation of the batch reads it then (only slots), and
// no operation of another batch runs: the abstract state is never observed
// in between, and the list at barrier 2 is S0 with the batch applied (L, R).
//
// What a mixed batch breaks: (L) and (R) each assume the only writers of a
// level in the batch are of their own kind. An insert into p's gap and a
// delete of p's successor n write the same word p.forward[l]; whichever
// writes last wins, and either the new node is lost or n stays (the insert
// or the delete answered true for nothing). The testbed shows it under the
// scheduler (tests/test_lideng.cpp, LiDengMixed.*).
//
// Memory order: slots and links are written with release stores, read with
// acquire team-wide reads; a barrier arrival is an acq_rel fetch_add and the
// wait an acquire load, so every write before a barrier happens before every
// read after it on any team.
#pragma once

#include <cstdint>

#include "../coverage.hpp"
#include "../platform.hpp"
#include "../team.hpp"
#include "../types.hpp"
#include "layout.hpp"
#include "mutants.hpp"

namespace gfsl::lideng {

template <class Team, lideng_variant V = default_lideng_variant, bool Mutable = false>
class algorithm {
 public:
  static constexpr bool fixed = V == lideng_variant::fixed;
  using lanes = typename Team::lanes;
  static_assert(Team::width == node_words, "one lane per node word: a Li-Deng team is 16 lanes");
  static_assert(Team::width >= max_batch, "one lane per slot in a read of the batch's slots");

  GFSL_FN algorithm(Team& team, std::uint64_t* words, const params& p, lideng_mutant m = lideng_mutant::none)
      : t_(team), words_(words), p_(p), mutant_(m) {}

  // One team's operation of the current batch: returns after the whole batch
  // is linked (barrier 2). Every team of the batch must call it once per
  // batch, or the others wait at the barriers.
  GFSL_FN op_result apply(op_kind kind, key_type k, value_type v) {
    const std::uint32_t me = t_.id();
    if (me >= p_.batch) return {status::stopped, false, 0};  // no slot: the batch is teams 0 .. batch-1
    op_result answer{status::ok, false, 0};
    std::uint32_t slot_kind_code = slot_none;
    std::uint32_t h = 0, node = no_node;
    std::uint32_t pre[max_levels], next[max_levels];

    // ---- E1: search (read-only on the list) and the slot
    if (!is_user_key(k)) {
      answer = {status::key_out_of_range, false, 0};
    } else {
      const std::uint32_t drawn = kind == op_kind::insert ? random_level() : 0;  // before the search (3.2)
      lanes found_w{};
      bool found = false;
      if (!search(k, pre, next, found, found_w)) return corrupt();
      switch (kind) {
        case op_kind::contains:
          slot_kind_code = slot_contains;
          answer = {status::ok, found, found ? entry_value(t_.shfl(found_w, entry_word)) : 0};
          break;
        case op_kind::insert:
          slot_kind_code = slot_insert;
          if (found) break;  // height 0: nothing to link
          node = allocate();
          if (node == no_node) {
            answer = {status::pool_exhausted, false, 0};
            break;
          }
          h = drawn;
          write_new_node(node, k, v, h, next);
          answer = {status::ok, true, 0};
          break;
        case op_kind::remove:
          slot_kind_code = slot_remove;
          if (!found) break;
          node = next[0];
          h = t_.shfl_low(found_w, height_word);
          if (h < 1 || h > static_cast<std::uint32_t>(p_.levels)) return corrupt();
          // Delete's "next" is the deleted node's own forward[l] (E6: pre -> next).
          for (std::uint32_t l = 0; l < h; ++l) {
            if (next[l] != node) return corrupt();  // a node of height h is on every level below h
            next[l] = t_.shfl_low(found_w, forward_word0 + static_cast<int>(l));
          }
          answer = {status::ok, true, entry_value(t_.shfl(found_w, entry_word))};
          break;
      }
    }
    write_slot(me, slot_op_word(slot_kind_code, k), h, node, pre, next);

    if (!active(lideng_mutant::no_link_barrier)) barrier();

    // ---- E2..E6: rank among the batch's slots, link
    if (h > 0 && (slot_kind_code == slot_insert || slot_kind_code == slot_remove)) {
      const lanes ops = t_.gather([this](int lane) -> const std::uint64_t* { return slot_ptr(lane) + 0; });
      const lanes hn = t_.gather([this](int lane) -> const std::uint64_t* { return slot_ptr(lane) + 1; });
      const std::uint32_t live = live_slots(ops, hn, slot_kind_code);
      if (((live >> me) & 1u) == 0) {
        // fixed: a lower slot holds the same key and acts for it (D). This
        // operation linearizes just after that one: insert finds k present,
        // delete finds it absent. An insert's node stays unlinked.
        answer = {status::ok, false, 0};
      } else if (slot_kind_code == slot_insert) {
        link_insert(me, k, h, node, pre, next, ops, hn, live);
      } else {
        link_remove(h, pre, next, hn, live);
      }
    }

    barrier();
    return answer;
  }

 private:
  GFSL_FN bool active(lideng_mutant m) const {
    if constexpr (Mutable && fixed) {
      return mutant_ == m;
    } else {
      (void)m;
      return false;
    }
  }

  GFSL_FN std::uint64_t* node_ptr(std::uint32_t n) const { return words_ + node_offset(n); }
  GFSL_FN std::uint64_t* slot_ptr(int s) const { return words_ + slot_offset(static_cast<std::uint32_t>(s)); }

  // Fig. 3 random_level with p = 1/2, capped at the list's levels: one draw
  // of the team's generator, every lane the same.
  GFSL_FN std::uint32_t random_level() {
    const std::uint32_t r = t_.random_u32();
    std::uint32_t level = 1;
    while (level < static_cast<std::uint32_t>(p_.levels) && ((r >> (level - 1)) & 1u) != 0) ++level;
    return level;
  }

  // searchkey: from the head's top level down, the last node below k and
  // the node after it at every level. False on a corrupt list (an index
  // outside the pool, or a walk longer than the pool allows).
  GFSL_FN bool search(key_type k, std::uint32_t* pre, std::uint32_t* next, bool& found, lanes& found_w) {
    std::uint32_t x = head_node;
    lanes wx = read_node(x);
    std::uint64_t steps = 0;
    const std::uint64_t bound = static_cast<std::uint64_t>(p_.levels) * p_.pool_nodes + 1;
    for (int l = p_.levels - 1; l >= 0; --l) {
      for (;;) {
        const std::uint32_t y = t_.shfl_low(wx, forward_word0 + l);
        if (y >= p_.pool_nodes || ++steps > bound) return false;
        const lanes wy = read_node(y);
        const key_type ky = entry_key(t_.shfl(wy, entry_word));
        if (ky < k) {
          x = y;
          wx = wy;
          continue;
        }
        pre[l] = x;
        next[l] = y;
        if (l == 0) {
          found = ky == k;
          found_w = wy;
        }
        break;
      }
    }
    return true;
  }

  GFSL_FN lanes read_node(std::uint32_t n) { return t_.load_lanes(node_ptr(n), mem_order::acquire); }

  GFSL_FN std::uint32_t allocate() {
    // Relaxed: only the index is taken; the node reaches others through the
    // slot (released before barrier 1) and the links.
    const std::uint64_t idx = t_.fetch_add(words_ + alloc_counter_word, 0, 1, mem_order::relaxed);
    if (idx >= p_.pool_nodes) {
      std::uint64_t expected = error_none;
      t_.cas(words_ + error_word_index, 0, expected, error_pool_exhausted);  // first error wins
      return no_node;
    }
    return static_cast<std::uint32_t>(idx);
  }

  // Key, height, and forward[l] = the recorded successor: once a group's
  // first node is linked, a walk of the level through the group's nodes
  // whose own links are not written yet still goes to that successor, so
  // every level stays a sorted chain to the tail at every step (the mid-run
  // invariants, invariants.hpp). Linking only moves forward[l] back to a
  // node of the group in between.
  GFSL_FN void write_new_node(std::uint32_t n, key_type k, value_type v, std::uint32_t h, const std::uint32_t* next) {
    lanes w = t_.splat(0);
    t_.set_lane(w, entry_word, make_entry(k, v));
    t_.set_lane(w, height_word, h);
    std::uint32_t mask = 0x3u;
    for (std::uint32_t l = 0; l < h; ++l) {
      t_.set_lane(w, forward_word0 + static_cast<int>(l), next[l]);
      mask |= 1u << (forward_word0 + l);
    }
    t_.store_lanes(node_ptr(n), w, mask, mem_order::release);
  }

  GFSL_FN void write_slot(std::uint32_t me, std::uint64_t op_word, std::uint32_t h, std::uint32_t node,
                          const std::uint32_t* pre, const std::uint32_t* next) {
    lanes w = t_.splat(0);
    t_.set_lane(w, 0, op_word);
    t_.set_lane(w, 1, pair_word(h, node));
    std::uint32_t mask = 0x3u;
    for (std::uint32_t l = 0; l < h; ++l) {
      t_.set_lane(w, 2 + static_cast<int>(l), pair_word(pre[l], next[l]));
      mask |= 1u << (2 + l);
    }
    t_.store_lanes(slot_ptr(static_cast<int>(me)), w, mask, mem_order::release);
  }

  // The slots of `kind` with something to link, lanes 0 .. batch-1; fixed:
  // of those holding one key, the lowest only (D).
  GFSL_FN std::uint32_t live_slots(const lanes& ops, const lanes& hn, std::uint32_t kind) const {
    const std::uint32_t batch_mask = p_.batch >= 32 ? 0xFFFFFFFFu : (1u << p_.batch) - 1u;
    std::uint32_t live = t_.ballot(ops, [kind](int, std::uint64_t w) { return slot_kind_of(w) == kind; }) &
                         t_.ballot(hn, [](int, std::uint64_t w) { return high_of(w) > 0; }) & batch_mask;
    if constexpr (fixed) {
      std::uint32_t kept = 0;
      for (int j = 0; j < max_batch; ++j) {
        if (((live >> j) & 1u) == 0) continue;
        const key_type kj = slot_key_of(t_.shfl(ops, j));
        bool lower = false;
        for (int i = 0; i < j; ++i) lower = lower || (((kept >> i) & 1u) != 0 && slot_key_of(t_.shfl(ops, i)) == kj);
        if (!lower) kept |= 1u << j;
      }
      live = kept;
    }
    return live;
  }

  // (key, slot) order of the sort of E4; group-in-slot-order drops the key.
  GFSL_FN bool before(key_type ka, int a, key_type kb, int b) const {
    if (active(lideng_mutant::group_in_slot_order)) return a < b;
    return ka < kb || (ka == kb && a < b);
  }

  // Algorithm 1, E5, for this team's node at each of its levels (L).
  GFSL_FN void link_insert(std::uint32_t me, key_type k, std::uint32_t h, std::uint32_t node, const std::uint32_t* pre,
                           const std::uint32_t* next, const lanes& ops, const lanes& hn, std::uint32_t live) {
    lanes fwd = t_.splat(0);
    std::uint32_t first_mask = 0, fwd_mask = 0;
    const int mine = static_cast<int>(me);
    for (std::uint32_t l = 0; l < h; ++l) {
      const lanes pn = t_.gather([this, l](int lane) -> const std::uint64_t* { return slot_ptr(lane) + 2 + l; });
      std::uint32_t succ = next[l];
      bool first = true;
      if (!active(lideng_mutant::insert_links_alone)) {
        int best = -1;
        key_type best_key = 0;
        for (int j = 0; j < max_batch; ++j) {
          if (j == mine || ((live >> j) & 1u) == 0) continue;
          if (high_of(t_.shfl(hn, j)) <= l) continue;               // not on this level
          if (high_of(t_.shfl(pn, j)) != pre[l]) continue;          // another gap
          const key_type kj = slot_key_of(t_.shfl(ops, j));
          if (before(kj, j, k, mine)) {
            first = false;
          } else if (best < 0 || before(kj, j, best_key, best)) {
            best = j;
            best_key = kj;
          }
        }
        if (best >= 0) succ = low_of(t_.shfl(hn, best));
      }
      t_.set_lane(fwd, forward_word0 + static_cast<int>(l), succ);
      if (succ != next[l]) fwd_mask |= 1u << (forward_word0 + l);  // E1 wrote next[l]
      if (first) first_mask |= 1u << l;
    }
    // The node's own links before its predecessor's (no reader in a batch of
    // one kind needs the order; a mixed batch's search does).
    t_.store_lanes(node_ptr(node), fwd, fwd_mask, mem_order::release);
    for (std::uint32_t l = 0; l < h; ++l) {
      if (((first_mask >> l) & 1u) == 0) continue;
      t_.store(node_ptr(pre[l]) + forward_word0 + l, forward_word0 + static_cast<int>(l), node, mem_order::release);
    }
  }

  // Algorithm 2, E5 and E6, for this team's node at each of its levels (R).
  GFSL_FN void link_remove(std::uint32_t h, const std::uint32_t* pre, const std::uint32_t* next, const lanes& hn,
                           std::uint32_t live) {
    const bool alone = active(lideng_mutant::delete_links_alone);
    for (std::uint32_t l = 0; l < h; ++l) {
      const lanes pn = t_.gather([this, l](int lane) -> const std::uint64_t* { return slot_ptr(lane) + 2 + l; });
      std::uint32_t on_level = 0;  // slots deleting a node of this level
      for (int j = 0; j < max_batch; ++j) {
        if (((live >> j) & 1u) != 0 && high_of(t_.shfl(hn, j)) > l) on_level |= 1u << j;
      }
      const auto deleted_slot = [&](std::uint32_t n) -> int {
        for (int j = 0; j < max_batch; ++j) {
          if (((on_level >> j) & 1u) != 0 && low_of(t_.shfl(hn, j)) == n) return j;
        }
        return -1;
      };
      // E5: a predecessor deleted at this level in the batch: not the run's first.
      if (!alone && deleted_slot(pre[l]) >= 0) continue;
      std::uint32_t succ = next[l];
      if (!alone && !active(lideng_mutant::delete_stops_at_deleted_next)) {
        // E6 after stable_partition: the successor of the run's last node.
        for (std::uint32_t hop = 0; hop < p_.batch; ++hop) {
          const int j = deleted_slot(succ);
          if (j < 0) break;
          succ = low_of(t_.shfl(pn, j));
        }
      }
      t_.store(node_ptr(pre[l]) + forward_word0 + l, forward_word0 + static_cast<int>(l), succ, mem_order::release);
    }
  }

  // The end of a step kernel: every team of the batch arrives once. The
  // counter only grows, by `batch` per barrier, so a ticket names its barrier.
  GFSL_FN void barrier() {
    if (p_.batch <= 1) return;
    const std::uint64_t ticket = t_.fetch_add(words_ + barrier_word, 0, 1, mem_order::acq_rel);
    const std::uint64_t target = (ticket / p_.batch + 1) * p_.batch;
    for (;;) {
      const std::uint64_t seen = t_.load(words_ + barrier_word, 0);
      if (seen >= target) return;
      // The arrivals seen, in the high half: a free lock word for the reports.
      t_.lock_wait(static_cast<std::uint32_t>(barrier_word), seen << 32);
    }
  }

  GFSL_FN op_result corrupt() {
    std::uint64_t expected = error_none;
    t_.cas(words_ + error_word_index, 0, expected, error_corrupt);
    return {status::corrupt, false, 0};
  }

  Team& t_;
  std::uint64_t* words_;
  params p_;
  lideng_mutant mutant_;
};

}  // namespace gfsl::lideng
