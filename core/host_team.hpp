// CPU backend of the team interface: one emulated warp run by one CPU thread.
//
// Per-lane values are an array of N words. Every per-lane access to shared
// memory is a real atomic (std::atomic_ref on the structure's words, so teams on
// several OS threads are correct) and passes the access hook first: the one
// point where a scheduler may interleave teams, and a tracer may watch.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <thread>

#include "team.hpp"
#include "types.hpp"

namespace gfsl {

// exchange is last so that the numbers of the others stay what traces recorded.
enum class access_kind : std::uint8_t { load, store, cas, fetch_add, exchange };

// One shared-memory access by one lane, as the hook sees it.
struct access {
  team_id team = 0;
  access_kind kind = access_kind::load;
  mem_order order = mem_order::relaxed;
  std::uint8_t lane = 0;
  // A chunk or array read by a whole team is `group_size` accesses; this is the
  // `group_index`th of them (a scheduler decides how many steps that makes).
  std::uint8_t group_index = 0;
  std::uint8_t group_size = 1;
  std::uint64_t word = 0;   // offset of the word from the structure's base
  std::uint64_t value = 0;  // store: value written; cas, exchange: desired; fetch_add: delta
  std::uint64_t expected = 0;  // cas only
};

// The hook. `before` runs before the access takes effect (a scheduling point);
// `after` runs once it has, with the value it returned (load: value read; cas:
// the value found, equal to `expected` on success; fetch_add, exchange: the old
// value; store: the value written). `lock_wait` says that the team found the
// word it waits on at `where` (GFSL: a chunk, locked) not yet as it needs it,
// and will read it again.
class access_hook {
 public:
  virtual ~access_hook() = default;
  virtual void before(const access& a) = 0;
  virtual void after(const access& /*a*/, std::uint64_t /*result*/) {}
  // The value a load returns, given the latest store's (what memory holds):
  // a memory model weaker than sequential consistency may return an older
  // store (exec/sched/memory_model.hpp). Called between before and after.
  virtual std::uint64_t load_value(const access& /*a*/, std::uint64_t latest) { return latest; }
  virtual void lock_wait(team_id /*team*/, std::uint32_t /*where*/, std::uint64_t /*word*/) {}
  // The team's next team-wide read is the second read of a validation
  // What the structure says of the team's next step (Team::hint).
  virtual void hint(team_id /*team*/, team_hint /*h*/) {}
  // The order in which the lanes of a team-wide read load their words: the
  // identity when left alone. A warp's lanes have no order among themselves,
  // so a scheduler may pick any.
  virtual void lane_order(team_id /*team*/, int /*lanes*/, std::uint8_t* /*order*/) {}
  // A coverage mark of the team's operation (core/coverage.hpp) on chunk or
  // slab `where`: not an access, and not a scheduling point.
  virtual void mark(team_id /*team*/, std::uint8_t /*what*/, std::uint32_t /*where*/) {}
};

// Thrown by a host team that is about to access a word outside its
// structure: only a corrupt structure (or a planted bug) leads there. The
// runners turn it into status::corrupt for the operation.
struct access_fault {
  team_id team;
  std::uint64_t word;
};

// Thrown from a lock wait once the structure's error word says corrupt: the
// team that faulted stopped where it was and may hold the lock forever, so
// waiting teams give up (status::stopped). A full pool does not make them
// give up: the team that found it full released every lock it held before
// returning the error, so the wait ends, and a team that gave up here would
// leave its own locks held in the structure it hands back.
struct run_stopped {};

namespace detail {
constexpr std::memory_order to_std(mem_order o) {
  switch (o) {
    case mem_order::relaxed: return std::memory_order_relaxed;
    case mem_order::acquire: return std::memory_order_acquire;
    case mem_order::release: return std::memory_order_release;
    case mem_order::acq_rel: return std::memory_order_acq_rel;
  }
  return std::memory_order_seq_cst;
}
}  // namespace detail

template <int N>
class host_team {
 public:
  static constexpr int width = N;
  using lanes = std::array<std::uint64_t, N>;

  // `base` is the structure's first word (access offsets are relative to it);
  // `hook` may be null: no hook, plain atomics.
  // `words`: the size of the structure, for the bounds check (0: unchecked).
  host_team(team_id id, std::uint64_t seed, std::uint64_t* base, access_hook* hook = nullptr,
            bool yield_on_lock_wait = false, std::uint64_t words = 0)
      : id_(id), rng_(team_seed(seed, id)), base_(base), hook_(hook), yield_(yield_on_lock_wait), words_(words) {}

