// The PTX memory model of the host backend (exec/sched/memory_model.hpp):
// litmus tests on host teams under the deterministic scheduler, then the
// structures: a stale read that only ptx allows fails SlabHash's published
// variant, replays bit for bit, and passes under sc; GFSL's memory-order
// mutants are killed. Every test counts outcomes over fixed seeds: nothing
// depends on the machine's speed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/host_team.hpp"
#include "exec/host_runner.hpp"
#include "exec/sched/memory_model.hpp"
#include "exec/sched/scheduler.hpp"
#include "gfsl_binary.hpp"
#include "tests/files.hpp"
#include "core/gfsl/types.hpp"

namespace {

using gfsl::mem_order;
using gfsl::sched::memory;

// Words of a litmus test; word 0 of a team's view is `base`.
struct litmus {
  std::array<std::uint64_t, 8> words{};
  gfsl::sched::options so;
  explicit litmus(memory m, std::uint64_t seed) {
    so.mem = m;
    so.seed = seed;
    so.gran = gfsl::sched::granularity::lane;
    so.memory_base = words.data();
    so.memory_words = words.size();
  }
};

using team8 = gfsl::host_team<8>;

// One load of one word by lane 0, in order `o` (a team-wide gather whose
// every lane names the same word: lane 0's is the one returned).
std::uint64_t load_one(team8& t, const std::uint64_t* p, mem_order o) {
  return t.gather([p](int) { return p; }, o)[0];
}

// Message passing: team 0 writes data then sets the flag; team 1 reads the
// flag then the data. Returns (flag, data) as team 1 saw them.
std::pair<std::uint64_t, std::uint64_t> message_passing(memory m, std::uint64_t seed, mem_order flag_store,
                                                        mem_order flag_load) {
  litmus l(m, seed);
  std::uint64_t* data = &l.words[0];
  std::uint64_t* flag = &l.words[1];
  gfsl::sched::scheduler s(l.so);
  team8 writer(0, 1, l.words.data(), &s), reader(1, 1, l.words.data(), &s);
  std::uint64_t seen_flag = 0, seen_data = 0;
  std::vector<std::function<void()>> bodies;
  bodies.emplace_back([&] {
    writer.store(data, 0, 42, mem_order::relaxed);
    writer.store(flag, 0, 1, flag_store);
  });
  bodies.emplace_back([&] {
    // Spin until the flag is seen set, so that every seed tests the data read.
    do {
      seen_flag = load_one(reader, flag, flag_load);
      s.point();
    } while (seen_flag == 0);
    seen_data = load_one(reader, data, mem_order::relaxed);
  });
  const auto out = s.run(std::move(bodies));
  EXPECT_EQ(out.reason, gfsl::sched::stop_reason::completed);
  return {seen_flag, seen_data};
}

TEST(MemoryModelLitmus, MessagePassingWithRelaxedFlagReadSeesStaleData) {
  int stale = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const auto [flag, data] = message_passing(memory::ptx, seed, mem_order::release, mem_order::relaxed);
    ASSERT_EQ(flag, 1u);
    ASSERT_TRUE(data == 0 || data == 42) << data;
    stale += data == 0;
  }
  // The flag read synchronises with nothing: the data store need not be
  // visible, and the scheduler's choices show it.
  EXPECT_GT(stale, 0);
}

TEST(MemoryModelLitmus, MessagePassingWithReleaseAcquireNeverSeesStaleData) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const auto [flag, data] = message_passing(memory::ptx, seed, mem_order::release, mem_order::acquire);
    ASSERT_EQ(flag, 1u);
    EXPECT_EQ(data, 42u) << "seed " << seed;
  }
}

TEST(MemoryModelLitmus, MessagePassingWithRelaxedFlagStoreSeesStaleDataEvenWithAcquire) {
  int stale = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    stale += message_passing(memory::ptx, seed, mem_order::relaxed, mem_order::acquire).second == 0;
  }
  EXPECT_GT(stale, 0);  // an acquire of a relaxed store synchronises with nothing
}

