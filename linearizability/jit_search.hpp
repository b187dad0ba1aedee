// Lowe's just-in-time linearization search (Wing and Gong's search with
// Lowe's memo of configurations, as Porcupine runs it) for one key of the
// map, made for histories whose operations may or may not have taken effect
// (pending, or ended in an error): key_checker runs it where counting does
// not apply and the search of set_key_checker gives up.
//
// What makes it cheap on such histories (linearizability/README.md, "The
// just-in-time search", proves each step):
//   - the state is the *set* of states the key may be in (absent, or present
//     with one of the values the history names), so an operation that may or
//     may not have taken effect is one move, not two (the subset construction
//     for a nondeterministic object);
//   - a configuration is (operations linearized, state set), remembered
//     exactly once entered: the operations called after the first one not
//     linearized are a window as wide as the operations in flight, and
//     operations that never returned are kept as counts per effect, not as
//     a set (those of one effect are interchangeable once called);
//   - reads that hold in every state of the set go at once, and of the
//     operations with one same effect only the one returning first is tried.
// Exponential in the worst case: a deadline, a node budget and a memory
// budget bound it, and it answers `unknown` rather than guess.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "linearizability/ops.hpp"
#include "linearizability/set_checker.hpp"

namespace gfsl::lin {

class jit_key_search {
 public:
  // `ops` sorted by call stamp. On `linearizable`, `order` (when given)
  // receives positions into `ops` in linearization order; optional operations
  // absent from it did not take effect. Uses options.initially_present,
  // initial_value, node_budget and memory_budget.
  verdict check(std::span<const key_op> ops, const deadline& d, std::vector<std::uint32_t>* order = nullptr,
                const key_check_options& options = {});

  std::uint64_t nodes() const { return nodes_; }
  bool out_of_memory() const { return out_of_memory_; }

 private:
  // A set of states: whether the key may be absent, and the values it may be
  // present with (indices into values_, ascending), sets_[off, off + len).
  struct state_set {
    std::uint32_t off = 0, len = 0;
    bool absent = false;
  };
  struct op {
    std::uint64_t call, ret;
    std::uint32_t pos;   // in the caller's span
    std::uint32_t value; // index into values_ (0 when none)
    std::uint8_t c;      // op_class
  };
  struct pending_class {
    std::uint8_t c;
    std::uint32_t value;
    std::vector<std::uint64_t> calls;  // ascending
    std::vector<std::uint32_t> pos;
    std::uint64_t salt;
  };
  struct frame {
    std::uint32_t lo, rp, hi;  // first finite op not done (by call), first not done by return, one past the last done
    state_set s;
    std::uint64_t zobrist, class_hash;
    std::uint32_t move;        // what led here: a finite op, or |finite| + class
    std::uint32_t choices_begin, choices_end, next;
  };

  enum class effect : std::uint8_t { fails, none, changes };
  effect effect_of(std::uint8_t c, std::uint32_t value, const state_set& s) const;
  // The set after an operation, appended to sets_; false when it is empty.
  bool step(std::uint8_t c, std::uint32_t value, const state_set& s, state_set& out);
  bool same(const state_set& a, const state_set& b) const;
  bool has(const state_set& s, std::uint32_t value) const;
  void collect_choices(const frame& f, std::uint64_t m);
  bool enter(frame& child);  // false: the configuration was seen before
  std::size_t memory_bytes() const;

  std::vector<op> ops_;               // finite ops, by call
  std::vector<std::uint32_t> by_ret_; // finite ops by return
  std::vector<std::uint8_t> done_;
  std::vector<std::uint64_t> zob_;
  std::vector<pending_class> classes_;
  std::vector<std::uint32_t> used_;   // per class: how many of its ops are linearized
  std::vector<value_type> values_;    // values_[i - 1]: the value of index i
  std::vector<std::uint32_t> sets_;   // the state sets of the frames on the stack, back to back
  std::vector<frame> stack_;
  std::vector<std::uint32_t> choices_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> scratch_;
  // Entered configurations, stored back to back in arena_ and found through
  // an open-addressing table of (hash, offset + 1).
  std::vector<std::uint32_t> arena_, key_;
  std::vector<std::uint64_t> table_hash_;
  std::vector<std::uint32_t> table_off_;
  std::size_t table_used_ = 0;
  std::uint64_t nodes_ = 0;
  bool out_of_memory_ = false;
};

}  // namespace gfsl::lin