  team_id id() const { return id_; }
  team_stats& stats() { return stats_; }
  const team_stats& stats() const { return stats_; }
  void count(stat_id s) { ++stats_.count[s]; }
  void mark(std::uint8_t what, std::uint32_t where) {
    if (hook_) hook_->mark(id_, what, where);
  }
  void set_hook(access_hook* hook) { hook_ = hook; }
  // The threads backend's watchdog: once `flag` is true the team stops where
  // it is (run_stopped), checked at every lock wait and every 256th access,
  // so that a team spinning without waiting (a search that restarts for
  // ever) is stopped too. Null: never abandoned.
  void set_abandon_flag(const std::atomic<bool>* flag) { abandon_ = flag; }

  // Lane i loads p[i]. Acquire: a reader that sees a published pointer or
  // entry also sees what was written before it was published.
  lanes load_lanes(const std::uint64_t* p) { return load_lanes(p, mem_order::acquire); }
  // A row of N words named by its first word (the device team names it by
  // each lane's word, core/cuda/device_team.cuh); load_row(r, w) is
  // load_lanes of the row w words further on.
  using row = const std::uint64_t*;
  row row_of(const std::uint64_t* p) const { return p; }
  lanes load_row(row r, std::uint64_t words) { return load_lanes(r + words); }
  // With another order: only the load-relaxed mutant asks (core/gfsl/mutants.hpp).
  lanes load_lanes(const std::uint64_t* p, mem_order o) {
    return gather([p](int lane) { return p + lane; }, o);
  }
  // Lane i loads addr(i): one team-wide read of words that need not be
  // consecutive, in the order the hook picks.
  template <class Addr>
  lanes gather(Addr&& addr, mem_order o = mem_order::acquire) {
    lanes out{};
    std::array<std::uint8_t, N> order;
    for (int i = 0; i < N; ++i) order[i] = static_cast<std::uint8_t>(i);
    if (hook_) hook_->lane_order(id_, N, order.data());
    for (int i = 0; i < N; ++i) {
      const int lane = order[i];
      const std::uint64_t* w = addr(lane);
      access a = make(access_kind::load, o, lane, w);
      a.group_index = static_cast<std::uint8_t>(i);
      a.group_size = static_cast<std::uint8_t>(N);
      if (hook_) hook_->before(a);
      out[lane] = ref(w).load(o == mem_order::relaxed ? std::memory_order_relaxed : std::memory_order_acquire);
      if (hook_) {
        out[lane] = hook_->load_value(a, out[lane]);
        hook_->after(a, out[lane]);
      }
    }
    return out;
  }
  template <class Src>
  lanes shfl_from(const lanes& x, Src&& src) const {
    lanes out{};
    for (int lane = 0; lane < N; ++lane) out[lane] = x[src(lane)];
    return out;
  }
  template <class F>
  lanes map(const lanes& a, const lanes& b, F&& f) const {
    lanes out{};
    for (int lane = 0; lane < N; ++lane) out[lane] = f(lane, a[lane], b[lane]);
    return out;
  }
  lanes splat(std::uint64_t v) const {
    lanes out;
    out.fill(v);
    return out;
  }

  template <class Pred>
  std::uint32_t ballot(const lanes& x, Pred&& pred) const {
    std::uint32_t bits = 0;
    for (int lane = 0; lane < N; ++lane) {
      if (pred(lane, x[lane])) bits |= 1u << lane;
    }
    return bits;
  }
  std::uint64_t shfl(const lanes& x, int src) const { return x[src]; }
  std::uint32_t shfl_high(const lanes& x, int src) const { return static_cast<std::uint32_t>(x[src] >> 32); }
  std::uint32_t shfl_low(const lanes& x, int src) const { return static_cast<std::uint32_t>(x[src]); }
  void set_lane(lanes& x, int lane, std::uint64_t v) const { x[lane] = v; }

