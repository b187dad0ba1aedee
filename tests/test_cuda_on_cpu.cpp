// include/gfsl/cpu/cuda.hpp: device code as written for CUDA, run under the
// deterministic scheduler. Collectives give CUDA's answers, masks are
// checked, atomics interleave warps, and a seed replays its run.
#include "gfsl/cpu/cuda.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

gfsl::cpu::options quiet(std::uint64_t seed = 1, const char* strategy = "random") {
  gfsl::cpu::options o;
  o.seed = seed;
  o.strategy = strategy;
  o.quiet = true;
  o.pct_steps = 400;  // about the length of these runs: PCT's change points fall inside them
  return o;
}

bool any_fault_has(const gfsl::cpu::launch_result& r, const std::string& text) {
  for (const std::string& f : r.faults) {
    if (f.find(text) != std::string::npos) return true;
  }
  return false;
}

__global__ void collectives(unsigned* out) {
  const unsigned lane = threadIdx.x & 31;
  const unsigned w = threadIdx.x / 32;
  unsigned* o = out + w * 32 * 9 + lane * 9;
  o[0] = __ballot_sync(0xFFFFFFFFu, lane % 3 == 0);
  o[1] = __shfl_sync(0xFFFFFFFFu, lane * 10, 7);
  o[2] = __shfl_up_sync(0xFFFFFFFFu, lane * 10, 2);
  o[3] = __shfl_down_sync(0xFFFFFFFFu, lane * 10, 5, 16);
  o[4] = __shfl_xor_sync(0xFFFFFFFFu, lane * 10, 1);
  o[5] = __any_sync(0xFFFFFFFFu, lane == 31);
  o[6] = __all_sync(0xFFFFFFFFu, lane < 31);
  o[7] = __match_any_sync(0xFFFFFFFFu, lane / 8);
  o[8] = __shfl_sync(0xFFFFFFFFu, lane * 10, 3, 8);
}

TEST(CudaOnCpu, CollectivesGiveCudasAnswers) {
  std::vector<unsigned> out(2 * 32 * 9, 0);
  const auto r = gfsl::cpu::launch(quiet(), 1, 64, collectives, out.data());
  ASSERT_TRUE(r.ok()) << r.stop << (r.faults.empty() ? "" : r.faults[0]);
  unsigned every_third = 0;
  for (unsigned l = 0; l < 32; l += 3) every_third |= 1u << l;
  for (unsigned w = 0; w < 2; ++w) {
    for (unsigned lane = 0; lane < 32; ++lane) {
      const unsigned* o = out.data() + w * 32 * 9 + lane * 9;
      EXPECT_EQ(o[0], every_third);
      EXPECT_EQ(o[1], 70u);
      EXPECT_EQ(o[2], (lane >= 2 ? lane - 2 : lane) * 10);
      EXPECT_EQ(o[3], ((lane % 16) + 5 < 16 ? lane + 5 : lane) * 10);
      EXPECT_EQ(o[4], (lane ^ 1u) * 10);
      EXPECT_EQ(o[5], 1u);
      EXPECT_EQ(o[6], 0u);
      EXPECT_EQ(o[7], 0xFFu << (lane / 8 * 8));
      EXPECT_EQ(o[8], ((lane & ~7u) + 3) * 10);
    }
  }
}

__global__ void halves(unsigned* out) {
  const unsigned lane = threadIdx.x;
  if (lane < 16) {
    out[lane] = __ballot_sync(0x0000FFFFu, lane % 2 == 0);
  } else {
    out[lane] = __ballot_sync(0xFFFF0000u, lane % 4 == 0);
  }
  __syncwarp();
  out[32 + lane] = __activemask();
  if (lane >= 8 && lane < 12) out[64 + lane] = __activemask();
}

