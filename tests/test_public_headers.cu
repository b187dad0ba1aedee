// The public headers on the GPU: gfsl/record.cuh records a history that the
// checker decides (tile and lane forms, stamp groups, pending and errored
// operations), and gfsl/oracles.cuh reports what a failing read saw. Skipped
// where no GPU can run them; compiled everywhere nvcc is.
#include <gtest/gtest.h>

#include <gfsl/oracles.cuh>
#include <gfsl/range_oracles.cuh>
#include <gfsl/record.cuh>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "../examples/hash_map/map.cuh"
#include "linearizability/checker.hpp"
#include "linearizability/models.hpp"
#include "linearizability/range_checker.hpp"
#include "linearizability/range_model.hpp"
#include "traces/trace.hpp"

namespace {

namespace rec = gfsl::record;
namespace orc = gfsl::oracles;

std::string no_gpu() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return "no CUDA device";
  return "";
}

// Every tile runs `ops` operations of the example's map on `keys` keys, as
// the example does; `unreturned`: the tiles whose last operation is called and
// never returned (a kernel stopped mid-operation); `errored`: the tiles whose
// last operation ends in an error.
__global__ void map_ops(map_ref m, rec::log_ref log, unsigned ops, unsigned keys, std::uint32_t group, unsigned unreturned,
                        unsigned errored) {
  const auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  const unsigned id = (blockIdx.x * blockDim.x + threadIdx.x) / 8;
  if (id >= log.tiles) return;
  rec::recorder<8> r(tile, log, id, group);
  for (unsigned j = 0; j < ops; ++j) {
    const unsigned x = (id * 7919u + j * 104729u) * 2654435761u;
    const op o = op(x % 3);
    const unsigned k = 1 + (x >> 8) % keys;
    unsigned out = 0;
    const rec::handle h = r.call(o, k, j);
    const bool ok = m.apply(tile, o, k, j, out);
    if (j + 1 == ops && id < unreturned) break;
    if (j + 1 == ops && id >= unreturned && id < unreturned + errored) {
      r.ret_error(h, rec::error::pool_exhausted);
      break;
    }
    o == op::insert ? r.ret(h, ok) : r.ret(h, ok, out);
  }
  r.finish();
}

// The lane form: every lane of a tile of 32 brings its own operation.
__global__ void map_lane_ops(map_ref m, rec::log_ref log, unsigned rounds, unsigned keys) {
  const auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  const auto part = cg::tiled_partition<8>(cg::this_thread_block());
  const unsigned id = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (id >= log.tiles) return;
  rec::recorder<32> r(tile, log, id);
  for (unsigned j = 0; j < rounds; ++j) {
    const unsigned x = (id * 31u + tile.thread_rank() * 7919u + j * 104729u) * 2654435761u;
    const op o = op(x % 3);
    const unsigned k = 1 + (x >> 8) % keys;
    const rec::handle h = r.call_lanes(true, o, k, j);
    // The tile serves its 32 lanes' operations 8 lanes at a time: each part
    // of 8 runs its own 8, one after another.
    bool my_ok = false;
    unsigned my_out = 0;
    for (unsigned i = 0; i < 8; ++i) {
      const unsigned src = tile.thread_rank() / 8 * 8 + i;  // lane i of this part
      const unsigned kk = tile.shfl(k, src), oo = tile.shfl(static_cast<unsigned>(o), src);
      unsigned out = 0;
      const bool ok = m.apply(part, static_cast<op>(oo), kk, j, out);
      if (tile.thread_rank() == src) my_ok = ok, my_out = out;
    }
    r.ret_lanes(h, my_ok, o == op::insert ? 0 : my_out);  // one place for every lane: it shuffles the stamp
  }
}

struct map_on_device {
  map_ref m{nullptr, 0};
  explicit map_on_device(unsigned capacity) {
    m.capacity = capacity;
    EXPECT_EQ(cudaMalloc(&m.slots, capacity * sizeof(unsigned long long)), cudaSuccess);
    EXPECT_EQ(cudaMemset(m.slots, 0xFF, capacity * sizeof(unsigned long long)), cudaSuccess);
  }
  ~map_on_device() { cudaFree(m.slots); }
};

std::vector<gfsl::model::op_record> as_history(const std::vector<rec::entry>& entries) {
  std::vector<gfsl::model::op_record> h(entries.size());
  static_assert(sizeof(rec::entry) == sizeof(gfsl::model::op_record));
  std::memcpy(h.data(), entries.data(), entries.size() * sizeof(rec::entry));
  for (auto& r : h) r.ok = r.ok != 0;  // the header writes 0 or 1; normalised for bool
  return h;
}

gfsl::lin::verdict verdict_of(const std::vector<rec::entry>& entries) {
  return gfsl::lin::check_history(as_history(entries)).v;
}

