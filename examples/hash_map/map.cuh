// The example's structure: a tiny lock-free hash map served by tiles of 8
// threads (hash_map.cu records it, oracles.cu runs the oracles on it).
#pragma once
#include <gfsl/record.cuh>

namespace cg = cooperative_groups;
using gfsl::record::op;
constexpr unsigned empty = ~0u, gone = ~0u;  // a free slot's key; an erased key's value

// Linear probing, one window of 8 slots per step; a slot once claimed belongs
// to its key for good (erase marks its value gone), so a key has one slot.
struct map_ref {
  unsigned long long* slots;
  unsigned capacity;
  template <class Tile>
  // `read`, when given: the window it answered from, as it read it (8 words, every lane).
  __device__ bool apply(const Tile& t, op o, unsigned k, unsigned v, unsigned& out, unsigned long long* read = nullptr) const {
    for (unsigned i = k * 2654435761u % capacity;;) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> cell(slots[(i + t.thread_rank()) % capacity]);
      unsigned long long e = cell.load(cuda::std::memory_order_acquire);
      const unsigned hit = t.ballot(unsigned(e) == k), free = t.ballot(unsigned(e) == empty);
      if (!hit && !free) { i = (i + t.size()) % capacity; continue; }
      const int lane = __ffs(hit ? hit : free) - 1;
      bool done = true, ok = false;
      const unsigned val = unsigned(e >> 32);
      if (t.thread_rank() == lane && (o == op::insert ? hit == 0 || val == gone : hit && val != gone)) {
        const unsigned long long want = o == op::erase ? e | 0xFFFFFFFFull << 32 : (unsigned long long)v << 32 | k;
        ok = o == op::find || cell.compare_exchange_strong(e, want, cuda::std::memory_order_acq_rel);
        done = ok;  // a lost race: read the window again
      }
      if (t.shfl(done, lane)) {
        for (unsigned r = 0; read && r < t.size(); ++r) read[r] = t.shfl(e, r);
        out = t.shfl(val, lane);
        return t.shfl(ok, lane);
      }
    }
  }
};
