#include "dot.hpp"

#include <algorithm>
#include <set>
#include <sstream>
#include <vector>

#include "../core/gfsl/layout.hpp"

namespace gfsl::invariants {

namespace {
std::string key_text(key_type k) {
  if (k == key_neg_inf) return "-inf";
  if (k == key_empty) return "inf";
  return std::to_string(k);
}
}  // namespace

std::string to_dot(const snapshot& s, std::size_t max_chunks_per_level) {
  std::ostringstream out;
  const int n = s.chunk;
  out << "digraph gfsl {\n  rankdir=LR;\n  node [shape=record, fontsize=10];\n";
  if ((n != 16 && n != 32) || s.words.size() < header_offsets::pool) {
    out << "  error [shape=note, label=\"not a GFSL snapshot\"];\n}\n";
    return out.str();
  }
  const std::size_t have = (s.words.size() - header_offsets::pool) / n;
  const std::uint64_t allocated = std::min<std::uint64_t>({s.words[header_offsets::alloc_counter], s.capacity, have});
  auto word = [&](chunk_index c, int lane) { return s.words[header_offsets::pool + static_cast<std::size_t>(c) * n + lane]; };
  std::set<chunk_index> drawn;
  std::vector<std::vector<chunk_index>> levels(n);
  for (int level = 0; level < n; ++level) {
    chunk_index c = static_cast<chunk_index>(s.words[header_offsets::heads + level]);
    std::set<chunk_index> seen;
    while (c != no_chunk && c < allocated && seen.insert(c).second && levels[level].size() < max_chunks_per_level) {
      levels[level].push_back(c);
      c = entry_value(word(c, n - 2));
    }
    if (c != no_chunk && levels[level].size() >= max_chunks_per_level) {
      out << "  cut" << level << " [shape=note, label=\"level " << level << ": more chunks not drawn\"];\n";
    }
  }
  int top = 0;
  for (int level = n - 1; level > 0; --level) {
    if (levels[level].size() > 1 || (levels[level].size() == 1 && entry_key(word(levels[level][0], 1)) != key_empty)) {
      top = level;
      break;
    }
  }
  for (int level = top; level >= 0; --level) {
    out << "  subgraph level" << level << " {\n    rank=same;\n    label" << level << " [shape=plaintext, label=\"level "
        << level << "\"];\n";
    for (chunk_index c : levels[level]) {
      drawn.insert(c);
      const std::uint64_t lock = word(c, n - 1);
      out << "    c" << c << " [label=\"" << c << "|";
      bool any = false;
      for (int i = 0; i < n - 2; ++i) {
        const key_type k = entry_key(word(c, i));
        if (k == key_empty) continue;
        out << (any ? " " : "") << key_text(k);
        any = true;
      }
      out << "|max " << key_text(entry_key(word(c, n - 2))) << "\"";
      if (lock_is_zombie(lock)) out << ", style=dashed, color=grey, fontcolor=grey";
      else if (lock_is_held(lock)) out << ", color=red, fontcolor=red, xlabel=\"locked by " << lock_owner(lock) << "\"";
      out << "];\n";
    }
    out << "  }\n";
  }
  for (int level = top; level >= 0; --level) {
    for (chunk_index c : levels[level]) {
      const chunk_index nx = entry_value(word(c, n - 2));
      if (drawn.count(nx)) out << "  c" << c << " -> c" << nx << ";\n";
      if (level == 0) continue;
      std::set<chunk_index> down;
      for (int i = 0; i < n - 2; ++i) {
        if (entry_key(word(c, i)) != key_empty) down.insert(entry_value(word(c, i)));
      }
      for (chunk_index d : down) {
        if (drawn.count(d)) out << "  c" << c << " -> c" << d << " [style=dotted, constraint=false];\n";
      }
    }
  }
  out << "}\n";
  return out.str();
}

}  // namespace gfsl::invariants
