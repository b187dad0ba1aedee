// The runtime of include/gfsl/cpu/cuda.hpp: warps as teams of the
// deterministic scheduler, lanes as fibers inside them.
//
// Each warp's team body is a dispatcher. It resumes its lanes one at a time
// (Boost.Context fibers, one OS thread for the whole run); a lane runs the
// user's code until it arrives at a collective, where it records what it
// asks and switches back. When no lane can run, the dispatcher completes the
// collectives whose masks have all arrived alike, and releases their lanes
// in an order the scheduler draws (lane granularity). A lane inside an
// atomic or at a collective's arrival passes a scheduling point of the
// scheduler, which may switch to another warp from inside the lane's fiber:
// the scheduler then holds the lane's continuation as the team's, and
// resumes it there; the dispatcher stays suspended until that lane switches
// back. One lane of a warp at a time is ever inside the scheduler, so the
// two kinds of switch never cross.
// Boost.Context and the scheduler come after the header: they may use `asm`.
#define GFSL_CPU_ALLOW_ASM
#include "../../include/gfsl/cpu/cuda.hpp"

#include <sys/mman.h>

#include <boost/context/fiber.hpp>
#include <boost/context/fixedsize_stack.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>

#include "../sched/scheduler.hpp"

namespace gfsl::cpu {

namespace ctx = boost::context;

namespace {

// Thrown inside a lane to leave it: the run faulted, or its warp unwinds.
struct unwind_lane {};

struct warp_state;
struct run_state;

struct lane_state {
  detail::lane_ids ids;
  ctx::fiber f;
  warp_state* warp = nullptr;
  bool exists = false, started = false, exited = false, waiting = false;
  detail::coll kind = detail::coll::syncwarp;
  unsigned mask = 0;
  std::uint64_t payload = 0;
  int arg = 0, width = 32;
  std::uint64_t site = 0;
  std::uint64_t result = 0;
  // The intrinsic the lane called last, for fault lines.
  const char* file = nullptr;
  unsigned line = 0;
  // Plain accesses (plain_access) made after the run stopped or faulted
  // while this lane was between two of the layer's calls; past a bound the
  // lane is abandoned (it spins on plain loads and would never leave).
  std::uint64_t doomed_accesses = 0;
  bool abandoned = false;
};

struct block_state {
  unsigned warps = 0;           // warps of the block
  unsigned arrived = 0;         // warps at the barrier now
  std::uint64_t generation = 0; // barriers completed
  std::uint64_t count = 0;      // the predicates of this barrier's threads, so far
  std::uint64_t threads = 0;    // threads of the block
  std::uint64_t result = 0;     // the count of the barrier completed last
  unsigned at_barrier = 0;      // lanes waiting at __syncthreads
  bool exited = false;          // a thread of the block has exited
  std::string first_exit;       // which
};

struct warp_state {
  run_state* run = nullptr;
  team_id team = 0;
  unsigned block_linear = 0, warp_in_block = 0;
  block_state* block = nullptr;
  unsigned existing = 0;  // mask of the lanes the launch has
  bool at_barrier = false;  // the warp waits at __syncthreads (a stop report names it)
  std::array<lane_state, 32> lanes;
  ctx::fiber dispatcher;
  std::deque<int> runnable;
  bool unwinding = false;
  std::exception_ptr stop;  // the scheduler's stop, to rethrow in the team's own fiber
};

struct run_state {
  const options* o = nullptr;
  sched::scheduler* s = nullptr;
  std::function<void()> body;
  std::vector<std::string> faults;
  bool faulted = false;
  std::uint64_t base = 0;
  bool based = false;  // base is set (options::memory_base, or the run's first atomic)
  std::uint64_t last_step = ~std::uint64_t{0}, stamps_in_step = 0;
  unsigned blocks = 1;
  std::vector<block_state> block;
  // __shared__: the sections, each block's saved copy, the block whose copy
  // the sections hold now.
  std::vector<std::pair<char*, char*>> shared;
  std::size_t shared_bytes = 0;
  std::vector<std::vector<char>> shared_saved;
  unsigned resident = ~0u;
  std::string replay;          // " (replay: seed ...)", the end of every fault line
  bool sched_stop = false;     // the scheduler stopped the run (its signal is unwinding the lanes)
  std::string stop_where;      // the lane running when it did
  std::uint64_t clock_offset = 0;  // __nanosleep's advance of the virtual clock
  // Instrumented plain accesses (plain_access): the device's memory at the
  // launch (cudaMalloc allocations, __shared__ sections, device_globals,
  // memory_base), sorted, and the span that holds them all.
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> device;
  std::uintptr_t device_lo = 0, device_hi = 0;
  bool stale_plain = false;  // memory ptx: plain loads may return older stores
};

thread_local run_state* current_run = nullptr;
thread_local lane_state* current_lane = nullptr;
thread_local launch_result last;

// An instrumented plain access is announced before it happens (the
// compiler's callback runs before the load or store), so what the model
// needs after it is finished at the lane's next call into the layer, before
// any other lane or warp can run (every switch goes through the layer):
//   - a stale load: the callback wrote the older store's value into the
//     word so that the load reads it; the latest value goes back here;
//   - a store: the model learns the value it wrote.
struct pending_plain {
  int swapped = 0;
  std::uint64_t* word[3] = {};
  std::uint64_t latest[3] = {};
  int stores = 0;
  access store[3];
  std::uint64_t* store_word[3] = {};
  sched::scheduler* s = nullptr;
};
thread_local pending_plain pending;

void settle() {
  pending_plain& p = pending;
  for (int i = 0; i < p.swapped; ++i) std::memcpy(p.word[i], &p.latest[i], 8);
  p.swapped = 0;
  for (int i = 0; i < p.stores; ++i) {
    access& a = p.store[i];
    std::memcpy(&a.value, p.store_word[i], 8);
    p.s->after(a, a.value);
  }
  p.stores = 0;
}

const char* coll_name(detail::coll k) {
  switch (k) {
    case detail::coll::ballot: return "__ballot_sync";
    case detail::coll::shfl: return "__shfl_sync";
    case detail::coll::shfl_up: return "__shfl_up_sync";
    case detail::coll::shfl_down: return "__shfl_down_sync";
    case detail::coll::shfl_xor: return "__shfl_xor_sync";
    case detail::coll::any: return "__any_sync";
    case detail::coll::all: return "__all_sync";
    case detail::coll::syncwarp: return "__syncwarp";
    case detail::coll::match_any: return "__match_any_sync";
    case detail::coll::activemask: return "__activemask";
    case detail::coll::syncthreads: return "__syncthreads";
    case detail::coll::match_all: return "__match_all_sync";
    case detail::coll::reduce: return "__reduce_*_sync";
  }
  return "?";
}

std::string hex(unsigned m) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", m);
  return b;
}

std::string site_of(const lane_state& l) {
  if (!l.file) return "";
  const char* base = std::strrchr(l.file, '/');
  return std::string(base ? base + 1 : l.file) + ":" + std::to_string(l.line);
}

std::string where(const warp_state& w, int lane) {
  std::string out = "warp " + std::to_string(w.team) + " (block " + std::to_string(w.block_linear) + ", warp " +
                    std::to_string(w.warp_in_block) + " of it) lane " + std::to_string(lane);
  const std::string site = site_of(w.lanes[static_cast<std::size_t>(lane)]);
  if (!site.empty()) out += " at " + site;
  return out;
}

// One line per fault, ending with how to replay the run; the waiting warps
// wake to unwind.
void fault(run_state& r, const std::string& line) {
  r.faults.push_back("cuda-on-cpu fault: " + line + r.replay);
  r.faulted = true;
  if (r.s) r.s->wrote();
}

// The lane's last intrinsic (detail::at) becomes its site.
void capture(lane_state& l) {
  l.file = detail::site_file;
  l.line = detail::site_line;
}

// __shared__: the sections hold block b's copy.
void make_resident(run_state& r, unsigned b) {
  if (r.resident != ~0u) {
    std::vector<char>& out = r.shared_saved[r.resident];
    out.resize(r.shared_bytes);
    std::size_t at = 0;
    for (const auto& [begin, end] : r.shared) {
      std::memcpy(out.data() + at, begin, static_cast<std::size_t>(end - begin));
      at += static_cast<std::size_t>(end - begin);
    }
  }
  const std::vector<char>& in = r.shared_saved[b];
  std::size_t at = 0;
  for (const auto& [begin, end] : r.shared) {
    const std::size_t n = static_cast<std::size_t>(end - begin);
    if (in.empty()) std::memset(begin, 0, n);
    else std::memcpy(begin, in.data() + at, n);
    at += n;
  }
  r.resident = b;
}

// The lane we are in, after any switch: the scheduler or the dispatcher may
// have run other lanes meanwhile.
void enter(lane_state& l) {
  current_lane = &l;
  detail::current_ids = &l.ids;
  run_state& r = *l.warp->run;
  if (r.shared_bytes && r.resident != l.warp->block_linear) make_resident(r, l.warp->block_linear);
}

// A call into the scheduler that may stop the run: its stop signal then
// unwinds the lane, and the lanes tell it from an exception of the user's.
template <class F>
void scheduled(run_state& r, F&& f) {
  try {
    f();
  } catch (...) {
    r.sched_stop = true;
    throw;
  }
}

// A scheduling point of the running lane; leaves the lane when the run has faulted.
void point(lane_state& l) {
  settle();
  run_state& r = *l.warp->run;
  if (r.faulted || l.warp->unwinding) throw unwind_lane{};
  scheduled(r, [&] { r.s->point(); });
  enter(l);
  if (r.faulted || l.warp->unwinding) throw unwind_lane{};
}

void resume_lane(warp_state& w, int i) {
  lane_state& l = w.lanes[static_cast<std::size_t>(i)];
  enter(l);
  l.f = std::move(l.f).resume();
}

// Lanes released by a collective, or the warp's first lanes: in an order
// the scheduler draws (identity unless its granularity is lane).
void release(warp_state& w, const std::vector<int>& lanes) {
  std::array<std::uint8_t, 32> order{};
  const int n = static_cast<int>(lanes.size());
  for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
  if (n > 1) w.run->s->lane_order(w.team, n, order.data());
  for (int i = 0; i < n; ++i) w.runnable.push_back(lanes[order[static_cast<std::size_t>(i)]]);
}

bool same(const lane_state& a, const lane_state& b) {
  if (a.kind != b.kind || a.mask != b.mask) return false;
  return (a.kind != detail::coll::reduce && a.kind != detail::coll::syncthreads) || a.arg == b.arg;
}

std::uint64_t reduce(const warp_state& w, unsigned m, int op) {
  const bool is_signed = (op & detail::reduce_signed) != 0;
  op &= 7;
  bool first = true;
  std::uint32_t acc = 0;
  for (int j = 0; j < 32; ++j) {
    if (!((m >> j) & 1u)) continue;
    const auto v = static_cast<std::uint32_t>(w.lanes[static_cast<std::size_t>(j)].payload);
    if (first) {
      acc = v;
      first = false;
      continue;
    }
    switch (op) {
      case detail::reduce_add: acc += v; break;
      case detail::reduce_min:
        acc = is_signed ? static_cast<std::uint32_t>(std::min(static_cast<std::int32_t>(acc), static_cast<std::int32_t>(v))) : std::min(acc, v);
        break;
      case detail::reduce_max:
        acc = is_signed ? static_cast<std::uint32_t>(std::max(static_cast<std::int32_t>(acc), static_cast<std::int32_t>(v))) : std::max(acc, v);
        break;
      case detail::reduce_and: acc &= v; break;
      case detail::reduce_or: acc |= v; break;
      case detail::reduce_xor: acc ^= v; break;
    }
  }
  return acc;
}

// Which lane a shuffle of lane `j` reads; j itself when CUDA returns the
// caller's own value.
int source(const lane_state& l, int j) {
  const int width = l.width;
  const int base = j & ~(width - 1);
  switch (l.kind) {
    case detail::coll::shfl: return base + (l.arg & (width - 1));
    case detail::coll::shfl_up: return (j - base) >= l.arg ? j - l.arg : j;
    case detail::coll::shfl_down: return (j - base) + l.arg < width ? j + l.arg : j;
    case detail::coll::shfl_xor: {
      const int s = j ^ l.arg;
      return (s < 0 || s >= base + width || s >= 32) ? j : s;
    }
    default: return j;
  }
}

// Completes every collective whose mask has arrived alike; false when none could.
bool resolve(warp_state& w) {
  bool any = false;
  for (int i = 0; i < 32; ++i) {
    lane_state& l = w.lanes[static_cast<std::size_t>(i)];
    if (!l.waiting || l.kind == detail::coll::activemask || l.kind == detail::coll::syncthreads) continue;
    const unsigned m = l.mask;
    if (!((m >> i) & 1u)) continue;  // reported when the warp is stuck
    bool complete = true;
    for (int j = 0; j < 32 && complete; ++j) {
      if (!((m >> j) & 1u)) continue;
      const lane_state& o = w.lanes[static_cast<std::size_t>(j)];
      complete = o.exists && !o.exited && o.waiting && same(o, l);
    }
    if (!complete) continue;
    std::uint64_t ballot = 0;
    for (int j = 0; j < 32; ++j) {
      if (((m >> j) & 1u) && w.lanes[static_cast<std::size_t>(j)].payload) ballot |= 1u << j;
    }
    std::vector<int> released;
    for (int j = 0; j < 32; ++j) {
      if (!((m >> j) & 1u)) continue;
      lane_state& o = w.lanes[static_cast<std::size_t>(j)];
      switch (o.kind) {
        case detail::coll::ballot: o.result = ballot; break;
        case detail::coll::any: o.result = ballot != 0; break;
        case detail::coll::all: o.result = ballot == m; break;
        case detail::coll::syncwarp: o.result = 0; break;
        case detail::coll::match_all: {
          bool all_same = true;
          for (int k = 0; k < 32; ++k) {
            if (((m >> k) & 1u) && w.lanes[static_cast<std::size_t>(k)].payload != o.payload) all_same = false;
          }
          o.result = all_same ? m : 0;
          break;
        }
        case detail::coll::reduce: o.result = reduce(w, m, o.arg); break;
        case detail::coll::match_any: {
          std::uint64_t same_value = 0;
          for (int k = 0; k < 32; ++k) {
            if (((m >> k) & 1u) && w.lanes[static_cast<std::size_t>(k)].payload == o.payload) same_value |= 1u << k;
          }
          o.result = same_value;
          break;
        }
        default: {
          if (o.width < 1 || o.width > 32 || (o.width & (o.width - 1)) != 0) {
            fault(*w.run, where(w, j) + ": " + coll_name(o.kind) + " with width " + std::to_string(o.width) +
                              ", not a power of two in 1..32");
            w.unwinding = true;
            return true;
          }
          const int src = source(o, j);
          if (!((m >> src) & 1u)) {
            fault(*w.run, where(w, j) + ": " + coll_name(o.kind) + " with mask " + hex(m) + " reads lane " +
                              std::to_string(src) + ", which is not in the mask (its value is undefined)");
            w.unwinding = true;
            return true;
          }
          o.result = w.lanes[static_cast<std::size_t>(src)].payload;
        }
      }
      o.waiting = false;
      released.push_back(j);
    }
    release(w, released);
    any = true;
  }
  return any;
}

// Every lane that has not exited waits: each __activemask call site
// returns the lanes waiting at it.
bool resolve_activemask(warp_state& w) {
  std::map<std::uint64_t, unsigned> sites;
  for (int i = 0; i < 32; ++i) {
    const lane_state& l = w.lanes[static_cast<std::size_t>(i)];
    if (l.waiting && l.kind == detail::coll::activemask) sites[l.site] |= 1u << i;
  }
  if (sites.empty()) return false;
  std::vector<int> released;
  for (int i = 0; i < 32; ++i) {
    lane_state& l = w.lanes[static_cast<std::size_t>(i)];
    if (!l.waiting || l.kind != detail::coll::activemask) continue;
    l.result = sites[l.site];
    l.waiting = false;
    released.push_back(i);
  }
  release(w, released);
  return true;
}

const char* name_of(const lane_state& l) {
  if (l.kind == detail::coll::reduce) {
    static constexpr const char* names[] = {"__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
                                            "__reduce_and_sync", "__reduce_or_sync",  "__reduce_xor_sync"};
    const int op = l.arg & 7;
    return op < 6 ? names[op] : "__reduce_*_sync";
  }
  if (l.kind == detail::coll::syncthreads) {
    static constexpr const char* names[] = {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"};
    return names[l.arg & 3];
  }
  return coll_name(l.kind);
}

// No lane of the warp can go on: the first waiting lane's collective is divergent.
void report_stuck(warp_state& w) {
  for (int i = 0; i < 32; ++i) {
    const lane_state& l = w.lanes[static_cast<std::size_t>(i)];
    if (!l.waiting) continue;
    const std::string what = where(w, i) + ": " + name_of(l) + " with mask " + hex(l.mask);
    if (!((l.mask >> i) & 1u)) {
      fault(*w.run, what + " leaves out the calling lane");
      return;
    }
    for (int j = 0; j < 32; ++j) {
      if (!((l.mask >> j) & 1u)) continue;
      const lane_state& o = w.lanes[static_cast<std::size_t>(j)];
      if (!o.exists) {
        fault(*w.run, what + " names lane " + std::to_string(j) + ", which is not in the launch");
        return;
      }
      if (o.exited) {
        fault(*w.run, what + " names lane " + std::to_string(j) + ", which has exited");
        return;
      }
      if (o.waiting && !same(o, l)) {
        const std::string at = site_of(o);
        fault(*w.run, what + " while lane " + std::to_string(j) + " is at " + name_of(o) + " with mask " + hex(o.mask) +
                          (at.empty() ? "" : " (" + at + ")") + " (a divergent collective)");
        return;
      }
    }
  }
  fault(*w.run, where(w, 0) + ": the warp's lanes wait on one another");
}

std::string lane_list(unsigned m) {
  std::string out;
  for (int i = 0; i < 32;) {
    if (!((m >> i) & 1u)) {
      ++i;
      continue;
    }
    int j = i;
    while (j + 1 < 32 && ((m >> (j + 1)) & 1u)) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(i);
    if (j > i) out += "-" + std::to_string(j);
    i = j + 1;
  }
  return out;
}

// The warp has no lane to run and none of its collectives can complete. If
// every live lane waits at __syncthreads, the warp arrives at its block's
// barrier and waits (a sleep of the scheduler's, woken by writes) until the
// block's last warp arrives; then its lanes go on. True when it did.
bool barrier(warp_state& w) {
  run_state& r = *w.run;
  block_state& b = *w.block;
  unsigned at = 0;
  int first = -1, exited = -1;
  for (int i = 0; i < 32; ++i) {
    const lane_state& l = w.lanes[static_cast<std::size_t>(i)];
    if (!l.exists) continue;
    if (l.exited) {
      if (exited < 0) exited = i;
      continue;
    }
    if (!l.waiting || l.kind != detail::coll::syncthreads) return false;
    if (first < 0) first = i;
    at |= 1u << i;
  }
  if (first < 0) return false;
  // The lanes of one warp at different barrier kinds are divergent (report_stuck).
  for (int i = 0; i < 32; ++i) {
    if (((at >> i) & 1u) && !same(w.lanes[static_cast<std::size_t>(i)], w.lanes[static_cast<std::size_t>(first)])) return false;
  }
  const lane_state& f = w.lanes[static_cast<std::size_t>(first)];
  if (exited >= 0 || b.exited) {
    const std::string who = exited >= 0 ? "lane " + std::to_string(exited) + " of its warp" : b.first_exit;
    fault(r, where(w, first) + ": " + name_of(f) + " while " + who +
                 " has exited (every thread of block " + std::to_string(w.block_linear) + " must arrive)");
    w.unwinding = true;
    return true;
  }
  for (int i = 0; i < 32; ++i) {
    if ((at >> i) & 1u) b.count += w.lanes[static_cast<std::size_t>(i)].payload != 0;
  }
  const std::uint64_t gen = b.generation;
  if (++b.arrived == b.warps) {
    b.result = b.count;
    b.count = 0;
    b.arrived = 0;
    // Every thread of the block is through: those of warps not yet resumed
    // no longer wait (an exit now is no fault), and later arrivals count
    // for the next barrier.
    b.at_barrier = 0;
    ++b.generation;
    r.s->wrote();
  } else {
    w.at_barrier = true;
    try {
      r.s->point();
      while (b.generation == gen && !r.faulted) {
        r.s->wait_on(0, 0);
        r.s->point();
      }
    } catch (...) {
      r.sched_stop = true;
      if (r.stop_where.empty()) {
        r.stop_where = "warp " + std::to_string(w.team) + " (block " + std::to_string(w.block_linear) + ", warp " +
                       std::to_string(w.warp_in_block) + " of it) lanes " + lane_list(at) + " at " + name_of(f) +
                       (site_of(f).empty() ? "" : " (" + site_of(f) + ")");
      }
      if (!w.stop) w.stop = std::current_exception();
      w.unwinding = true;
      return true;
    }
    w.at_barrier = false;
    if (r.faulted) {
      w.unwinding = true;
      return true;
    }
  }
  std::vector<int> released;
  for (int i = 0; i < 32; ++i) {
    if (!((at >> i) & 1u)) continue;
    lane_state& l = w.lanes[static_cast<std::size_t>(i)];
    switch (l.arg & 3) {
      case 1: l.result = b.result; break;
      case 2: l.result = b.result == b.threads; break;
      case 3: l.result = b.result != 0; break;
      default: l.result = 0;
    }
    l.waiting = false;
    released.push_back(i);
  }
  release(w, released);
  return true;
}

void run_warp(warp_state& w) {
  run_state& r = *w.run;
  std::vector<int> first;
  for (int i = 0; i < 32; ++i) {
    lane_state& l = w.lanes[static_cast<std::size_t>(i)];
    if (!l.exists) continue;
    l.warp = &w;
    l.f = ctx::fiber(std::allocator_arg, ctx::fixedsize_stack(r.o->lane_stack_bytes), [&w, i](ctx::fiber&& caller) {
      w.dispatcher = std::move(caller);
      lane_state& me = w.lanes[static_cast<std::size_t>(i)];
      run_state& run = *w.run;
      me.started = true;
      if (!w.unwinding && !run.faulted) {
        bool returned = false;
        try {
          enter(me);
          run.body();
          returned = true;
        } catch (const unwind_lane&) {
          w.unwinding = true;
        } catch (const std::exception& e) {
          if (run.sched_stop) {
            if (!w.stop) w.stop = std::current_exception();
          } else {
            fault(run, where(w, i) + ": threw " + e.what());
          }
          w.unwinding = true;
        } catch (...) {
          if (run.sched_stop) {
            // The scheduler's stop: its fiber unwinds through here.
            if (run.stop_where.empty()) run.stop_where = where(w, i);
            if (!w.stop) w.stop = std::current_exception();
          } else {
            fault(run, where(w, i) + ": threw an exception that is not a std::exception");
          }
          w.unwinding = true;
        }
        if (returned) {
          block_state& b = *w.block;
          if (!b.exited) b.first_exit = "thread " + std::to_string(me.ids.thread_idx.x) + " (warp " + std::to_string(w.team) + " lane " + std::to_string(i) + ")";
          b.exited = true;
          if (b.at_barrier > 0) {
            fault(run, where(w, i) + ": exited while " + std::to_string(b.at_barrier) + " threads of block " +
                           std::to_string(w.block_linear) + " wait at __syncthreads (every thread of the block must arrive)");
            w.unwinding = true;
          }
        }
      }
      settle();
      me.exited = true;
      me.waiting = false;
      return std::move(w.dispatcher);
    });
    first.push_back(i);
  }
  release(w, first);
  for (;;) {
    if (w.unwinding) {
      for (int i = 0; i < 32; ++i) {
        lane_state& l = w.lanes[static_cast<std::size_t>(i)];
        while (l.exists && !l.exited && l.f) resume_lane(w, i);
      }
      break;
    }
    if (!w.runnable.empty()) {
      const int i = w.runnable.front();
      w.runnable.pop_front();
      resume_lane(w, i);
      continue;
    }
    bool all_exited = true;
    for (const lane_state& l : w.lanes) all_exited = all_exited && (!l.exists || l.exited);
    if (all_exited) break;
    if (resolve(w) || resolve_activemask(w) || barrier(w)) continue;
    report_stuck(w);
    w.unwinding = true;
  }
  // An abandoned lane (plain_access) is suspended inside an instrumented
  // access, whose frames cannot be unwound (the compiler's callbacks are
  // nothrow): its stack is given up, not unwound.
  for (lane_state& l : w.lanes) {
    if (l.abandoned && l.f) (void)new ctx::fiber(std::move(l.f));
  }
  detail::current_ids = nullptr;
  current_lane = nullptr;
  if (w.stop) std::rethrow_exception(w.stop);
}

bool parse_options(const options& o, sched::options& so, std::string& why) {
  if (!sched::parse(o.strategy, so.strat)) {
    why = "strategy '" + o.strategy + "' (random, pct, fair-pct, park)";
    return false;
  }
  if (!sched::parse(o.granularity, so.gran)) {
    why = "granularity '" + o.granularity + "' (chunk, line, lane)";
    return false;
  }
  if (!sched::parse(o.memory, so.mem)) {
    why = "memory '" + o.memory + "' (sc, ptx)";
    return false;
  }
  if (so.mem == sched::memory::ptx && (!o.memory_base || o.memory_bytes == 0)) {
    why = "memory 'ptx' without memory_base and memory_bytes (the words the model tracks)";
    return false;
  }
  so.seed = o.seed;
  so.depth = o.depth;
  so.pct_steps = o.pct_steps;
  so.max_steps = o.max_steps;
  so.livelock_steps = o.livelock_steps;
  if (o.stale_pct > 100) {
    why = "stale_pct " + std::to_string(o.stale_pct) + " (0..100)";
    return false;
  }
  so.stale_seed = o.stale_seed;
  so.stale_pct = o.stale_pct;
  so.memory_base = static_cast<const std::uint64_t*>(o.memory_base);
  so.memory_words = o.memory_bytes / 8;
  return true;
}

lane_state& in_kernel(const char* what) {
  if (!current_lane || !current_run) {
    throw std::logic_error(std::string("gfsl::cpu: ") + what + " outside a kernel launched by gfsl::cpu::launch");
  }
  return *current_lane;
}

std::mutex allocations_mutex;
std::map<void*, std::size_t>& allocations() {
  static std::map<void*, std::size_t> m;
  return m;
}
// device_global: each named global and the bytes it held when named.
std::map<void*, std::vector<char>>& globals() {
  static std::map<void*, std::vector<char>> m;
  return m;
}
std::vector<std::pair<char*, char*>>& sections() {
  static std::vector<std::pair<char*, char*>> v;
  return v;
}

}  // namespace

options& default_options() {
  static thread_local options o;
  return o;
}
const launch_result& last_launch() { return last; }

void device_global(void* p, std::size_t bytes) {
  std::lock_guard<std::mutex> g(allocations_mutex);
  const char* b = static_cast<const char*>(p);
  globals()[p] = std::vector<char>(b, b + bytes);
}

void reset_device_globals() {
  std::lock_guard<std::mutex> g(allocations_mutex);
  for (const auto& [p, bytes] : globals()) std::memcpy(p, bytes.data(), bytes.size());
}

std::uint64_t steps() { return in_kernel("gfsl::cpu::steps"), current_run->s->steps(); }

std::uint64_t stamp() {
  lane_state& l = in_kernel("gfsl::cpu::stamp");
  run_state& r = *l.warp->run;
  const std::uint64_t st = r.s->steps();
  if (st != r.last_step) {
    r.last_step = st;
    r.stamps_in_step = 0;
  }
  if (r.stamps_in_step >= (1u << 24) - 1) throw std::length_error("gfsl::cpu::stamp: more than 2^24 stamps in one step");
  r.s->stamp();
  return (st << 24) | ++r.stamps_in_step;
}

void completed_operation() {
  in_kernel("gfsl::cpu::completed_operation");
  current_run->s->completed_operation();
}

namespace detail {

shared_use::shared_use(const char* function) {
  if (current_lane && current_run && current_run->blocks > 1 && function && std::strstr(function, "[with ")) {
    lane_state& l = *current_lane;
    capture(l);
    fault(*current_run, where(*l.warp, static_cast<int>(l.ids.lane)) + ": __shared__ in a template (" + function +
                            ") in a launch of " + std::to_string(current_run->blocks) +
                            " blocks: g++ keeps one instance of it (launch one block, or declare it in a kernel that is no template)");
    throw unwind_lane{};
  }
}

std::uint64_t collective(coll kind, unsigned mask, std::uint64_t payload, int arg, int width, std::uint64_t site) {
  lane_state& l = in_kernel(coll_name(kind));
  capture(l);
  point(l);
  l.kind = kind;
  l.mask = kind == coll::syncthreads ? l.warp->existing : mask;
  if (kind == coll::syncthreads) ++l.warp->block->at_barrier;
  l.payload = payload;
  l.arg = arg;
  l.width = width;
  l.site = site;
  l.waiting = true;
  warp_state& w = *l.warp;
  w.dispatcher = std::move(w.dispatcher).resume();
  enter(l);
  if (w.unwinding || w.run->faulted) throw unwind_lane{};
  return l.result;
}

namespace {
access make_access(const lane_state& l, const void* p, bool cas) {
  access a;
  a.team = l.warp->team;
  a.kind = cas ? access_kind::cas : access_kind::exchange;
  a.order = mem_order::relaxed;
  a.lane = static_cast<std::uint8_t>(l.ids.lane);
  // Without the structure's words named, offsets count from the run's
  // first atomic, so that a run's fingerprint does not depend on where the
  // process placed its memory.
  run_state& r = *l.warp->run;
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{7};
  if (!r.based) {
    r.base = at;
    r.based = true;
  }
  a.word = (at - r.base) / 8;
  return a;
}
std::uint64_t word_now(const void* p) {
  std::uint64_t v;
  std::memcpy(&v, reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{7}), 8);
  return v;
}
}  // namespace

namespace {
mem_order model_order(order o, bool load, bool store) {
  switch (o) {
    case order::relaxed: return mem_order::relaxed;
    case order::acquire: return mem_order::acquire;
    case order::release: return mem_order::release;
    case order::acq_rel: return mem_order::acq_rel;
    case order::seq_cst: break;
  }
  // seq_cst: a fence.sc first (the caller's), then the strongest order the access has.
  if (load && !store) return mem_order::acquire;
  if (store && !load) return mem_order::release;
  return mem_order::acq_rel;
}

// options::check_allocations: the access lies in memory the structure was given.
void check_address(lane_state& l, const void* p, unsigned bytes, const char* what) {
  run_state& r = *l.warp->run;
  if (!r.o->check_allocations) return;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  auto inside = [&](std::uintptr_t begin, std::size_t n) { return at >= begin && at + bytes <= begin + n; };
  if (r.o->memory_base && inside(reinterpret_cast<std::uintptr_t>(r.o->memory_base), r.o->memory_bytes)) return;
  for (const auto& [begin, end] : r.shared) {
    if (inside(reinterpret_cast<std::uintptr_t>(begin), static_cast<std::size_t>(end - begin))) return;
  }
  {
    std::lock_guard<std::mutex> g(allocations_mutex);
    auto& m = allocations();
    auto it = m.upper_bound(const_cast<void*>(p));
    if (it != m.begin()) {
      --it;
      if (inside(reinterpret_cast<std::uintptr_t>(it->first), it->second)) return;
    }
    for (const auto& [gp, g] : globals()) {
      if (inside(reinterpret_cast<std::uintptr_t>(gp), g.size())) return;
    }
  }
  char addr[32];
  std::snprintf(addr, sizeof addr, "%p", p);
  fault(r, where(*l.warp, static_cast<int>(l.ids.lane)) + ": " + what + " of " + std::to_string(bytes) + " bytes at " + addr +
               ", outside every cudaMalloc allocation, __shared__ variable and device_global");
  throw unwind_lane{};
}

lane_state& atomic_lane(const void* p, unsigned bytes, const char* what) {
  lane_state& l = *current_lane;
  run_state& r = *l.warp->run;
  capture(l);
  if (r.faulted || l.warp->unwinding) throw unwind_lane{};
  check_address(l, p, bytes, what);
  return l;
}

void before_access(lane_state& l, const access& a) {
  settle();
  run_state& r = *l.warp->run;
  scheduled(r, [&] { r.s->before(a); });
  enter(l);
  if (r.faulted || l.warp->unwinding) throw unwind_lane{};
}

void end_rmw(lane_state& l, const void* p, unsigned bytes, std::uint64_t old_bits, bool cas, bool cas_ok, mem_order mo) {
  access a = make_access(l, p, cas);
  a.order = mo;
  const std::uint64_t now = word_now(p);
  std::uint64_t before = now;
  if (bytes == 8) {
    before = old_bits;
  } else {
    const unsigned shift = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) & 7u) * 8;
    const std::uint64_t m = (bytes >= 8 ? ~std::uint64_t{0} : ((std::uint64_t{1} << (bytes * 8)) - 1)) << shift;
    before = (now & ~m) | ((old_bits << shift) & m);
  }
  a.value = now;
  a.expected = cas && !cas_ok ? ~before : before;
  l.warp->run->s->after(a, before);
}

