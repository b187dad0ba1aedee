// gfsl/range_oracles.cuh: checker-free oracles for range queries of your own
// GPU ordered structure (a B-tree, a skip list with ranges, a snapshot
// store). A history with ranges needs the range checker (gfsl check --model
// ordered-map); these need none: your kernel logs its inserts and its range
// answers with clock stamps, and a host judge decides, in time linear in what
// was logged, two properties every linearizable range query has:
//
// - stable keys: keys inserted before the run and never erased (you prefill
//   them: base + i * stride, i < count, each with stable_value(key)) are in
//   every range answer that covers them, with their value;
// - ordered pairs: of the keys inserted during the run and never erased in
//   it (fresh keys: each inserted once), if insert(x) returned before
//   insert(y) began, no answer covering both holds y without x; and none
//   misses a fresh key whose insert returned before the range began, or
//   holds one whose insert began after it returned, or holds a key nobody
//   inserted, or a value other than the one inserted.
//
// Erase and re-insert keys outside the oracle's keys if your workload needs
// them; the judge looks only at stable and logged fresh keys (a pair of
// another key is counted, not judged).
//
//   // device, in your kernel (one thread of the tile logs):
//   const auto c = gfsl::range_oracles::stamp();
//   bool ok = my_insert(tile, m, k, v);
//   const auto r = gfsl::range_oracles::stamp();
//   if (tile.thread_rank() == 0) gfsl::range_oracles::record_insert(log, k, v, c, r, ok);
//   ...   // a range: stamp, your range query into keys[] / values[], stamp, then
//   if (tile.thread_rank() == 0) gfsl::range_oracles::record_range(log, tile_id, lo, hi, c, r, keys, values, n);
//   // host:
//   gfsl::range_oracles::range_log_buffers buf(1 << 20, 1 << 16, 1 << 24);
//   kernel<<<...>>>(m, buf.log());  cudaDeviceSynchronize();
//   auto j = gfsl::range_oracles::judge_ranges(buf.inserts(), buf.ranges(), buf.pairs(), {base, count, stride});
//   std::fputs(j.summary().c_str(), stdout);   // exit status: j.clean() ? 0 : 1
//
// Stamps are %globaltimer, read between two __threadfence()s, so a stamp
// taken after an operation returned is not earlier than its last access,
// and one taken before it began not later than its first; stamps compare
// with < only (equal ones: concurrent), so a coarse timer weakens the
// oracle, never makes it wrong. The judging below is plain C++ (no CUDA
// needed to include this part): the tests feed it hand-made logs.
// docs/YOUR-STRUCTURE.md, "Ordered maps with range queries".
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define GFSL_RANGE_ORACLE_FN __host__ __device__
#else
#define GFSL_RANGE_ORACLE_FN
#endif

namespace gfsl::range_oracles {

// The value of stable key k: a function of k, never ~0u.
GFSL_RANGE_ORACLE_FN constexpr unsigned stable_value(unsigned k) { return ((k * 2654435761u) ^ 0x5BD1E995u) & 0x7FFFFFFFu; }

struct insert_event {
  std::uint32_t key = 0, value = 0;
  std::uint64_t call = 0, ret = 0;  // stamps
  std::uint32_t ok = 0;             // 1: it inserted
};
struct range_event {
  std::uint32_t tile = 0;
  std::uint32_t lo = 0;
  std::uint64_t hi = 0;  // [lo, hi)
  std::uint64_t call = 0, ret = 0;
  std::uint64_t pairs_from = 0;
  std::uint32_t pairs_count = 0;
  std::uint32_t truncated = 0;  // 1: the log had no room for its pairs (not judged)
};
struct kv {
  std::uint32_t key = 0, value = 0;
};
// Stable keys: base + i * stride, i < count (count 0: none).
struct stable_keys {
  std::uint32_t base = 1, count = 0, stride = 1;
};

struct range_finding {
  enum kind : std::uint8_t {
    missing_stable,   // a stable key the range covers is not in it (or has another value)
    missing_earlier,  // a fresh key whose insert returned before the range began is not in it
    unordered_pair,   // holds y but not x, and insert(x) returned before insert(y) began
    from_the_future,  // holds a fresh key whose insert began after the range returned
    never_inserted,   // holds a key in the oracle's keys that no logged insert wrote
    wrong_value,      // holds a fresh key with another value than the one inserted
    malformed,        // pairs out of [lo, hi) or not in increasing key order
    inserted_twice,   // a fresh key inserted (ok) more than once: the log breaks the oracle's rule
  };
  kind what = missing_stable;
  std::uint32_t range = 0;  // index in the ranges
  std::uint32_t key = 0;    // the key at fault (x)
  std::uint32_t other = 0;  // unordered_pair: y, the later insert the range holds
  std::uint32_t value = 0;  // the value held, where one is
};

inline const char* finding_name(range_finding::kind k) {
  switch (k) {
    case range_finding::missing_stable: return "missing-stable";
    case range_finding::missing_earlier: return "missing-earlier";
    case range_finding::unordered_pair: return "unordered-pair";
    case range_finding::from_the_future: return "from-the-future";
    case range_finding::never_inserted: return "never-inserted";
    case range_finding::wrong_value: return "wrong-value";
    case range_finding::malformed: return "malformed";
    case range_finding::inserted_twice: return "inserted-twice";
  }
  return "?";
}

struct range_judgement {
  std::uint64_t ranges = 0, judged_ranges = 0, truncated = 0, pairs = 0, stable_checked = 0, fresh_checked = 0, other_pairs = 0;
  std::uint64_t violations = 0;
  std::vector<range_finding> findings;  // the first few, in range order
  std::vector<range_event> ranges_of_findings;  // the range of each finding
  bool clean() const { return violations == 0; }

