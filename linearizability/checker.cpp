#include "linearizability/checker.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <new>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <tuple>

#include <unistd.h>

#include "linearizability/key_checker.hpp"
#include "linearizability/model.hpp"
#include "linearizability/set_checker.hpp"
#include "linearizability/wing_gong.hpp"

namespace gfsl::lin {

namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

// (key << 32 | index), sorted by key then index: two stable counting passes
// over the key's halves.
std::vector<std::uint64_t> group_by_key(const std::vector<model::op_record>& h) {
  const std::size_t n = h.size();
  std::vector<std::uint64_t> a(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = (static_cast<std::uint64_t>(h[i].op.key) << 32) | i;
  if (n < 4096) {
    std::sort(a.begin(), a.end());
    return a;
  }
  std::vector<std::uint64_t> b(n);
  for (int shift : {32, 48}) {
    std::vector<std::size_t> count(65537, 0);
    for (std::uint64_t x : a) ++count[((x >> shift) & 0xFFFF) + 1];
    for (std::size_t d = 1; d < count.size(); ++d) count[d] += count[d - 1];
    for (std::uint64_t x : a) b[count[(x >> shift) & 0xFFFF]++] = x;
    a.swap(b);
  }
  return a;
}

bool by_call(const key_op& a, const key_op& b) { return std::tie(a.call, a.ret, a.index) < std::tie(b.call, b.ret, b.index); }

struct unrecorded_set {
  std::vector<std::uint8_t> bits;
  explicit unrecorded_set(std::size_t n, const std::vector<std::uint32_t>& list) {
    if (list.empty()) return;
    bits.assign(n, 0);
    for (std::uint32_t i : list) {
      if (i < n) bits[i] = 1;
    }
  }
  bool known(std::uint32_t i) const { return bits.empty() || !bits[i]; }
};

// The history up to `until`: operations called by then, those that had not
// returned by then pending (they may or may not have taken effect before
// their return). Linearizable for every `until` below the first that is not.
std::vector<key_op> prefix_of(const std::vector<key_op>& ops, std::uint64_t until, std::vector<std::uint32_t>& positions) {
  std::vector<key_op> out;
  positions.clear();
  for (std::uint32_t p = 0; p < ops.size() && ops[p].call <= until; ++p) {
    key_op o = ops[p];
    if (!o.optional && o.ret > until) o.optional = true;
    out.push_back(o);
    positions.push_back(p);
  }
  return out;
}

// An operation of the key's history as the explanation sees it: left out,
// set aside (its answer does not count), or as recorded.
enum class role : std::uint8_t { out, aside, recorded };

struct explainer {
  const std::vector<key_op>& ops;
  key_checker& checker;
  deadline d;
  std::size_t memory_budget = 0;
  std::uint64_t budget = std::uint64_t{1} << 20;

  verdict run(const std::vector<key_op>& sub, std::vector<std::uint32_t>* order = nullptr, const key_check_options& start = {}) {
    key_check_options o = start;
    o.node_budget = budget;
    o.memory_budget = memory_budget;
    return checker.check(sub, d, order, o);
  }

  // The relaxed window: `roles` per operation, `any_start`: the key's state
  // at the start is unknown. Fails when no start state linearizes it; a
  // check that runs out of budget counts as passing.
  bool fails(const std::vector<role>& roles, bool any_start) {
    std::vector<key_op> sub;
    std::vector<value_type> values;
    for (std::size_t p = 0; p < ops.size(); ++p) {
      if (roles[p] == role::out) continue;
      key_op o = ops[p];
      if (roles[p] == role::aside) {
        if (o.kind == op_kind::contains || (!o.optional && !o.ok)) continue;  // a read changes nothing: out
        o.optional = true;
      }
      sub.push_back(o);
      values.push_back(o.value);
    }
    if (run(sub) != verdict::not_linearizable) return false;
    if (!any_start) return true;
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    value_type fresh = 0;  // a value no operation mentions stands for all of them
    while (std::binary_search(values.begin(), values.end(), fresh)) ++fresh;
    values.push_back(fresh);
    for (value_type v : values) {
      key_check_options start;
      start.initially_present = true;
      start.initial_value = v;
      if (d.passed() || run(sub, nullptr, start) != verdict::not_linearizable) return false;
    }
    return true;
  }

  // The window [from, to]: what returned before `from` is out, what was
  // running at `from` or at `to` is set aside, what was called after `to`
  // is out.
  std::vector<role> window(std::uint64_t from, std::uint64_t to) const {
    std::vector<role> roles(ops.size(), role::recorded);
    for (std::size_t p = 0; p < ops.size(); ++p) {
      const key_op& o = ops[p];
      if (o.call > to || o.ret < from) roles[p] = role::out;
      else if (o.call < from || o.ret > to) roles[p] = role::aside;
    }
    return roles;
  }

  // Delta debugging (Zeller and Hildebrandt's ddmin, complements only) over
  // the recorded answers: set aside ever smaller groups while the window
  // still fails. True when no single answer can be set aside.
  bool shrink(std::vector<role>& roles, bool any_start) {
    std::size_t parts = 2;
    for (;;) {
      std::vector<std::size_t> kept;
      for (std::size_t p = 0; p < roles.size(); ++p) {
        if (roles[p] == role::recorded) kept.push_back(p);
      }
      if (kept.size() <= 1) return true;
      parts = std::min(parts, kept.size());
      const std::size_t chunk = (kept.size() + parts - 1) / parts;
      bool relaxed = false;
      for (std::size_t start = 0; start < kept.size() && !relaxed; start += chunk) {
        if (d.passed()) return false;
        std::vector<role> trial = roles;
        for (std::size_t k = start; k < std::min(kept.size(), start + chunk); ++k) trial[kept[k]] = role::aside;
        if (fails(trial, any_start)) {
          roles.swap(trial);
          parts = std::max<std::size_t>(parts - 1, 2);
          relaxed = true;
        }
      }
      if (relaxed) continue;
      if (chunk == 1) return true;
      parts = std::min(kept.size(), parts * 2);
    }
  }
};

}  // namespace

std::string validate_history(const std::vector<model::op_record>& h) {
  if (h.size() > 0xFFFFFFFFull) return "more than 4294967295 records";
  for (std::size_t i = 0; i < h.size(); ++i) {
    const model::op_record& r = h[i];
    if (r.call == model::no_stamp) return "record " + std::to_string(i) + ": no call stamp";
    if (r.ret != model::no_stamp && r.ret < r.call) {
      return "record " + std::to_string(i) + ": returns (stamp " + std::to_string(r.ret) + ") before it is called (stamp " +
             std::to_string(r.call) + ")";
    }
    if (static_cast<unsigned>(r.op.kind) > 2) return "record " + std::to_string(i) + ": unknown operation";
  }
  return {};
}

std::vector<key_op> key_operations(const std::vector<model::op_record>& h, const std::vector<std::uint32_t>& indices,
                                   const std::vector<std::uint32_t>& unrecorded_values) {
  std::vector<key_op> out;
  out.reserve(indices.size());
  for (std::uint32_t i : indices) {
    const bool known = !std::binary_search(unrecorded_values.begin(), unrecorded_values.end(), i);
    out.push_back(to_key_op(h[i], i, known));
  }
  std::sort(out.begin(), out.end(), by_call);
  return out;
}

schedule_result decide_keys(std::size_t groups, const std::vector<std::uint32_t>& schedule, const schedule_options& o,
                            const std::function<key_outcome(unsigned, std::size_t, const deadline&)>& decide) {
  const unsigned threads = std::max(1u, o.threads);
  deadline whole = o.whole;
  whole.cancel = nullptr;
  std::vector<std::vector<scheduled_key>> per_thread(threads);
  std::atomic<std::size_t> next{0};
  // Every search watches `halt`: raised by the first violation (when that
  // ends the check) and by a thread that ran out of memory.
  std::atomic<bool> halt{false};
  std::atomic<bool> out_of_memory{false};
  std::atomic<std::size_t> stopped{0};
  constexpr std::size_t nobody = ~std::size_t{0};
  std::atomic<std::size_t> first_found{nobody};
  const bool timed = o.key_seconds > 0 || !whole.unlimited();
  auto loop = [&](unsigned t) {
    deadline key_deadline = whole;
    key_deadline.cancel = &halt;
    for (;;) {
      if (halt.load(std::memory_order_relaxed)) return;
      const std::size_t taken = next.fetch_add(1, std::memory_order_relaxed);
      if (taken >= groups) return;
      const std::size_t g = schedule.empty() ? taken : schedule[taken];
      // One clock read per key serves the check's deadline and the key's own.
      const clock_type::time_point now = timed ? clock_type::now() : clock_type::time_point{};
      if (timed && now >= whole.at) {
        per_thread[t].push_back({g, verdict::unknown, undecided_why::total_time});
        continue;
      }
      key_deadline.at = whole.at;
      if (o.key_seconds > 0 && o.key_seconds < 3.0e9) {
        const auto own = now + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(o.key_seconds));
        if (own < key_deadline.at) key_deadline.at = own;
      }
      const key_outcome r = decide(t, g, key_deadline);
      if (r.v == verdict::not_linearizable) {
        per_thread[t].push_back({g, r.v, undecided_why::key_time});
        std::size_t none = nobody;
        first_found.compare_exchange_strong(none, g);
        if (o.stop_at_first) halt.store(true);
      } else if (r.v == verdict::unknown) {
        // Stopped because another key violated: not a verdict on this one.
        if (halt.load()) {
          stopped.fetch_add(1);
          return;
        }
        const undecided_why why = r.out_of_memory ? undecided_why::memory
                                  : whole.passed() ? undecided_why::total_time
                                                   : undecided_why::key_time;
        per_thread[t].push_back({g, r.v, why});
      }
      if (o.progress) o.progress->decided.fetch_add(1, std::memory_order_relaxed);
    }
  };
  // Memory that runs out in one thread ends them all: the exception cannot
  // cross a thread, and the others' keys have no verdict worth waiting for.
  auto work = [&](unsigned t) {
    try {
      loop(t);
    } catch (const std::bad_alloc&) {
      out_of_memory.store(true);
      halt.store(true);
    }
  };
  schedule_result result;
  // This thread works too, as slot 0. Keys are taken from a shared queue, so
  // helpers that cannot be started (a thread or process limit) only make
  // the check slower: the verdict is the same with any number of them.
  {
    std::vector<std::thread> pool;
    try {
      pool.reserve(threads - 1);
      for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
    } catch (const std::system_error&) {
    } catch (const std::bad_alloc&) {
      out_of_memory.store(true);
      halt.store(true);
    }
    result.threads = static_cast<unsigned>(1 + pool.size());
    if (!out_of_memory.load()) work(0);
    for (auto& th : pool) th.join();
  }
  if (out_of_memory.load()) throw std::bad_alloc();
  for (auto& v : per_thread) result.found.insert(result.found.end(), v.begin(), v.end());
  std::sort(result.found.begin(), result.found.end(), [](const scheduled_key& a, const scheduled_key& b) { return a.group < b.group; });
  result.first_found = first_found.load();
  result.unchecked = groups - std::min<std::size_t>(groups, next.load()) + stopped.load();
  return result;
}

