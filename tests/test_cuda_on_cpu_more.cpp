// include/gfsl/cpu/: block barriers and per-block __shared__, the newer warp
// collectives, cooperative groups, libcu++'s atomics and the PTX shadows on
// the memory model, virtual clocks, __device__ globals, and the faults a
// bad kernel must give as one line (never a hang or a crash).
#include "gfsl/cpu/cuda.hpp"
#include "gfsl/cpu/atomic.hpp"
#include "gfsl/cpu/cooperative_groups.hpp"
#include "gfsl/cpu/ptx.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cg = cooperative_groups;

namespace {

gfsl::cpu::options quiet(std::uint64_t seed = 1, const char* strategy = "random") {
  gfsl::cpu::options o;
  o.seed = seed;
  o.strategy = strategy;
  o.quiet = true;
  o.pct_steps = 400;
  return o;
}

std::string first_fault(const gfsl::cpu::launch_result& r) { return r.faults.empty() ? "no fault (" + r.stop + ")" : r.faults[0]; }

bool any_fault_has(const gfsl::cpu::launch_result& r, const std::string& text) {
  for (const std::string& f : r.faults) {
    if (f.find(text) != std::string::npos) return true;
  }
  return false;
}

// --- __syncthreads and __shared__ -------------------------------------------

// Each thread writes its slot, the block meets, each reads another warp's
// slot: the barrier makes every write visible first. With a __syncwarp in
// its place, a warp may read before another has written.
__global__ void rotate(unsigned* out) {
  __shared__ unsigned slot[128];
  const unsigned t = threadIdx.x;
  slot[t] = t + 1000 * (blockIdx.x + 1);
  __syncthreads();
  out[blockIdx.x * 128 + t] = slot[(t + 37) % 128];
}
__global__ void rotate_unsynced(unsigned* out) {
  __shared__ unsigned slot[128];
  const unsigned t = threadIdx.x;
  slot[t] = t + 1000 * (blockIdx.x + 1);
  __syncwarp();
  out[blockIdx.x * 128 + t] = slot[(t + 37) % 128];
}

TEST(CudaOnCpuBlock, SyncthreadsMakesTheBlocksWritesVisibleAndSharedIsPerBlock) {
  bool unsynced_saw_a_gap = false;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    std::vector<unsigned> out(3 * 128, 0);
    const auto r = gfsl::cpu::launch(quiet(seed, seed % 2 ? "pct" : "random"), 3, 128, rotate, out.data());
    ASSERT_TRUE(r.ok()) << first_fault(r);
    for (unsigned b = 0; b < 3; ++b) {
      for (unsigned t = 0; t < 128; ++t) ASSERT_EQ(out[b * 128 + t], (t + 37) % 128 + 1000 * (b + 1)) << "seed " << seed;
    }
    std::vector<unsigned> raw(3 * 128, 0);
    const auto u = gfsl::cpu::launch(quiet(seed, "random"), 3, 128, rotate_unsynced, raw.data());
    ASSERT_TRUE(u.ok()) << first_fault(u);
    for (unsigned i = 0; i < raw.size(); ++i) unsynced_saw_a_gap = unsynced_saw_a_gap || raw[i] == 0;
  }
  EXPECT_TRUE(unsynced_saw_a_gap) << "without the barrier no warp ever read an unwritten slot";
}

template <int N>
__global__ void templated_shared(unsigned* out) {
  __shared__ unsigned slot[N];
  slot[threadIdx.x % N] = blockIdx.x;
  out[threadIdx.x] = slot[0];
}

TEST(CudaOnCpuBlock, SharedInATemplateOverSeveralBlocksIsAFault) {
  std::vector<unsigned> out(32, 0);
  EXPECT_TRUE(gfsl::cpu::launch(quiet(), 1, 32, templated_shared<4>, out.data()).ok());
  const auto r = gfsl::cpu::launch(quiet(), 2, 32, templated_shared<4>, out.data());
  ASSERT_FALSE(r.faults.empty());
  EXPECT_TRUE(any_fault_has(r, "__shared__ in a template (void {anonymous}::templated_shared(unsigned int*) [with int N = 4]) in a "
                               "launch of 2 blocks"))
      << first_fault(r);
}