void fence_of(lane_state& l) {
  point(l);
  l.warp->run->s->fence();
}
}  // namespace

void atomic_begin(const void* p, unsigned bytes, bool cas) {
  if (!current_lane) return;  // host code: a plain RMW
  lane_state& l = atomic_lane(p, bytes, cas ? "atomicCAS" : "an atomic");
  before_access(l, make_access(l, p, cas));
}

// The model sees the aligned 64-bit word that holds the atomic's bytes: its
// words are 64-bit, and a 32-bit RMW leaves the other half as it was.
void atomic_end(const void* p, unsigned bytes, std::uint64_t old_bits, bool cas, bool cas_ok) {
  if (!current_lane) return;
  end_rmw(*current_lane, p, bytes, old_bits, cas, cas_ok, mem_order::relaxed);
}

void atomic_begin_ordered(const void* p, unsigned bytes, bool cas, order o) {
  if (!current_lane) return;
  lane_state& l = atomic_lane(p, bytes, cas ? "a compare-exchange" : "an atomic read-modify-write");
  if (o == order::seq_cst) fence_of(l);
  access a = make_access(l, p, cas);
  a.order = model_order(o, true, true);
  before_access(l, a);
}

void atomic_end_ordered(const void* p, unsigned bytes, std::uint64_t old_bits, bool cas, bool cas_ok, order o) {
  if (!current_lane) return;
  end_rmw(*current_lane, p, bytes, old_bits, cas, cas_ok, model_order(o, true, true));
}