TEST(MemoryModelLitmus, MessagePassingUnderScNeverSeesStaleData) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    EXPECT_EQ(message_passing(memory::sc, seed, mem_order::relaxed, mem_order::relaxed).second, 42u);
  }
}

// CoRR: team 0 stores 1, 2, 3, 4 to one word; team 1 reads it 8 times. Its
// reads never go backwards in the word's modification order.
TEST(MemoryModelLitmus, CoherenceReadReadNeverViolated) {
  int stale = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    litmus l(memory::ptx, seed);
    std::uint64_t* x = &l.words[0];
    gfsl::sched::scheduler s(l.so);
    team8 writer(0, 1, l.words.data(), &s), reader(1, 1, l.words.data(), &s);
    std::vector<std::uint64_t> seen;
    std::uint64_t written = 0;
    std::vector<std::function<void()>> bodies;
    bodies.emplace_back([&] {
      for (std::uint64_t v = 1; v <= 4; ++v) {
        writer.store(x, 0, v, mem_order::relaxed);
        written = v;
      }
    });
    bodies.emplace_back([&] {
      for (int i = 0; i < 8; ++i) {
        seen.push_back(load_one(reader, x, mem_order::relaxed));
        stale += seen.back() < written;
      }
    });
    s.run(std::move(bodies));
    for (std::size_t i = 1; i < seen.size(); ++i) ASSERT_LE(seen[i - 1], seen[i]) << "seed " << seed;
  }
  EXPECT_GT(stale, 0);  // the reads did return older stores: coherence was tested, not trivially held
}

// The same check over every load the reader made, in the order they ran.
TEST(MemoryModelLitmus, CoherenceHoldsLoadByLoadInTheLog) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    litmus l(memory::ptx, seed);
    l.so.record_accesses = true;
    std::uint64_t* x = &l.words[0];
    gfsl::sched::scheduler s(l.so);
    team8 writer(0, 1, l.words.data(), &s), reader(1, 1, l.words.data(), &s);
    std::vector<std::function<void()>> bodies;
    bodies.emplace_back([&] {
      for (std::uint64_t v = 1; v <= 6; ++v) writer.store(x, 0, v, mem_order::relaxed);
    });
    bodies.emplace_back([&] {
      for (int i = 0; i < 4; ++i) (void)reader.gather([x](int) { return x; }, mem_order::relaxed);
    });
    const auto out = s.run(std::move(bodies));
    std::uint64_t last = 0;
    for (const auto& a : out.accesses) {
      if (a.a.team != 1) continue;
      ASSERT_GE(a.result, last) << "seed " << seed;  // read-read coherence
      last = a.result;
    }
  }
}

// Write-read coherence: a team reads its own latest store or a newer one.
TEST(MemoryModelLitmus, TeamReadsItsOwnStore) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    litmus l(memory::ptx, seed);
    std::uint64_t* x = &l.words[0];
    gfsl::sched::scheduler s(l.so);
    team8 a(0, 1, l.words.data(), &s), b(1, 1, l.words.data(), &s);
    std::vector<std::function<void()>> bodies;
    bodies.emplace_back([&] {
      for (std::uint64_t v = 1; v <= 5; ++v) {
        a.store(x, 0, v, mem_order::relaxed);
        EXPECT_GE(load_one(a, x, mem_order::relaxed), v);
      }
    });
    bodies.emplace_back([&] {
      for (std::uint64_t v = 100; v <= 105; ++v) {
        b.store(x, 0, v, mem_order::relaxed);
        const std::uint64_t r = load_one(b, x, mem_order::relaxed);
        EXPECT_TRUE(r == v || r < 100) << r;  // its own store or team 0's later one, never its own older one
      }
    });
    s.run(std::move(bodies));
  }
}

