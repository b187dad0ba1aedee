// A tiny lock-free hash map served by tiles of 8 threads (map.cuh), and its
// history recorded for gfsl check. Build against the installed package:
//   cmake -S . -B build -DCMAKE_PREFIX_PATH=PREFIX && cmake --build build
//   ./build/hash_map trace.jsonl && gfsl check trace.jsonl
#include <gfsl/record.cuh>

#include "map.cuh"

#include <chrono>
#include <cstdio>
#include <cstdlib>

template <bool Record>
__global__ void run(map_ref m, gfsl::record::log_ref log, unsigned ops, unsigned keys, unsigned group) {
  const auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  const unsigned id = (blockIdx.x * blockDim.x + threadIdx.x) / 8;
  if (id >= log.tiles) return;
  gfsl::record::recorder<8> rec(tile, log, id, group);  // stamp groups: one stamp for up to `group` operations
  for (unsigned j = 0; j < ops; ++j) {
    const unsigned r = (id * 7919u + j * 104729u) * 2654435761u;
    const op o = op(r % 3);
    const unsigned k = 1 + (r >> 8) % keys;
    unsigned out = 0;
    gfsl::record::handle h{};
    if (Record) h = rec.call(o, k, j);
    const bool ok = m.apply(tile, o, k, j, out);
    if (Record) o == op::insert ? rec.ret(h, ok) : rec.ret(h, ok, out);
  }
  if (Record) rec.finish();  // closes the last group
}

int main(int argc, char** argv) {
  const char* trace = argc > 1 ? argv[1] : "trace.jsonl";
  const unsigned tiles = argc > 2 ? std::atoi(argv[2]) : 1024, ops = argc > 3 ? std::atoi(argv[3]) : 64;
  const unsigned keys = argc > 4 ? std::atoi(argv[4]) : 256, capacity = 4 * keys + 64;
  const unsigned group = argc > 5 ? std::atoi(argv[5]) : 8;  // 1 to 8
  map_ref m{nullptr, capacity};
  cudaMalloc(&m.slots, capacity * sizeof(unsigned long long));
  gfsl::record::device_log log(tiles, ops);
  double ms[2];
  for (int pass = 0; pass < 4; ++pass) {  // each kernel once to load it, then timed
    const int recorded = pass % 2;
    cudaMemset(m.slots, 0xFF, capacity * sizeof(unsigned long long));
    if (recorded) log.reset();
    cudaDeviceSynchronize();
    const auto t0 = std::chrono::steady_clock::now();
    if (recorded) run<true><<<(tiles * 8 + 255) / 256, 256>>>(m, log.ref(), ops, keys, group);
    else run<false><<<(tiles * 8 + 255) / 256, 256>>>(m, log.ref(), ops, keys, group);
    if (cudaDeviceSynchronize() != cudaSuccess) return std::fprintf(stderr, "hash_map: the kernel failed\n"), 1;
    ms[recorded] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  std::printf("%llu operations: %.2f ms unrecorded, %.2f ms recorded (%.2fx)\n", 1ull * tiles * ops, ms[0], ms[1], ms[0] / ms[1]);
  if (std::string(trace) != "-") log.write_json_lines(trace), std::printf("trace: %s (gfsl check %s)\n", trace, trace);
  return 0;
}
