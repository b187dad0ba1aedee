// gfsl/record.cuh: record the history of your own GPU structure, for
// `gfsl check`. Header-only; needs the CUDA toolkit alone (cooperative groups,
// libcu++). docs/YOUR-STRUCTURE.md walks through it.
//
//   gfsl::record::device_log log(tiles, ops_per_tile);           // host: device memory, every record pending
//   // in the kernel, one recorder per tile:
//   gfsl::record::recorder<32> rec(tile, log.ref(), tile_id);
//   auto h = rec.call(gfsl::record::op::insert, key, value);
//   bool ok = my_ref.insert(tile, key, value);              // your call, unchanged
//   rec.ret(h, ok);
//   // host, after the kernel:
//   log.write_json_lines("trace.jsonl");                   // gfsl check trace.jsonl
//
// Stamps. Every call and return of an operation takes a stamp from one
// 64-bit counter in device memory, by an acq_rel fetch_add of the tile's
// leader, between two tile barriers (tile.sync()). The fetch_adds on one word
// are totally ordered (its modification order, which real time cannot
// contradict: an RMW that starts after another finished reads its result), so
// if operation A returned before B was called, A's return RMW precedes B's
// call RMW and A.ret < B.call. The barriers keep every lane's accesses of the
// operation after its call stamp and before its return stamp (tile.sync()
// orders the memory accesses of the tile's threads), so an operation's
// interval on the stamps contains all of its shared accesses. And since the
// RMWs are acq_rel, an earlier return synchronizes with every later call:
// the stamp order is one the memory model itself guarantees, not one a clock
// happened to show. One RMW serves as a tile's return and its next call
// (stamps 2s and 2s + 1), as the project's own runner does
// (exec/cuda/recording.cuh): it halves the traffic on the contended word.
//
// Records. A call writes the record's operation, key, argument and call
// stamp before the operation starts; its return stamp stays "never returned"
// (every record starts as 0xFF bytes) until ret() writes the answer and the
// return stamp. A kernel stopped mid-run (a flag the host raises, a watchdog)
// therefore leaves its unfinished operations pending, which the checker
// treats as "may or may not have taken effect": never a false answer.
// Records are written with streaming stores (st.global.cs), read once on the
// host after the kernel.
#pragma once

