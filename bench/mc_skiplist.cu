// The lock-free skiplist of Herlihy and Shavit ("The Art of Multiprocessor
// Programming", 14.4, after Fraser), one CUDA thread per operation, as in
// Misra and Chaudhuri (2012). A baseline: nothing is shared between the lanes
// of a warp, so its cost is the cost of per-thread pointer chasing on a GPU.
//
// Nodes live in one preallocated pool, handed out by an atomic bump counter
// and never reclaimed (as in the original). Node n is `stride` 32-bit words:
//   key, value, top level, next[0 .. levels)
// A link is the successor's pool index with bit 31 as the mark, so a link and
// its mark change together in one 32-bit CAS, the role of Java's
// AtomicMarkableReference and of Fraser's low pointer bit. Every node has room
// for `levels` links, which keeps the pool a plain array; the stride is a
// multiple of 16 bytes, so the key and next[0], what every step reads, share
// one 32-byte sector.
#include "mc_skiplist.hpp"

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../core/platform.hpp"
#include "../core/types.hpp"
#include "../model/sequential_map.hpp"
#include "../model/workload.hpp"
#include "bench_workload.hpp"

namespace gfsl::bench {

namespace {

using node_ref = std::uint32_t;

constexpr int max_levels = 32;
constexpr node_ref mark_bit = 0x80000000u;
constexpr node_ref no_node = 0xFFFFFFFFu;
constexpr node_ref head_node = 0;  // key 0, below every user key
constexpr node_ref tail_node = 1;  // key 0xFFFFFFFF, above every user key
constexpr std::uint64_t max_pool_nodes = mark_bit;  // an index must leave the mark bit free
constexpr int key_word = 0, value_word = 1, top_word = 2, next_word = 3;

GFSL_FN constexpr node_ref unmarked(node_ref link) { return link & ~mark_bit; }
GFSL_FN constexpr bool is_marked(node_ref link) { return (link & mark_bit) != 0; }

// ceil(log2(range)) levels: a structure holding the whole range still expects
// about one node on its top level, as with Herlihy and Shavit's MAX_LEVEL.
int levels_for(std::uint32_t range) {
  int levels = 1;
  while (levels < max_levels && (std::uint64_t{1} << levels) < range) ++levels;
  return levels;
}
std::uint32_t stride_for(int levels) { return static_cast<std::uint32_t>((next_word + levels + 3) / 4 * 4); }

// Words of the control block, one array so that a restore or a read-back is
// one copy.
enum slot : int {
  s_next_free,   // the bump counter; it passes the capacity when allocations fail
  s_exhausted,   // set by an allocation that found the pool full
  s_inserted,    // successful operations of the timed kernel: these three adjacent
  s_deleted,
  s_found,
  s_prefilled,   // successful prefill inserts
  s_insert_ops,  // insert operations among the timed ones (pool sizing)
  s_starts,      // validation: nodes starting the stretches of the bottom level
  s_keys,        // validation: unmarked keys found; s_failures follows it
  s_failures,
  slot_count
};

struct mc_pool {
  std::uint32_t* words = nullptr;
  std::uint64_t capacity = 0;  // nodes
  std::uint32_t stride = 0;    // words per node
  int levels = 1;
  unsigned long long* control = nullptr;
};

// The initial structure: prefill key i is the i-th key of a permutation of the
// range, so the prefill is a uniform random subset inserted in random order.
GFSL_FN std::uint64_t prefill_seed(std::uint64_t seed) { return seed ^ 0x6A09E667F3BCC909ull; }
GFSL_FN value_type prefill_value(std::uint64_t seed, std::uint64_t i) {
  return static_cast<value_type>(model::mix64(prefill_seed(seed) + 2 * i + 1));
}
// Tower heights come from streams of their own, so the keys and the answers do
// not depend on them.
constexpr std::uint64_t prefill_stream = 0xBB67AE8584CAA73Bull;
constexpr std::uint64_t timed_stream = 0x3C6EF372FE94F82Bull;
GFSL_FN std::uint32_t level_bits(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  return static_cast<std::uint32_t>(model::mix64(model::mix64(seed ^ stream) + i) >> 32);
}

// Trailing ones of a uniform word: P(top >= l) = 2^-l, i.e. p_key = 0.5.
__device__ int tower_top(std::uint32_t bits, int levels) {
  const int ones = bits == 0xFFFFFFFFu ? 32 : __ffs(~bits) - 1;
  return min(ones, levels - 1);
}

struct answer {
  bool ok = false;         // inserted / deleted / found
  bool exhausted = false;  // an insert found the pool full and did nothing
  value_type value = 0;    // delete: the value removed; contains: the value found
};
GFSL_FN std::uint64_t encode(const answer& a) {
  return (std::uint64_t{a.exhausted} << 33) | (std::uint64_t{a.ok} << 32) | a.value;
}
answer decode(std::uint64_t x) {
  answer a;
  a.ok = ((x >> 32) & 1) != 0;
  a.exhausted = ((x >> 33) & 1) != 0;
  a.value = static_cast<value_type>(x);
  return a;
}

using word_ref = cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>;
using counter_ref = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;

// Memory orders, as a faithful port of code written for Java's volatile
// references: a link is how a thread reaches a node, so link loads acquire and
// see the node's fields, which its inserter wrote before the CAS (a release)
// that linked it; every CAS both reads a link (acquire) and publishes one
// (release). Key, value and top never change once a node is linked, so relaxed
// loads suffice for them: the acquire of the link that led there orders them.
class mc_skiplist {
 public:
  __device__ explicit mc_skiplist(const mc_pool& p) : p_(p) {}