__global__ void counts(int* out) {
  const unsigned t = threadIdx.x;
  const int c = __syncthreads_count(t % 3 == 0);
  const int all = __syncthreads_and(t < 200);
  const int none = __syncthreads_and(t != 5);
  const int any = __syncthreads_or(t == 77);
  if (t == 0) {
    out[0] = c;
    out[1] = all;
    out[2] = none;
    out[3] = any;
  }
}

TEST(CudaOnCpuBlock, SyncthreadsCountAndOr) {
  std::vector<int> out(4, -1);
  const auto r = gfsl::cpu::launch(quiet(9, "pct"), 1, 128, counts, out.data());
  ASSERT_TRUE(r.ok()) << first_fault(r);
  EXPECT_EQ(out[0], 43);
  EXPECT_EQ(out[1], 1);
  EXPECT_EQ(out[2], 0);
  EXPECT_EQ(out[3], 1);
}

__global__ void early_return(unsigned* out) {
  if (threadIdx.x == 40) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}

TEST(CudaOnCpuBlock, AThreadThatExitsBeforeTheBarrierIsAFault) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    std::vector<unsigned> out(96, 0);
    const auto r = gfsl::cpu::launch(quiet(seed), 1, 96, early_return, out.data());
    ASSERT_EQ(r.faults.size(), 1u) << first_fault(r);
    const std::string& f = r.faults[0];
    // Either the exit came first (then a warp arriving names it), or a
    // warp waited first (then the exit names the waiting threads).
    EXPECT_TRUE(f.find("has exited (every thread of block 0 must arrive)") != std::string::npos ||
                f.find("exited while") != std::string::npos)
        << f;
    EXPECT_NE(f.find("(replay: seed " + std::to_string(seed) + " strategy random)"), std::string::npos) << f;
  }
}

__global__ void split_barrier(unsigned* out) {
  if (threadIdx.x % 32 < 16) __syncthreads();
  else __syncwarp();
  out[threadIdx.x] = 1;
}

TEST(CudaOnCpuBlock, HalfAWarpAtTheBarrierIsADivergentCollective) {
  std::vector<unsigned> out(64, 0);
  const auto r = gfsl::cpu::launch(quiet(), 1, 64, split_barrier, out.data());
  EXPECT_TRUE(any_fault_has(r, "lane 0 at test_cuda_on_cpu_more.cpp")) << first_fault(r);
  EXPECT_TRUE(any_fault_has(r, "__syncthreads with mask 0xffffffff while lane 16 is at __syncwarp")) << first_fault(r);
}

// --- __match_all_sync, __reduce_*_sync --------------------------------------

__global__ void matches(unsigned* out) {
  const unsigned lane = threadIdx.x;
  int pred = -1;
  out[lane * 8 + 0] = __match_all_sync(0xFFFFFFFFu, 7u, &pred);
  out[lane * 8 + 1] = static_cast<unsigned>(pred);
  out[lane * 8 + 2] = __match_all_sync(0xFFFFFFFFu, lane / 16, &pred);
  out[lane * 8 + 3] = static_cast<unsigned>(pred);
  out[lane * 8 + 4] = __reduce_add_sync(0xFFFFFFFFu, lane);
  out[lane * 8 + 5] = static_cast<unsigned>(__reduce_min_sync(0xFFFFFFFFu, static_cast<int>(lane) - 3));
  out[lane * 8 + 6] = __reduce_max_sync(0x0000FFFFu << (lane / 16 * 16), lane);
  out[lane * 8 + 7] = __reduce_or_sync(0xFFFFFFFFu, 1u << lane) ^ __reduce_xor_sync(0xFFFFFFFFu, 1u) ^ __reduce_and_sync(0xFFFFFFFFu, ~0u);
}

