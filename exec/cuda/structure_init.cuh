// A fresh structure on the device: every word set to its initial value
// (core/gfsl/layout.hpp), in parallel, so that a pool of gigabytes starts in
// milliseconds.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../../core/gfsl/layout.hpp"

namespace gfsl {

template <int N>
__global__ void init_structure_words(std::uint64_t* words, std::size_t count, std::uint32_t capacity) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    words[i] = initial_word<N>(i, capacity);
  }
}

}  // namespace gfsl