#include <cooperative_groups.h>
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace gfsl::record {

// The operations a record names. insert, erase and find are GFSL's insert,
// delete and contains (gfsl check's default model: insert-if-absent, erase
// answering the value removed, find answering the value found); upsert is
// insert-or-assign (--model upsert-map); count answers how many times a key
// is in (--model multiset).
enum class op : std::uint8_t { insert = 0, erase = 1, find = 2, upsert = 3, count = 4 };

// One record: five 8-byte words, the layout of the project's
// model::op_record, so that a trace writer may take them as they are.
struct alignas(8) entry {
  std::uint32_t who;    // the tile (tile ops) or tile * 32 + lane (lane ops)
  std::uint8_t kind;    // op
  std::uint8_t pad0[3];
  std::uint32_t key;
  std::uint32_t arg;    // insert, upsert: the value given
  std::uint8_t status;  // 0: returned normally
  std::uint8_t ok;
  std::uint8_t known;   // bit 0: ok was recorded; bit 1: value was recorded
  std::uint8_t pad1;
  std::uint32_t value;  // erase, find: the value answered; count: the count
  std::uint64_t call;
  std::uint64_t ret;    // ~0: never returned (pending)
};
static_assert(sizeof(entry) == 40, "a record is five 8-byte words");

inline constexpr std::uint64_t never = ~0ull;

// The device side of a log: trivially copyable, passed to kernels by value.
// Tile t owns records [t * per_tile, (t + 1) * per_tile).
struct log_ref {
  entry* records = nullptr;
  std::uint32_t per_tile = 0;
  std::uint32_t tiles = 0;
  std::uint64_t* clock = nullptr;          // the stamp counter
  unsigned int* overflow = nullptr;        // calls that found their tile's records full
};

// What call() hands back, for ret(): the record's index (never: the call was
// not recorded, its tile's records were full).
struct handle {
  std::uint32_t slot;
};
inline constexpr std::uint32_t no_slot = 0xFFFFFFFFu;

namespace detail {
__device__ inline void store_word(entry* e, int word, std::uint64_t w) {
  __stcs(reinterpret_cast<unsigned long long*>(e) + word, static_cast<unsigned long long>(w));
}
__device__ inline std::uint64_t word0(std::uint32_t who, op o) { return static_cast<std::uint64_t>(static_cast<std::uint8_t>(o)) << 32 | who; }
__device__ inline std::uint64_t word1(std::uint32_t key, std::uint32_t arg) { return static_cast<std::uint64_t>(arg) << 32 | key; }
__device__ inline std::uint64_t word2(bool ok, std::uint32_t value, std::uint8_t known) {
  return static_cast<std::uint64_t>(value) << 32 | static_cast<std::uint64_t>(known) << 16 | (ok ? 1u << 8 : 0u);
}
}  // namespace detail

// A recorder for one tile of N threads (N = 1 to 32). Every call and ret is
// made by all of the tile's threads together (they sync the tile); keep one
// recorder per tile for the whole kernel, so that its records stay in the
// order the tile ran them.
template <int N>
class recorder {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "a tile of 1, 2, 4, 8, 16 or 32 threads");

 public:
  using tile_type = cooperative_groups::thread_block_tile<N>;

  __device__ recorder(const tile_type& tile, const log_ref& log, std::uint32_t tile_id)
      : tile_(tile), log_(log), id_(tile_id), next_(0), boundary_(never) {}

  // Before the tile's own operation (every lane, the same arguments).
  __device__ handle call(op o, std::uint32_t key, std::uint32_t arg = 0) {
    const std::uint64_t s = call_stamp();
    const std::uint32_t slot = claim(1);
    if (slot != no_slot && tile_.thread_rank() == 0) {
      entry* e = log_.records + slot;
      detail::store_word(e, 0, detail::word0(id_, o));
      detail::store_word(e, 1, detail::word1(key, arg));
      detail::store_word(e, 3, s);
    }
    return {slot};
  }

  // After it: ret(h) when nothing of the answer is known (an upsert that
  // returns nothing), ret(h, ok), or ret(h, ok, value) (erase's value removed,
  // find's value found, count's count).
  __device__ void ret(handle h) { finish(h, false, 0, 0); }
  __device__ void ret(handle h, bool ok) { finish(h, ok, 0, 1); }
  __device__ void ret(handle h, bool ok, std::uint32_t value) { finish(h, ok, value, 3); }

  // The per-lane form, for APIs that take one operation per lane and serve
  // them with the whole tile (SlabHash-style): every lane calls, `active`
  // says whether it has an operation. One stamp opens all of them and one
  // closes them: each lane's interval contains its operation's true one,
  // which can only make more orders valid, never fewer.
  __device__ handle call_lanes(bool active, op o, std::uint32_t key, std::uint32_t arg = 0) {
    const std::uint64_t s = call_stamp();
    const unsigned mask = tile_.ballot(active);
    const unsigned rank = static_cast<unsigned>(tile_.thread_rank());
    const std::uint32_t first = claim(static_cast<std::uint32_t>(__popc(mask)));
    if (!active || first == no_slot) return {no_slot};
    const std::uint32_t slot = first + static_cast<std::uint32_t>(__popc(mask & ((1u << rank) - 1u)));
    entry* e = log_.records + slot;
    detail::store_word(e, 0, detail::word0(id_ * 32u + rank, o));
    detail::store_word(e, 1, detail::word1(key, arg));
    detail::store_word(e, 3, s);
    return {slot};
  }
  __device__ void ret_lanes(handle h) { finish_lanes(h, false, 0, 0); }
  __device__ void ret_lanes(handle h, bool ok) { finish_lanes(h, ok, 0, 1); }
  __device__ void ret_lanes(handle h, bool ok, std::uint32_t value) { finish_lanes(h, ok, value, 3); }

 private:
  // The leader's acq_rel fetch_add between two tile barriers, shared.
  __device__ std::uint64_t take() {
    tile_.sync();
    std::uint64_t v = 0;
    if (tile_.thread_rank() == 0) {
      v = cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device>(*log_.clock).fetch_add(1, cuda::std::memory_order_acq_rel);
    }
    v = tile_.shfl(v, 0);
    tile_.sync();
    return v;
  }
  // The last return's RMW serves as this call's (2s + 1 follows its 2s).
  __device__ std::uint64_t call_stamp() {
    const std::uint64_t s = boundary_ != never ? boundary_ : take();
    boundary_ = never;
    return 2 * s + 1;
  }
  __device__ std::uint64_t ret_stamp() {
    boundary_ = take();
    return 2 * boundary_;
  }
  // n records of the tile's range, or no_slot (counted once per call; a
  // tile id beyond the log's tiles has no range).
  __device__ std::uint32_t claim(std::uint32_t n) {
    if (id_ >= log_.tiles || next_ + n > log_.per_tile) {
      if (tile_.thread_rank() == 0 && n > 0) atomicAdd(log_.overflow, 1u);
      return no_slot;
    }
    const std::uint32_t slot = id_ * log_.per_tile + next_;
    next_ += n;
    return slot;
  }
  __device__ void finish(handle h, bool ok, std::uint32_t value, std::uint8_t known) {
    const std::uint64_t s = ret_stamp();
    if (h.slot != no_slot && tile_.thread_rank() == 0) {
      entry* e = log_.records + h.slot;
      detail::store_word(e, 2, detail::word2(ok, value, known));
      detail::store_word(e, 4, s);
    }
  }
  __device__ void finish_lanes(handle h, bool ok, std::uint32_t value, std::uint8_t known) {
    const std::uint64_t s = ret_stamp();
    if (h.slot != no_slot) {
      entry* e = log_.records + h.slot;
      detail::store_word(e, 2, detail::word2(ok, value, known));
      detail::store_word(e, 4, s);
    }
  }

  tile_type tile_;
  log_ref log_;
  std::uint32_t id_;
  std::uint32_t next_;      // the tile's records used so far
  std::uint64_t boundary_;  // the last return's RMW value, for the next call
};