check_result check_history(const std::vector<model::op_record>& h, const check_options& o,
                           const std::vector<std::uint32_t>& unrecorded_values) {
  if (std::string bad = validate_history(h); !bad.empty()) throw std::invalid_argument(bad);
  const auto start = clock_type::now();
  check_result result;
  result.operations = h.size();
  for (const auto& r : h) result.optional_operations += r.pending() ? 1 : 0;
  const deadline d = deadline::after_seconds(o.timeout_seconds);
  const unrecorded_set unrecorded(h.size(), unrecorded_values);

  std::vector<std::uint64_t> grouped = group_by_key(h);
  std::vector<std::size_t> bounds;  // group g is grouped[bounds[g], bounds[g+1])
  for (std::size_t i = 0; i < grouped.size(); ++i) {
    if (i == 0 || (grouped[i] >> 32) != (grouped[i - 1] >> 32)) bounds.push_back(i);
  }
  const std::size_t groups = bounds.size();
  bounds.push_back(grouped.size());
  result.keys = groups;
  if (o.progress) {
    o.progress->keys = groups;
    o.progress->grouping_seconds = since(start);
    o.progress->phase = check_progress::deciding;
  }

  unsigned threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, groups)));
  result.threads = threads;
  // What the grouping holds stays for the whole check; the rest of the bound
  // is shared by the threads. A bound below what is already held leaves
  // every key undecided (a byte per thread: nothing fits).
  const std::size_t held = grouped.capacity() * sizeof(std::uint64_t) + bounds.capacity() * sizeof(std::size_t);
  const std::size_t per_thread_memory =
      o.max_memory_bytes == 0 ? 0 : o.max_memory_bytes > held ? std::max<std::size_t>(1, (o.max_memory_bytes - held) / threads) : 1;

  // Keys of up to `big_key` operations are taken up first, in key order,
  // the big ones after them: a violation in a small key is found at once
  // even by a single thread that a hard big key would otherwise hold.
  constexpr std::size_t big_key = 4096;
  std::vector<std::uint32_t> schedule;
  bool any_big = false;
  for (std::size_t g = 0; g < groups && !any_big; ++g) any_big = bounds[g + 1] - bounds[g] > big_key;
  if (any_big) {
    schedule.reserve(groups);
    for (int big = 0; big < 2; ++big) {
      for (std::size_t g = 0; g < groups; ++g) {
        if ((bounds[g + 1] - bounds[g] > big_key) == (big == 1)) schedule.push_back(static_cast<std::uint32_t>(g));
      }
    }
  }
  struct slot {
    key_checker checker;
    std::vector<key_op> ops;
  };
  std::vector<slot> slots(threads);
  schedule_options so;
  so.threads = threads;
  so.whole = d;
  so.key_seconds = o.key_seconds;
  so.stop_at_first = !o.all_keys;
  so.progress = o.progress;
  const schedule_result sr = decide_keys(groups, schedule, so, [&](unsigned t, std::size_t g, const deadline& key_deadline) {
    const std::size_t size = bounds[g + 1] - bounds[g];
    if (per_thread_memory && size * sizeof(key_op) > per_thread_memory) return key_outcome{verdict::unknown, true};
    key_check_options ko;
    ko.memory_budget = per_thread_memory;
    std::vector<key_op>& ops = slots[t].ops;
    ops.clear();
    bool sorted = true;
    for (std::size_t k = bounds[g]; k < bounds[g + 1]; ++k) {
      const auto i = static_cast<std::uint32_t>(grouped[k] & 0xFFFFFFFFu);
      ops.push_back(to_key_op(h[i], i, unrecorded.known(i)));
      if (ops.size() > 1 && by_call(ops.back(), ops[ops.size() - 2])) sorted = false;
    }
    if (!sorted) std::sort(ops.begin(), ops.end(), by_call);
    const verdict v = slots[t].checker.check(ops, key_deadline, nullptr, ko);
    if (per_thread_memory && ops.capacity() * sizeof(key_op) > per_thread_memory / 2) {
      ops.clear();
      ops.shrink_to_fit();  // a big key's copy is not kept for the next ones
    }
    return key_outcome{v, v == verdict::unknown && slots[t].checker.out_of_memory()};
  });
  result.threads = sr.threads;
  const bool stop_at_first = so.stop_at_first;
  std::size_t first_violation = groups;
  for (const scheduled_key& f : sr.found) {
    const key_summary s{static_cast<key_type>(grouped[bounds[f.group]] >> 32), bounds[f.group + 1] - bounds[f.group], f.why};
    if (f.v == verdict::not_linearizable) {
      if (first_violation == groups) first_violation = f.group;
      ++result.violating_keys;
      if (result.violating.size() < 100) result.violating.push_back(s);
    } else {
      ++result.undecided_keys;
      result.memory_bound_keys += f.why == undecided_why::memory ? 1 : 0;
      if (result.undecided.size() < 100) result.undecided.push_back(s);
    }
  }
  if (stop_at_first && result.violating_keys) {
    // The key found first is the one explained; the keys still running when
    // it was found and those never taken up have no verdict.
    first_violation = sr.first_found;
    result.stopped_at_first = true;
    result.unchecked_keys = sr.unchecked;
  }
  if (first_violation != groups) {
    result.first_violation =
        key_summary{static_cast<key_type>(grouped[bounds[first_violation]] >> 32), bounds[first_violation + 1] - bounds[first_violation]};
  }
  result.v = result.violating_keys ? verdict::not_linearizable : result.undecided_keys ? verdict::unknown : verdict::linearizable;
  result.seconds = since(start);
  if (o.on_verdict) o.on_verdict(result);
  if (first_violation != groups && o.explain && o.explain_seconds <= 0) result.explain_skipped = true;

  if (first_violation == groups || !o.explain || result.explain_skipped) {
    if (o.progress) o.progress->phase = check_progress::done;
    return result;
  }
  if (o.progress) o.progress->phase = check_progress::explaining;
  const auto explain_start = clock_type::now();
  counterexample ex;
  ex.key = static_cast<key_type>(grouped[bounds[first_violation]] >> 32);
  std::vector<std::uint32_t> indices;
  for (std::size_t k = bounds[first_violation]; k < bounds[first_violation + 1]; ++k) {
    indices.push_back(static_cast<std::uint32_t>(grouped[k] & 0xFFFFFFFFu));
  }
  grouped.clear();
  grouped.shrink_to_fit();
  const std::vector<key_op> ops = key_operations(h, indices, unrecorded_values);
  for (const key_op& op : ops) ex.key_history.push_back(op.index);

  key_checker checker;
  explainer e{ops, checker, deadline::after_seconds(o.explain_seconds), o.max_memory_bytes ? std::max<std::size_t>(1, o.max_memory_bytes / 2) : 0};
  if (o.timeout_seconds > 0 && d.at < e.d.at) e.d.at = d.at;

  // The longest linearizable prefix: by bisection over the call stamps, the
  // whole history being the last candidate.
  std::vector<std::uint64_t> cuts;
  for (const key_op& op : ops) {
    if (cuts.empty() || cuts.back() != op.call) cuts.push_back(op.call);
  }
  cuts.push_back(never_returned);
  std::vector<std::uint32_t> positions, best_positions, order, best_order;
  // cuts[k] passes for k < lo and is not known to pass for k >= hi; the
  // smallest cut known to fail is `failing`.
  std::size_t lo = 0, hi = cuts.size(), failing = cuts.size() - 1;
  while (lo < hi && !e.d.passed()) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const std::vector<key_op> p = prefix_of(ops, cuts[mid], positions);
    const verdict v = e.run(p, &order);
    if (v == verdict::linearizable) {
      lo = mid + 1;
      best_positions = positions;
      best_order.clear();
      for (std::uint32_t k : order) best_order.push_back(positions[k]);
      ex.prefix_until = cuts[mid];
      ex.prefix_empty = false;
    } else {
      hi = mid;
      if (v == verdict::not_linearizable) failing = std::min(failing, mid);
    }
  }
  for (std::uint32_t p : best_positions) ex.prefix.push_back(ops[p].index);
  for (std::uint32_t p : best_order) ex.prefix_order.push_back(ops[p].index);

  // The counterexample: the window ends at the first failing cut and starts
  // as late as it still fails (the later the start, the less it holds), then
  // answers are set aside while it still fails.
  const std::uint64_t to = cuts[failing];
  std::vector<std::uint64_t> starts;  // candidate window starts: call stamps up to `to`
  for (std::uint64_t c : cuts) {
    if (c != never_returned && c <= to) starts.push_back(c);
  }
  // Gallop back from the latest start (violations are local: small windows
  // usually fail already), then bisect between the last start that passed
  // and the first that failed. starts[0] opens on the empty map and fails.
  // starts[good] opens a window known to fail: starts[0] does (the prefix
  // up to `to` fails, or the whole history), later ones once `fails` said so.
  // When the budget ends, the latest one known is kept.
  std::size_t good = 0;
  if (starts.size() > 1) {
    std::size_t bad = starts.size(), probe = starts.size() - 1, step = 1;
    for (;;) {
      if (e.d.passed()) break;
      if (e.fails(e.window(starts[probe], to), true)) {
        good = probe;
        break;
      }
      bad = probe;
      if (probe == 1) break;
      probe = probe > step + 1 ? probe - step : 1;
      step *= 2;
    }
    while (good + 1 < bad && !e.d.passed()) {
      const std::size_t mid = good + (bad - good) / 2;
      if (e.fails(e.window(starts[mid], to), true)) good = mid;
      else bad = mid;
    }
  }
  ex.window_from = starts.empty() ? 0 : starts[good];
  ex.window_to = to;
  ex.from_start = good == 0;
  std::vector<role> roles = e.window(ex.window_from, to);
  {
    ex.one_minimal = e.shrink(roles, !ex.from_start);
    // The window need not reach past the last answer that matters.
    std::uint64_t last = 0;
    for (std::size_t p = 0; p < ops.size(); ++p) {
      if (roles[p] == role::recorded) last = std::max(last, ops[p].ret);
    }
    if (last < ex.window_to) {
      std::vector<role> tight = e.window(ex.window_from, last);
      for (std::size_t p = 0; p < ops.size(); ++p) {
        if (tight[p] == role::recorded && roles[p] != role::recorded) tight[p] = role::aside;
      }
      if (e.fails(tight, !ex.from_start)) roles.swap(tight), ex.window_to = last;
    }
  }
  for (std::size_t p = 0; p < ops.size(); ++p) {
    if (roles[p] == role::recorded) ex.minimal.push_back(ops[p].index);
    else if (roles[p] == role::aside && (ops[p].kind != op_kind::contains && (ops[p].optional || ops[p].ok))) ex.set_aside.push_back(ops[p].index);
  }
  result.example = std::move(ex);
  result.explain_seconds = since(explain_start);
  if (o.progress) o.progress->phase = check_progress::done;
  return result;
}