std::uint64_t atomic_load(const void* p, unsigned bytes, order o) {
  std::uint64_t bits = 0;
  if (!current_lane) {
    std::memcpy(&bits, p, bytes);
    return bits;
  }
  lane_state& l = atomic_lane(p, bytes, "an atomic load");
  if (o == order::seq_cst) fence_of(l);
  access a = make_access(l, p, false);
  a.kind = access_kind::load;
  a.order = model_order(o, true, false);
  before_access(l, a);
  const std::uint64_t latest = word_now(p);
  const std::uint64_t seen = l.warp->run->s->load_value(a, latest);
  l.warp->run->s->after(a, seen);
  const unsigned shift = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) & 7u) * 8;
  bits = seen >> shift;
  if (bytes < 8) bits &= (std::uint64_t{1} << (bytes * 8)) - 1;
  return bits;
}

void atomic_store(void* p, unsigned bytes, std::uint64_t bits, order o) {
  if (!current_lane) {
    std::memcpy(p, &bits, bytes);
    return;
  }
  lane_state& l = atomic_lane(p, bytes, "an atomic store");
  if (o == order::seq_cst) fence_of(l);
  access a = make_access(l, p, false);
  a.kind = access_kind::store;
  a.order = model_order(o, false, true);
  // The model takes the word's value after the store: a sub-word store
  // leaves the rest of the word as it was.
  std::uint64_t word = word_now(p);
  const unsigned shift = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) & 7u) * 8;
  const std::uint64_t m = (bytes >= 8 ? ~std::uint64_t{0} : ((std::uint64_t{1} << (bytes * 8)) - 1)) << shift;
  word = (word & ~m) | ((bits << shift) & m);
  a.value = word;
  before_access(l, a);
  std::memcpy(p, &bits, bytes);
  a.value = word_now(p);
  l.warp->run->s->after(a, a.value);
}