// The host side: the log's device memory, and the trace it becomes.
class device_log {
 public:
  // Room for `per_tile` operations of each of `tiles` tiles (lane ops count
  // one per active lane). Throws std::runtime_error when CUDA refuses.
  device_log(std::uint32_t tiles, std::uint32_t per_tile) {
    ref_.tiles = tiles;
    ref_.per_tile = per_tile;
    const std::size_t n = static_cast<std::size_t>(tiles) * per_tile;
    check(cudaMalloc(&ref_.records, n * sizeof(entry) + 16), "cudaMalloc");
    ref_.clock = reinterpret_cast<std::uint64_t*>(reinterpret_cast<char*>(ref_.records) + n * sizeof(entry));
    ref_.overflow = reinterpret_cast<unsigned int*>(ref_.clock + 1);
    reset();
  }
  ~device_log() { cudaFree(ref_.records); }
  device_log(const device_log&) = delete;
  device_log& operator=(const device_log&) = delete;

  log_ref ref() const { return ref_; }

  // Every record pending and unused again, the clock at 1.
  void reset() {
    const std::size_t n = static_cast<std::size_t>(ref_.tiles) * ref_.per_tile;
    check(cudaMemset(ref_.records, 0xFF, n * sizeof(entry)), "cudaMemset");
    const std::uint64_t init[2] = {1, 0};
    check(cudaMemcpy(ref_.clock, init, sizeof init, cudaMemcpyHostToDevice), "cudaMemcpy");
  }