const char* undecided_why_name(undecided_why w) {
  switch (w) {
    case undecided_why::key_time: return "its own time limit (--key-seconds)";
    case undecided_why::total_time: return "the check's time limit (--seconds)";
    case undecided_why::memory: return "the memory limit (--max-memory)";
  }
  return "?";
}

std::size_t default_max_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::size_t{4} << 30;  // unknown: 4 GiB
  return static_cast<std::size_t>(pages) / 2 * static_cast<std::size_t>(page);
}

verdict check_history_search(const std::vector<model::op_record>& h, const deadline& d,
                             const std::vector<std::uint32_t>& unrecorded_values) {
  if (std::string bad = validate_history(h); !bad.empty()) throw std::invalid_argument(bad);
  const std::vector<std::uint64_t> grouped = group_by_key(h);
  verdict overall = verdict::linearizable;
  set_key_checker checker;
  for (std::size_t a = 0; a < grouped.size();) {
    if (d.passed()) return verdict::unknown;
    std::size_t b = a;
    std::vector<std::uint32_t> indices;
    while (b < grouped.size() && (grouped[b] >> 32) == (grouped[a] >> 32)) indices.push_back(static_cast<std::uint32_t>(grouped[b++]));
    const verdict v = checker.check(key_operations(h, indices, unrecorded_values), d);
    if (v == verdict::not_linearizable) return v;
    if (v == verdict::unknown) overall = v;
    a = b;
  }
  return overall;
}

verdict check_history_generic(const std::vector<model::op_record>& h, const deadline& d,
                              const std::vector<std::uint32_t>& unrecorded_values) {
  if (std::string bad = validate_history(h); !bad.empty()) throw std::invalid_argument(bad);
  const std::vector<std::uint64_t> grouped = group_by_key(h);
  verdict overall = verdict::linearizable;
  for (std::size_t a = 0; a < grouped.size();) {
    std::size_t b = a;
    std::vector<std::uint32_t> indices;
    while (b < grouped.size() && (grouped[b] >> 32) == (grouped[a] >> 32)) indices.push_back(static_cast<std::uint32_t>(grouped[b++]));
    std::vector<model_op<map_key_model>> ops;
    for (const key_op& k : key_operations(h, indices, unrecorded_values)) ops.push_back(to_model_op(k));
    const verdict v = wing_gong_check<map_key_model>(ops, d);
    if (v == verdict::not_linearizable) return v;
    if (v == verdict::unknown) overall = v;
    a = b;
  }
  return overall;
}

}  // namespace gfsl::lin