TEST(CudaOnCpuWarp, MatchAllAndReductions) {
  std::vector<unsigned> out(32 * 8, 0);
  const auto r = gfsl::cpu::launch(quiet(2), 1, 32, matches, out.data());
  ASSERT_TRUE(r.ok()) << first_fault(r);
  for (unsigned lane = 0; lane < 32; ++lane) {
    const unsigned* o = out.data() + lane * 8;
    EXPECT_EQ(o[0], 0xFFFFFFFFu);
    EXPECT_EQ(o[1], 1u);
    EXPECT_EQ(o[2], 0u);
    EXPECT_EQ(o[3], 0u);
    EXPECT_EQ(o[4], 496u);
    EXPECT_EQ(static_cast<int>(o[5]), -3);
    EXPECT_EQ(o[6], lane < 16 ? 15u : 31u);
    EXPECT_EQ(o[7], 0xFFFFFFFFu ^ 0u ^ 0xFFFFFFFFu);
  }
}

__global__ void mixed_reduce(unsigned* out) {
  const unsigned lane = threadIdx.x;
  out[lane] = lane < 4 ? __reduce_add_sync(0xFFu, lane) : lane < 8 ? __reduce_min_sync(0xFFu, lane) : 0u;
}

TEST(CudaOnCpuWarp, ReductionsOfDifferentOperationsAreDivergent) {
  std::vector<unsigned> out(32, 0);
  const auto r = gfsl::cpu::launch(quiet(), 1, 32, mixed_reduce, out.data());
  // Lanes 0..3 and 4..7 name one another at different reductions.
  EXPECT_TRUE(any_fault_has(r, "__reduce_add_sync with mask 0x000000ff")) << first_fault(r);
  EXPECT_TRUE(any_fault_has(r, "is at __reduce_min_sync with mask 0x000000ff")) << first_fault(r);
}

// --- cooperative groups -----------------------------------------------------

template <unsigned N>
__global__ void tiles(unsigned* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<N> tile = cg::tiled_partition<N>(block);
  const unsigned t = block.thread_rank();
  unsigned* o = out + t * 10;
  // Tiles of one warp meet apart: the odd tiles sync twice more.
  if (tile.meta_group_rank() % 2) {
    tile.sync();
    tile.sync();
  }
  o[0] = tile.thread_rank();
  o[1] = tile.size();
  o[2] = tile.meta_group_rank();
  o[3] = tile.shfl(t * 10, 0);
  o[4] = tile.shfl_down(t, 1);
  o[5] = tile.ballot(tile.thread_rank() % 2 == 0);
  o[6] = static_cast<unsigned>(tile.any(tile.thread_rank() == N - 1)) | static_cast<unsigned>(tile.all(true)) << 1 |
         static_cast<unsigned>(tile.all(tile.thread_rank() > 0)) << 2;
  o[7] = tile.match_any(tile.thread_rank() / 2);
  o[8] = tile.shfl_xor(t, N > 1 ? 1u : 0u);
  o[9] = tile.meta_group_size();
  block.sync();
}

template <unsigned N>
void check_tiles() {
  const unsigned threads = 64;
  std::vector<unsigned> out(threads * 10, 0);
  const auto r = gfsl::cpu::launch(quiet(N, "pct"), 1, threads, tiles<N>, out.data());
  ASSERT_TRUE(r.ok()) << "N " << N << ": " << first_fault(r);
  const unsigned even = N == 1 ? 1u : 0x55555555u & ((N == 32 ? 0 : 1u << N) - 1u);
  for (unsigned t = 0; t < threads; ++t) {
    const unsigned* o = out.data() + t * 10;
    const unsigned rank = t % N;
    SCOPED_TRACE("N " + std::to_string(N) + " thread " + std::to_string(t));
    EXPECT_EQ(o[0], rank);
    EXPECT_EQ(o[1], N);
    EXPECT_EQ(o[2], t / N);
    EXPECT_EQ(o[3], (t - rank) * 10);
    EXPECT_EQ(o[4], rank + 1 < N ? t + 1 : t);
    EXPECT_EQ(o[5], even);
    EXPECT_EQ(o[6], 1u | 2u | (N == 1 ? 0u : 0u));
    const unsigned pair = N == 1 ? 1u : 3u << (rank / 2 * 2);
    EXPECT_EQ(o[7], pair);
    EXPECT_EQ(o[8], N == 1 ? t : t ^ 1u);
    EXPECT_EQ(o[9], threads / N);
  }
}

TEST(CudaOnCpuGroups, TilesOfEverySizeAndSeveralPerWarp) {
  check_tiles<1>();
  check_tiles<2>();
  check_tiles<4>();
  check_tiles<8>();
  check_tiles<16>();
  check_tiles<32>();
}