  __device__ key_type key(node_ref n) const { return word(n, key_word).load(cuda::std::memory_order_relaxed); }
  __device__ value_type value(node_ref n) const { return word(n, value_word).load(cuda::std::memory_order_relaxed); }
  __device__ int top(node_ref n) const { return static_cast<int>(word(n, top_word).load(cuda::std::memory_order_relaxed)); }
  __device__ node_ref next(node_ref n, int level) const {
    return word(n, next_word + level).load(cuda::std::memory_order_acquire);
  }

  // Insert-if-absent; keeps the old value, like model::sequential_map.
  __device__ answer insert(key_type k, value_type v, int top_level) const {
    node_ref preds[max_levels], succs[max_levels];
    node_ref fresh = no_node;
    for (;;) {
      if (find(k, preds, succs)) return {};  // a node taken on an earlier attempt is lost: no reclamation
      if (fresh == no_node) {
        fresh = allocate();
        if (fresh == no_node) return {false, true, 0};
        word(fresh, key_word).store(k, cuda::std::memory_order_relaxed);
        word(fresh, value_word).store(v, cuda::std::memory_order_relaxed);
        word(fresh, top_word).store(static_cast<std::uint32_t>(top_level), cuda::std::memory_order_relaxed);
      }
      // Not yet reachable: the bottom CAS below publishes these stores.
      for (int l = 0; l <= top_level; ++l) word(fresh, next_word + l).store(succs[l], cuda::std::memory_order_relaxed);
      if (cas_next(preds[0], 0, succs[0], fresh)) break;
    }
    // Linked at the bottom: the insert has taken effect; now build the tower.
    for (int l = 1; l <= top_level; ++l) {
      for (;;) {
        const node_ref succ = succs[l];
        const node_ref link = next(fresh, l);
        // A delete marks a tower top-down before the bottom: stop building.
        // This check and the re-aim of the link below follow Fraser; the
        // book's loop keeps the link set before the bottom CAS, which a
        // find() in between can leave pointing at a stale successor.
        if (is_marked(link)) return {true};
        // Only marks race with this CAS, so a failure sends us to the check above.
        if (link != succ && !cas_next(fresh, l, link, succ)) continue;
        if (cas_next(preds[l], l, succ, fresh)) break;
        find(k, preds, succs);
        if (succs[0] != fresh) return {true};  // deleted and unlinked meanwhile
      }
    }
    return {true};
  }

  __device__ answer remove(key_type k) const {
    node_ref preds[max_levels], succs[max_levels];
    if (!find(k, preds, succs)) return {};
    const node_ref victim = succs[0];
    for (int l = top(victim); l >= 1; --l) {
      node_ref succ = next(victim, l);
      while (!is_marked(succ)) {
        cas_next(victim, l, succ, succ | mark_bit);
        succ = next(victim, l);
      }
    }
    // The bottom mark is the linearization point: whoever sets it wins.
    node_ref succ = next(victim, 0);
    for (;;) {
      if (!is_marked(succ) && cas_next(victim, 0, succ, succ | mark_bit)) {
        find(k, preds, succs);  // unlinks the victim at every level
        return {true, false, value(victim)};
      }
      succ = next(victim, 0);
      if (is_marked(succ)) return {};
    }
  }

  // Wait-free: skips marked nodes without unlinking them.
  __device__ answer contains(key_type k) const {
    node_ref pred = head_node, curr = tail_node;
    for (int l = p_.levels - 1; l >= 0; --l) {
      curr = unmarked(next(pred, l));
      for (;;) {
        node_ref succ = next(curr, l);
        while (is_marked(succ)) {
          curr = unmarked(succ);
          succ = next(curr, l);
        }
        if (key(curr) >= k) break;
        pred = curr;
        curr = unmarked(succ);
      }
    }
    if (key(curr) != k) return {};
    return {true, false, value(curr)};
  }

 private:
  __device__ word_ref word(node_ref n, int w) const {
    return word_ref(p_.words[std::uint64_t{n} * p_.stride + static_cast<std::uint32_t>(w)]);
  }
  __device__ bool cas_next(node_ref n, int level, node_ref expected, node_ref desired) const {
    return word(n, next_word + level)
        .compare_exchange_strong(expected, desired, cuda::std::memory_order_acq_rel, cuda::std::memory_order_acquire);
  }