TEST(RecordHeader, TileOperationsOfACorrectMapAreLinearizableWithAndWithoutStampGroups) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  for (std::uint32_t group : {1u, 4u, 8u}) {
    SCOPED_TRACE("stamp group " + std::to_string(group));
    const unsigned tiles = 256, ops = 48, keys = 24;
    map_on_device d(4 * keys + 64);
    rec::device_log log(tiles, ops);
    map_ops<<<(tiles * 8 + 255) / 256, 256>>>(d.m, log.ref(), ops, keys, group, 0, 0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<rec::entry> e = log.records();
    ASSERT_EQ(e.size(), std::size_t{tiles} * ops);
    // Each tile's records in its program order: intervals never go back, and
    // on one key a tile's operations never overlap (a group closes first).
    std::map<std::uint32_t, std::vector<const rec::entry*>> by_tile;
    std::uint64_t shared_calls = 0;
    for (const rec::entry& r : e) {
      ASSERT_NE(r.ret, rec::never);
      ASSERT_LT(r.call, r.ret);
      by_tile[r.who].push_back(&r);
    }
    for (const auto& [tile, rs] : by_tile) {
      for (std::size_t i = 1; i < rs.size(); ++i) {
        ASSERT_LE(rs[i - 1]->call, rs[i]->call);
        if (rs[i - 1]->call == rs[i]->call) ++shared_calls;
        else ASSERT_LT(rs[i - 1]->ret, rs[i]->call);
        for (std::size_t j = i; j-- > 0 && rs[j]->call == rs[i]->call;) ASSERT_NE(rs[j]->key, rs[i]->key) << "a group holds one key twice";
      }
    }
    if (group == 1) EXPECT_EQ(shared_calls, 0u);
    else EXPECT_GT(shared_calls, 0u) << "no two operations ever shared a group";
    EXPECT_EQ(verdict_of(e), gfsl::lin::verdict::linearizable);
  }
}

TEST(RecordHeader, AWrongAnswerInARecordedHistoryIsRejected) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  const unsigned tiles = 64, ops = 32, keys = 8;
  map_on_device d(4 * keys + 64);
  rec::device_log log(tiles, ops);
  map_ops<<<(tiles * 8 + 255) / 256, 256>>>(d.m, log.ref(), ops, keys, 8, 0, 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<rec::entry> e = log.records();
  ASSERT_EQ(verdict_of(e), gfsl::lin::verdict::linearizable);
  // The first find that answered "absent" after the key's first successful
  // insert had returned now claims to have found it with a value no one
  // inserted.
  std::map<std::uint32_t, std::uint64_t> first_insert_ret;
  for (const rec::entry& r : e)
    if (r.kind == 0 && r.ok && (!first_insert_ret.count(r.key) || r.ret < first_insert_ret[r.key])) first_insert_ret[r.key] = r.ret;
  bool flipped = false;
  for (rec::entry& r : e) {
    if (r.kind == 2 && r.ok && first_insert_ret.count(r.key) && r.call > first_insert_ret[r.key]) {
      r.value = 0xABCDEF;
      flipped = true;
      break;
    }
  }
  ASSERT_TRUE(flipped);
  EXPECT_EQ(verdict_of(e), gfsl::lin::verdict::not_linearizable);
}

TEST(RecordHeader, UnreturnedCallsStayPendingAndErrorsAreMarked) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  const unsigned tiles = 64, ops = 16, keys = 16;
  for (std::uint32_t group : {1u, 8u}) {
    map_on_device d(4 * keys + 64);
    rec::device_log log(tiles, ops);
    map_ops<<<(tiles * 8 + 255) / 256, 256>>>(d.m, log.ref(), ops, keys, group, 5, 3);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<rec::entry> e = log.records();
    ASSERT_EQ(e.size(), std::size_t{tiles} * ops);
    unsigned pending = 0, errored = 0;
    for (const rec::entry& r : e) {
      if (r.ret == rec::never || r.status == 0xFF) {  // never returned (in a group: its answer never written)
        ++pending;
        EXPECT_LT(r.who, 5u);
      }
      if (r.ret != rec::never && r.status != 0 && r.status != 0xFF) {
        ++errored;
        EXPECT_GE(r.who, 5u);
        EXPECT_LT(r.who, 8u);
      }
    }
    // In groups the tile's last group closes at finish(), the unreturned
    // operation included: it keeps the 0xFF fill as its answer, which the
    // checker and the JSON writer read as pending.
    EXPECT_EQ(pending, 5u);
    EXPECT_EQ(errored, 3u);
    EXPECT_EQ(verdict_of(e), gfsl::lin::verdict::linearizable);
    const std::string path = ::testing::TempDir() + "/pending.jsonl";
    rec::device_log::write_json_lines_of(e, path);
    std::FILE* f = std::fopen(path.c_str(), "r");
    ASSERT_NE(f, nullptr);
    std::string text(1 << 20, '\0');
    text.resize(std::fread(text.data(), 1, text.size(), f));
    std::fclose(f);
    EXPECT_NE(text.find("\"ret\":null"), std::string::npos);
    EXPECT_NE(text.find("\"status\":\"pool_exhausted\""), std::string::npos);
  }
}

TEST(RecordHeader, LaneOperationsOfACorrectMapAreLinearizable) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  const unsigned tiles = 64, rounds = 8, keys = 32;
  map_on_device d(4 * keys + 64);
  rec::device_log log(tiles, rounds * 32);
  map_lane_ops<<<(tiles * 32 + 255) / 256, 256>>>(d.m, log.ref(), rounds, keys);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<rec::entry> e = log.records();
  ASSERT_EQ(e.size(), std::size_t{tiles} * rounds * 32);
  const gfsl::lin::verdict v = verdict_of(e);
  if (v != gfsl::lin::verdict::linearizable) {
    const std::string path = ::testing::TempDir() + "/lane-operations.jsonl";
    rec::device_log::write_json_lines_of(e, path);
    ADD_FAILURE() << "the history, for gfsl check: " << path;
  }
}