// An RMW reads the latest store, whatever stale values loads return.
TEST(MemoryModelLitmus, RmwAlwaysReadsTheLatestStore) {
  int stale_loads = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    litmus l(memory::ptx, seed);
    std::uint64_t* x = &l.words[0];
    gfsl::sched::scheduler s(l.so);
    team8 writer(0, 1, l.words.data(), &s), rmw(1, 1, l.words.data(), &s);
    std::uint64_t written = 0;
    std::vector<std::function<void()>> bodies;
    bodies.emplace_back([&] {
      for (std::uint64_t v = 1; v <= 6; ++v) {
        writer.store(x, 0, v, mem_order::relaxed);
        written = v;
      }
    });
    bodies.emplace_back([&] {
      for (int i = 0; i < 4; ++i) {
        stale_loads += load_one(rmw, x, mem_order::relaxed) < written;
        // `written` is read after the RMW took effect, with no scheduling
        // point between: it counts the stores before the RMW in the word's
        // modification order, the last of which wrote that count.
        const std::uint64_t got = rmw.fetch_add(x, 0, 0, mem_order::relaxed);
        EXPECT_EQ(got, written) << "seed " << seed;
        // A CAS that fails reads the latest store too (and one from 0 to 0
        // that succeeds wrote nothing new).
        std::uint64_t found = 0;
        rmw.cas(x, 0, found, 0, mem_order::relaxed);
        EXPECT_EQ(found, written) << "seed " << seed;
      }
    });
    s.run(std::move(bodies));
  }
  EXPECT_GT(stale_loads, 0);
}

// Store buffering with fence.sc between each team's store and load: at least
// one team sees the other's store (without the fences both may miss it).
TEST(MemoryModelLitmus, StoreBufferingWithScFencesForbidsBothStale) {
  int both_stale_unfenced = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    for (bool fenced : {false, true}) {
      litmus l(memory::ptx, seed);
      std::uint64_t* x = &l.words[0];
      std::uint64_t* y = &l.words[1];
      gfsl::sched::scheduler s(l.so);
      team8 a(0, 1, l.words.data(), &s), b(1, 1, l.words.data(), &s);
      std::uint64_t ra = 0, rb = 0;
      std::vector<std::function<void()>> bodies;
      bodies.emplace_back([&] {
        a.store(x, 0, 1, mem_order::relaxed);
        if (fenced) s.fence();
        ra = load_one(a, y, mem_order::relaxed);
      });
      bodies.emplace_back([&] {
        b.store(y, 0, 1, mem_order::relaxed);
        if (fenced) s.fence();
        rb = load_one(b, x, mem_order::relaxed);
      });
      s.run(std::move(bodies));
      if (fenced) EXPECT_FALSE(ra == 0 && rb == 0) << "seed " << seed;
      else both_stale_unfenced += ra == 0 && rb == 0;
    }
  }
  EXPECT_GT(both_stale_unfenced, 0);
}

// A structure's run under ptx: the same seed gives the same run, access for
// access (the stale choices are the schedule's), and other than sc's.
TEST(MemoryModelRuns, PtxRunReplaysBitForBit) {
  gfsl::model::workload w;
  w.teams = 6;
  w.ops = 600;
  w.range = 100;
  w.insert_pct = 40;
  w.delete_pct = 40;
  w.contains_pct = 20;
  w.chunk = 8;
  w.seed = 11;
  gfsl::sched::options so;
  so.seed = 5;
  so.gran = gfsl::sched::granularity::lane;
  so.mem = memory::ptx;
  gfsl::run_extras ex;
  ex.choice.variant = static_cast<std::uint8_t>(gfsl::variant::robust);
  const auto a = gfsl::run_scheduled(w, so, 0, true, ex);
  const auto b = gfsl::run_scheduled(w, so, 0, true, ex);
  EXPECT_EQ(a.outcome.fingerprint, b.outcome.fingerprint);
  EXPECT_EQ(a.outcome.steps, b.outcome.steps);
  EXPECT_EQ(a.outcome.stale_reads, b.outcome.stale_reads);
  EXPECT_GT(a.outcome.stale_reads, 0u);
  ASSERT_EQ(a.run.records.size(), b.run.records.size());
  for (std::size_t i = 0; i < a.run.records.size(); ++i) {
    EXPECT_EQ(a.run.records[i].ok, b.run.records[i].ok);
    EXPECT_EQ(a.run.records[i].call, b.run.records[i].call);
    EXPECT_EQ(a.run.records[i].ret, b.run.records[i].ret);
  }
  so.mem = memory::sc;
  const auto c = gfsl::run_scheduled(w, so, 0, true, ex);
  EXPECT_EQ(c.outcome.stale_reads, 0u);
  EXPECT_NE(c.outcome.fingerprint, a.outcome.fingerprint);
  EXPECT_TRUE(a.run.structural_problems.empty());
}