  // Relaxed: the counter only hands out distinct slots; what a node holds is
  // published by the CAS that links it. A full pool is never written past.
  __device__ node_ref allocate() const {
    const unsigned long long n = counter_ref(p_.control[s_next_free]).fetch_add(1, cuda::std::memory_order_relaxed);
    if (n < p_.capacity) return static_cast<node_ref>(n);
    counter_ref(p_.control[s_exhausted]).store(1, cuda::std::memory_order_relaxed);
    return no_node;
  }

  // Fills preds/succs at every level and unlinks the marked nodes it passes;
  // a failed unlink means pred changed or was marked, so it starts over from
  // the head. True when an unmarked node holds k (it is succs[0]).
  __device__ bool find(key_type k, node_ref* preds, node_ref* succs) const {
    for (;;) {
      bool restart = false;
      node_ref pred = head_node, curr = tail_node;
      for (int l = p_.levels - 1; l >= 0 && !restart; --l) {
        curr = unmarked(next(pred, l));
        for (;;) {
          node_ref succ = next(curr, l);
          while (is_marked(succ)) {
            if (!cas_next(pred, l, curr, unmarked(succ))) {
              restart = true;
              break;
            }
            curr = unmarked(next(pred, l));
            succ = next(curr, l);
          }
          if (restart || key(curr) >= k) break;
          pred = curr;
          curr = unmarked(succ);
        }
        preds[l] = pred;
        succs[l] = curr;
      }
      if (!restart) return key(curr) == k;
    }
  }

