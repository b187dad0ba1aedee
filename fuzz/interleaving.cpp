#include "fuzz/interleaving.hpp"

#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "core/gfsl/layout.hpp"
#include "fuzz/word_names.hpp"

namespace gfsl::fuzz {

std::string interleaving_of(const failure& f, key_type key, const campaign_options& o) {
  run_config c = f.shrunk;
  c.so.record_accesses = true;
  const judgement j = execute_and_judge(c, o.judge);
  const std::vector<sched::logged_access>& log = j.outcome.accesses;
  const int words = static_cast<int>(c.w.chunk);
  const bool slab = c.w.subject == subject_kind::slabhash;
  const std::uint64_t pool = slab ? slabhash::header_words : header_offsets::pool;
  const auto chunk_of = [&](std::uint64_t w) { return w < pool ? no_chunk : static_cast<chunk_index>((w - pool) / words); };
  const auto lane_of = [&](std::uint64_t w) { return static_cast<int>((w - pool) % words); };
  std::set<chunk_index> around;
  for (const sched::logged_access& l : log) {
    const chunk_index ch = chunk_of(l.a.word);
    if (ch == no_chunk || lane_of(l.a.word) >= words - 1) continue;
    if (entry_key(l.result) == key || (l.a.kind != access_kind::load && entry_key(l.a.value) == key)) around.insert(ch);
  }
  std::ostringstream out;
  out << "key " << key << ": accesses to the chunks that held it (";
  for (chunk_index ch : around) out << (ch == *around.begin() ? "" : ", ") << ch;
  if (slab) out << "), in the order they happened; a chunk is a slab, lanes 0-14 its pairs (key shown, - EMPTY), lane 15 its next slab\n";
  else out << "), in the order they happened; lane " << words - 2 << " is NEXT (max, next chunk), lane " << words - 1 << " is LOCK\n";
  struct pending_read {
    chunk_index chunk = no_chunk;
    std::map<int, std::uint64_t> seen;       // lane -> word, the whole read so far
    std::map<int, std::uint64_t> unshown;    // lanes loaded since the last piece printed
    std::uint64_t writes_at_start = 0;
    std::vector<std::string> stale;          // lanes that returned an older store than the latest (ptx)
  };
  // "lanes 1-3, 7: 5 - 9" : which lanes, and what each held (a data lane's
  // key, "-" when empty; NEXT and LOCK spelled out).
  const auto lanes_and_words = [&](const std::map<int, std::uint64_t>& lanes) {
    std::string ids, held;
    for (auto it = lanes.begin(); it != lanes.end();) {
      auto run_end = it;
      while (std::next(run_end) != lanes.end() && std::next(run_end)->first == run_end->first + 1) ++run_end;
      ids += (ids.empty() ? "" : ", ") + std::to_string(it->first) +
             (run_end != it ? "-" + std::to_string(run_end->first) : std::string());
      it = std::next(run_end);
    }
    for (const auto& [lane, word] : lanes) held += (held.empty() ? "" : " ") + describe_word(word, lane, words, slab);
    return "lane" + std::string(lanes.size() > 1 ? "s " : " ") + ids + ": " + held;
  };
  std::map<team_id, pending_read> reads;
  std::map<chunk_index, std::uint64_t> writes;  // writes landed so far, per chunk
  std::size_t lines = 0;
  for (const sched::logged_access& l : log) {
    if (lines >= 5000) break;
    const chunk_index ch = chunk_of(l.a.word);
    if (ch == no_chunk || !around.count(ch)) continue;
    const int lane = lane_of(l.a.word);
    if (l.a.kind == access_kind::load) {
      pending_read& r = reads[l.a.team];
      if (l.a.group_index == 0 || r.chunk != ch) r = {ch, {}, {}, writes[ch], {}};
      r.seen[lane] = l.result;
      r.unshown[lane] = l.result;
      if (l.stale.stale) {
        // Under the ptx memory model: the store it returned and the latest
        // one, which no acquire, fence or RMW made it see.
        const auto by = [](team_id t) {
          return t == sched::ptx_memory::no_writer ? std::string("the value from before the run") : "team " + std::to_string(t) + "'s store";
        };
        r.stale.push_back("lane " + std::to_string(lane) + " returned " + describe_word(l.result, lane, words, slab) + " (" +
                          by(l.stale.returned_by) + "), not " + by(l.stale.latest_by) + " " +
                          describe_word(l.stale.latest, lane, words, slab) + " after it (" + std::to_string(l.stale.behind) +
                          (l.stale.behind == 1 ? " store" : " stores") + " behind the latest)");
      }
      if (l.a.group_index + 1 < l.a.group_size) continue;
      const bool torn = writes[ch] != r.writes_at_start;
      if (torn) out << "team " << l.a.team << " loads the rest of chunk " << ch << ", " << lanes_and_words(r.unshown) << "\n";
      out << "team " << l.a.team << " read chunk " << ch << ": keys";
      for (const auto& [at, word] : r.seen) {
        if (at < words - (slab ? 1 : 2) && entry_key(word) != key_empty) out << " " << describe_word(word, at, words, slab);
      }
      if (slab) {
        if (r.seen.count(words - 1)) out << "; " << describe_word(r.seen[words - 1], words - 1, words, slab);
      } else {
        if (r.seen.count(words - 2)) out << "; " << describe_word(r.seen[words - 2], words - 2, words);
        if (r.seen.count(words - 1)) out << "; lock " << describe_word(r.seen[words - 1], words - 1, words);
      }
      if (torn) out << "   TORN: " << writes[ch] - r.writes_at_start << " writes landed during this read";
      out << "\n";
      lines += torn ? 2 : 1;
      for (const std::string& s : r.stale) {
        out << "    STALE read by team " << l.a.team << " of chunk " << ch << " " << s << "\n";
        ++lines;
      }
      r = {};
      continue;
    }
    const bool wrote = l.a.kind != access_kind::cas || l.result == l.a.expected;
    if (wrote) {
      ++writes[ch];
      // Reads of this chunk under way: what they have loaded so far, before
      // this write lands.
      for (auto& [team, r] : reads) {
        if (team == l.a.team || r.chunk != ch || r.unshown.empty()) continue;
        out << "team " << team << " has loaded chunk " << ch << " " << lanes_and_words(r.unshown) << "\n";
        r.unshown.clear();
        ++lines;
      }
    }
    out << "  team " << l.a.team << " ";
    if (l.a.kind == access_kind::cas) {
      out << (wrote ? "CAS" : "failed CAS") << " chunk " << ch << " lane " << lane << ": " << describe_word(l.a.expected, lane, words, slab)
          << " -> " << describe_word(l.a.value, lane, words, slab);
      if (!wrote) out << " (found " << describe_word(l.result, lane, words, slab) << ")";
    } else if (l.a.kind == access_kind::exchange) {
      out << "exchanges chunk " << ch << " lane " << lane << ": " << describe_word(l.result, lane, words, slab) << " -> "
          << describe_word(l.a.value, lane, words, slab);
    } else {
      out << "writes chunk " << ch << " lane " << lane << ": "
          << describe_word(l.a.kind == access_kind::store ? l.a.value : l.result + l.a.value, lane, words, slab);
    }
    out << "\n";
    ++lines;
  }
  if (lines >= 5000) out << "(cut at 5,000 lines)\n";
  return out.str();
}

}  // namespace gfsl::fuzz