  std::string describe(const range_finding& f, const range_event& r) const {
    std::string s = std::string(finding_name(f.what)) + ": range [" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + ") of tile " +
                    std::to_string(r.tile) + " (stamps " + std::to_string(r.call) + " .. " + std::to_string(r.ret) + ")";
    switch (f.what) {
      case range_finding::missing_stable: return s + " lacks stable key " + std::to_string(f.key) + " (or holds another value)";
      case range_finding::missing_earlier: return s + " lacks key " + std::to_string(f.key) + ", whose insert returned before it began";
      case range_finding::unordered_pair:
        return s + " holds key " + std::to_string(f.other) + " but not key " + std::to_string(f.key) + ", whose insert returned before " +
               std::to_string(f.other) + "'s began";
      case range_finding::from_the_future: return s + " holds key " + std::to_string(f.key) + ", whose insert began after it returned";
      case range_finding::never_inserted: return s + " holds key " + std::to_string(f.key) + ", which no logged insert wrote";
      case range_finding::wrong_value:
        return s + " holds key " + std::to_string(f.key) + " with value " + std::to_string(f.value) + ", not the value inserted";
      case range_finding::malformed: return s + ": pairs out of [lo, hi) or not in increasing key order (at key " + std::to_string(f.key) + ")";
      case range_finding::inserted_twice: return "inserted-twice: key " + std::to_string(f.key) + " was inserted more than once (not a fresh key)";
    }
    return s;
  }
  std::string summary() const {
    std::string s = "range oracles: " + std::to_string(ranges) + " ranges (" + std::to_string(truncated) + " not logged whole), " +
                    std::to_string(pairs) + " pairs; " + std::to_string(stable_checked) + " stable-key and " + std::to_string(fresh_checked) +
                    " fresh-key answers judged: " + (clean() ? "clean" : std::to_string(violations) + " VIOLATIONS") + "\n";
    for (std::size_t i = 0; i < findings.size(); ++i) s += "  " + describe(findings[i], ranges_of_findings[i]) + "\n";
    return s;
  }
};

// The judge: plain C++, linear in the log after sorting the inserts by key.
inline range_judgement judge_ranges(const std::vector<insert_event>& inserts, const std::vector<range_event>& ranges,
                                    const std::vector<kv>& pairs, stable_keys stable, std::size_t max_findings = 16) {
  range_judgement j;
  j.ranges = ranges.size();
  auto add = [&](range_finding f, const range_event& r) {
    ++j.violations;
    if (j.findings.size() < max_findings) {
      j.findings.push_back(f);
      j.ranges_of_findings.push_back(r);
    }
  };
  auto is_stable = [&](std::uint64_t k) {
    if (stable.count == 0 || k < stable.base) return false;
    const std::uint64_t d = k - stable.base;
    return d % stable.stride == 0 && d / stable.stride < stable.count;
  };
  // Fresh keys: the successful inserts, by key.
  std::vector<insert_event> fresh;
  for (const insert_event& e : inserts) {
    if (e.ok && !is_stable(e.key)) fresh.push_back(e);
  }
  std::sort(fresh.begin(), fresh.end(), [](const insert_event& a, const insert_event& b) { return a.key < b.key; });
  for (std::size_t i = 1; i < fresh.size(); ++i) {
    if (fresh[i].key == fresh[i - 1].key) {
      range_finding f;
      f.what = range_finding::inserted_twice;
      f.key = fresh[i].key;
      add(f, range_event{});
    }
  }
  // Any key an insert was asked for (ok or not): the oracle's fresh key space.
  std::vector<std::uint32_t> asked;
  for (const insert_event& e : inserts) asked.push_back(e.key);
  std::sort(asked.begin(), asked.end());
  auto find_fresh = [&](std::uint32_t k) -> const insert_event* {
    auto it = std::lower_bound(fresh.begin(), fresh.end(), k, [](const insert_event& e, std::uint32_t key) { return e.key < key; });
    return it != fresh.end() && it->key == k ? &*it : nullptr;
  };
  std::vector<char> held;
  for (std::uint32_t ri = 0; ri < ranges.size(); ++ri) {
    const range_event& r = ranges[ri];
    if (r.truncated) {
      ++j.truncated;
      continue;
    }
    ++j.judged_ranges;
    j.pairs += r.pairs_count;
    range_finding f;
    f.range = ri;
    const kv* p = pairs.data() + r.pairs_from;
    bool ok = true;
    for (std::uint32_t i = 0; i < r.pairs_count && ok; ++i) {
      if (p[i].key < r.lo || p[i].key >= r.hi || (i && p[i].key <= p[i - 1].key)) {
        f.what = range_finding::malformed;
        f.key = p[i].key;
        add(f, r);
        ok = false;
      }
    }
    if (!ok) continue;
    auto holds = [&](std::uint32_t k, std::uint32_t& v) {
      const kv* e = std::lower_bound(p, p + r.pairs_count, k, [](const kv& a, std::uint32_t key) { return a.key < key; });
      if (e == p + r.pairs_count || e->key != k) return false;
      v = e->value;
      return true;
    };
    // Stable keys in [lo, hi).
    if (stable.count) {
      std::uint64_t first = r.lo <= stable.base ? 0 : (std::uint64_t{r.lo} - stable.base + stable.stride - 1) / stable.stride;
      for (std::uint64_t i = first; i < stable.count; ++i) {
        const std::uint64_t k = stable.base + i * stable.stride;
        if (k >= r.hi) break;
        ++j.stable_checked;
        std::uint32_t v = 0;
        if (!holds(static_cast<std::uint32_t>(k), v) || v != stable_value(static_cast<std::uint32_t>(k))) {
          f.what = range_finding::missing_stable;
          f.key = static_cast<std::uint32_t>(k);
          add(f, r);
        }
      }
    }
    // Fresh keys held: each inserted, not from the future, its value; the
    // latest call among them.
    std::uint64_t latest_call = 0;
    std::uint32_t latest_key = 0;
    bool any = false;
    for (std::uint32_t i = 0; i < r.pairs_count; ++i) {
      if (is_stable(p[i].key)) continue;
      const insert_event* e = find_fresh(p[i].key);
      if (!e) {
        if (std::binary_search(asked.begin(), asked.end(), p[i].key)) {
          f.what = range_finding::never_inserted;
          f.key = p[i].key;
          add(f, r);
        } else {
          ++j.other_pairs;
        }
        continue;
      }
      if (e->call > r.ret) {
        f.what = range_finding::from_the_future;
        f.key = p[i].key;
        add(f, r);
      }
      if (e->value != p[i].value) {
        f.what = range_finding::wrong_value;
        f.key = p[i].key;
        f.value = p[i].value;
        add(f, r);
      }
      if (!any || e->call > latest_call) latest_call = e->call, latest_key = e->key;
      any = true;
    }
    // Fresh keys in [lo, hi) that it lacks.
    auto it = std::lower_bound(fresh.begin(), fresh.end(), r.lo, [](const insert_event& e, std::uint32_t key) { return e.key < key; });
    for (; it != fresh.end() && it->key < r.hi; ++it) {
      ++j.fresh_checked;
      std::uint32_t v = 0;
      if (holds(it->key, v)) continue;
      if (it->ret < r.call) {
        f.what = range_finding::missing_earlier;
        f.key = it->key;
        add(f, r);
      } else if (any && it->ret < latest_call) {
        f.what = range_finding::unordered_pair;
        f.key = it->key;
        f.other = latest_key;
        add(f, r);
      }
    }
  }
  return j;
}

#if defined(__CUDACC__)

// What your kernel gets: plain data, passed by value.
struct range_log {
  insert_event* inserts = nullptr;
  unsigned long long* n_inserts = nullptr;
  std::uint64_t insert_capacity = 0;
  range_event* ranges = nullptr;
  unsigned long long* n_ranges = nullptr;
  std::uint64_t range_capacity = 0;
  kv* pairs = nullptr;
  unsigned long long* n_pairs = nullptr;
  std::uint64_t pair_capacity = 0;
};

// A stamp: %globaltimer between two fences.
__device__ inline std::uint64_t stamp() {
  __threadfence();
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  __threadfence();
  return t;
}

// One thread logs an insert of key (to value): its call and return stamps,
// and whether it inserted. An insert the log has no room for is dropped
// (a fresh key without its insert is then counted as another key's pair).
__device__ inline void record_insert(const range_log& l, unsigned key, unsigned value, std::uint64_t call, std::uint64_t ret, bool ok) {
  const unsigned long long i = atomicAdd(l.n_inserts, 1ull);
  if (i >= l.insert_capacity) return;
  insert_event e;
  e.key = key;
  e.value = value;
  e.call = call;
  e.ret = ret;
  e.ok = ok ? 1u : 0u;
  l.inserts[i] = e;
}

// One thread logs a range answer: [lo, hi), its stamps and its n pairs (in
// key order). A range whose pairs do not fit is logged as truncated.
__device__ inline void record_range(const range_log& l, unsigned tile, unsigned lo, std::uint64_t hi, std::uint64_t call, std::uint64_t ret,
                                    const unsigned* keys, const unsigned* values, unsigned n) {
  const unsigned long long i = atomicAdd(l.n_ranges, 1ull);
  if (i >= l.range_capacity) return;
  const unsigned long long from = atomicAdd(l.n_pairs, static_cast<unsigned long long>(n));
  range_event r;
  r.tile = tile;
  r.lo = lo;
  r.hi = hi;
  r.call = call;
  r.ret = ret;
  r.pairs_from = from;
  r.pairs_count = n;
  r.truncated = from + n > l.pair_capacity ? 1u : 0u;
  if (!r.truncated) {
    for (unsigned k = 0; k < n; ++k) l.pairs[from + k] = kv{keys[k], values[k]};
  }
  l.ranges[i] = r;
}

// The host side: the log's device buffers, and their contents after the run.
class range_log_buffers {
 public:
  range_log_buffers(std::uint64_t inserts, std::uint64_t ranges, std::uint64_t pairs) {
    l_.insert_capacity = inserts;
    l_.range_capacity = ranges;
    l_.pair_capacity = pairs;
    check(cudaMalloc(&l_.inserts, sizeof(insert_event) * (inserts ? inserts : 1)));
    check(cudaMalloc(&l_.ranges, sizeof(range_event) * (ranges ? ranges : 1)));
    check(cudaMalloc(&l_.pairs, sizeof(kv) * (pairs ? pairs : 1)));
    check(cudaMalloc(&counts_, 3 * sizeof(unsigned long long)));
    l_.n_inserts = counts_;
    l_.n_ranges = counts_ + 1;
    l_.n_pairs = counts_ + 2;
    reset();
  }
  ~range_log_buffers() {
    cudaFree(l_.inserts);
    cudaFree(l_.ranges);
    cudaFree(l_.pairs);
    cudaFree(counts_);
  }
  range_log_buffers(const range_log_buffers&) = delete;
  range_log_buffers& operator=(const range_log_buffers&) = delete;