TEST(CudaOnCpu, DisjointMasksAndActivemask) {
  std::vector<unsigned> out(96, 0);
  const auto r = gfsl::cpu::launch(quiet(3), 1, 32, halves, out.data());
  ASSERT_TRUE(r.ok()) << (r.faults.empty() ? r.stop : r.faults[0]);
  for (unsigned lane = 0; lane < 16; ++lane) EXPECT_EQ(out[lane], 0x5555u);
  for (unsigned lane = 16; lane < 32; ++lane) EXPECT_EQ(out[lane], 0x11110000u);
  for (unsigned lane = 0; lane < 32; ++lane) EXPECT_EQ(out[32 + lane], 0xFFFFFFFFu);
  for (unsigned lane = 8; lane < 12; ++lane) EXPECT_EQ(out[64 + lane], 0x00000F00u);
}

// Lane 0 takes a detour through collectives of its own before the warp's
// ballot: the others wait for it there, as CUDA allows.
__global__ void late_lane(unsigned* out) {
  const unsigned lane = threadIdx.x;
  if (lane == 0) {
    for (int i = 0; i < 3; ++i) __syncwarp(1u);
    out[32] = __ballot_sync(1u, 1);
  }
  out[lane] = __ballot_sync(0xFFFFFFFFu, lane >= 30);
}

TEST(CudaOnCpu, ALaneStillRunningIsWaitedFor) {
  std::vector<unsigned> out(33, 0);
  const auto r = gfsl::cpu::launch(quiet(4), 1, 32, late_lane, out.data());
  ASSERT_TRUE(r.ok()) << (r.faults.empty() ? r.stop : r.faults[0]);
  EXPECT_EQ(out[32], 1u);
  for (unsigned lane = 0; lane < 32; ++lane) EXPECT_EQ(out[lane], 0xC0000000u);
}

__global__ void divergent(unsigned* out) {
  const unsigned lane = threadIdx.x & 31;
  if (lane < 16) {
    out[lane] = __ballot_sync(0xFFFFFFFFu, 1);
  } else {
    __syncwarp();
  }
}
constexpr int divergent_line = __LINE__ - 5;

TEST(CudaOnCpu, DivergentCollectiveIsAFaultNamingWarpAndLane) {
  std::vector<unsigned> out(32, 0);
  const auto r = gfsl::cpu::launch(quiet(), 1, 64, divergent, out.data());
  ASSERT_FALSE(r.ok());
  ASSERT_FALSE(r.faults.empty());
  EXPECT_TRUE(any_fault_has(r, "lane 0 at test_cuda_on_cpu.cpp:" + std::to_string(divergent_line) +
                                   ": __ballot_sync with mask 0xffffffff while lane 16 is at __syncwarp with mask 0xffffffff "
                                   "(test_cuda_on_cpu.cpp:" + std::to_string(divergent_line + 2) + ")"))
      << r.faults[0];
  EXPECT_TRUE(any_fault_has(r, "divergent"));
  EXPECT_NE(gfsl::cpu::last_launch().faults.size(), 0u);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

__global__ void early_exit(unsigned* out) {
  const unsigned lane = threadIdx.x;
  if (lane == 5) return;
  out[lane] = __ballot_sync(0xFFFFFFFFu, 1);
}
constexpr int early_exit_line = __LINE__ - 2;

TEST(CudaOnCpu, ExitedLaneInAMaskIsAFault) {
  std::vector<unsigned> out(32, 0);
  const auto r = gfsl::cpu::launch(quiet(), 1, 32, early_exit, out.data());
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0],
            "cuda-on-cpu fault: warp 0 (block 0, warp 0 of it) lane 0 at test_cuda_on_cpu.cpp:" + std::to_string(early_exit_line) +
                ": __ballot_sync with mask 0xffffffff names lane 5, which has exited (replay: seed 1 strategy random)");
  EXPECT_EQ(r.replay, "seed 1 strategy random");
}

__global__ void partial_warp(unsigned* out) { out[threadIdx.x] = __ballot_sync(0xFFFFFFFFu, 1); }

__global__ void partial_mask(unsigned* out) { out[threadIdx.x] = __ballot_sync(0xFFFFFu, 1); }

TEST(CudaOnCpu, MaskNamingALaneOutsideTheBlockIsAFault) {
  std::vector<unsigned> out(32, 0);
  const auto r = gfsl::cpu::launch(quiet(), 1, 20, partial_warp, out.data());
  EXPECT_TRUE(any_fault_has(r, "names lane 20, which is not in the launch")) << (r.faults.empty() ? "" : r.faults[0]);
  const auto fine = gfsl::cpu::launch(quiet(), 1, 20, partial_mask, out.data());
  EXPECT_TRUE(fine.ok());
  EXPECT_EQ(out[19], 0xFFFFFu);
}