__global__ void nested(unsigned* out) {
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  auto quarter = cg::tiled_partition<8>(warp);
  out[threadIdx.x] = quarter.meta_group_rank() * 100 + quarter.shfl(static_cast<unsigned>(threadIdx.x), 7);
}

TEST(CudaOnCpuGroups, ATileOfATile) {
  std::vector<unsigned> out(32, 0);
  const auto r = gfsl::cpu::launch(quiet(), 1, 32, nested, out.data());
  ASSERT_TRUE(r.ok()) << first_fault(r);
  for (unsigned t = 0; t < 32; ++t) EXPECT_EQ(out[t], t / 8 * 100 + t / 8 * 8 + 7);
}

__global__ void tile_divergent(unsigned* out) {
  auto tile = cg::tiled_partition<16>(cg::this_thread_block());
  if (tile.thread_rank() < 4) out[threadIdx.x] = tile.ballot(1);
  else out[threadIdx.x] = tile.shfl(1u, 0);
}

TEST(CudaOnCpuGroups, ADivergentTileCollectiveNamesTheTilesMask) {
  std::vector<unsigned> out(32, 0);
  const auto r = gfsl::cpu::launch(quiet(), 1, 32, tile_divergent, out.data());
  EXPECT_TRUE(any_fault_has(r, "__ballot_sync with mask 0x0000ffff while lane 4 is at __shfl_sync with mask 0x0000ffff"))
      << first_fault(r);
}

// --- libcu++ and PTX on the memory model ------------------------------------

__global__ void lib_counters(unsigned long long* wide, int* narrow, unsigned* flags) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> w(*wide);
  w.fetch_add(3, cuda::memory_order_relaxed);
  cuda::std::atomic_ref<int> n(*narrow);
  int seen = n.load(cuda::memory_order_acquire);
  while (!n.compare_exchange_weak(seen, seen + 1, cuda::memory_order_acq_rel, cuda::memory_order_acquire)) {
  }
  cuda::std::atomic_ref<int>(narrow[1]).fetch_max(1000 + static_cast<int>(threadIdx.x % 7));
  cuda::atomic_ref<unsigned, cuda::thread_scope_block> f(flags[threadIdx.x % 2]);
  f |= 1u << (threadIdx.x % 8);
  cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);
  ++w;
}

TEST(CudaOnCpuLibcu, AtomicRefOperationsAreAtomicAcrossWarps) {
  alignas(8) unsigned long long wide = 0;
  alignas(8) int narrow[2] = {0, 0};
  alignas(8) unsigned flags[2] = {0, 0};
  const auto r = gfsl::cpu::launch(quiet(4, "pct"), 2, 64, lib_counters, &wide, narrow, flags);
  ASSERT_TRUE(r.ok()) << first_fault(r);
  EXPECT_EQ(wide, 128u * 4);
  EXPECT_EQ(narrow[0], 128);
  EXPECT_EQ(narrow[1], 1006);
  EXPECT_EQ(flags[0], 0x55u);
  EXPECT_EQ(flags[1], 0xAAu);
  EXPECT_GT(r.switches, 0u);
}

__global__ void lib_atomic_object(cuda::atomic<int>* a, cuda::std::atomic<unsigned>* b) {
  a->fetch_add(2);
  b->store(7, cuda::std::memory_order_release);
  (*a)--;
}

TEST(CudaOnCpuLibcu, AtomicObjects) {
  cuda::atomic<int> a{5};
  cuda::std::atomic<unsigned> b{0};
  const auto r = gfsl::cpu::launch(quiet(), 1, 32, lib_atomic_object, &a, &b);
  ASSERT_TRUE(r.ok()) << first_fault(r);
  EXPECT_EQ(a.load(), 5 + 32);
  EXPECT_EQ(static_cast<unsigned>(b), 7u);
  static_assert(cuda::std::atomic<int>::is_always_lock_free);
}

// Message passing: lane 0 of warp 0 writes data then the flag; lane 0 of
// warp 1 reads the flag then the data. Released and acquired, a reader that
// saw the flag sees the data; relaxed, the ptx model lets it see old data.
enum class mp_style { libcu_release_acquire, libcu_relaxed, ptx_release_acquire, ptx_relaxed };