TEST(RecordHeader, AFullTileCountsItsOverflowAndTheLogRefusesToHandItOver) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  map_on_device d(128);
  rec::device_log log(8, 4);  // room for 4 a tile; the tiles run 6
  map_ops<<<1, 64>>>(d.m, log.ref(), 6, 16, 1, 0, 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_THROW(log.records(), std::runtime_error);
}

TEST(RecordHeader, SeveralLaunchesWithTheSameTileIdsMakeOneHistory) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  const unsigned tiles = 64, ops = 16, keys = 16, launches = 3;
  map_on_device d(4 * keys + 64);
  rec::device_log log(tiles, launches * ops);
  for (unsigned i = 0; i < launches; ++i) {
    map_ops<<<(tiles * 8 + 255) / 256, 256>>>(d.m, log.ref(), ops, keys, i == 1 ? 8 : 1, 0, 0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  const std::vector<rec::entry> e = log.records();
  ASSERT_EQ(e.size(), std::size_t{tiles} * launches * ops) << "a launch overwrote an earlier one's records";
  // Each tile's records, in the log's order, are its operations in program
  // order across the launches.
  std::map<std::uint32_t, std::vector<const rec::entry*>> by_tile;
  for (const rec::entry& r : e) by_tile[r.who].push_back(&r);
  ASSERT_EQ(by_tile.size(), std::size_t{tiles});
  for (const auto& [tile, rs] : by_tile) {
    ASSERT_EQ(rs.size(), std::size_t{launches} * ops);
    for (std::size_t i = 1; i < rs.size(); ++i) ASSERT_LE(rs[i - 1]->call, rs[i]->call);
    for (unsigned l = 1; l < launches; ++l) ASSERT_LT(rs[l * ops - 1]->ret, rs[l * ops]->call);
  }
  EXPECT_EQ(verdict_of(e), gfsl::lin::verdict::linearizable);
}

// Two recorders of one tile id live at once: the second records nothing and
// the log is refused.
__global__ void two_recorders(rec::log_ref log) {
  const auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  const unsigned id = (blockIdx.x * blockDim.x + threadIdx.x) / 8;
  rec::recorder<8> a(tile, log, id);
  rec::recorder<8> b(tile, log, id);
  const rec::handle h = b.call(rec::op::find, 1);
  b.ret(h, false, 0);
  const rec::handle g = a.call(rec::op::find, 1);
  a.ret(g, false, 0);
}

TEST(RecordHeader, TwoLiveRecordersOfOneTileAreRefusedNeverOverwritten) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  rec::device_log log(8, 4);
  two_recorders<<<1, 64>>>(log.ref());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  try {
    log.records();
    ADD_FAILURE() << "the log was handed over";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("8 recorders found their tile id held by another recorder"), std::string::npos) << e.what();
  }
}

// The writer's side needs no GPU: hand-made records, as ret() leaves them.
rec::entry made(unsigned who, rec::op o, unsigned key, unsigned arg, bool ok, unsigned value, unsigned char known, unsigned long long call,
                unsigned long long ret) {
  rec::entry e{};
  e.who = who, e.kind = static_cast<unsigned char>(o), e.key = key, e.arg = arg, e.ok = ok, e.value = value, e.known = known;
  e.call = call, e.ret = ret;
  return e;
}

std::string read_text(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return "";
  std::string text(1 << 16, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), f));
  std::fclose(f);
  return text;
}

TEST(RecordWriter, AMultisetsInsertsThatReturnNothingAreWrittenAsTrueAndCheck) {
  // Two inserts of a multimap whose insert returns nothing (ret(h): known 0),
  // then a count of 2, an erase, a find.
  const std::vector<rec::entry> h = {made(0, rec::op::insert, 5, 1, false, 0, 0, 1, 2), made(1, rec::op::insert, 5, 2, false, 0, 0, 3, 4),
                                     made(0, rec::op::erase, 5, 0, true, 0, 1, 5, 6), made(1, rec::op::find, 5, 0, true, 2, 3, 7, 8)};
  const std::string path = ::testing::TempDir() + "/multiset-void-inserts.jsonl";
  rec::device_log::write_json_lines_of(h, path, "", rec::trace_model::multiset);
  const std::string text = read_text(path);
  EXPECT_NE(text.find("\"model\":\"multiset\""), std::string::npos) << text;
  EXPECT_EQ(text.find("null"), std::string::npos) << text;
  const gfsl::traces::operation_table ops = gfsl::lin::operation_table_of(gfsl::lin::model_kind::multiset);
  const gfsl::traces::trace t = gfsl::traces::read_trace(path, nullptr, false, &ops);
  ASSERT_EQ(t.history.size(), 4u);
  EXPECT_TRUE(t.history[0].ok && t.history[1].ok);
  EXPECT_EQ(gfsl::lin::check_history_model(gfsl::lin::model_kind::multiset, t.history, t.op_codes, gfsl::lin::model_check_options{}).v,
            gfsl::lin::verdict::linearizable);
  // A count of the key among them: the model is inferred as multiset.
  std::vector<rec::entry> counted = h;
  counted.push_back(made(2, rec::op::count, 5, 0, true, 1, 3, 9, 10));
  EXPECT_EQ(rec::device_log::model_of(counted), rec::trace_model::multiset);
  rec::device_log::write_json_lines_of(counted, path);
  EXPECT_NE(read_text(path).find("\"model\":\"multiset\""), std::string::npos);
}