  std::uint64_t load(const std::uint64_t* p, int lane) {
    const access a = make(access_kind::load, mem_order::acquire, lane, p);
    if (hook_) hook_->before(a);
    std::uint64_t v = ref(p).load(std::memory_order_acquire);
    if (hook_) {
      v = hook_->load_value(a, v);
      hook_->after(a, v);
    }
    return v;
  }
  void store(std::uint64_t* p, int lane, std::uint64_t v, mem_order o) {
    access a = make(access_kind::store, o, lane, p);
    a.value = v;
    if (hook_) hook_->before(a);
    ref(p).store(v, detail::to_std(o));
    if (hook_) hook_->after(a, v);
  }
  // The lanes of `mask` store x[lane] to p[lane]: one warp instruction on
  // the device, with no order among its stores, so the hook picks the order
  // as for a team-wide read (a scheduler may interleave other teams).
  void store_lanes(std::uint64_t* p, const lanes& x, std::uint32_t mask, mem_order o) {
    std::array<std::uint8_t, N> lanes_in{};
    int count = 0;
    for (int lane = 0; lane < N; ++lane) {
      if ((mask >> lane) & 1u) lanes_in[count++] = static_cast<std::uint8_t>(lane);
    }
    if (count == 0) return;
    std::array<std::uint8_t, N> order;
    for (int i = 0; i < count; ++i) order[i] = static_cast<std::uint8_t>(i);
    if (hook_ && count > 1) hook_->lane_order(id_, count, order.data());
    for (int i = 0; i < count; ++i) {
      const int lane = lanes_in[order[i]];
      access a = make(access_kind::store, o, lane, p + lane);
      a.value = x[lane];
      a.group_index = static_cast<std::uint8_t>(i);
      a.group_size = static_cast<std::uint8_t>(count);
      if (hook_) hook_->before(a);
      ref(p + lane).store(x[lane], detail::to_std(o));
      if (hook_) hook_->after(a, x[lane]);
    }
  }
  // Strong CAS, `o` (acq_rel or acquire) on success and acquire on failure;
  // `expected` gets the value found.
  bool cas(std::uint64_t* p, int lane, std::uint64_t& expected, std::uint64_t desired, mem_order o = mem_order::acq_rel) {
    access a = make(access_kind::cas, o, lane, p);
    a.value = desired;
    a.expected = expected;
    if (hook_) hook_->before(a);
    const bool ok = ref(p).compare_exchange_strong(expected, desired, detail::to_std(o), std::memory_order_acquire);
    if (hook_) hook_->after(a, expected);
    return ok;
  }
  // Unconditional swap, made by `lane`; returns the old value (SlabHash's
  // delete, core/slabhash/algorithm.hpp).
  std::uint64_t exchange(std::uint64_t* p, int lane, std::uint64_t desired, mem_order o) {
    access a = make(access_kind::exchange, o, lane, p);
    a.value = desired;
    if (hook_) hook_->before(a);
    const std::uint64_t old = ref(p).exchange(desired, detail::to_std(o));
    if (hook_) hook_->after(a, old);
    return old;
  }
  std::uint64_t fetch_add(std::uint64_t* p, int lane, std::uint64_t delta, mem_order o) {
    access a = make(access_kind::fetch_add, o, lane, p);
    a.value = delta;
    if (hook_) hook_->before(a);
    const std::uint64_t old = ref(p).fetch_add(delta, detail::to_std(o));
    if (hook_) hook_->after(a, old);
    return old;
  }
  void lock_wait(std::uint32_t where, std::uint64_t word) {
    if (hook_) hook_->lock_wait(id_, where, word);
    if (abandon_ && abandon_->load(std::memory_order_relaxed)) throw run_stopped{};
    if (words_ != 0 && ref(base_ + error_word_offset).load(std::memory_order_relaxed) == error_corrupt) {
      throw run_stopped{};
    }
    if (yield_) std::this_thread::yield();
  }
  std::uint32_t random_u32() { return static_cast<std::uint32_t>(rng_.next() >> 32); }
  void hint(team_hint h) {
    if (hook_) hook_->hint(id_, h);
  }

 private:
  static std::atomic_ref<std::uint64_t> ref(const std::uint64_t* p) {
    return std::atomic_ref<std::uint64_t>(*const_cast<std::uint64_t*>(p));
  }
  access make(access_kind k, mem_order o, int lane, const std::uint64_t* p) {
    if (words_ != 0 && (p < base_ || p >= base_ + words_)) throw access_fault{id_, static_cast<std::uint64_t>(p - base_)};
    if (abandon_ && (++accesses_ & 255u) == 0 && abandon_->load(std::memory_order_relaxed)) throw run_stopped{};
    access a;
    a.team = id_;
    a.kind = k;
    a.order = o;
    a.lane = static_cast<std::uint8_t>(lane);
    a.word = static_cast<std::uint64_t>(p - base_);
    return a;
  }

  team_id id_;
  team_rng rng_;
  std::uint64_t* base_;
  access_hook* hook_;
  bool yield_;
  std::uint64_t words_;
  team_stats stats_{};
  const std::atomic<bool>* abandon_ = nullptr;
  std::uint32_t accesses_ = 0;
};

#if !defined(__CUDACC__)
static_assert(team<host_team<8>>);
static_assert(team<host_team<16>>);
static_assert(team<host_team<32>>);
#endif

}  // namespace gfsl