template <mp_style S>
__global__ void message_passing(unsigned long long* mem, unsigned long long* seen) {
  if (threadIdx.x % 32 != 0) return;
  namespace px = gfsl::cpu::ptx;
  constexpr bool libcu = S == mp_style::libcu_release_acquire || S == mp_style::libcu_relaxed;
  constexpr bool ordered = S == mp_style::libcu_release_acquire || S == mp_style::ptx_release_acquire;
  if (threadIdx.x == 0) {
    if (libcu) {
      cuda::atomic_ref<unsigned long long>(mem[0]).store(1, cuda::memory_order_relaxed);
      cuda::atomic_ref<unsigned long long>(mem[1]).store(1, ordered ? cuda::memory_order_release : cuda::memory_order_relaxed);
    } else {
      px::st<px::sem::relaxed>(&mem[0], 1ull);
      if (ordered) px::st<px::sem::release>(&mem[1], 1ull);
      else px::st<px::sem::relaxed>(&mem[1], 1ull);
    }
    return;
  }
  unsigned long long flag, data;
  if (libcu) {
    flag = cuda::atomic_ref<unsigned long long>(mem[1]).load(ordered ? cuda::memory_order_acquire : cuda::memory_order_relaxed);
    data = cuda::atomic_ref<unsigned long long>(mem[0]).load(cuda::memory_order_relaxed);
  } else {
    flag = ordered ? px::ld<px::sem::acquire>(&mem[1]) : px::ld<px::sem::relaxed>(&mem[1]);
    data = px::ld<px::sem::relaxed>(&mem[0]);
  }
  seen[0] = flag;
  seen[1] = data;
}

template <mp_style S>
std::set<std::pair<unsigned long long, unsigned long long>> outcomes() {
  std::set<std::pair<unsigned long long, unsigned long long>> out;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    alignas(8) unsigned long long mem[2] = {0, 0};
    unsigned long long seen[2] = {9, 9};
    gfsl::cpu::options o = quiet(seed);
    o.memory = "ptx";
    o.memory_base = mem;
    o.memory_bytes = sizeof mem;
    const auto r = gfsl::cpu::launch(o, 1, 64, message_passing<S>, mem, seen);
    EXPECT_TRUE(r.ok()) << first_fault(r);
    out.insert({seen[0], seen[1]});
  }
  return out;
}

TEST(CudaOnCpuLibcu, OrdersReachThePtxModel) {
  const std::pair<unsigned long long, unsigned long long> stale{1, 0};
  const auto lib_ordered = outcomes<mp_style::libcu_release_acquire>();
  const auto lib_relaxed = outcomes<mp_style::libcu_relaxed>();
  EXPECT_EQ(lib_ordered.count(stale), 0u) << "release/acquire let the reader see the flag without the data";
  EXPECT_EQ(lib_relaxed.count(stale), 1u) << "relaxed message passing never showed old data";
  EXPECT_TRUE(lib_ordered.count({1, 1}) && lib_ordered.count({0, 0}));
  const auto ptx_ordered = outcomes<mp_style::ptx_release_acquire>();
  const auto ptx_relaxed = outcomes<mp_style::ptx_relaxed>();
  EXPECT_EQ(ptx_ordered.count(stale), 0u);
  EXPECT_EQ(ptx_relaxed.count(stale), 1u);
}

__global__ void ptx_rmws(unsigned* w, unsigned long long* big) {
  namespace px = gfsl::cpu::ptx;
  px::red_add<px::sem::relaxed>(&w[0], 1u);
  px::atom_max<px::sem::acq_rel, px::scope::sys>(&w[1], static_cast<unsigned>(threadIdx.x));
  px::atom_or<px::sem::release, px::scope::cta>(&w[2], 1u << (threadIdx.x % 32));
  unsigned long long old = px::ld<px::sem::volatile_>(big);
  while (px::atom_cas<px::sem::acquire>(big, old, old + 2) != old) old = px::ld<px::sem::relaxed>(big);
  px::fence<px::sem::acq_rel, px::scope::gpu>();
  px::atom_exch(&w[3], 9u);
}