// SlabHash's published variant: two inserts of one key and a delete that
// empties a pair. Team 2's read of the slab returns EMPTY for the pair team
// 1 claimed (a relaxed read, no acquire), so it claims the emptied pair
// before it: the key is live twice. Under sc the same schedule reads the
// claim and the run is linearizable.
const char* published_stale =
    "gfsl1:backend=host:teams=3:ops=3:mix=30,20,50:range=29:prefill=0.034482758620689655:chunk=16:p-chunk=1:"
    "seed=154358792:pool=0:events=on:subject=slabhash:buckets=4:variant=published:check-every=61:prefill-keys=24:"
    "team-ops=d24/i29/i29:sched=random:depth=1:granularity=line:sched-seed=527647186:pct-steps=1925:fair-after=0:"
    "livelock-steps=500000:max-steps=50000000";

TEST(MemoryModelCli, SlabHashPublishedFailsOnAStaleReadAndReplays) {
  using gfsl::testing_cli::run;
  const auto ptx1 = run(std::string("replay ") + published_stale + ":memory=ptx");
  const auto ptx2 = run(std::string("replay ") + published_stale + ":memory=ptx");
  EXPECT_NE(ptx1.code, 0) << ptx1.out;
  EXPECT_NE(ptx1.out.find("key 29 (2 operations) is not linearizable"), std::string::npos) << ptx1.out;
  EXPECT_NE(ptx1.out.find("memory:   ptx: 1 loads returned a store older than the latest"), std::string::npos) << ptx1.out;
  // Bit for bit: the same output, the elapsed time aside.
  const auto timeless = [](std::string t) {
    const auto at = t.find("elapsed:");
    return at == std::string::npos ? t : t.erase(at, t.find('\n', at) - at);
  };
  EXPECT_EQ(timeless(ptx1.out), timeless(ptx2.out));
  const auto sc = run(std::string("replay ") + published_stale);
  EXPECT_EQ(sc.code, 0) << sc.out;
  EXPECT_NE(sc.out.find("the history is linearizable"), std::string::npos) << sc.out;
}

TEST(MemoryModelCli, BadMemoryIsRefusedInOneLine) {
  using gfsl::testing_cli::run;
  const auto bad = run(std::string("replay ") + published_stale + ":memory=tso");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("field 'memory' has a bad value 'tso'"), std::string::npos) << bad.out;
  const auto threads = run("run --backend threads --memory ptx --ops 10");
  EXPECT_EQ(threads.code, 2) << threads.out;
  EXPECT_NE(threads.out.find("--memory ptx needs the scheduled host backend"), std::string::npos) << threads.out;
  const auto turns = run("run --sched turns --memory ptx --ops 10");
  EXPECT_EQ(turns.code, 2) << turns.out;
}

TEST(MemoryModelCli, GfslMemoryOrderMutantsAreKilledUnderPtx) {
  using gfsl::testing_cli::run;
  for (const char* m : {"load-relaxed", "release-weakened"}) {
    const auto r = run(std::string("mutants --memory ptx --only ") + m + " --max-runs 300 --seconds 600 --progress off");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("1 of 1 non-equivalent host mutants killed; control passed"), std::string::npos) << r.out;
  }
  // Under sc they cannot take effect on the host: not applicable.
  const auto sc = run("mutants --memory sc --only load-relaxed --max-runs 10 --progress off");
  EXPECT_NE(sc.out.find("n/a"), std::string::npos) << sc.out;
}

