// Whole histories: split by key, every key checked by the segmented per-key
// checker (key_checker.hpp) on all cores, within a time and a memory bound, and, on a violation, the failing key explained: a
// minimal sub-history that is still not linearizable, and the longest prefix
// of its history that is.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "linearizability/ops.hpp"
#include "model/history.hpp"

namespace gfsl::lin {

// Where a check is, for a progress line: the phase, and the keys decided so
// far of those the history holds. Written by check_history, read by anyone.
struct check_progress {
  enum phase_kind : int { grouping = 0, deciding = 1, explaining = 2, done = 3 };
  std::atomic<int> phase{grouping};
  std::atomic<std::uint64_t> keys{0};
  std::atomic<std::uint64_t> decided{0};
  std::atomic<double> grouping_seconds{0};  // set when deciding starts
};

struct check_result;

struct check_options {
  check_progress* progress = nullptr;  // null: none kept
  unsigned threads = 0;          // 0: every core
  double timeout_seconds = 0;    // 0: no limit; keys not decided in time are `unknown`
  // Each key's own bound, from when a thread takes it up (0: none): a hard
  // key ends `unknown` after this long instead of holding its thread, and
  // no run with the defaults waits on one key without end.
  double key_seconds = 10;
  // false: the first violation found ends the check (the keys still being
  // decided are stopped, those not taken up are left unchecked); true: every
  // key is decided, and the smallest violating one explained.
  bool all_keys = false;
  bool explain = true;           // on a violation: shrink it, find the longest linearizable prefix
  // A bound on explaining, after the verdict (shrinking stops there, and the
  // smallest failing window found so far is kept: still a proof, maybe not
  // minimal). 0: no explanation is built at all.
  double explain_seconds = 5;
  // Called once the verdict is known, before the explanation is built (a
  // report can print the verdict while the shrinking runs). Null: none.
  std::function<void(const check_result&)> on_verdict;
  // A bound on the checker's memory beyond the history itself, in bytes (0:
  // none): shared among the threads; a key that would need more is
  // `unknown`, as one that runs out of time.
  std::size_t max_memory_bytes = 0;
};

// The default of `gfsl check --max-memory`: half of the physical memory.
std::size_t default_max_memory();

// Why a key was left undecided.
enum class undecided_why : std::uint8_t {
  key_time,    // its own bound (check_options::key_seconds, gfsl check --key-seconds)
  total_time,  // the whole check's bound (timeout_seconds, --seconds)
  memory,      // max_memory_bytes (--max-memory)
};
const char* undecided_why_name(undecided_why w);

struct key_summary {
  key_type key = 0;
  std::uint64_t operations = 0;  // on this key
  undecided_why why = undecided_why::key_time;  // undecided keys only
};

// Indices below are positions in the checked history.
//
// The counterexample is a relaxation of the key's history, each step of
// which can only make more orders valid, so that it failing proves the whole
// history fails (linearizability/README.md, "counterexamples"):
//   - a window of time: operations that returned before `window_from` are
//     left out and the key's state then is unknown (any state), unless the
//     window starts the history (the map starts empty); operations called
//     after `window_to` are left out, and those still running then may or
//     may not have taken effect;
//   - inside it, operations whose answers are set aside: reads are left out,
//     writes stay as writes that may or may not have taken effect.
// `minimal`: the operations whose answers still matter. Setting aside any
// one of them makes the window linearizable (when `one_minimal`).
struct counterexample {
  key_type key = 0;
  std::vector<std::uint32_t> key_history;  // every operation on the key, by call stamp
  std::vector<std::uint32_t> minimal;      // answers that matter, by call stamp
  std::vector<std::uint32_t> set_aside;    // writes in the window that may or may not have taken effect
  std::uint64_t window_from = 0;
  std::uint64_t window_to = never_returned;
  bool from_start = true;                  // the window opens on the empty map
  bool one_minimal = false;
  // The longest prefix found linearizable: the operations called at or before
  // `prefix_until`; those that had not returned by then count as pending.
  std::vector<std::uint32_t> prefix;
  std::vector<std::uint32_t> prefix_order;  // a linearization of it; pending ones absent did not take effect
  std::uint64_t prefix_until = 0;
  bool prefix_empty = true;
};

struct check_result {
  verdict v = verdict::linearizable;
  std::uint64_t operations = 0;
  std::uint64_t optional_operations = 0;  // pending, or ended in an error
  std::uint64_t keys = 0;
  std::uint64_t violating_keys = 0;
  std::uint64_t undecided_keys = 0;
  std::uint64_t memory_bound_keys = 0;  // of the undecided: stopped by max_memory_bytes rather than the time limit
  std::vector<key_summary> violating;  // the first 100, by key
  std::vector<key_summary> undecided;  // the first 100, by key
  // Keys never decided because the check stopped at its first violation
  // (check_options::all_keys false): neither violating nor undecided.
  std::uint64_t unchecked_keys = 0;
  // The check ended at its first violation (all_keys false). Then which keys
  // were decided, and how many violating ones were found meanwhile, depend on
  // the threads' timing; the reports name the first violation only.
  bool stopped_at_first = false;
  // The violating key found first (all_keys: the smallest), explained in
  // `example`.
  std::optional<key_summary> first_violation;
  std::optional<counterexample> example;  // for first_violation; none with explain_seconds 0
  bool explain_skipped = false;  // a violation, and explain_seconds 0 asked for no explanation
  unsigned threads = 1;
  double seconds = 0;          // deciding every key
  double explain_seconds = 0;  // building the example
};

// How check_history hands keys to threads, for any per-key checker (the
// generic models' too, so that every model honours the same bounds): keys
// taken one at a time from a shared counter in `schedule` order (empty: key
// order), each under the check's deadline and its own `key_seconds`; the
// first violation ends the others when `stop_at_first`. A std::bad_alloc in
// any thread stops every other one, and is thrown again on the calling
// thread once all have been joined (a thread left joinable would end the
// process in std::terminate).
struct key_outcome {
  verdict v = verdict::linearizable;
  bool out_of_memory = false;  // unknown because its memory budget ran out
};
struct scheduled_key {
  std::size_t group = 0;
  verdict v = verdict::linearizable;  // not_linearizable or unknown: decided keys are not listed
  undecided_why why = undecided_why::key_time;
};
struct schedule_result {
  std::vector<scheduled_key> found;  // by group
  unsigned threads = 1;              // those that ran
  std::size_t first_found = ~std::size_t{0};  // the violating group found first
  std::uint64_t unchecked = 0;       // stop_at_first: groups left without a verdict
};
struct schedule_options {
  unsigned threads = 1;
  deadline whole;           // the check's own deadline (its cancel flag is not looked at)
  double key_seconds = 0;   // 0: none
  bool stop_at_first = false;
  check_progress* progress = nullptr;
};
// decide(thread, group, its deadline): thread is 0 .. threads - 1, the caller's
// own thread being 0.
schedule_result decide_keys(std::size_t groups, const std::vector<std::uint32_t>& schedule, const schedule_options& o,
                            const std::function<key_outcome(unsigned, std::size_t, const deadline&)>& decide);

// Empty when every record can be checked; otherwise one line naming the
// first record that cannot (a call stamp after its return stamp, ...).
std::string validate_history(const std::vector<model::op_record>& history);

// Checks `history` (throws std::invalid_argument when validate_history
// objects). `unrecorded_values`: ascending indices of successful deletes
// whose removed value was not recorded.
check_result check_history(const std::vector<model::op_record>& history, const check_options& options = {},
                           const std::vector<std::uint32_t>& unrecorded_values = {});

// The same verdict through the search of `set_key_checker` alone, key by key
// (no segments, no counting): the second opinion the tests compare with.
verdict check_history_search(const std::vector<model::op_record>& history, const deadline& d = {},
                             const std::vector<std::uint32_t>& unrecorded_values = {});

// The same verdict through the generic search (Wing-Gong with memo), key by
// key: the oracle the per-key checkers are tested against. No explanation.
verdict check_history_generic(const std::vector<model::op_record>& history, const deadline& d = {},
                              const std::vector<std::uint32_t>& unrecorded_values = {});

// The operations of one key as the per-key checkers take them: sorted by
// call stamp (then return stamp, then index).
std::vector<key_op> key_operations(const std::vector<model::op_record>& history, const std::vector<std::uint32_t>& indices,
                                   const std::vector<std::uint32_t>& unrecorded_values = {});

}  // namespace gfsl::lin