TEST(CudaOnCpuPtx, ShadowInstructionsAreAtomic) {
  alignas(8) unsigned w[4] = {0, 0, 0, 0};
  alignas(8) unsigned long long big = 0;
  const auto r = gfsl::cpu::launch(quiet(3, "pct"), 2, 64, ptx_rmws, w, &big);
  ASSERT_TRUE(r.ok()) << first_fault(r);
  EXPECT_EQ(w[0], 128u);
  EXPECT_EQ(w[1], 63u);
  EXPECT_EQ(w[2], 0xFFFFFFFFu);
  EXPECT_EQ(w[3], 9u);
  EXPECT_EQ(big, 256u);
}

// --- virtual time, globals -----------------------------------------------------

__global__ void sleepy(unsigned* flag, unsigned long long* times) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    // A bounded spin on the clock: each read yields and moves time on.
    const long long t0 = clock64();
    while (clock64() - t0 < 50 * static_cast<long long>(gfsl::cpu::cycles_per_step)) {
    }
    atomicExch(flag, 1u);
    return;
  }
  if (threadIdx.x == 0) {
    const unsigned long long t0 = __globaltimer();
    while (atomicAdd(flag, 0u) == 0) __nanosleep(1000);
    times[blockIdx.x] = __globaltimer() - t0;
  }
}

TEST(CudaOnCpuTime, ClocksAreVirtualAndSleepsYield) {
  std::vector<unsigned long long> first;
  for (int run = 0; run < 2; ++run) {
    unsigned flag = 0;
    std::vector<unsigned long long> times(3, 0);
    const auto r = gfsl::cpu::launch(quiet(11, "pct"), 3, 32, sleepy, &flag, times.data());
    ASSERT_TRUE(r.ok()) << first_fault(r);
    EXPECT_EQ(flag, 1u);
    EXPECT_GT(times[1], 0u);
    if (run == 0) first = times;
    else EXPECT_EQ(times, first) << "a replay saw other times";
  }
}

__device__ unsigned hits = 5;
__device__ unsigned long long table[4] = {1, 2, 3, 4};

__global__ void bump() {
  atomicAdd(&hits, 1u);
  atomicAdd(&table[threadIdx.x % 4], 10ull);
}

TEST(CudaOnCpuGlobals, DeviceGlobalsResetBetweenRuns) {
  gfsl::cpu::device_global(hits);
  gfsl::cpu::device_global(table);
  for (int run = 0; run < 3; ++run) {
    gfsl::cpu::reset_device_globals();
    ASSERT_TRUE(gfsl::cpu::launch(quiet(run + 1), 1, 32, bump).ok());
    EXPECT_EQ(hits, 37u);
    EXPECT_EQ(table[2], 3u + 80u);
  }
  gfsl::cpu::reset_device_globals();
  EXPECT_EQ(hits, 5u);
}

// --- bad input: one line each, never a hang or a crash ----------------------

__global__ void spin_forever(unsigned* flag) {
  if (threadIdx.x == 3) {
    while (atomicAdd(flag, 0u) == 0) {
    }
  }
}
constexpr int spin_line = __LINE__ - 4;

TEST(CudaOnCpuBadInput, ALivelockNamesTheSpinningLaneAndLine) {
  unsigned flag = 0;
  gfsl::cpu::options o = quiet(8, "pct");
  o.livelock_steps = 1000;
  const auto r = gfsl::cpu::launch(o, 1, 32, spin_forever, &flag);
  EXPECT_EQ(r.stop, "livelock");
  ASSERT_EQ(r.faults.size(), 1u) << first_fault(r);
  EXPECT_EQ(r.faults[0], "cuda-on-cpu fault: livelock: 1000 scheduling points without a completed operation; warp 0 (block 0, "
                         "warp 0 of it) lane 3 at test_cuda_on_cpu_more.cpp:" + std::to_string(spin_line) +
                             " was running (replay: seed 8 strategy pct depth 3 pct-steps 400)");
}

__global__ void throws_std(unsigned* out) {
  out[threadIdx.x] = __ballot_sync(0xFFFFFFFFu, 1);
  if (threadIdx.x == 6) throw std::runtime_error("key 0 is reserved");
}
__global__ void throws_int(unsigned* out) {
  out[threadIdx.x] = atomicAdd(out + 32, 1u);
  if (threadIdx.x == 9) throw 42;
}