  const range_log& log() const { return l_; }
  void reset() { check(cudaMemset(counts_, 0, 3 * sizeof(unsigned long long))); }

  // After the kernels (these synchronise through cudaMemcpy).
  std::vector<insert_event> inserts() const { return fetch(l_.inserts, 0, l_.insert_capacity); }
  std::vector<range_event> ranges() const { return fetch(l_.ranges, 1, l_.range_capacity); }
  std::vector<kv> pairs() const { return fetch(l_.pairs, 2, l_.pair_capacity); }
  // Events that found the log full (inserts, ranges), dropped.
  std::uint64_t dropped_inserts() const { return over(0, l_.insert_capacity); }
  std::uint64_t dropped_ranges() const { return over(1, l_.range_capacity); }

 private:
  static void check(cudaError_t e) {
    if (e != cudaSuccess) throw std::runtime_error(std::string("range oracles: ") + cudaGetErrorString(e));
  }
  unsigned long long count(int i) const {
    unsigned long long n = 0;
    check(cudaMemcpy(&n, counts_ + i, sizeof n, cudaMemcpyDeviceToHost));
    return n;
  }
  std::uint64_t over(int i, std::uint64_t cap) const {
    const unsigned long long n = count(i);
    return n > cap ? n - cap : 0;
  }
  template <class T>
  std::vector<T> fetch(const T* from, int i, std::uint64_t cap) const {
    const std::uint64_t n = std::min<std::uint64_t>(count(i), cap);
    std::vector<T> out(n);
    if (n) check(cudaMemcpy(out.data(), from, n * sizeof(T), cudaMemcpyDeviceToHost));
    return out;
  }
  range_log l_;
  unsigned long long* counts_ = nullptr;
};

#endif  // __CUDACC__

}  // namespace gfsl::range_oracles
