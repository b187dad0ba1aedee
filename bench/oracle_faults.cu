// oracle_faults: the public oracles (include/gfsl/oracles.cuh) driven on the
// project's own structures through nothing but their callables, as a user's
// structure would be, to show that they catch real faults:
// - SlabHash (core/slabhash/), tiles of 16: `published` loses inserts and
//   duplicates keys when deletes of one key race (docs/FINDINGS.md, "SlabHash"), which the owned
//   keys with shared churn keys and the final-state accounting see; `fixed`
//   must show nothing under any oracle.
// - GFSL `thesis` (core/gfsl/algorithm.hpp), tiles of 32, under stable keys: its
//   torn chunk reads (gfsl stress --variant thesis) are rare, 0.01 to 0.19
//   per 10^9 answers, so a short run may show none.
//   oracle_faults [slabhash|gfsl|all] [seconds for each GFSL layout]
// Exit 0: published showed violations and fixed none (GFSL: reported only).
//
// Compiled inlined, as gfsl stress's SlabHash kernels are: the race windows
// depend on the speed of the real code.
#undef GFSL_DEVICE_NOINLINE_ALL

#include <gfsl/oracles.cuh>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/gfsl/algorithm.hpp"
#include "core/cuda/device_team.cuh"
#include "core/slabhash/algorithm.hpp"
#include "exec/cuda/structure_init.cuh"

namespace cg = cooperative_groups;
namespace o = gfsl::oracles;
using namespace gfsl;

namespace {

constexpr int threads = 512;

// The structures' answers as the oracles want them: ok and true. Any other
// status (a full pool) reads as false, a violation: the pools are sized so
// that it does not happen.
struct insert_call {
  template <class Tile, class Algo>
  __device__ bool operator()(const Tile&, Algo& a, unsigned k, unsigned v) const {
    const op_result r = a.insert(k, v);
    return r.st == status::ok && r.ok;
  }
};
struct erase_call {
  template <class Tile, class Algo>
  __device__ bool operator()(const Tile&, Algo& a, unsigned k) const {
    const op_result r = a.remove(k);
    return r.st == status::ok && r.ok;
  }
};
struct find_call {
  template <class Tile, class Algo>
  __device__ bool operator()(const Tile&, Algo& a, unsigned k, unsigned& v) const {
    const op_result r = a.contains(k);
    v = r.value;
    return r.st == status::ok && r.ok;
  }
};

// ---- SlabHash -------------------------------------------------------------

__global__ void slab_init(std::uint64_t* words, std::size_t count, slabhash::params sp) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    words[i] = slabhash::initial_word(i, sp);
}

// Stable keys collide by bucket: the j-th colliding key is the first key at
// or after s + 1 + j % 4096 in s's bucket (about `buckets` steps).
struct same_bucket {
  slabhash::params sp;
  __device__ unsigned operator()(unsigned s, unsigned j) const {
    const std::uint32_t b = slabhash::bucket_of(s, sp);
    unsigned k = s + 1 + j % 4096;
    for (std::uint32_t i = 0; i < 16 * sp.buckets && slabhash::bucket_of(k, sp) != b; ++i) ++k;
    return k;
  }
};

template <slabhash::slab_variant V>
__global__ void __launch_bounds__(threads, 4) slab_oracles(std::uint64_t* words, slabhash::params sp, o::launch l) {
  const auto tile = cg::tiled_partition<16>(cg::this_thread_block());
  const run_controls none{};
  device_team<16> team(static_cast<team_id>((blockIdx.x * blockDim.x + threadIdx.x) / 16), 0, none);
  using algo = slabhash::algorithm<device_team<16>, V>;
  algo a(team, words, sp);
  o::run(tile, a, l, insert_call{}, erase_call{}, find_call{}, same_bucket{sp});
}

template <slabhash::slab_variant V>
o::summary run_slab(o::kind kind, const char* name) {
  int dev = 0, sms = 0, blocks = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, slab_oracles<V>, threads, 0);
  const unsigned grid = static_cast<unsigned>(sms * std::max(1, blocks));  // every tile resident: publication's pairs both run
  o::config c;
  c.oracle = kind;
  c.tiles = grid * threads / 16;
  // gfsl stress --subject slabhash's defaults: 64 tiles a bucket, two owned
  // keys a tile, four shared keys a bucket, rounds of 256 operations a tile.
  slabhash::params sp;
  sp.buckets = std::max(1u, c.tiles / 64);
  sp.hash_seed = 1;
  c.per_tile = 2;
  c.churn = 4 * sp.buckets;
  c.range = 64 * sp.buckets;  // stable keys: 32 a bucket
  c.writer_every = 2;
  c.ops_per_tile = kind == o::kind::publication ? 64 : 256;
  c.seed = 7;
  o::harness h(c);
  // fixed never reuses a pair (tombstones): room for every operation of a
  // round being an insert, plus every key at once, times 16 for the slabs
  // that racing appends leak (a team whose link CAS loses keeps its slab
  // only for its own operation). A full pool ends operations with an error
  // status, which the callables answer as false: checked after every round.
  sp.pool_slabs = static_cast<std::uint32_t>(16 * (2ull * sp.buckets + (h.span() + 1ull * c.tiles * c.ops_per_tile) / slabhash::pairs_per_slab + 1024));
  const std::size_t count = slabhash::word_count(sp);
  std::uint64_t* words = nullptr;
  cudaMalloc(&words, count * sizeof(std::uint64_t));
  const int rounds = kind == o::kind::owned_keys ? 40 : 10;
  for (int r = 0; r < rounds; ++r) {
    slab_init<<<1024, 256>>>(words, count, sp);
    h.round([&](const o::launch& l) { slab_oracles<V><<<grid, threads>>>(words, sp, l); });
    std::uint64_t header[2] = {};
    cudaMemcpy(header, words, sizeof header, cudaMemcpyDeviceToHost);
    if (header[slabhash::error_word_index] != error_none)
      std::printf("ERROR: %s, round %d: the table's error word is %llu (a full pool): its figures are void\n", name, r,
                  static_cast<unsigned long long>(header[slabhash::error_word_index]));
  }
  h.print(stdout, name);
  cudaFree(words);
  return h.result();
}