TEST(CudaOnCpuBadInput, ACallableThatThrowsIsAFaultNamingItsLane) {
  std::vector<unsigned> out(33, 0);
  const auto r = gfsl::cpu::launch(quiet(), 1, 32, throws_std, out.data());
  ASSERT_EQ(r.faults.size(), 1u) << first_fault(r);
  EXPECT_NE(r.faults[0].find("lane 6 at test_cuda_on_cpu_more.cpp:"), std::string::npos) << r.faults[0];
  EXPECT_NE(r.faults[0].find(": threw key 0 is reserved (replay: seed 1 strategy random)"), std::string::npos) << r.faults[0];
  const auto i = gfsl::cpu::launch(quiet(), 1, 32, throws_int, out.data());
  ASSERT_EQ(i.faults.size(), 1u) << first_fault(i);
  EXPECT_NE(i.faults[0].find("lane 9 at test_cuda_on_cpu_more.cpp:"), std::string::npos) << i.faults[0];
  EXPECT_NE(i.faults[0].find("threw an exception that is not a std::exception"), std::string::npos) << i.faults[0];
  // The layer runs again after both.
  EXPECT_TRUE(gfsl::cpu::launch(quiet(), 1, 32, throws_std, out.data()).faults.size() == 1u);
}

__global__ void traps(unsigned* out) {
  if (threadIdx.x == 2) __trap();
  out[threadIdx.x] = 1;
}

TEST(CudaOnCpuBadInput, TrapIsAFault) {
  std::vector<unsigned> out(32, 0);
  const auto r = gfsl::cpu::launch(quiet(), 1, 32, traps, out.data());
  EXPECT_TRUE(any_fault_has(r, "lane 2 at test_cuda_on_cpu_more.cpp:")) << first_fault(r);
  EXPECT_TRUE(any_fault_has(r, ": __trap()")) << first_fault(r);
}

__global__ void touch(unsigned* p) { atomicAdd(p + threadIdx.x, 1u); }

TEST(CudaOnCpuBadInput, AnAtomicOutsideTheAllocationsIsAFaultWhenChecked) {
  unsigned* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 32 * sizeof(unsigned)), cudaSuccess);
  gfsl::cpu::options o = quiet();
  o.check_allocations = true;
  EXPECT_TRUE(gfsl::cpu::launch(o, 1, 32, touch, d).ok());
  // One past the allocation's end: lane 31 reads d[32].
  const auto r = gfsl::cpu::launch(o, 1, 32, touch, d + 1);
  ASSERT_EQ(r.faults.size(), 1u) << first_fault(r);
  EXPECT_NE(r.faults[0].find("lane 31 at test_cuda_on_cpu_more.cpp:"), std::string::npos) << r.faults[0];
  EXPECT_NE(r.faults[0].find("outside every cudaMalloc allocation"), std::string::npos) << r.faults[0];
  std::vector<unsigned> host(32, 0);
  EXPECT_FALSE(gfsl::cpu::launch(o, 1, 32, touch, host.data()).ok());
  o.check_allocations = false;
  EXPECT_TRUE(gfsl::cpu::launch(o, 1, 32, touch, host.data()).ok());
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

__global__ void overlapping(unsigned* out) {
  if (threadIdx.x < 16) __syncwarp(0x0001FFFFu);
  else __syncwarp(0xFFFF0000u);
  out[threadIdx.x] = 1;
}

TEST(CudaOnCpuBadInput, LanesWaitingOnEachOtherAreOneLine) {
  std::vector<unsigned> out(32, 0);
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto r = gfsl::cpu::launch(quiet(seed), 1, 32, overlapping, out.data());
    ASSERT_EQ(r.faults.size(), 1u) << first_fault(r);
    // Lanes 16..31 meet and exit; lane 16 is then gone from the first mask.
    EXPECT_NE(r.faults[0].find("lane 0 at test_cuda_on_cpu_more.cpp:"), std::string::npos) << r.faults[0];
    EXPECT_NE(r.faults[0].find("__syncwarp with mask 0x0001ffff names lane 16, which has exited"), std::string::npos)
        << r.faults[0];
  }
}

}  // namespace