// An ordered map's records: the traces/FORMAT.md example, as the recorder
// leaves it (range blocks in the pair area, handles in the records).
struct ordered_log {
  std::vector<rec::entry> records;
  std::vector<std::uint64_t> pairs;
  std::uint32_t block(std::uint32_t snapshot, std::vector<std::pair<unsigned, unsigned>> kv) {
    const std::uint32_t at = static_cast<std::uint32_t>(pairs.size());
    pairs.push_back(std::uint64_t{snapshot} << 32 | kv.size());
    for (auto [k, v] : kv) pairs.push_back(std::uint64_t{v} << 32 | k);
    return at;
  }
};
ordered_log format_example() {
  ordered_log l;
  l.records.push_back(made(3, rec::op::insert, 12, 4, true, 0, 1, 100, 110));
  l.records.push_back(made(0, rec::op::insert, 17, 9, true, 0, 1, 120, 180));
  l.records.push_back(made(1, rec::op::range, 10, 20, true, l.block(0, {{12, 4}, {17, 9}}), 3, 130, 200));
  l.records.push_back(made(2, rec::op::snapshot, 0, 0, true, 3, 3, 140, 150));
  rec::entry at = made(2, rec::op::find, 17, 3, true, 9, 3, 160, 170);
  at.kind |= rec::at_handle;
  l.records.push_back(at);
  rec::entry range_at = made(2, rec::op::range, 0, 100, true, l.block(3, {{12, 4}, {17, 9}}), 3, 171, 190);
  range_at.kind |= rec::at_handle;
  l.records.push_back(range_at);
  l.records.push_back(made(3, rec::op::erase, 12, 0, true, 4, 3, 210, 220));
  return l;
}

gfsl::lin::ranges::range_check_result check_ordered(const ordered_log& l, const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name + ".jsonl";
  rec::device_log::write_json_lines_of(l.records, l.pairs, path);
  const gfsl::lin::ranges::range_history h = gfsl::lin::ranges::read_range_trace(path, gfsl::lin::ranges::range_model::ordered_map);
  return gfsl::lin::ranges::check_range_history(h);
}

TEST(RecordWriter, RangesSnapshotsAndReadsAtAHandleAreWrittenAsTheOrderedModelReadsThem) {
  const ordered_log l = format_example();
  EXPECT_EQ(rec::device_log::model_of(l.records), rec::trace_model::ordered_map);
  const std::string path = ::testing::TempDir() + "/ordered-example.jsonl";
  rec::device_log::write_json_lines_of(l.records, l.pairs, path);
  const std::string text = read_text(path);
  EXPECT_NE(text.find("\"model\":\"ordered-map\""), std::string::npos) << text;
  EXPECT_NE(text.find("{\"team\":1,\"op\":\"range\",\"lo\":10,\"hi\":20,\"pairs\":[[12,4],[17,9]],\"call\":130,\"ret\":200}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{\"team\":2,\"op\":\"snapshot\",\"handle\":3,\"call\":140,\"ret\":150}"), std::string::npos) << text;
  EXPECT_NE(text.find("\"op\":\"contains\",\"key\":17,\"handle\":3,\"value\":9"), std::string::npos) << text;
  EXPECT_NE(text.find("\"lo\":0,\"hi\":100,\"handle\":3,\"pairs\":[[12,4],[17,9]]"), std::string::npos) << text;
  const auto r = check_ordered(l, "ordered-example-check");
  EXPECT_TRUE(r.refusal.empty()) << r.refusal;
  EXPECT_EQ(r.v, gfsl::lin::verdict::linearizable);
  EXPECT_EQ(r.ranges, 2u);
  EXPECT_EQ(r.snapshots, 1u);
}

TEST(RecordWriter, ARangeAtAHandleThatMissesAKeyInsertedBeforeTheSnapshotIsRejected) {
  ordered_log l = format_example();
  // The range at handle 3 answers only 17: 12's insert returned (110)
  // before the snapshot was called (140), and its erase came after (210).
  rec::entry& range_at = l.records[5];
  range_at.value = l.block(3, {{17, 9}});
  const auto r = check_ordered(l, "ordered-missing");
  EXPECT_TRUE(r.refusal.empty()) << r.refusal;
  EXPECT_EQ(r.v, gfsl::lin::verdict::not_linearizable);
  EXPECT_FALSE(r.why.empty());
}

TEST(RecordWriter, ARangeRecordNamingABlockOutsideThePairAreaIsRefusedNamingTheRange) {
  ordered_log l = format_example();
  l.records[2].value = 1000;
  const std::string path = ::testing::TempDir() + "/ordered-outside.jsonl";
  try {
    rec::device_log::write_json_lines_of(l.records, l.pairs, path);
    FAIL() << "written";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("range [10, 20) of tile 1 names pair block 1000"), std::string::npos) << e.what();
  }
  // Without the pair area, any range is outside it.
  EXPECT_THROW(rec::device_log::write_json_lines_of(format_example().records, path), std::runtime_error);
  // Ranges and counts: no model takes both.
  std::vector<rec::entry> counted = format_example().records;
  counted.push_back(made(0, rec::op::count, 5, 0, true, 1, 3, 300, 310));
  EXPECT_THROW(rec::device_log::model_of(counted), std::runtime_error);
  EXPECT_THROW(rec::device_log::model_of(format_example().records, rec::trace_model::map), std::runtime_error);
}