  // The records of operations that were called, in tile order (each tile's
  // in the order it ran them). Throws when a tile ran out of records: a
  // history with operations missing could make a correct run look wrong.
  std::vector<entry> records() const {
    unsigned int overflow = 0;
    check(cudaMemcpy(&overflow, ref_.overflow, sizeof overflow, cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (overflow) {
      throw std::runtime_error("gfsl::record::device_log: " + std::to_string(overflow) + " calls found their tile's " +
                               std::to_string(ref_.per_tile) + " records full; make per_tile larger");
    }
    const std::size_t n = static_cast<std::size_t>(ref_.tiles) * ref_.per_tile;
    std::vector<entry> all(n);
    check(cudaMemcpy(all.data(), ref_.records, n * sizeof(entry), cudaMemcpyDeviceToHost), "cudaMemcpy");
    std::vector<entry> out;
    for (const entry& e : all) {
      if (e.call != never) out.push_back(e);
    }
    return out;
  }

  // The JSON-lines trace gfsl check reads (traces/FORMAT.md): a metadata line,
  // then one record per line. insert, erase and find are written as insert,
  // delete and contains, which every model takes; upsert and count by their
  // names (gfsl check --model upsert-map, multiset).
  void write_json_lines(const std::string& path, const std::string& device = "") const {
    write_json_lines_of(records(), path, device);
  }
  static void write_json_lines_of(const std::vector<entry>& recs, const std::string& path, const std::string& device = "") {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw std::runtime_error(path + ": cannot write");
    std::string line = "{\"format\":\"gfsl-history\",\"version\":1,\"backend\":\"cuda\",\"clock\":\"device_counter\"";
    line += ",\"delete_value\":true,\"recorder\":\"gfsl/record.cuh\"";
    if (!device.empty() && device.find_first_of("\"\\") == std::string::npos) line += ",\"device\":\"" + device + "\"";
    line += "}\n";
    static const char* const names[] = {"insert", "delete", "contains", "upsert", "count"};
    char buf[256];
    for (const entry& e : recs) {
      const bool ok_known = e.known & 1, value_known = e.known & 2, pending = e.ret == never;
      const char* name = e.kind < 5 ? names[e.kind] : "unknown";
      int n = std::snprintf(buf, sizeof buf, "{\"team\":%u,\"op\":\"%s\",\"key\":%u", e.who, name, e.key);
      if (e.kind == static_cast<std::uint8_t>(op::insert) || e.kind == static_cast<std::uint8_t>(op::upsert)) {
        n += std::snprintf(buf + n, sizeof buf - n, ",\"value\":%u", e.arg);
      } else if (!pending && value_known) {
        n += std::snprintf(buf + n, sizeof buf - n, ",\"value\":%u", e.value);
      }
      if (pending || !ok_known) {
        n += std::snprintf(buf + n, sizeof buf - n, pending ? ",\"ok\":false" : ",\"ok\":null");
      } else {
        n += std::snprintf(buf + n, sizeof buf - n, ",\"ok\":%s", e.ok ? "true" : "false");
      }
      if (pending) {
        n += std::snprintf(buf + n, sizeof buf - n, ",\"call\":%llu,\"ret\":null}\n", static_cast<unsigned long long>(e.call));
      } else {
        n += std::snprintf(buf + n, sizeof buf - n, ",\"call\":%llu,\"ret\":%llu}\n", static_cast<unsigned long long>(e.call),
                           static_cast<unsigned long long>(e.ret));
      }
      line.append(buf, static_cast<std::size_t>(n));
      if (line.size() > (1u << 20)) {
        if (std::fwrite(line.data(), 1, line.size(), f) != line.size()) break;
        line.clear();
      }
    }
    const bool written = std::fwrite(line.data(), 1, line.size(), f) == line.size();
    if (std::fclose(f) != 0 || !written) throw std::runtime_error(path + ": cannot write");
  }

 private:
  static void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string("gfsl::record::device_log: ") + what + ": " + cudaGetErrorString(e));
  }
  log_ref ref_;
};

}  // namespace gfsl::record
