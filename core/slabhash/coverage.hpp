// SlabHash's coverage windows and effects (core/coverage.hpp says what they
// are; core/slabhash/algorithm.hpp marks them).
#pragma once

#include <cstdint>
#include <iterator>
#include <string_view>

#include "../coverage.hpp"

namespace gfsl {

enum class slab_window : std::uint8_t {
  claim,   // insert: from the slab read that found an EMPTY pair to the claim CAS
  erase,   // delete: from the slab read that found k to the CAS (or exchange) that removes it
  count_
};
enum class slab_effect : std::uint8_t { insert, remove, append, count_ };
inline constexpr std::string_view slab_window_names[] = {"claim", "delete"};
inline constexpr std::string_view slab_effect_names[] = {"insert", "remove", "append"};

static_assert(std::size(slab_window_names) <= max_windows && std::size(slab_effect_names) <= max_effects);
static_assert(std::size(slab_window_names) == static_cast<std::size_t>(slab_window::count_));
static_assert(std::size(slab_effect_names) == static_cast<std::size_t>(slab_effect::count_));
constexpr coverage_mark open_mark(slab_window w) { return mark_open(static_cast<int>(w)); }
constexpr coverage_mark effect_mark(slab_effect e) { return mark_effect(static_cast<int>(e)); }

}  // namespace gfsl