namespace {
// Past this many plain accesses after its run stopped, without reaching a
// collective or an atomic (where it leaves), a lane spins on plain loads and
// is abandoned.
constexpr std::uint64_t doomed_limit = 100000;

bool in_device(const run_state& r, std::uintptr_t at, unsigned bytes) {
  if (at >= r.device_hi || at + bytes <= r.device_lo) return false;
  for (const auto& [begin, end] : r.device) {
    if (at < end && at + bytes > begin) return true;
  }
  return false;
}

// The lane's run has stopped or faulted: the lane cannot leave from inside
// the callback (it returns into code compiled not to unwind there), so it
// runs on to its next collective or atomic, which throws; one that never
// gets there is abandoned.
void doomed(lane_state& l) {
  if (++l.doomed_accesses < doomed_limit) return;
  warp_state& w = *l.warp;
  l.abandoned = true;
  l.exited = true;
  l.waiting = false;
  w.unwinding = true;
  for (;;) w.dispatcher = std::move(w.dispatcher).resume();
}
}  // namespace

// An instrumented plain or volatile access (exec/cuda_on_cpu/plain_access.cpp):
// a scheduling point when it falls in the device's memory, and under ptx a
// load may return an older store of each word it reads. Never throws: the
// compiler's callbacks are nothrow calls.
void plain_access(const void* p, unsigned bytes, bool store) noexcept {
  lane_state* const lp = current_lane;
  if (!lp) return;
  settle();
  lane_state& l = *lp;
  warp_state& w = *l.warp;
  run_state& r = *w.run;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  if (!in_device(r, at, bytes)) return;
  if (r.faulted || w.unwinding) {
    doomed(l);
    return;
  }
  try {
    // Every word's scheduling point first, then what the load reads: a
    // stale value written into a word must not be seen by another warp.
    const std::uintptr_t first = at & ~std::uintptr_t{7}, last = (at + bytes - 1) & ~std::uintptr_t{7};
    access a[3];
    std::uint64_t* wp[3];
    int n = 0;
    for (std::uintptr_t word = first; word <= last && n < 3; word += 8, ++n) {
      wp[n] = reinterpret_cast<std::uint64_t*>(word);
      a[n] = make_access(l, wp[n], false);
      a[n].kind = store ? access_kind::store : access_kind::load;
      a[n].order = mem_order::relaxed;
      std::memcpy(&a[n].value, wp[n], 8);
      scheduled(r, [&] { r.s->before(a[n]); });
      enter(l);
      if (r.faulted || w.unwinding) return;
    }
    for (int i = 0; i < n; ++i) {
      if (store) {
        pending.s = r.s;
        pending.store_word[pending.stores] = wp[i];
        pending.store[pending.stores++] = a[i];
        continue;
      }
      std::uint64_t latest;
      std::memcpy(&latest, wp[i], 8);
      const std::uint64_t seen = r.stale_plain ? r.s->load_value(a[i], latest) : latest;
      r.s->after(a[i], seen);
      if (seen != latest) {
        pending.word[pending.swapped] = wp[i];
        pending.latest[pending.swapped++] = latest;
        std::memcpy(wp[i], &seen, 8);
      }
    }
  } catch (...) {
    // The scheduler stopped the run: its signal goes on once the lane
    // leaves (run_warp rethrows it in the team's own fiber).
    if (r.sched_stop) {
      if (r.stop_where.empty()) r.stop_where = where(w, static_cast<int>(l.ids.lane));
      if (!w.stop) w.stop = std::current_exception();
    }
    w.unwinding = true;
  }
}