__global__ void shfl_outside_mask(unsigned* out) {
  if (threadIdx.x < 8) out[threadIdx.x] = __shfl_sync(0xFFu, 1u, 9);
}
constexpr int shfl_line = __LINE__ - 2;

TEST(CudaOnCpu, ShuffleFromALaneOutsideTheMaskIsAFault) {
  std::vector<unsigned> out(32, 0);
  const auto r = gfsl::cpu::launch(quiet(), 1, 32, shfl_outside_mask, out.data());
  EXPECT_TRUE(any_fault_has(r, "lane 0 at test_cuda_on_cpu.cpp:" + std::to_string(shfl_line) +
                                   ": __shfl_sync with mask 0x000000ff reads lane 9, which is not in the mask"))
      << (r.faults.empty() ? "no fault" : r.faults[0]);
}

__global__ void counting(unsigned* counter, unsigned long long* wide, int* lo, int* hi) {
  const int t = static_cast<int>(threadIdx.x + blockIdx.x * blockDim.x);
  atomicAdd(counter, 1u);
  atomicAdd(wide, 1ull << 33);
  atomicMin(lo, -t);
  atomicMax(hi, t);
  unsigned long long seen = *wide;
  while (atomicCAS(wide, seen, seen + 1) != seen) seen = *wide;
  atomicSub_block(counter, 0u);
  __threadfence();
}

TEST(CudaOnCpu, AtomicsAreAtomicAcrossWarps) {
  unsigned counter = 0;
  unsigned long long wide = 0;
  int lo = 0, hi = 0;
  const auto r = gfsl::cpu::launch(quiet(7, "pct"), 3, 64, counting, &counter, &wide, &lo, &hi);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(counter, 192u);
  EXPECT_EQ(wide, (192ull << 33) + 192);
  EXPECT_EQ(lo, -191);
  EXPECT_EQ(hi, 191);
  EXPECT_GT(r.switches, 0u);
}

// Read, then write what was read plus one: updates are lost when another
// warp's write lands between a lane's read and its exchange.
__global__ void racy(unsigned* counter) {
  const unsigned mine = *static_cast<volatile unsigned*>(counter);
  __syncwarp();
  if ((threadIdx.x & 31) == 0) atomicExch(counter, mine + 1);
}

TEST(CudaOnCpu, ASeedReplaysItsRunAndSeedsDiffer) {
  std::set<unsigned> finals;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    // One word for both runs: the model sees the whole 64-bit word of a
    // 32-bit atomic, so the run's fingerprint covers its neighbour too.
    alignas(8) unsigned counter[2] = {0, 0};
    const auto ra = gfsl::cpu::launch(quiet(seed, "pct"), 1, 32 * 4, racy, counter);
    const unsigned a = counter[0];
    counter[0] = 0;
    const auto rb = gfsl::cpu::launch(quiet(seed, "pct"), 1, 32 * 4, racy, counter);
    const unsigned b = counter[0];
    ASSERT_TRUE(ra.ok() && rb.ok());
    EXPECT_EQ(a, b) << "seed " << seed;
    EXPECT_EQ(ra.steps, rb.steps);
    EXPECT_EQ(ra.fingerprint, rb.fingerprint);
    finals.insert(a);
  }
  EXPECT_TRUE(finals.count(4u)) << "no seed ran the warps one after another";
  EXPECT_TRUE(finals.count(1u) || finals.count(2u) || finals.count(3u)) << "no seed lost an update";
}

__global__ void block_shared(unsigned* out) {
  __shared__ unsigned slot[32];
  slot[threadIdx.x] = threadIdx.x * 2;
  __syncwarp();
  out[threadIdx.x] = slot[31 - threadIdx.x];
}

TEST(CudaOnCpu, SharedMemoryOfOneBlock) {
  std::vector<unsigned> out(64, 0);
  const auto one = gfsl::cpu::launch(quiet(), 1, 32, block_shared, out.data());
  EXPECT_TRUE(one.ok());
  EXPECT_EQ(out[0], 62u);
}