// ---- GFSL thesis ----------------------------------------------------------

// gfsl stress's layout: stable keys even, each churned by the odd key below it.
struct key_below {
  __device__ unsigned operator()(unsigned s, unsigned) const { return s - 1; }
};

template <variant Var, bool Below>
__global__ void __launch_bounds__(threads, 2) gfsl_oracles(structure_view<32> s, std::uint64_t rule, o::launch l) {
  const auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  const run_controls none{};
  device_team<32> team(static_cast<team_id>((blockIdx.x * blockDim.x + threadIdx.x) / 32), l.round + 1, none);
  using algo = algorithm<device_team<32>, false, Var>;
  algo a(team, s, rule);
  if constexpr (Below) o::run(tile, a, l, insert_call{}, erase_call{}, find_call{}, key_below{});
  else o::run(tile, a, l, insert_call{}, erase_call{}, find_call{});
}

// Below: gfsl stress's layout (stable 2, 4, .., 40, churn 1, 3, .., 39);
// otherwise the default neighbours (stable 1, 3, .., 39, churn 2, 4, .., 40).
template <variant Var, bool Below>
o::summary run_gfsl(double seconds, const char* name) {
  int dev = 0, sms = 0, blocks = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, gfsl_oracles<Var, Below>, threads, 0);
  const unsigned grid = static_cast<unsigned>(sms * std::max(1, blocks));
  // gfsl stress --variant thesis's stable-contains: keys 1..40, the even
  // ones stable, one team in 32 writing their odd neighbours (same chunk).
  o::config c;
  c.oracle = o::kind::stable_keys;
  c.tiles = grid * threads / 32;
  c.base = Below ? 2 : 1;
  c.range = Below ? 39 : 40;
  c.stride = 2;
  c.writer_every = 32;
  c.ops_per_tile = ~0ull;
  c.seconds = 2.0;
  c.reports = 4;
  o::harness h(c);
  // Merged chunks are never reused: a pool of 4 GiB lasts a 2 s round.
  const std::uint32_t pool = (4ull << 30) / chunk_shape<32>::chunk_bytes;
  const std::size_t count = structure_view<32>::word_count(pool);
  std::uint64_t* words = nullptr;
  if (cudaMalloc(&words, count * sizeof(std::uint64_t)) != cudaSuccess) throw std::runtime_error("no room for GFSL's pool");
  const structure_view<32> view{words, pool};
  const std::uint64_t rule = shape_rule_of(1.0, false);
  for (int r = 0; r * c.seconds < seconds; ++r) {
    init_structure_words<32><<<1024, 256>>>(words, count, pool);
    h.round([&](const o::launch& l) { gfsl_oracles<Var, Below><<<grid, threads>>>(view, rule, l); });
    std::uint64_t err = 0;
    cudaMemcpy(&err, view.error_word(), sizeof err, cudaMemcpyDeviceToHost);
    if (err != error_none)
      std::printf("ERROR: %s, round %d: the structure's error word is %llu (a full pool): its figures are void\n", name, r,
                  static_cast<unsigned long long>(err));
  }
  h.print(stdout, name);
  cudaFree(words);
  return h.result();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "all";
  const double gfsl_seconds = argc > 2 ? std::atof(argv[2]) : 10;
  bool expected = true;
  try {
    if (which == "slabhash" || which == "all") {
      unsigned long long published = 0, fixed = 0;
      for (o::kind k : {o::kind::owned_keys, o::kind::stable_keys, o::kind::publication}) {
        published += run_slab<slabhash::slab_variant::published>(k, "slabhash published").violations();
        fixed += run_slab<slabhash::slab_variant::fixed>(k, "slabhash fixed").violations();
      }
      std::printf("slabhash: published %llu violations (expected some), fixed %llu (expected none)\n", published, fixed);
      expected = published > 0 && fixed == 0;
    }
    if (which == "gfsl" || which == "all") {
      run_gfsl<variant::thesis, true>(gfsl_seconds, "gfsl thesis (stable even keys, churn below)");
      run_gfsl<variant::thesis, false>(gfsl_seconds, "gfsl thesis (stable odd keys, churn above)");
      run_gfsl<variant::robust, false>(gfsl_seconds / 2, "gfsl robust (stable odd keys, churn above)");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oracle_faults: %s\n", e.what());
    return 2;
  }
  return expected ? 0 : 1;
}
