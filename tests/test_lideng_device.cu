// The Li-Deng skiplist (core/lideng/) on the GPU: the algorithm of the CPU
// tests, instantiated with the device team (core/cuda/device_team.cuh), one
// team of 16 lanes per slot of the batch, all of a batch in one block so that
// its barriers can be met. Batches of one kind, on a list prefilled on the
// host; the answers and the final list are compared with the operations
// applied one at a time in slot order (the `fixed` semantics of a batch of
// one kind: core/lideng/algorithm.hpp, (D)), and the list's snapshot
// invariants are checked.
//
// Exit status 0: passed; 1: a difference (each printed); 77: no GPU (ctest's
// skip code).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/cuda/device_team.cuh"
#include "core/lideng/algorithm.hpp"
#include "core/lideng/invariants.hpp"
#include "core/lideng/layout.hpp"

namespace {

using namespace gfsl;
using team16 = device_team<16>;

struct dev_op {
  op_kind kind;
  key_type key;
  value_type value;
};
struct dev_result {
  std::uint32_t st, ok, value;
};

__global__ void run_batches(std::uint64_t* words, lideng::params p, const dev_op* ops, int batches, dev_result* out,
                            std::uint64_t seed) {
  const run_controls controls{};
  const team_id id = (blockIdx.x * blockDim.x + threadIdx.x) / 16;
  if (id >= p.batch) return;
  team16 t(id, seed, controls);
  lideng::algorithm<team16> a(t, words, p);
  for (int b = 0; b < batches; ++b) {
    const dev_op o = ops[b * p.batch + id];
    const op_result r = a.apply(o.kind, o.key, o.value);
    if (threadIdx.x % 16 == 0) {
      out[b * p.batch + id] = {static_cast<std::uint32_t>(r.st), r.ok ? 1u : 0u, r.value};
    }
  }
}

int check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    return 1;
  }
  return 0;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  int failures = 0, batches_run = 0, ops_run = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const std::uint32_t teams = 2 + static_cast<std::uint32_t>(seed % 15);  // 2 .. 16
    const key_type range = 8 + static_cast<key_type>(rng() % 56);
    const int batches = 12;
    lideng::params p{1 + static_cast<int>(seed % 8), teams, lideng::first_free_node + range + teams * batches};
    std::vector<std::uint64_t> words(lideng::word_count(p));
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = lideng::initial_word(i, p);
    std::map<key_type, value_type> model;
    std::vector<dev_op> prefill;  // by team 0 alone, a batch of one each
    for (key_type k = 1; k <= range; ++k) {
      if (rng() % 2 == 0) continue;
      prefill.push_back({op_kind::insert, k, k});
      model.emplace(k, k);
    }
    std::vector<dev_op> ops;
    for (int b = 0; b < batches; ++b) {
      const int draw = static_cast<int>(rng() % 3);
      const op_kind kind = draw == 0 ? op_kind::insert : draw == 1 ? op_kind::remove : op_kind::contains;
      for (std::uint32_t j = 0; j < teams; ++j) {
        // Neighbouring keys and, in one batch of three, one key twice.
        const key_type k = 1 + static_cast<key_type>(rng() % range);
        ops.push_back({kind, k, static_cast<value_type>(1000 * (b + 1) + j)});
      }
    }
    std::uint64_t* d_words = nullptr;
    dev_op* d_ops = nullptr;
    dev_result* d_out = nullptr;
    const std::size_t most = std::max(ops.size(), prefill.size()) + 1;
    if (check(cudaMalloc(&d_words, words.size() * 8), "cudaMalloc") || check(cudaMalloc(&d_ops, most * sizeof(dev_op)), "cudaMalloc") ||
        check(cudaMalloc(&d_out, most * sizeof(dev_result)), "cudaMalloc")) {
      return 1;
    }
    cudaMemcpy(d_words, words.data(), words.size() * 8, cudaMemcpyHostToDevice);
    lideng::params one = p;
    one.batch = 1;
    cudaMemcpy(d_ops, prefill.data(), prefill.size() * sizeof(dev_op), cudaMemcpyHostToDevice);
    run_batches<<<1, 16>>>(d_words, one, d_ops, static_cast<int>(prefill.size()), d_out, seed + 1000);
    if (check(cudaGetLastError(), "launch") || check(cudaDeviceSynchronize(), "prefill kernel")) return 1;
    cudaMemcpy(d_ops, ops.data(), ops.size() * sizeof(dev_op), cudaMemcpyHostToDevice);
    run_batches<<<1, teams * 16>>>(d_words, p, d_ops, batches, d_out, seed);
    if (check(cudaGetLastError(), "launch") || check(cudaDeviceSynchronize(), "kernel")) return 1;
    std::vector<dev_result> out(ops.size());
    cudaMemcpy(out.data(), d_out, out.size() * sizeof(dev_result), cudaMemcpyDeviceToHost);
    cudaMemcpy(words.data(), d_words, words.size() * 8, cudaMemcpyDeviceToHost);
    cudaFree(d_words);
    cudaFree(d_ops);
    cudaFree(d_out);
    // One at a time in slot order: the answers every batch of one kind gives.
    for (int b = 0; b < batches; ++b) {
      for (std::uint32_t j = 0; j < teams; ++j) {
        const dev_op& o = ops[b * teams + j];
        dev_result want{0, 0, 0};
        const auto it = model.find(o.key);
        if (o.kind == op_kind::insert) {
          want.ok = model.emplace(o.key, o.value).second;
        } else if (it != model.end()) {
          want = {0, 1, it->second};
          if (o.kind == op_kind::remove) model.erase(it);
        }
        const dev_result& got = out[b * teams + j];
        ++ops_run;
        if (got.st != want.st || got.ok != want.ok || got.value != want.value) {
          if (++failures <= 20) {
            std::printf("seed %llu batch %d team %u: %s(%u) answered st %u ok %u value %u, one at a time: ok %u value %u\n",
                        static_cast<unsigned long long>(seed), b, j,
                        o.kind == op_kind::insert ? "insert" : o.kind == op_kind::remove ? "delete" : "contains", o.key,
                        got.st, got.ok, got.value, want.ok, want.value);
          }
        }
      }
      ++batches_run;
    }
    const lideng::contents c = lideng::inspect(words.data(), words.size(), p);
    for (const auto& line : c.problems) {
      if (++failures <= 20) std::printf("seed %llu: %s\n", static_cast<unsigned long long>(seed), line.c_str());
    }
    if (c.entries != std::vector<std::pair<key_type, value_type>>(model.begin(), model.end())) {
      if (++failures <= 20) std::printf("seed %llu: the final list differs from the operations one at a time\n", static_cast<unsigned long long>(seed));
    }
    if (words[lideng::barrier_word] != 2ull * teams * batches) {
      if (++failures <= 20) std::printf("seed %llu: barrier counter %llu\n", static_cast<unsigned long long>(seed),
                                        static_cast<unsigned long long>(words[lideng::barrier_word]));
    }
  }
  std::printf("%d batches, %d operations on the GPU: %d differences\n", batches_run, ops_run, failures);
  return failures == 0 ? 0 : 1;
}