void fence() {
  if (!current_lane) return;
  lane_state& l = *current_lane;
  capture(l);
  fence_of(l);
}

// The model has fence.sc only: an acquire, release or acq_rel fence is one
// (stronger than asked: it removes behaviours, never adds one).
void fence_ordered(order o) {
  if (!current_lane) return;
  lane_state& l = *current_lane;
  capture(l);
  if (o == order::relaxed) {
    point(l);
    return;
  }
  fence_of(l);
}

std::uint64_t virtual_clock(std::uint64_t per_step) {
  if (!current_lane) return 0;
  lane_state& l = *current_lane;
  capture(l);
  point(l);
  run_state& r = *l.warp->run;
  const std::uint64_t ns = r.s->steps() * nanoseconds_per_step + r.clock_offset;
  return per_step == nanoseconds_per_step ? ns : ns / nanoseconds_per_step * per_step;
}

void nanosleep(unsigned ns) {
  if (!current_lane) return;
  lane_state& l = *current_lane;
  capture(l);
  point(l);
  l.warp->run->clock_offset += ns;
}

void trap(const char* what) {
  lane_state& l = in_kernel(what);
  capture(l);
  fault(*l.warp->run, where(*l.warp, static_cast<int>(l.ids.lane)) + ": " + what);
  throw unwind_lane{};
}