  mc_pool p_;
};

__device__ std::uint64_t global_thread() { return std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; }
__device__ std::uint64_t grid_threads() { return std::uint64_t{gridDim.x} * blockDim.x; }

// Adds each thread's tallies into control[first, first + N) with one global
// atomic per block and tally, so that bookkeeping at the end of the timed
// kernel does not pile every thread onto three words. Every thread of the
// block must call it.
template <int N>
__device__ void add_tallies(const unsigned long long (&mine)[N], unsigned long long* control, int first) {
  __shared__ unsigned long long block_sum[N];
  for (unsigned i = threadIdx.x; i < static_cast<unsigned>(N); i += blockDim.x) block_sum[i] = 0;
  __syncthreads();
  for (int i = 0; i < N; ++i) {
    if (mine[i] != 0) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_block>(block_sum[i])
          .fetch_add(mine[i], cuda::std::memory_order_relaxed);
    }
  }
  __syncthreads();
  for (unsigned i = threadIdx.x; i < static_cast<unsigned>(N); i += blockDim.x) {
    if (block_sum[i] != 0) counter_ref(control[first + i]).fetch_add(block_sum[i], cuda::std::memory_order_relaxed);
  }
}

__global__ void count_inserts_kernel(model::workload w, unsigned long long* control) {
  unsigned long long inserts[1] = {0};
  for (std::uint64_t j = global_thread(); j < w.ops; j += grid_threads()) {
    inserts[0] += model::operation_at(w, j).kind == op_kind::insert;
  }
  add_tallies(inserts, control, s_insert_ops);
}

__global__ void prefill_kernel(mc_pool p, key_permutation perm, std::uint64_t count, std::uint64_t seed) {
  const mc_skiplist s(p);
  unsigned long long inserted[1] = {0};
  for (std::uint64_t i = global_thread(); i < count; i += grid_threads()) {
    const answer a = s.insert(perm.key(i), prefill_value(seed, i), tower_top(level_bits(seed, prefill_stream, i), p.levels));
    inserted[0] += a.ok;
  }
  add_tallies(inserted, p.control, s_prefilled);
}

// Operation j runs on thread j mod threads (grid stride), or, ByKey, on thread
// key mod threads, so that every key's operations run in order on one thread
// and each answer is fixed (the self-check). Record stores every answer.
template <bool Record, bool ByKey>
__global__ void timed_kernel(mc_pool p, model::workload w, std::uint64_t* answers) {
  const mc_skiplist s(p);
  unsigned long long tallies[3] = {0, 0, 0};  // inserted, deleted, found
  const std::uint64_t me = global_thread(), threads = grid_threads();
  for (std::uint64_t j = ByKey ? 0 : me; j < w.ops; j += ByKey ? 1 : threads) {
    const model::operation op = model::operation_at(w, j);
    if (ByKey && op.key % threads != me) continue;
    answer a;
    switch (op.kind) {
      case op_kind::insert:
        a = s.insert(op.key, op.value, tower_top(level_bits(w.seed, timed_stream, j), p.levels));
        tallies[0] += a.ok;
        break;
      case op_kind::remove:
        a = s.remove(op.key);
        tallies[1] += a.ok;
        break;
      case op_kind::contains:
        a = s.contains(op.key);
        tallies[2] += a.ok;
        break;
    }
    if constexpr (Record) answers[j] = encode(a);
  }
  add_tallies(tallies, p.control, s_inserted);
}

// Validation, after the run. The bottom level is checked in stretches, in
// parallel: one thread lists the nodes on level `level` whose bottom link is
// unmarked (in a quiescent, correct structure those are exactly the nodes of
// that level still in the set, so each lies on the bottom level), and then a
// thread per stretch walks the bottom level from one listed node to the next.
// Every walk is bounded by the nodes used and stays inside them, so a corrupt
// structure is reported, never followed out of bounds or round a cycle.
__global__ void list_level_kernel(mc_pool p, int level, std::uint64_t used, std::uint32_t* starts) {
  const mc_skiplist s(p);
  unsigned long long count = 0, failures = 0;
  key_type prev = key_neg_inf;
  node_ref n = unmarked(s.next(head_node, level));
  for (std::uint64_t steps = 0; n != tail_node; ++steps) {
    if (n >= used || steps >= used) {
      ++failures;
      break;
    }
    const key_type k = s.key(n);
    if (k < prev || s.top(n) < level) ++failures;
    prev = k;
    if (!is_marked(s.next(n, 0))) starts[count++] = n;
    n = unmarked(s.next(n, level));
  }
  counter_ref(p.control[s_starts]).store(count, cuda::std::memory_order_relaxed);
  counter_ref(p.control[s_failures]).fetch_add(failures, cuda::std::memory_order_relaxed);
}

__global__ void walk_stretches_kernel(mc_pool p, const std::uint32_t* starts, std::uint64_t n_starts, std::uint64_t used) {
  const mc_skiplist s(p);
  unsigned long long tallies[2] = {0, 0};  // keys, failures
  for (std::uint64_t i = global_thread(); i <= n_starts; i += grid_threads()) {
    const node_ref begin = i == 0 ? head_node : starts[i - 1];
    const node_ref end = i == n_starts ? tail_node : starts[i];
    if (i != 0) ++tallies[0];  // listed for its unmarked bottom link
    node_ref curr = begin;
    for (std::uint64_t steps = 0;; ++steps) {
      const node_ref succ = unmarked(s.next(curr, 0));
      if (succ >= used || steps >= used) {
        ++tallies[1];
        break;
      }
      if (s.key(succ) <= s.key(curr)) ++tallies[1];  // marked nodes still linked keep their place too
      if (succ == end) break;
      if (succ == tail_node) {
        ++tallies[1];
        break;
      }
      if (!is_marked(s.next(succ, 0))) ++tallies[0];
      curr = succ;
    }
  }
  add_tallies(tallies, p.control, s_keys);
}

// ---- Host side ----

std::string cuda_failure(const char* what, cudaError_t e) {
  return std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e);
}
#define MC_CUDA(call)                                            \
  do {                                                           \
    const cudaError_t mc_e_ = (call);                            \
    if (mc_e_ != cudaSuccess) return cuda_failure(#call, mc_e_); \
  } while (0)

template <class T>
class device_array {
 public:
  device_array() = default;
  ~device_array() {
    if (ptr_) cudaFree(ptr_);
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  cudaError_t allocate(std::size_t n) { return cudaMalloc(&ptr_, std::max<std::size_t>(n, 1) * sizeof(T)); }
  T* get() const { return ptr_; }

 private:
  T* ptr_ = nullptr;
};

struct event_pair {
  cudaEvent_t start = nullptr, stop = nullptr;
  event_pair() = default;
  ~event_pair() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;
};

model::workload workload_of(const mc_config& c) {
  model::workload w;
  w.ops = c.ops;
  w.insert_pct = c.insert_pct;
  w.delete_pct = c.delete_pct;
  w.contains_pct = c.contains_pct;
  w.range = c.range;
  w.prefill = c.prefill;
  w.seed = c.seed;
  return w;
}

std::uint64_t prefill_count_of(const mc_config& c) {
  return static_cast<std::uint64_t>(std::llround(c.prefill * static_cast<double>(c.range)));
}

std::string check_config(const mc_config& c) {
  if (c.range < 1 || c.range > max_user_key) return "range must be in [1, " + std::to_string(max_user_key) + "]";
  if (c.insert_pct < 0 || c.delete_pct < 0 || c.contains_pct < 0 || c.insert_pct + c.delete_pct + c.contains_pct != 100) {
    return "mix " + std::to_string(c.insert_pct) + "," + std::to_string(c.delete_pct) + "," +
           std::to_string(c.contains_pct) + " must be three non-negative percentages adding up to 100";
  }
  if (!(c.prefill >= 0.0 && c.prefill <= 1.0)) return "prefill must be a fraction in [0, 1]";
  if (c.threads_per_block < 32 || c.threads_per_block > 1024 || c.threads_per_block % 32 != 0) {
    return "threads per block must be a multiple of 32 in [32, 1024]";
  }
  if (c.repeats < 1) return "repeats must be at least 1";
  if (c.pool_nodes == 1) return "a pool needs at least 2 nodes (the sentinels)";
  return {};
}

using timed_fn = void (*)(mc_pool, model::workload, std::uint64_t*);

// What the self-check needs beyond a benchmark run.
struct run_request {
  mc_config cfg;
  int blocks = 0;        // timed kernel; 0: every block that fits on the device at once, at most one op per thread
  int threads = 0;       // timed kernel; 0: cfg.threads_per_block
  bool record = false;   // every answer
  bool by_key = false;   // every key's operations on one thread (implies record)
  bool keep_final = false;  // copy the set back: (key, value) of each unmarked bottom-level node
};

struct run_output {
  mc_result result;
  std::uint64_t inserted = 0, deleted = 0, found = 0;
  std::vector<std::uint64_t> answers;  // encode(answer) per operation
  std::vector<std::pair<key_type, value_type>> final_entries;
};

// Walks the bottom level of the structure after the run and sets
// final_keys_expected_check_failures; the error line when the check fails.
std::string validate(const mc_pool& pool, std::uint64_t used, std::uint64_t expected_keys, run_output& out) {
  // A level with about 8K-16K nodes: short enough for one thread to list,
  // and stretches short enough to walk in parallel.
  int level = 0;
  const std::uint64_t data_nodes = used - 2;
  while (level + 1 < pool.levels && (data_nodes >> (level + 1)) >= 8192) ++level;
  device_array<std::uint32_t> starts;
  MC_CUDA(starts.allocate(used));
  MC_CUDA(cudaMemset(pool.control + s_starts, 0, 3 * sizeof(unsigned long long)));
  list_level_kernel<<<1, 1>>>(pool, level, used, starts.get());
  MC_CUDA(cudaGetLastError());
  unsigned long long n_starts = 0;
  MC_CUDA(cudaMemcpy(&n_starts, pool.control + s_starts, sizeof n_starts, cudaMemcpyDeviceToHost));
  const int threads = 256;
  const auto blocks = static_cast<unsigned>((n_starts + 1 + threads - 1) / threads);
  walk_stretches_kernel<<<blocks, threads>>>(pool, starts.get(), n_starts, used);
  MC_CUDA(cudaGetLastError());
  unsigned long long found[2] = {0, 0};  // keys, failures
  MC_CUDA(cudaMemcpy(found, pool.control + s_keys, sizeof found, cudaMemcpyDeviceToHost));
  const std::uint64_t diff = found[0] > expected_keys ? found[0] - expected_keys : expected_keys - found[0];
  out.result.final_keys_expected_check_failures = found[1] + diff;
  if (found[1] != 0) {
    return "final structure broken: " + std::to_string(found[1]) +
           " order violations or broken stretches on the bottom level (checked from level " + std::to_string(level) + ")";
  }
  if (diff != 0) {
    return "final structure holds " + std::to_string(found[0]) + " keys, expected " + std::to_string(expected_keys) +
           " (prefill + successful inserts - successful deletes)";
  }
  return {};
}

std::string run_impl(const run_request& q, run_output& out) {
  const mc_config& c = q.cfg;
  mc_result& r = out.result;
  if (std::string why = check_config(c); !why.empty()) return why;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    return "no CUDA device";
  }
  int device = 0, sms = 0;
  MC_CUDA(cudaGetDevice(&device));
  MC_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));

  // The figures of the benchmark kernel, whatever this run launches.
  cudaFuncAttributes attr{};
  MC_CUDA(cudaFuncGetAttributes(&attr, timed_kernel<false, false>));
  r.registers = attr.numRegs;
  r.local_bytes = static_cast<int>(attr.localSizeBytes);
  MC_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, timed_kernel<false, false>, c.threads_per_block, 0));
  int max_threads_per_sm = 0;
  MC_CUDA(cudaDeviceGetAttribute(&max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  r.max_warps_per_sm = max_threads_per_sm / 32;

  const timed_fn kernel =
      q.by_key ? timed_kernel<true, true> : q.record ? timed_kernel<true, false> : timed_kernel<false, false>;
  const int threads = q.threads ? q.threads : c.threads_per_block;
  int resident = 0;
  MC_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, threads, 0));
  if (resident == 0) {
    return "the timed kernel does not fit " + std::to_string(threads) + " threads per block on an SM (" +
           std::to_string(r.registers) + " registers per thread)";
  }
  const std::uint64_t blocks_for_ops = std::max<std::uint64_t>(1, (c.ops + threads - 1) / threads);
  const auto blocks = q.blocks ? static_cast<unsigned>(q.blocks)
                               : static_cast<unsigned>(std::min<std::uint64_t>(
                                     blocks_for_ops, static_cast<std::uint64_t>(resident) * static_cast<std::uint64_t>(sms)));

  const model::workload w = workload_of(c);
  const std::uint64_t prefill_count = prefill_count_of(c);
  device_array<unsigned long long> control;
  MC_CUDA(control.allocate(slot_count));
  MC_CUDA(cudaMemset(control.get(), 0, slot_count * sizeof(unsigned long long)));

  // Each insert takes at most one node (a failed attempt keeps its node for
  // the next), so this bound is exact and a default pool never fills.
  count_inserts_kernel<<<static_cast<unsigned>(std::min<std::uint64_t>(blocks_for_ops, std::uint64_t{8} * sms)), 256>>>(
      w, control.get());
  MC_CUDA(cudaGetLastError());
  unsigned long long insert_ops = 0;
  MC_CUDA(cudaMemcpy(&insert_ops, control.get() + s_insert_ops, sizeof insert_ops, cudaMemcpyDeviceToHost));

  mc_pool pool;
  pool.levels = levels_for(c.range);
  pool.stride = stride_for(pool.levels);
  pool.capacity = c.pool_nodes ? c.pool_nodes : 2 + prefill_count + insert_ops;
  pool.control = control.get();
  r.pool_nodes = pool.capacity;
  if (pool.capacity > max_pool_nodes) {
    return "a pool of " + std::to_string(pool.capacity) + " nodes is past the 2^31 that 31-bit links can name";
  }
  const std::uint64_t node_bytes = std::uint64_t{pool.stride} * sizeof(std::uint32_t);
  device_array<std::uint32_t> words;
  if (const cudaError_t e = words.allocate(pool.capacity * pool.stride); e != cudaSuccess) {
    cudaGetLastError();
    return "cannot allocate the node pool, " + std::to_string(pool.capacity) + " nodes of " + std::to_string(node_bytes) +
           " bytes: " + cudaGetErrorString(e);
  }
  pool.words = words.get();

  // The sentinels: every level of the head leads to the tail; the tail's
  // links are never followed (its key stops every search) but point to itself.
  {
    std::vector<std::uint32_t> sentinels(2 * std::size_t{pool.stride}, 0);
    std::uint32_t* head = sentinels.data();
    std::uint32_t* tail = head + pool.stride;
    head[key_word] = key_neg_inf;
    tail[key_word] = key_empty;
    head[top_word] = tail[top_word] = static_cast<std::uint32_t>(pool.levels - 1);
    for (int l = 0; l < pool.levels; ++l) head[next_word + l] = tail[next_word + l] = tail_node;
    MC_CUDA(cudaMemcpy(pool.words, sentinels.data(), sentinels.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
    const unsigned long long first_free = 2;
    MC_CUDA(cudaMemcpy(control.get() + s_next_free, &first_free, sizeof first_free, cudaMemcpyHostToDevice));
  }

  if (prefill_count != 0) {
    const auto prefill_blocks = static_cast<unsigned>(std::min<std::uint64_t>(
        (prefill_count + c.threads_per_block - 1) / c.threads_per_block, std::uint64_t{8} * sms));
    prefill_kernel<<<prefill_blocks, c.threads_per_block>>>(pool, key_permutation(c.range, prefill_seed(c.seed)),
                                                            prefill_count, c.seed);
    MC_CUDA(cudaGetLastError());
  }
  unsigned long long after_prefill[slot_count];
  MC_CUDA(cudaMemcpy(after_prefill, control.get(), sizeof after_prefill, cudaMemcpyDeviceToHost));
  if (after_prefill[s_exhausted]) {
    return "node pool exhausted during the prefill: " + std::to_string(pool.capacity) + " nodes for " +
           std::to_string(prefill_count) + " prefill keys";
  }
  if (after_prefill[s_prefilled] != prefill_count) {
    return "the prefill inserted " + std::to_string(after_prefill[s_prefilled]) + " of its " +
           std::to_string(prefill_count) + " distinct keys";
  }
  const unsigned long long used_by_prefill = after_prefill[s_next_free];

  // Repeats restore the prefilled structure: the nodes in use after the
  // prefill (sentinels included) and the bump counter. Nodes a timed run took
  // past that are unreachable from the restored links and are rewritten when
  // handed out again.
  device_array<std::uint32_t> saved;
  const std::size_t saved_bytes = used_by_prefill * node_bytes;
  if (c.repeats > 1) {
    if (const cudaError_t e = saved.allocate(used_by_prefill * pool.stride); e != cudaSuccess) {
      cudaGetLastError();
      return std::string("cannot allocate the copy of the prefilled structure for the repeats: ") + cudaGetErrorString(e);
    }
    MC_CUDA(cudaMemcpy(saved.get(), pool.words, saved_bytes, cudaMemcpyDeviceToDevice));
  }

  device_array<std::uint64_t> answers;
  if (q.record || q.by_key) MC_CUDA(answers.allocate(c.ops));
  event_pair ev;
  MC_CUDA(cudaEventCreate(&ev.start));
  MC_CUDA(cudaEventCreate(&ev.stop));
  std::string exhausted;
  for (int rep = 0; rep < c.repeats; ++rep) {
    if (rep > 0) {
      MC_CUDA(cudaMemcpy(pool.words, saved.get(), saved_bytes, cudaMemcpyDeviceToDevice));
      MC_CUDA(cudaMemcpy(control.get() + s_next_free, &used_by_prefill, sizeof used_by_prefill, cudaMemcpyHostToDevice));
    }
    MC_CUDA(cudaMemset(control.get() + s_exhausted, 0, (s_found - s_exhausted + 1) * sizeof(unsigned long long)));
    MC_CUDA(cudaEventRecord(ev.start));
    kernel<<<blocks, threads>>>(pool, w, answers.get());
    MC_CUDA(cudaGetLastError());
    MC_CUDA(cudaEventRecord(ev.stop));
    MC_CUDA(cudaEventSynchronize(ev.stop));
    float ms = 0;
    MC_CUDA(cudaEventElapsedTime(&ms, ev.start, ev.stop));
    r.ms.push_back(ms);
    unsigned long long flag = 0;
    MC_CUDA(cudaMemcpy(&flag, control.get() + s_exhausted, sizeof flag, cudaMemcpyDeviceToHost));
    if (flag && exhausted.empty()) {
      exhausted = "node pool exhausted in timed run " + std::to_string(rep + 1) + ": " + std::to_string(pool.capacity) +
                  " nodes; the inserts that found it full did nothing";
    }
  }

  unsigned long long after[slot_count];
  MC_CUDA(cudaMemcpy(after, control.get(), sizeof after, cudaMemcpyDeviceToHost));
  const std::uint64_t used = std::min<std::uint64_t>(after[s_next_free], pool.capacity);
  r.nodes_used = used;
  out.inserted = after[s_inserted];
  out.deleted = after[s_deleted];
  out.found = after[s_found];

  // The check still runs after a full pool: the inserts it refused must have
  // left the structure whole.
  std::string broken = validate(pool, used, prefill_count + out.inserted - out.deleted, out);
  if (!exhausted.empty()) return broken.empty() ? exhausted : exhausted + "; and " + broken;
  if (!broken.empty()) return broken;

  if (q.record || q.by_key) {
    out.answers.resize(c.ops);
    MC_CUDA(cudaMemcpy(out.answers.data(), answers.get(), c.ops * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  }
  if (q.keep_final) {
    std::vector<std::uint32_t> h(used * pool.stride);
    MC_CUDA(cudaMemcpy(h.data(), pool.words, h.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    auto at = [&](node_ref n, int field) { return h[std::size_t{n} * pool.stride + static_cast<std::size_t>(field)]; };
    // validate() has vouched for the bottom level: sorted, in bounds, ends at the tail.
    for (node_ref n = unmarked(at(head_node, next_word)); n != tail_node; n = unmarked(at(n, next_word))) {
      if (!is_marked(at(n, next_word))) out.final_entries.emplace_back(at(n, key_word), at(n, value_word));
    }
  }
  return {};
}

// ---- Self-check ----

model::sequential_map prefilled_map(const mc_config& c) {
  model::sequential_map m;
  const key_permutation perm(c.range, prefill_seed(c.seed));
  for (std::uint64_t i = 0, n = prefill_count_of(c); i < n; ++i) m.insert(perm.key(i), prefill_value(c.seed, i));
  return m;
}

std::string describe(const answer& a) {
  if (a.exhausted) return "pool exhausted";
  return a.ok ? "true, value " + std::to_string(a.value) : "false";
}

mc_config small_config(int insert_pct, int delete_pct, int contains_pct, std::uint64_t ops) {
  mc_config c;
  c.range = 1000;
  c.ops = ops;
  c.insert_pct = insert_pct;
  c.delete_pct = delete_pct;
  c.contains_pct = contains_pct;
  c.seed = 0x5EED0000u + static_cast<std::uint64_t>(insert_pct);
  return c;
}

std::string mix_name(const mc_config& c) {
  return std::to_string(c.insert_pct) + "/" + std::to_string(c.delete_pct) + "/" + std::to_string(c.contains_pct);
}

// Where each key's operations run in program order on one thread, every
// answer and the final set are those of the sequential map.
std::string check_exactly(const run_request& q, const std::string& name) {
  run_output o;
  if (std::string e = run_impl(q, o); !e.empty()) return name + ": " + e;
  model::sequential_map m = prefilled_map(q.cfg);
  const model::workload w = workload_of(q.cfg);
  for (std::uint64_t j = 0; j < q.cfg.ops; ++j) {
    const model::operation op = model::operation_at(w, j);
    const model::outcome want = m.apply(op);
    const answer got = decode(o.answers[j]);
    if (got.exhausted || got.ok != want.ok || got.value != want.value) {
      return name + ": operation " + std::to_string(j) + " " + model::describe(op) + " answered " + describe(got) +
             ", the sequential map says " + describe(answer{want.ok, false, want.value});
    }
  }
  if (o.final_entries != m.entries()) {
    return name + ": the final set (" + std::to_string(o.final_entries.size()) +
           " keys) differs from the sequential map's (" + std::to_string(m.size()) + " keys)";
  }
  return {};
}

// Where the order of a key's operations is left to the race: per key, the
// successful inserts and deletes must account for the final presence, and
// every value returned must be one that was put under that key.
std::string check_per_key(const run_request& q, const std::string& name) {
  run_output o;
  if (std::string e = run_impl(q, o); !e.empty()) return name + ": " + e;
  const std::size_t keys = std::size_t{q.cfg.range} + 1;
  std::vector<long long> balance(keys, 0);  // prefill + inserts - deletes
  std::vector<std::vector<value_type>> values(keys);
  for (const auto& [k, v] : prefilled_map(q.cfg).entries()) {
    balance[k] = 1;
    values[k].push_back(v);
  }
  const model::workload w = workload_of(q.cfg);
  for (std::uint64_t j = 0; j < q.cfg.ops; ++j) {
    const model::operation op = model::operation_at(w, j);
    const answer a = decode(o.answers[j]);
    if (a.exhausted) return name + ": operation " + std::to_string(j) + " found the pool full";
    if (op.kind == op_kind::insert && a.ok) {
      ++balance[op.key];
      values[op.key].push_back(op.value);
    }
    if (op.kind == op_kind::remove && a.ok) --balance[op.key];
  }
  auto put = [&](key_type k, value_type v) { return std::find(values[k].begin(), values[k].end(), v) != values[k].end(); };
  for (std::uint64_t j = 0; j < q.cfg.ops; ++j) {
    const model::operation op = model::operation_at(w, j);
    const answer a = decode(o.answers[j]);
    if (op.kind != op_kind::insert && a.ok && !put(op.key, a.value)) {
      return name + ": operation " + std::to_string(j) + " " + model::describe(op) + " returned value " +
             std::to_string(a.value) + ", never put under that key";
    }
  }
  std::vector<long long> present(keys, 0);
  for (const auto& [k, v] : o.final_entries) {
    if (k < 1 || k > q.cfg.range) return name + ": the final set holds key " + std::to_string(k) + ", outside the range";
    ++present[k];
    if (!put(k, v)) return name + ": key " + std::to_string(k) + " ends with value " + std::to_string(v) + ", never put under it";
  }
  for (std::size_t k = 1; k < keys; ++k) {
    if (present[k] != balance[k]) {
      return name + ": key " + std::to_string(k) + " is present " + std::to_string(present[k]) +
             " times at the end, but prefill + successful inserts - successful deletes = " + std::to_string(balance[k]);
    }
  }
  return {};
}

}  // namespace

mc_result run_mc_skiplist(const mc_config& c) {
  run_request q;
  q.cfg = c;
  run_output o;
  const std::string e = run_impl(q, o);
  o.result.ok = e.empty();
  o.result.error = e;
  return o.result;
}

std::string mc_self_check() {
  const int mixes[][3] = {{50, 50, 0}, {10, 10, 80}};
  for (const auto& mix : mixes) {
    // One thread, so every answer is fixed. Fewer operations: alone, a
    // thread waits out every load's latency.
    run_request q;
    q.cfg = small_config(mix[0], mix[1], mix[2], 30000);
    q.blocks = 1;
    q.threads = 1;
    q.record = q.keep_final = true;
    if (std::string e = check_exactly(q, "one thread, " + mix_name(q.cfg)); !e.empty()) return e;

    // A thread per key, all at once: neighbouring keys race on the same links.
    q.cfg.ops = 100000;
    q.blocks = 2;
    q.threads = 512;
    q.by_key = true;
    if (std::string e = check_exactly(q, "a thread per key, " + mix_name(q.cfg)); !e.empty()) return e;

    // An operation per thread: operations on one key race with each other.
    q.blocks = q.threads = 0;
    q.by_key = false;
    if (std::string e = check_per_key(q, "an operation per thread, " + mix_name(q.cfg)); !e.empty()) return e;
  }
  {
    run_request q;
    q.cfg = small_config(100, 0, 0, 100000);
    q.cfg.prefill = 0.0;
    q.record = q.keep_final = true;
    if (std::string e = check_per_key(q, "inserts into an empty structure"); !e.empty()) return e;
  }

  // Repeats: each must start from the prefilled structure, or the key count
  // checked after the last one would drift.
  mc_config c = small_config(50, 50, 0, 100000);
  c.repeats = 3;
  mc_result r = run_mc_skiplist(c);
  if (!r.ok) return "three repeats: " + r.error;
  if (r.ms.size() != 3) return "three repeats: " + std::to_string(r.ms.size()) + " timings";

  // A pool too small for the timed inserts, then for the prefill: one clear
  // error, no fault, and the device still usable.
  c.repeats = 1;
  const std::uint64_t prefill = prefill_count_of(c);
  c.pool_nodes = 2 + prefill + 10;
  r = run_mc_skiplist(c);
  if (r.ok || r.error.find("node pool exhausted in timed run") != 0 || r.final_keys_expected_check_failures != 0) {
    return "a pool of " + std::to_string(c.pool_nodes) + " nodes for the timed run: " + (r.ok ? "not reported" : r.error);
  }
  c.pool_nodes = 2 + prefill / 2;
  r = run_mc_skiplist(c);
  if (r.ok || r.error.find("node pool exhausted during the prefill") != 0) {
    return "a pool of " + std::to_string(c.pool_nodes) + " nodes for the prefill: " + (r.ok ? "not reported" : r.error);
  }
  c.pool_nodes = 0;
  r = run_mc_skiplist(c);
  if (!r.ok) return "a run after the full pools: " + r.error;
  return {};
}

}  // namespace gfsl::bench
