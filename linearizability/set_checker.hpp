// The exact search for one key of the map (key_checker runs it on the
// segments it cannot count): a one-bit object carrying a
// value (absent, or present with a value), with insert-if-absent, delete that
// returns the removed value, and contains that returns the value found.
//
// In order (linearizability/README.md states each rule and proves it keeps
// the verdict exact):
//   - a history whose operations do not overlap is simulated in one pass;
//   - zones: a value inserted once is present in one period, which must
//     contain every operation that answered it; whatever lies inside such a
//     period must hold with it present. A linear-time refutation, with a
//     handful of operations as its evidence;
//   - a just-in-time linearization search (Wing and Gong 1993, Lowe 2017)
//     that knows the object: an operation that changes nothing is linearized
//     as soon as it may go next and its answer holds, without branching (R1);
//     only the writes that may go next are branched on, one per class, the one
//     that returns first (R2); a write whose resulting state cannot last until
//     the operations that need it have gone is not tried (R3); configurations
//     that failed are remembered exactly, never by hash alone.
// Worst-case time is exponential (key_checker takes away the segments whose
// operations share a common point, which counting decides), so the search
// watches a deadline and a memory budget and answers `unknown` rather than guess.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "linearizability/ops.hpp"

namespace gfsl::lin {

struct key_check_options {
  // Where the key starts: absent (the map starts empty), or present with
  // this value (a window cut out of a longer history starts anywhere).
  bool initially_present = false;
  value_type initial_value = 0;
  std::uint64_t node_budget = 0;  // answer `unknown` after this many steps (0: no bound)
  // Answer `unknown` when the checker's own memory (its copy of the key's
  // operations, the search's stack and its memo) would pass this many bytes
  // (0: no bound).
  std::size_t memory_budget = 0;
  // key_checker: a segment of mutually concurrent operations is counted on
  // its own when it holds at least this many; shorter ones after a segment
  // that must be searched are searched with it (fewer, longer searches).
  std::uint32_t counted_segment_min = 32;
};

class set_key_checker {
 public:
  // `ops` sorted by call stamp. On `linearizable`, `order` (when given)
  // receives positions into `ops` in linearization order; optional operations
  // that are absent from it did not take effect.
  verdict check(std::span<const key_op> ops, const deadline& d, std::vector<std::uint32_t>* order = nullptr,
                const key_check_options& options = {});

  // Search steps of the last check (0 when it was simulated in one pass).
  std::uint64_t nodes() const { return nodes_; }
  // Position in `ops` of the completed operation the last search could not
  // get past: the one that had to go next at the furthest point it reached
  // (refuted by the zone test without a search: the latest called of the
  // evidence). Where to look for the cause of a violation.
  std::uint32_t stuck_at() const { return stuck_; }
  // The last check answered `unknown` because of `memory_budget`.
  bool out_of_memory() const { return out_of_memory_; }
  // After `not_linearizable`: positions in `ops` of the operations the
  // verdict rests on: a handful when the zone test found it (with the facts
  // it checked on the whole history, such as a value being inserted once),
  // all of them when the search did. Not a history to check on its own:
  // leaving operations out can make a history fail (see checker.hpp).
  const std::vector<std::uint32_t>& evidence() const { return evidence_; }

 private:
  using enum op_classes::op_class;
  struct frame {
    std::uint32_t log_size, rp, ce, lo;
    std::uint64_t max_call;
    bool present;
    value_type value;
    std::uint32_t choices_begin, choices_end, next;
  };

  bool sequential_pass(std::vector<std::uint32_t>* order, const key_check_options& options);
  bool zone_refutation(const key_check_options& options);
  void prepare(std::span<const key_op> ops);
  void prepare_search();
  bool legal_read(std::uint32_t i) const;
  bool is_read(std::uint32_t i) const { return cls_[i] <= read_value; }
  void linearize(std::uint32_t i);
  void closure();
  std::uint64_t optional_bound() const;
  void restore(const frame& f);
  bool doomed(bool present, value_type value, std::uint32_t skip) const;
  void collect_choices();
  std::uint32_t pick_choice(frame& f);
  void memo_key();
  bool memo_contains();
  void memo_insert();
  void memo_clear();
  std::size_t memory_bytes() const;

  // The key's operations, without pending contains (they constrain nothing).
  std::vector<std::uint64_t> call_, ret_;
  std::vector<value_type> val_;
  std::vector<std::uint8_t> cls_, optional_, done_;
  std::vector<std::uint32_t> source_;   // position in the caller's span
  std::vector<std::uint32_t> by_ret_;   // completed operations by return stamp
  std::vector<std::uint32_t> opt_;      // optional operations
  bool finite_optional_ = false;        // some optional operation has a return stamp
  std::uint32_t n_ = 0, must_ = 0;

  // The configuration: operations done (in order, in log_), the state, and
  // what follows from them.
  std::vector<std::uint32_t> log_;
  std::uint64_t max_call_ = 0;   // largest call stamp linearized so far
  std::uint32_t rp_ = 0;         // first completed operation (by return) not done
  std::uint32_t ce_ = 0;         // operations [0, ce) are called by the earliest pending return
  std::uint32_t lo_ = 0;         // first completed operation (by call) not done
  bool present_ = false;
  value_type value_ = 0;

  std::vector<frame> frames_;
  std::vector<std::uint32_t> choices_;
  std::vector<std::uint8_t> priority_;  // parallel to choices_
  std::vector<std::uint64_t> class_key_;
  std::vector<std::uint32_t> class_pos_;
  std::vector<std::uint32_t> key_;
  // Failed configurations: keys stored back to back in arena_, found through
  // an open-addressing table of (hash, offset + 1).
  std::vector<std::uint32_t> arena_;
  std::vector<std::uint64_t> table_hash_;
  std::vector<std::uint32_t> table_off_;
  std::size_t table_used_ = 0;
  std::uint64_t nodes_ = 0;
  std::size_t memo_words_limit_ = 0;
  // The closure watches the deadline too: on a key with many operations in
  // flight one closure can take longer than the time limit.
  const deadline* deadline_ = nullptr;
  std::uint64_t ticks_ = 0;
  bool expired_ = false;
  bool out_of_memory_ = false;
  std::uint32_t stuck_ = 0;
  std::vector<std::uint32_t> evidence_;
  struct zone {
    std::uint64_t lo, hi;        // the open interval the value is surely present in
    std::uint32_t ins, at_lo, at_hi;  // its insert, and the operations that fix lo and hi
    value_type value;
  };
  std::vector<std::pair<value_type, std::uint32_t>> by_value_;
  // Per value: its inserts, and the completed operations that need it present
  // (contains that found it, the delete that removed it), latest call first.
  std::vector<std::pair<value_type, std::uint32_t>> inserters_, needers_;
  std::vector<zone> zones_;
};

}  // namespace gfsl::lin