// A map behind one lock (every operation, ranges included, atomic), one
// thread a tile (the answers live in that thread's registers: found[] is
// its own, which a tile of one may hand to ret_range): its recorded history with ranges must be linearizable, and
// a range answer changed to a value nobody wrote must not be.
__global__ void locked_ordered_ops(unsigned* lock, unsigned* slots, unsigned keys, rec::log_ref log, unsigned per_thread) {
  const auto tile = cg::tiled_partition<1>(cg::this_thread_block());
  const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= log.tiles) return;
  rec::recorder<1> r(tile, log, id);
  unsigned found[16], values[16];
  for (unsigned j = 0; j < per_thread; ++j) {
    const unsigned x = (id * 7919u + j * 104729u) * 2654435761u;
    // Inserts of fresh keys (the threads of one round insert neighbours, so
    // a range meets some of them and not others) and ranges anywhere: every
    // answer pins its point between inserts, which the checker decides
    // without a search. Erases of keys inserted in earlier rounds.
    const unsigned what = x % 4;
    const unsigned k = what == 0 ? 1 + j * log.tiles + id : 1 + (x >> 8) % keys;
    const unsigned v = id * per_thread + j + 1;  // unique: the checker needs each written value unique to its key
    // Stamped inside the lock: the history is sequential, so the checker
    // decides it outright, and what is tested is what the recorder wrote.
    while (atomicCAS(lock, 0u, 1u) != 0u) {
    }
    __threadfence();
    rec::handle h = what == 0 ? r.call(rec::op::insert, k, v) : what == 1 ? r.call(rec::op::erase, k) : r.call_range(k, k + 16);
    unsigned n = 0, old = 0;
    if (what == 0) {
      if (!slots[k]) slots[k] = v;
      else old = 1;
    } else if (what == 1) {
      old = slots[k];
      slots[k] = 0;
    } else {
      for (unsigned y = k; y < k + 16 && y <= keys; ++y) {
        const unsigned s = *(volatile unsigned*)(slots + y);
        if (s) found[n] = y, values[n++] = s;
      }
    }
    if (what == 0) r.ret(h, old == 0);
    else if (what == 1) r.ret(h, old != 0, old);
    else r.ret_range(h, found, values, n);
    __threadfence();
    atomicExch(lock, 0u);
  }
}

