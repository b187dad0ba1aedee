// Plain and volatile loads and stores under the CUDA-on-CPU layer, with and
// without gfsl_cuda_on_cpu_instrument (docs/CUDA-ON-CPU.md, "Plain loads and
// stores"): the same kernels (cuda_on_cpu/plain/kernels.inc), built both
// ways, on the same seeds. A fault that needs another warp between one
// lane's two plain accesses, or a plain load that returns an older store
// under ptx, is found only instrumented; the uninstrumented build misses it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>

#include "cuda_on_cpu/plain/kernels.hpp"

namespace {

constexpr std::uint64_t seeds = 200;

TEST(CudaOnCpuPlain, ATornPairNeedsPlainAccessesAsSchedulingPoints) {
  std::uint64_t torn_seeds = 0;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const std::uint32_t plain = uninstrumented::torn_pairs(seed, "sc");
    ASSERT_NE(plain, ~0u) << "seed " << seed;
    // Uninstrumented, a lane's two stores and another lane's two loads each
    // run without a scheduling point between them: never torn.
    EXPECT_EQ(plain, 0u) << "seed " << seed;
    const std::uint32_t torn = instrumented::torn_pairs(seed, "sc");
    ASSERT_NE(torn, ~0u) << "seed " << seed;
    torn_seeds += torn > 0;
  }
  std::printf("torn pairs: %llu of %llu seeds instrumented, 0 uninstrumented\n", static_cast<unsigned long long>(torn_seeds),
              static_cast<unsigned long long>(seeds));
  EXPECT_GE(torn_seeds, seeds / 10);
}

TEST(CudaOnCpuPlain, AStalePlainLoadNeedsTheInstrumentationUnderPtx) {
  constexpr std::uint64_t message_seeds = 1000;  // the reader runs after the writer's flag in about one seed of seven
  std::uint64_t stale = 0, flag_seen = 0;
  for (std::uint64_t seed = 1; seed <= message_seeds; ++seed) {
    // The reader saw the flag and not the data it publishes: only a plain
    // load that returned an older store does that.
    const auto plain = uninstrumented::message(seed, "ptx", false);
    ASSERT_NE(plain.flag, ~0u) << "seed " << seed;
    EXPECT_FALSE(plain.flag == 1 && plain.data != 42) << "seed " << seed << ": uninstrumented loads are never stale";
    const auto weak = instrumented::message(seed, "ptx", false);
    ASSERT_NE(weak.flag, ~0u) << "seed " << seed;
    flag_seen += weak.flag == 1;
    stale += weak.flag == 1 && weak.data != 42;
    // With the fence it is missing, the reader sees the data (fence.sc
    // after a load that read the flag's store, which follows the writer's
    // fence: they synchronise).
    const auto fenced = instrumented::message(seed, "ptx", true);
    EXPECT_FALSE(fenced.flag == 1 && fenced.data != 42) << "seed " << seed << ": a fenced reader saw stale data";
    // Sequentially consistent memory: every load the latest store.
    const auto sc = instrumented::message(seed, "sc", false);
    EXPECT_FALSE(sc.flag == 1 && sc.data != 42) << "seed " << seed << ": stale data under sc";
  }
  std::printf("message passing under ptx: flag seen in %llu of %llu seeds, data stale in %llu (instrumented); 0 uninstrumented\n",
              static_cast<unsigned long long>(flag_seen), static_cast<unsigned long long>(message_seeds),
              static_cast<unsigned long long>(stale));
  EXPECT_GE(stale, 10u);
}

TEST(CudaOnCpuPlain, ASpinOnAVolatileFlagYields) {
  // Released by the other warp: every read is a scheduling point, so the
  // writer runs and the spin ends (uninstrumented, this run never ends).
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto r = instrumented::spin(seed, true, 100000);
    EXPECT_TRUE(r.ok()) << "seed " << seed << ": " << r.stop << (r.faults.empty() ? "" : " " + r.faults[0]);
  }
}

TEST(CudaOnCpuPlain, ASpinNobodyEndsIsALivelockNotAHang) {
  const auto r = instrumented::spin(1, false, 1000);
  EXPECT_EQ(r.stop, "livelock");
  ASSERT_FALSE(r.faults.empty());
  EXPECT_NE(r.faults[0].find("livelock: 1000 scheduling points without a completed operation"), std::string::npos) << r.faults[0];
  EXPECT_NE(r.faults[0].find("lane 0"), std::string::npos) << r.faults[0];
  // The layer goes on working after a run whose lane it abandoned.
  const auto again = instrumented::spin(2, true, 100000);
  EXPECT_TRUE(again.ok()) << again.stop;
}

}  // namespace
