// The per-key checker that `gfsl check` runs: exact, polynomial on the
// histories that split into segments of mutually concurrent operations, and
// bounded in time and memory everywhere else.
//
// (linearizability/README.md, "The segmented checker", states each step and
// proves it.)
//   - Segments: where every operation called so far has returned before the
//     next one is called, every linearization passes from one side to the
//     other once, so the key's history is judged segment by segment, carrying
//     the set of states the key may be in at each cut.
//   - A segment whose operations share a common point (every order of them
//     is valid) is decided by counting: how many presence periods each value
//     can have against how many deletes must end them. Linear in the segment,
//     for each start state it must be tried from.
//   - Any other segment goes to the search of `set_key_checker`, from each
//     start state, with a probe read after it for each end state the next
//     segment needs; a deadline and a memory budget bound it, and it answers
//     `unknown` rather than guess.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "linearizability/ops.hpp"
#include "linearizability/jit_search.hpp"
#include "linearizability/set_checker.hpp"

namespace gfsl::lin {

class key_checker {
 public:
  // `ops` sorted by call stamp. On `linearizable`, `order` (when given)
  // receives positions into `ops` in linearization order; optional operations
  // absent from it did not take effect. `options.node_budget` bounds each
  // search; `options.memory_budget` bounds this checker's own memory.
  verdict check(std::span<const key_op> ops, const deadline& d, std::vector<std::uint32_t>* order = nullptr,
                const key_check_options& options = {});

  // Of the last check: segments judged, how many by counting, and whether a
  // memory budget is what made it `unknown`.
  std::size_t segments() const { return segments_judged_; }
  std::size_t counted_segments() const { return counted_; }
  bool out_of_memory() const { return out_of_memory_; }
  // After `not_linearizable`: positions in `ops` of every operation up to
  // the end of the first segment that no state reaching it could pass.
  const std::vector<std::uint32_t>& evidence() const { return evidence_; }

  // The states the key may be in: absent, or present with one of `values`
  // (sorted, without repeats).
  struct state_set {
    bool absent = false;
    std::vector<value_type> values;
    bool empty() const { return !absent && values.empty(); }
  };

 private:
  using enum op_classes::op_class;
  struct op {
    std::uint64_t call, ret;  // ret: infinity for an operation that never returned
    value_type value;
    std::uint32_t pos;        // position in the caller's span
    std::uint8_t c;
  };
  struct segment {
    std::uint32_t begin, end;  // [begin, end) in ops_
    bool concurrent;           // the operations share a common point
  };
  // Per value of a concurrent segment: completed inserts, optional inserts,
  // completed deletes that returned it, and whether a contains found it.
  struct value_count {
    value_type value;
    std::int64_t inserts = 0, optional_inserts = 0, deletes = 0;
    bool read = false;
  };
  struct start_state {
    bool present;
    value_type value;
  };

  void prepare(std::span<const key_op> ops);
  void count(const segment& s);
  // The counting judgement of the current segment (count() first): adds to
  // `ends` every state it may end in from `start`.
  void counted_ends(const start_state& start, state_set& ends) const;
  // A linearization of the current counted segment from `start` to `end`, appended to `out`.
  bool counted_witness(const segment& s, const start_state& start, const start_state& end, std::vector<std::uint32_t>& out);
  // The search's judgement of a segment. `end`: the state it must end in,
  // checked by a probe read after it (null: any). `unknown` when bounded out.
  verdict searched(const segment& s, const start_state& start, const start_state* end, const deadline& d,
                   const key_check_options& options, std::vector<std::uint32_t>* out);
  verdict ends_of(const segment& s, const state_set& starts, bool last, const deadline& d, const key_check_options& options,
                  state_set& ends);
  std::vector<start_state> start_classes(const state_set& starts) const;
  bool named(value_type v) const;  // by the current counted segment
  std::size_t memory_bytes() const;

  std::span<const key_op> input_;
  std::vector<op> ops_;
  std::vector<segment> segments_;
  // The search of a segment: set_key_checker's, within a node budget in
  // proportion to the segment, then the just-in-time search of jit_search.hpp
  // (exact both; the first is fastest on histories without optional
  // operations, the second where they abound).
  verdict search(std::span<const key_op> sub, const deadline& d, std::vector<std::uint32_t>* order, const key_check_options& o);
  std::vector<value_type> mentioned_;  // values the current segment names, sorted
  std::vector<value_count> counts_;    // per value, sorted by value
  std::int64_t deletes_any_ = 0, optional_deletes_ = 0, reads_absent_ = 0, reads_present_ = 0;
  std::int64_t total_inserts_ = 0, total_deletes_ = 0;
  std::vector<key_op> sub_;
  std::vector<std::uint32_t> sub_order_;
  set_key_checker search_;
  jit_key_search jit_;
  std::vector<std::uint32_t> evidence_;
  std::size_t segments_judged_ = 0, counted_ = 0;
  bool out_of_memory_ = false;
};

}  // namespace gfsl::lin