TEST(RecordHeader, RangesOfALockedMapAreLinearizableAndAForgedPairIsNot) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  const unsigned threads = 512, per_thread = 16, keys = threads * per_thread;
  unsigned *lock = nullptr, *slots = nullptr;
  ASSERT_EQ(cudaMalloc(&lock, sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&slots, (keys + 1) * sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMemset(lock, 0, sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMemset(slots, 0, (keys + 1) * sizeof(unsigned)), cudaSuccess);
  rec::device_log log(threads, per_thread, rec::clock_kind::counter, std::uint64_t{threads} * per_thread * 17);
  locked_ordered_ops<<<threads / 128, 128>>>(lock, slots, keys, log.ref(), per_thread);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ordered_log l{log.records(), log.pairs()};
  ASSERT_EQ(l.records.size(), std::size_t{threads} * per_thread);
  std::uint64_t ranges = 0, nonempty = 0;
  for (const rec::entry& e : l.records) {
    if (e.kind != static_cast<unsigned char>(rec::op::range)) continue;
    ++ranges;
    ASSERT_NE(e.ret, rec::never);
    ASSERT_LT(e.value, l.pairs.size());
    if ((l.pairs[e.value] & 0xFFFFFFFFull) > 0) ++nonempty;
  }
  EXPECT_GT(ranges, 0u);
  EXPECT_GT(nonempty, 0u) << "no range found anything: the test judges nothing";
  auto r = check_ordered(l, "locked-ordered");
  EXPECT_TRUE(r.refusal.empty()) << r.refusal;
  EXPECT_EQ(r.v, gfsl::lin::verdict::linearizable);
  // The first pair of the first range that found one now holds a value no
  // operation wrote.
  for (const rec::entry& e : l.records) {
    if (e.kind == static_cast<unsigned char>(rec::op::range) && (l.pairs[e.value] & 0xFFFFFFFFull) > 0) {
      l.pairs[e.value + 1] = std::uint64_t{0xABCDEF} << 32 | (l.pairs[e.value + 1] & 0xFFFFFFFFull);
      break;
    }
  }
  r = check_ordered(l, "locked-ordered-forged");
  EXPECT_NE(r.v, gfsl::lin::verdict::linearizable) << "a forged range answer was accepted";
  cudaFree(lock);
  cudaFree(slots);
}

TEST(RecordHeader, RangeAnswersPastThePairAreaAreCountedAndTheLogRefused) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  unsigned *lock = nullptr, *slots = nullptr;
  ASSERT_EQ(cudaMalloc(&lock, sizeof(unsigned)), cudaSuccess);
  const unsigned keys = 128 * 16;
  ASSERT_EQ(cudaMalloc(&slots, (keys + 1) * sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMemset(lock, 0, sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMemset(slots, 0, (keys + 1) * sizeof(unsigned)), cudaSuccess);
  rec::device_log log(128, 16, rec::clock_kind::counter, 8);  // 8 words: a few empty ranges at most
  locked_ordered_ops<<<1, 128>>>(lock, slots, keys, log.ref(), 16);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  try {
    (void)log.records();
    FAIL() << "handed over";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("pair area of 8 words full"), std::string::npos) << e.what();
  }
  cudaFree(lock);
  cudaFree(slots);
}

TEST(RecordWriter, AnAnswerlessInsertOutsideAMultisetIsRefusedNotWrittenAsNull) {
  const std::vector<rec::entry> h = {made(0, rec::op::insert, 5, 1, false, 0, 0, 1, 2)};
  const std::string path = ::testing::TempDir() + "/map-void-insert.jsonl";
  std::remove(path.c_str());
  for (rec::trace_model m : {rec::trace_model::inferred, rec::trace_model::map}) {
    try {
      rec::device_log::write_json_lines_of(h, path, "", m);
      ADD_FAILURE() << "written";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("an insert of key 5 answered nothing"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(read_text(path), "") << "a refused log left a file";
  // An upsert outside upsert-map, a count outside multiset: refused too.
  EXPECT_THROW(rec::device_log::model_of({made(0, rec::op::upsert, 5, 1, false, 0, 0, 1, 2)}, rec::trace_model::multiset), std::runtime_error);
  EXPECT_THROW(rec::device_log::model_of({made(0, rec::op::count, 5, 0, true, 0, 3, 1, 2)}, rec::trace_model::map), std::runtime_error);
  EXPECT_EQ(rec::device_log::model_of({made(0, rec::op::upsert, 5, 1, false, 0, 0, 1, 2)}), rec::trace_model::upsert_map);
}

// A map whose find misses its key once in a while: the oracle's report must
// carry the window the failing find read.
struct lying_map {
  map_ref m;
  unsigned* lies;
};

__global__ void lying_oracles(lying_map lm, orc::launch l, bool report_words) {
  const auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  auto insert = [](auto& t, lying_map& h, unsigned k, unsigned v) {
    unsigned out;
    return h.m.apply(t, op::insert, k, v, out);
  };
  auto erase = [](auto& t, lying_map& h, unsigned k) {
    unsigned out;
    return h.m.apply(t, op::erase, k, 0, out);
  };
  // Lies on the first 4 finds of a stable key that found it, in the run
  // phase (where readers judge them).
  auto lie = [](auto& t, lying_map& h, unsigned k, bool found, const orc::launch& la) {
    const bool judged = found && la.ph == orc::phase::run && (k - la.cfg.base) % la.cfg.stride == 0;
    unsigned n = ~0u;
    if (t.thread_rank() == 0 && judged) n = atomicAdd(h.lies, 1u);
    return judged && t.shfl(n, 0) < 4;
  };
  if (report_words) {
    orc::run(tile, lm, l, insert, erase, [&](auto& t, lying_map& h, unsigned k, unsigned& v, orc::seen& s) {
      s.count = 8;
      const bool found = h.m.apply(t, op::find, k, 0, v, s.words);
      return found && !lie(t, h, k, found, l);
    });
  } else {
    orc::run(tile, lm, l, insert, erase, [&](auto& t, lying_map& h, unsigned k, unsigned& v) {
      const bool found = h.m.apply(t, op::find, k, 0, v);
      return found && !lie(t, h, k, found, l);
    });
  }
}

TEST(Oracles, AViolationCarriesTheWordsTheFailingReadSawWhenTheFindReportsThem) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  for (bool report_words : {true, false}) {
    SCOPED_TRACE(report_words ? "find reports its words" : "find reports nothing");
    orc::config c;
    c.oracle = orc::kind::stable_keys;
    c.tiles = 256;
    c.ops_per_tile = 64;
    orc::harness h(c);
    lying_map lm{{nullptr, 4 * h.span() + 64}, nullptr};
    ASSERT_EQ(cudaMalloc(&lm.m.slots, lm.m.capacity * sizeof(unsigned long long)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&lm.lies, sizeof(unsigned)), cudaSuccess);
    ASSERT_EQ(cudaMemset(lm.m.slots, 0xFF, lm.m.capacity * sizeof(unsigned long long)), cudaSuccess);
    ASSERT_EQ(cudaMemset(lm.lies, 0, sizeof(unsigned)), cudaSuccess);
    h.round([&](const orc::launch& l) { lying_oracles<<<(c.tiles * 8 + 255) / 256, 256>>>(lm, l, report_words); });
    const orc::summary s = h.result();
    ASSERT_EQ(s.n[orc::c_missing], 4u);
    ASSERT_FALSE(s.records.empty());
    for (const orc::violation& v : s.records) {
      if (v.operation != static_cast<std::uint8_t>(orc::op::find)) continue;
      const std::string d = orc::harness::describe(v);
      if (!report_words) {
        EXPECT_EQ(v.read.count, 0u);
        EXPECT_EQ(d.find("the read saw"), std::string::npos) << d;
        continue;
      }
      ASSERT_EQ(v.read.count, 8u) << d;
      // The window the find answered from holds the key, with its value.
      const unsigned long long want = static_cast<unsigned long long>(orc::value_of(v.key)) << 32 | v.key;
      bool holds = false;
      for (unsigned i = 0; i < 8; ++i) holds |= v.read.words[i] == want;
      EXPECT_TRUE(holds) << d;
      char hex[24];
      std::snprintf(hex, sizeof hex, "%016llx", want);
      EXPECT_NE(d.find(std::string("the read saw")), std::string::npos) << d;
      EXPECT_NE(d.find(hex), std::string::npos) << d;
    }
    cudaFree(lm.m.slots);
    cudaFree(lm.lies);
  }
}

// A kernel that never calls run() (as nvcc leaves a kernel whose body it
// compiled away): the harness judged nothing and must refuse the run.
__global__ void no_oracles(orc::launch) {}

TEST(Oracles, AKernelThatRunsNoOracleIsRefusedNotClean) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  orc::config c;
  c.oracle = orc::kind::owned_keys;
  c.tiles = 64;
  orc::harness h(c);
  h.round([&](const orc::launch& l) { no_oracles<<<2, 256>>>(l); });
  const orc::summary s = h.result();
  EXPECT_EQ(s.judged(), 0u);
  EXPECT_EQ(s.unlooked_keys, h.span());
  EXPECT_TRUE(s.refused());
  EXPECT_FALSE(h.clean());
}

// An insert-or-assign over the example's map: its insert answers true
// whether it inserted or the key was in (the value it would assign,
// value_of(k), is the one there).
__global__ void assigning_oracles(map_ref m, orc::launch l) {
  const auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  orc::run(tile, m, l,
           [](auto& t, map_ref& m, unsigned k, unsigned v) {
             unsigned out;
             m.apply(t, op::insert, k, v, out);
             return true;
           },
           [](auto& t, map_ref& m, unsigned k) { unsigned out; return m.apply(t, op::erase, k, 0, out); },
           [](auto& t, map_ref& m, unsigned k, unsigned& v) { return m.apply(t, op::find, k, 0, v); });
}

// A multiset: one count per key, changed by lane 0's atomics; its insert
// returns nothing (the callable answers true).
struct counted_multiset {
  unsigned* n;
};
__global__ void multiset_oracles(counted_multiset m, orc::launch l) {
  const auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  orc::run(tile, m, l,
           [](auto& t, counted_multiset& m, unsigned k, unsigned) {
             if (t.thread_rank() == 0) atomicAdd(m.n + k, 1u);
             t.sync();
             return true;
           },
           [](auto& t, counted_multiset& m, unsigned k) {
             bool ok = false;
             if (t.thread_rank() == 0) {
               cuda::atomic_ref<unsigned, cuda::thread_scope_device> c(m.n[k]);
               unsigned v = c.load();
               while (v > 0 && !c.compare_exchange_weak(v, v - 1)) {}
               ok = v > 0;
             }
             return t.shfl(ok, 0);
           },
           [](auto& t, counted_multiset& m, unsigned k, unsigned& v) {
             bool ok = false;
             if (t.thread_rank() == 0) ok = cuda::atomic_ref<unsigned, cuda::thread_scope_device>(m.n[k]).load() > 0;
             v = orc::value_of(k);
             return t.shfl(ok, 0);
           });
}

orc::config owned_with_churn(orc::insert_kind m) {
  orc::config c;
  c.oracle = orc::kind::owned_keys;
  c.insert = m;
  c.tiles = 256;
  c.per_tile = 4;
  c.churn = 16;
  c.ops_per_tile = 256;
  return c;
}

TEST(Oracles, AnInsertOrAssignIsCleanUnderOrAssignAndCaughtUnderIfAbsent) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  for (orc::insert_kind m : {orc::insert_kind::or_assign, orc::insert_kind::if_absent}) {
    SCOPED_TRACE(orc::insert_kind_name(m));
    const orc::config c = owned_with_churn(m);
    orc::harness h(c);
    map_on_device d(4 * h.span() + 64);
    for (int r = 0; r < 2; ++r) {
      ASSERT_EQ(cudaMemset(d.m.slots, 0xFF, d.m.capacity * sizeof(unsigned long long)), cudaSuccess);
      ASSERT_TRUE(h.round([&](const orc::launch& l) { assigning_oracles<<<(c.tiles * 8 + 255) / 256, 256>>>(d.m, l); }));
    }
    const orc::summary s = h.result();
    EXPECT_GT(s.judged(), 0u);
    if (m == orc::insert_kind::or_assign) {
      EXPECT_TRUE(h.clean()) << s.violations() << " violations";
    } else {
      EXPECT_GT(s.n[orc::c_extra], 0u) << "an assign answering true was not caught as an insert over itself";
    }
  }
}

TEST(Oracles, AMultisetIsCleanUnderMultisetAndCaughtUnderIfAbsent) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  for (orc::kind k : {orc::kind::owned_keys, orc::kind::stable_keys, orc::kind::publication}) {
    for (orc::insert_kind m : {orc::insert_kind::multiset, orc::insert_kind::if_absent}) {
      SCOPED_TRACE(std::string(orc::kind_name(k)) + ", " + orc::insert_kind_name(m));
      orc::config c = owned_with_churn(m);
      c.oracle = k;
      orc::harness h(c);
      counted_multiset ms{nullptr};
      const std::size_t words = c.base + h.span() + 64;
      ASSERT_EQ(cudaMalloc(&ms.n, words * sizeof(unsigned)), cudaSuccess);
      ASSERT_EQ(cudaMemset(ms.n, 0, words * sizeof(unsigned)), cudaSuccess);
      ASSERT_TRUE(h.round([&](const orc::launch& l) { multiset_oracles<<<(c.tiles * 8 + 255) / 256, 256>>>(ms, l); }));
      const orc::summary s = h.result();
      EXPECT_GT(s.judged(), 0u);
      if (m == orc::insert_kind::multiset) EXPECT_TRUE(h.clean()) << s.violations() << " violations";
      if (m == orc::insert_kind::if_absent && k == orc::kind::owned_keys) EXPECT_FALSE(h.clean());
      cudaFree(ms.n);
    }
  }
}

