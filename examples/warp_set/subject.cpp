// warp_set.cuh as a subject of gfsl: this file is all a user writes. Built
// and linked with gfsl::cpu_subject, the program speaks gfsl's command line
// for the set (docs/YOUR-STRUCTURE.md):
//
//   warp_set fuzz --max-runs 200 --out fz      # a campaign: found, shrunk, a replay line
//   warp_set replay 'gfsl1:...:subject=warp_set:...'
//   warp_set run --teams 4 --ops 40 --range 16 --trace t.gfsl   # gfsl check --model set t.gfsl
//
// Built with WARP_SET_FIXED, the same campaign comes out clean.
#include "gfsl/cpu/cuda.hpp"
#include "gfsl/cpu/subject.hpp"
#include "warp_set.cuh"

namespace {
std::uint32_t slots[32];  // the set's one slab, as a cudaMalloc'ed array would be
}

int main(int argc, char** argv) {
  gfsl::cpu::structure s;
  s.name = "warp_set";
  s.summary = "examples/warp_set: one slab of 32 slots, claimed by a warp";
  s.model = "set";
  s.max_key = 32;  // 32 slots: a set of at most 32 keys is never full
  s.reset = [] {
    for (std::uint32_t& x : slots) x = warp_set_empty;
  };
  s.insert = [](std::uint32_t key, std::uint32_t) { return warp_set_insert(slots, key); };
  s.find = [](std::uint32_t key, std::uint32_t&) { return warp_set_contains(slots, key); };
  s.memory = [] { return std::pair<const void*, std::size_t>(slots, sizeof slots); };
  return gfsl::cpu::main(argc, argv, s);
}