// The default campaign draws ptx runs (--memory mixed: one run in 4), so a
// bug made of a missing acquire or release is within its reach: both
// memory-order mutants are killed by `gfsl fuzz --mutant M` with no other
// option than a run budget, and by `gfsl mutants` as it runs by default; the
// failure's replay line names its ptx run and stale choices and fails again.
TEST(MemoryModelCli, TheDefaultCampaignDrawsPtxRunsAndKillsTheMemoryOrderMutants) {
  using gfsl::testing_cli::run;
  for (const char* m : {"load-relaxed", "release-weakened"}) {
    const std::string dir = testing::TempDir() + "gfsl_mixed_" + std::to_string(::getpid()) + "_" + m;
    const auto r = run(std::string("fuzz --mutant ") + m + " --max-runs 300 --seconds 3600 --progress off --overwrite --out " + dir);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("FAILURE ["), std::string::npos) << r.out;
    const std::size_t at = r.out.find("gfsl1:");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string line = r.out.substr(at, r.out.find_first_of(" \n", at) - at);
    EXPECT_NE(line.find(":memory=ptx"), std::string::npos) << line;
    EXPECT_NE(line.find(":stale="), std::string::npos) << line;
    EXPECT_EQ(run("replay '" + line + "'").code, 1) << line;
    const auto matrix = run(std::string("mutants --only ") + m + " --max-runs 300 --seconds 600 --progress off");
    EXPECT_EQ(matrix.code, 0) << matrix.out;
    EXPECT_NE(matrix.out.find("1 of 1 non-equivalent host mutants killed; control passed"), std::string::npos) << matrix.out;
  }
  // The journal says so, and a campaign on another backend stays sc.
  const std::string dir = testing::TempDir() + "gfsl_mixed_" + std::to_string(::getpid()) + "_journal";
  ASSERT_EQ(run("fuzz --max-runs 5 --seconds 600 --progress off --overwrite --out " + dir).code, 0);
  EXPECT_NE(gfsl::testing_files::slurp(dir + "/journal.jsonl").find("\"memory\":\"mixed\""), std::string::npos);
  EXPECT_EQ(run("fuzz --backend threads --memory mixed --max-runs 5 --progress off --out " + dir + "-threads").code, 2);
}

// A ptx run's stale choices as a dimension of their own: `--stale PCT,SEED`
// (the replay field stale=PCT,SEED) replays bit for bit, other seeds make
// other stale loads under the same schedule, and bad values are refused in
// one line.
TEST(MemoryModelCli, StaleChoicesOfTheirOwnReplayAndAreRefusedWhenBad) {
  using gfsl::testing_cli::run;
  const std::string base = "run --memory ptx --teams 4 --ops 200 --range 16 --granularity lane";
  const auto a = run(base + " --stale 40,7");
  const auto b = run(base + " --stale 40,7");
  ASSERT_EQ(a.code, 0) << a.out;
  const auto untimed = [](std::string out) {  // the elapsed line is the machine's
    const std::size_t at = out.find("elapsed:");
    return at == std::string::npos ? out : out.erase(at, out.find('\n', at) - at);
  };
  EXPECT_EQ(untimed(a.out), untimed(b.out));
  EXPECT_NE(a.out.find(":memory=ptx:stale=40,7"), std::string::npos) << a.out;
  const auto none = run(base + " --stale 0,7");
  EXPECT_NE(none.out.find("memory:   ptx: 0 loads returned a store older"), std::string::npos) << none.out;
  const auto all = run(base + " --stale 100,7");
  EXPECT_EQ(all.out.find("memory:   ptx: 0 loads returned"), std::string::npos) << all.out;
  for (const std::string& bad : {std::string("101,7"), std::string("40,0"), std::string("40"), std::string("-1,5"), std::string("x")}) {
    const auto r = run(base + " --stale " + bad);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.out;
  }
  EXPECT_EQ(run("run --teams 2 --ops 10 --stale 40,7").code, 2);  // sc: nothing to draw
  const std::size_t at = a.out.find("gfsl1:");
  ASSERT_NE(at, std::string::npos);
  std::string line = a.out.substr(at, a.out.find_first_of(" \n", at) - at);
  EXPECT_EQ(run("replay '" + line + "'").code, 0);
  line.replace(line.find("stale=40,7"), 10, "stale=40,x");
  const auto r = run("replay '" + line + "'");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("field 'stale' has a bad value"), std::string::npos) << r.out;
}

}  // namespace