__global__ void forever(unsigned* flag) {
  while (atomicAdd(flag, 0u) == 0) {
  }
}

TEST(CudaOnCpu, AStoppedRunUnwindsItsLanes) {
  unsigned flag = 0;
  gfsl::cpu::options o = quiet(5);
  o.max_steps = 5000;
  const auto r = gfsl::cpu::launch(o, 2, 64, forever, &flag);
  EXPECT_EQ(r.stop, "step limit");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.steps, 5001u);
  // The layer is usable again after a stop.
  const auto again = gfsl::cpu::launch(quiet(), 1, 32, partial_warp, std::vector<unsigned>(32).data());
  EXPECT_TRUE(again.ok());
}

TEST(CudaOnCpu, PtxModelRunsOverTheGivenWords) {
  std::vector<unsigned long long> mem(4, 0);
  gfsl::cpu::options o = quiet(2, "pct");
  o.memory = "ptx";
  EXPECT_THROW(gfsl::cpu::launch(o, 1, 32, counting, reinterpret_cast<unsigned*>(&mem[0]), &mem[1],
                                 reinterpret_cast<int*>(&mem[2]), reinterpret_cast<int*>(&mem[3])),
               std::invalid_argument);
  o.memory_base = mem.data();
  o.memory_bytes = mem.size() * 8;
  const auto r = gfsl::cpu::launch(o, 2, 32, counting, reinterpret_cast<unsigned*>(&mem[0]), &mem[1],
                                   reinterpret_cast<int*>(&mem[2]), reinterpret_cast<int*>(&mem[3]));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(mem[0] & 0xFFFFFFFFu, 64u);
  EXPECT_EQ(mem[1], (64ull << 33) + 64);
}

// Plain loads do not pass the model (docs/CUDA-ON-CPU.md, "what is not
// covered"): under ptx a run takes the same steps to the same result as
// under sc, seed for seed.
TEST(CudaOnCpu, PtxWithoutInstrumentedLoadsIsSc) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    alignas(8) unsigned counter[2] = {0, 0};
    const auto sc = gfsl::cpu::launch(quiet(seed, "pct"), 1, 32 * 4, racy, counter);
    const unsigned sc_value = counter[0];
    counter[0] = 0;
    gfsl::cpu::options o = quiet(seed, "pct");
    o.memory = "ptx";
    o.memory_base = counter;
    o.memory_bytes = sizeof counter;
    const auto ptx = gfsl::cpu::launch(o, 1, 32 * 4, racy, counter);
    ASSERT_TRUE(sc.ok() && ptx.ok());
    EXPECT_EQ(sc.steps, ptx.steps) << "seed " << seed;
    EXPECT_EQ(sc_value, counter[0]) << "seed " << seed;
  }
}

TEST(CudaOnCpu, BadLaunchesAreOneLineErrors) {
  std::vector<unsigned> out(32);
  try {
    gfsl::cpu::launch(quiet(), 1, 0, partial_warp, out.data());
    ADD_FAILURE() << "a block of 0 threads ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "gfsl::cpu::launch: a block of 0 threads (1..1024)");
  }
  try {
    gfsl::cpu::launch(quiet(1, "fifo"), 1, 32, partial_warp, out.data());
    ADD_FAILURE() << "strategy fifo ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "gfsl::cpu::launch: strategy 'fifo' (random, pct, fair-pct, park)");
  }
}

TEST(CudaOnCpu, DeviceMemoryOnTheHost) {
  unsigned* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 1u << 30), cudaSuccess);  // mapped on demand: only touched pages cost
  ASSERT_EQ(cudaMemset(d, 0xFF, 4096), cudaSuccess);
  std::vector<unsigned> h(4, 7);
  ASSERT_EQ(cudaMemcpy(d + 8, h.data(), 16, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(d[0], 0xFFFFFFFFu);
  EXPECT_EQ(d[9], 7u);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
  int local = 0;
  EXPECT_EQ(cudaFree(&local), cudaErrorInvalidValue);
}

}  // namespace