// A structure that livelocks in the run phase: its kernel spins until the
// host lets it go (a word of mapped host memory), so that the test can end
// it once the harness has reported the hang.
__global__ void livelocking_oracles(map_ref m, orc::launch l, volatile int* release) {
  if (l.ph == orc::phase::run) {
    while (*release == 0) __nanosleep(1000);
    return;
  }
  const auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  orc::run(tile, m, l, [](auto& t, map_ref& m, unsigned k, unsigned v) { unsigned out; return m.apply(t, op::insert, k, v, out); },
           [](auto& t, map_ref& m, unsigned k) { unsigned out; return m.apply(t, op::erase, k, 0, out); },
           [](auto& t, map_ref& m, unsigned k, unsigned& v) { return m.apply(t, op::find, k, 0, v); });
}

TEST(Oracles, ALivelockedLaunchIsReportedAtItsDeadlineNamingTheRoundAndPhase) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  int* release = nullptr;
  ASSERT_EQ(cudaHostAlloc(&release, sizeof(int), cudaHostAllocMapped), cudaSuccess);
  *release = 0;
  int* release_d = nullptr;
  ASSERT_EQ(cudaHostGetDevicePointer(&release_d, release, 0), cudaSuccess);
  orc::config c;
  c.oracle = orc::kind::owned_keys;
  c.tiles = 64;
  c.deadline_seconds = 0.5;
  auto* h = new orc::harness(c);  // left alive: after a hang its memory is the process's
  map_on_device d(4 * h->span() + 64);
  const bool finished = h->round([&](const orc::launch& l) { livelocking_oracles<<<2, 256>>>(d.m, l, release_d); });
  EXPECT_FALSE(finished);
  const orc::summary s = h->result();
  EXPECT_TRUE(s.hung());
  EXPECT_FALSE(h->clean());
  EXPECT_NE(s.hang.find("round 1, the run phase: your kernel did not finish within"), std::string::npos) << s.hang;
  EXPECT_FALSE(h->round([&](const orc::launch& l) { livelocking_oracles<<<2, 256>>>(d.m, l, release_d); }));
  *release = 1;  // the test's own way out; a real livelock has none
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaFreeHost(release);
}