void shared_section(char* begin, char* end) {
  if (!begin || end <= begin) return;
  std::lock_guard<std::mutex> g(allocations_mutex);
  auto& v = sections();
  for (const auto& s : v) {
    if (s.first == begin) return;
  }
  v.emplace_back(begin, end);
}

// A launch under scheduler options as gfsl's campaigns make them (the user
// subject, exec/cuda_on_cpu/user_subject.cpp), with the scheduler's whole
// outcome; `o` gives the lanes' stacks, quiet and the allocation check.
launch_result launch_under(const options& o, const sched::options& so, dim3 grid, dim3 block, std::function<void()> lane_body,
                           sched::outcome* whole);

launch_result launch(const options& o, dim3 grid, dim3 block, std::function<void()> lane_body) {
  if (current_run) throw std::logic_error("gfsl::cpu::launch: a launch from inside a kernel (dynamic parallelism) is not supported");
  const std::uint64_t threads = std::uint64_t{block.x} * block.y * block.z;
  const std::uint64_t blocks = std::uint64_t{grid.x} * grid.y * grid.z;
  if (threads == 0 || threads > 1024) {
    throw std::invalid_argument("gfsl::cpu::launch: a block of " + std::to_string(threads) + " threads (1..1024)");
  }
  if (blocks == 0) throw std::invalid_argument("gfsl::cpu::launch: a grid of 0 blocks");
  sched::options so;
  std::string why;
  if (!parse_options(o, so, why)) throw std::invalid_argument("gfsl::cpu::launch: " + why);
  return launch_under(o, so, grid, block, std::move(lane_body), nullptr);
}

