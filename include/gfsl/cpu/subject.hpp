// Your structure as a subject of gfsl (docs/YOUR-STRUCTURE.md): name its
// operations as device callables, and the program speaks gfsl's command line
// for it: `fuzz` (campaigns, shrinking, journals, keep-going), `replay LINE`,
// `run --trace FILE` (what `gfsl check --model set|map` reads), `mutants`
// aside. Link the CMake target gfsl::cpu_subject.
//
//   #include "gfsl/cpu/cuda.hpp"     // first: CUDA as host C++
//   #include "gfsl/cpu/subject.hpp"
//   #include "my_set.cuh"            // yours, as shipped
//   int main(int argc, char** argv) {
//     gfsl::cpu::structure s;
//     s.name = "my_set";
//     s.reset = [] { ... };                                   // host: an empty structure
//     s.insert = [](std::uint32_t k, std::uint32_t v) { ... }; // device
//     s.erase = [](std::uint32_t k) { ... };
//     s.find = [](std::uint32_t k, std::uint32_t& v) { ... };
//     return gfsl::cpu::main(argc, argv, s);
//   }
//
// Each operation of the run is one warp's: every one of its 32 lanes calls
// the callable with the same key (and value), as a warp-cooperative
// structure's kernel does after its own ballot of the lanes' work, and lane
// 0's answer is the operation's. A structure whose operations are per
// thread does the work on lane 0 only (`if (threadIdx.x % 32 == 0)`) and
// returns that lane's answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gfsl::cpu {

struct structure {
  // Its name in replay lines, traces, reports: 1 to 40 of a-z, 0-9, _ and -.
  std::string name;
  // One line for reports.
  std::string summary;
  // What the history is checked against: "set" (answers only; a find's
  // value is not read) or "map" (a find returns the value the key holds).
  std::string model = "set";
  // Host code, before each run (and each replay): make the structure empty,
  // as a fresh cudaMalloc and init kernel would. Required.
  std::function<void()> reset;
  // Device code, called by all 32 lanes of a warp (lane 0's answer counts).
  // insert: true when the key was absent and is now stored with `value`;
  // erase: true when the key was present and is now gone (optional: a
  // structure without one runs workloads of inserts and finds); find: true
  // when present, with its value in `value` (model "map"). Required but erase.
  std::function<bool(std::uint32_t key, std::uint32_t value)> insert;
  std::function<bool(std::uint32_t key)> erase;
  std::function<bool(std::uint32_t key, std::uint32_t& value)> find;
  // Host code at quiescence, optional: the pairs stored, read from the
  // structure's memory. Without it the contents are what a warp's find of
  // every key of the range says.
  std::function<std::vector<std::pair<std::uint32_t, std::uint32_t>>()> contents;
  // Keys the operations take: [1, max_key] (a structure reserves the keys
  // above for its empty and deleted slots).
  std::uint32_t max_key = 0xFFFFFFFDu;
  // Warps (teams) in one launch, at most 32 (one block).
  std::uint32_t max_warps = 32;
  // Under --memory ptx: the bytes of the structure's memory the model
  // tracks (atomics elsewhere pass untracked). Without it, a campaign's
  // ptx runs run as sc (plain loads are never stale in this version of the
  // layer either: docs/CUDA-ON-CPU.md).
  std::function<std::pair<const void*, std::size_t>()> memory;
};

// Registers `s` as the program's subject and runs gfsl's command line on
// it: `PROGRAM fuzz ...`, `PROGRAM replay LINE`, `PROGRAM run ...` (with
// --subject NAME implied), and every other gfsl command. Returns the exit
// code (cli/commands.hpp). A structure missing a required callable (reset,
// insert, find), or with
// a bad name, is one line on stderr and exit code 2.
int main(int argc, char** argv, const structure& s);

}  // namespace gfsl::cpu