// gfsl/range_oracles.cuh: an ordered map behind one spin lock (every
// operation, ranges included, atomic), so the log of its inserts and ranges
// must judge clean: stable keys always there, fresh keys in order.
namespace ro = gfsl::range_oracles;

__global__ void locked_ranges(unsigned* lock, unsigned* slots, unsigned keys, ro::range_log log, unsigned per_thread) {
  const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  for (unsigned j = 0; j < per_thread; ++j) {
    const bool ranger = (id + j) % 4 == 0;
    const unsigned k = 1 + ((id * per_thread + j) * 7919u) % keys;
    const std::uint64_t c = ro::stamp();
    while (atomicCAS(lock, 0u, 1u) != 0u) {
    }
    __threadfence();
    unsigned found[16], values[16], n = 0;
    bool inserted = false;
    if (ranger) {
      for (unsigned x = k; x < k + 16 && x <= keys; ++x) {
        const unsigned v = *(volatile unsigned*)(slots + x);
        if (v) found[n] = x, values[n++] = v;
      }
    } else if (!slots[k]) {
      slots[k] = ro::stable_value(k) ^ 1u;  // fresh: any value; the log carries it
      inserted = true;
    }
    __threadfence();
    atomicExch(lock, 0u);
    const std::uint64_t r = ro::stamp();
    if (ranger) ro::record_range(log, id, k, std::uint64_t{k} + 16, c, r, found, values, n);
    else ro::record_insert(log, k, ro::stable_value(k) ^ 1u, c, r, inserted);
  }
}

TEST(RangeOraclesHeader, ALockedMapJudgesClean) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  const unsigned keys = 4096, threads = 2048, per_thread = 8;
  unsigned *lock = nullptr, *slots = nullptr;
  ASSERT_EQ(cudaMalloc(&lock, sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&slots, (keys + 1) * sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMemset(lock, 0, sizeof(unsigned)), cudaSuccess);
  // Stable keys: every 64th, prefilled with their values.
  std::vector<unsigned> init(keys + 1, 0);
  const ro::stable_keys stable{64, keys / 64 - 1, 64};
  for (unsigned i = 0; i < stable.count; ++i) init[stable.base + i * stable.stride] = ro::stable_value(stable.base + i * stable.stride);
  ASSERT_EQ(cudaMemcpy(slots, init.data(), init.size() * sizeof(unsigned), cudaMemcpyHostToDevice), cudaSuccess);
  ro::range_log_buffers buf(threads * per_thread, threads * per_thread, threads * per_thread * 16);
  locked_ranges<<<threads / 128, 128>>>(lock, slots, keys, buf.log(), per_thread);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  // Stable keys' slots are taken: inserts of them fail, and no fresh key is inserted twice.
  const ro::range_judgement j = ro::judge_ranges(buf.inserts(), buf.ranges(), buf.pairs(), stable);
  EXPECT_TRUE(j.clean()) << j.summary();
  EXPECT_GT(j.stable_checked, 0u);
  EXPECT_GT(j.fresh_checked, 0u);
  cudaFree(lock);
  cudaFree(slots);
}

}  // namespace