launch_result launch_under(const options& o, const sched::options& so, dim3 grid, dim3 block, std::function<void()> lane_body,
                           sched::outcome* whole) {
  if (current_run) throw std::logic_error("gfsl::cpu::launch: a launch from inside a kernel (dynamic parallelism) is not supported");
  const std::uint64_t threads = std::uint64_t{block.x} * block.y * block.z;
  const std::uint64_t blocks = std::uint64_t{grid.x} * grid.y * grid.z;
  if (threads == 0 || threads > 1024 || blocks == 0) throw std::invalid_argument("gfsl::cpu::launch: a block of 1..1024 threads, 1 block or more");
  const unsigned warps_per_block = static_cast<unsigned>((threads + 31) / 32);
  if (blocks * warps_per_block > 1u << 20) throw std::invalid_argument("gfsl::cpu::launch: more than 2^20 warps");

  run_state r;
  r.o = &o;
  r.body = std::move(lane_body);
  r.base = reinterpret_cast<std::uintptr_t>(o.memory_base);
  r.based = o.memory_base != nullptr;
  r.blocks = static_cast<unsigned>(blocks);
  r.replay = " (replay: seed " + std::to_string(o.seed) + " strategy " + o.strategy;
  if (o.strategy == "pct" || o.strategy == "fair-pct") {
    r.replay += " depth " + std::to_string(o.depth) + " pct-steps " + std::to_string(o.pct_steps);
  }
  if (o.granularity != "lane") r.replay += " granularity " + o.granularity;
  if (o.memory != "sc") r.replay += " memory " + o.memory;
  if (o.memory != "sc" && o.stale_seed) r.replay += " stale-seed " + std::to_string(o.stale_seed) + " stale-pct " + std::to_string(o.stale_pct);
  r.replay += ")";
  r.block.resize(blocks);
  for (block_state& b : r.block) {
    b.warps = warps_per_block;
    b.threads = threads;
  }
  {
    std::lock_guard<std::mutex> g(allocations_mutex);
    r.shared = sections();
    for (const auto& [m, n] : allocations()) r.device.emplace_back(reinterpret_cast<std::uintptr_t>(m), reinterpret_cast<std::uintptr_t>(m) + n);
    for (const auto& [gp, g] : globals()) r.device.emplace_back(reinterpret_cast<std::uintptr_t>(gp), reinterpret_cast<std::uintptr_t>(gp) + g.size());
  }
  for (const auto& [begin, end] : r.shared) r.device.emplace_back(reinterpret_cast<std::uintptr_t>(begin), reinterpret_cast<std::uintptr_t>(end));
  if (o.memory_base) {
    const auto b = reinterpret_cast<std::uintptr_t>(o.memory_base);
    r.device.emplace_back(b, b + o.memory_bytes);
  }
  std::sort(r.device.begin(), r.device.end());
  if (!r.device.empty()) {
    r.device_lo = r.device.front().first;
    for (const auto& d : r.device) r.device_hi = std::max(r.device_hi, d.second);
  }
  r.stale_plain = so.mem == sched::memory::ptx;
  // Each block's __shared__ starts zeroed (CUDA leaves it undefined; a
  // replay needs it the same).
  for (const auto& [begin, end] : r.shared) {
    std::memset(begin, 0, static_cast<std::size_t>(end - begin));
    r.shared_bytes += static_cast<std::size_t>(end - begin);
  }
  if (blocks > 1 && r.shared_bytes) r.shared_saved.resize(blocks);
  else r.shared_bytes = 0;  // one block: nothing to swap
  sched::scheduler s(so);
  r.s = &s;

  std::vector<std::unique_ptr<warp_state>> warps;
  std::vector<std::function<void()>> bodies;
  for (unsigned b = 0; b < blocks; ++b) {
    const uint3 bidx{b % grid.x, (b / grid.x) % grid.y, b / (grid.x * grid.y)};
    for (unsigned k = 0; k < warps_per_block; ++k) {
      auto w = std::make_unique<warp_state>();
      w->run = &r;
      w->team = static_cast<team_id>(warps.size());
      w->block_linear = b;
      w->warp_in_block = k;
      w->block = &r.block[b];
      for (unsigned i = 0; i < 32; ++i) {
        const std::uint64_t t = std::uint64_t{k} * 32 + i;
        lane_state& l = w->lanes[i];
        l.exists = t < threads;
        const unsigned ti = static_cast<unsigned>(t);
        l.ids.thread_idx = {ti % block.x, (ti / block.x) % block.y, ti / (block.x * block.y)};
        l.ids.block_idx = bidx;
        l.ids.block_dim = {block.x, block.y, block.z};
        l.ids.grid_dim = {grid.x, grid.y, grid.z};
        l.ids.lane = i;
        l.ids.warp = w->team;
        if (l.exists) w->existing |= 1u << i;
      }
      warp_state* wp = w.get();
      bodies.push_back([wp] { run_warp(*wp); });
      warps.push_back(std::move(w));
    }
  }

  current_run = &r;
  sched::outcome out;
  try {
    out = s.run(std::move(bodies));
    settle();
  } catch (...) {
    settle();
    current_run = nullptr;
    current_lane = nullptr;
    detail::current_ids = nullptr;
    throw;
  }
  current_run = nullptr;
  current_lane = nullptr;
  detail::current_ids = nullptr;

  launch_result res;
  res.stop = sched::name(out.reason);
  res.steps = out.steps;
  res.switches = out.switches;
  res.fingerprint = out.fingerprint;
  res.report = out.report;
  res.faults = std::move(r.faults);
  res.replay = r.replay.substr(10, r.replay.size() - 11);
  if (out.reason == sched::stop_reason::livelock) {
    res.faults.push_back("cuda-on-cpu fault: livelock: " + std::to_string(o.livelock_steps) +
                         " scheduling points without a completed operation" +
                         (r.stop_where.empty() ? "" : "; " + r.stop_where + " was running") + r.replay);
  } else if (out.reason == sched::stop_reason::deadlock) {
    std::string waiting;
    for (const auto& w : warps) {
      if (!w->at_barrier) continue;
      waiting += (waiting.empty() ? "" : ", ") + std::string("warp ") + std::to_string(w->team) + " (block " +
                 std::to_string(w->block_linear) + ", warp " + std::to_string(w->warp_in_block) + " of it)";
    }
    res.faults.push_back("cuda-on-cpu fault: deadlock: every warp waits" +
                         (waiting.empty() ? std::string() : ": " + waiting + " at __syncthreads") +
                         (r.stop_where.empty() ? "" : "; last to wait: " + r.stop_where) + r.replay);
  }
  if (!o.quiet) {
    for (const std::string& f : res.faults) std::fprintf(stderr, "%s\n", f.c_str());
    if (res.stop != "completed") std::fprintf(stderr, "cuda-on-cpu: the run stopped (%s)\n%s", res.stop.c_str(), res.report.c_str());
  }
  last = res;
  if (whole) *whole = std::move(out);
  return res;
}

}  // namespace detail

}  // namespace gfsl::cpu

cudaError_t cudaMalloc(void** p, std::size_t bytes) {
  if (!p) return cudaErrorInvalidValue;
  *p = nullptr;
  if (bytes == 0) return cudaSuccess;
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return cudaErrorMemoryAllocation;
  std::lock_guard<std::mutex> g(gfsl::cpu::allocations_mutex);
  gfsl::cpu::allocations()[m] = bytes;
  *p = m;
  return cudaSuccess;
}

cudaError_t cudaFree(void* p) {
  if (!p) return cudaSuccess;
  std::size_t bytes = 0;
  {
    std::lock_guard<std::mutex> g(gfsl::cpu::allocations_mutex);
    auto it = gfsl::cpu::allocations().find(p);
    if (it == gfsl::cpu::allocations().end()) return cudaErrorInvalidValue;
    bytes = it->second;
    gfsl::cpu::allocations().erase(it);
  }
  munmap(p, bytes);
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  const bool ok = gfsl::cpu::last_launch().ok();
  gfsl::cpu::last = {};
  return ok ? cudaSuccess : cudaErrorLaunchFailure;
}
