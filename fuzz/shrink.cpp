#include "fuzz/shrink.hpp"

#include <algorithm>

namespace gfsl::fuzz {

std::optional<run_config> cut_at(const run_config& listed, const judgement& failing, std::uint64_t cut) {
  if (!listed.script) return std::nullopt;
  const auto& teams = listed.script->team_ops;
  // A team's records are its listed operations in order: the first
  // `called[t]` of its list began before the cut.
  std::vector<std::size_t> called(teams.size(), 0);
  for (const model::op_record& r : failing.run.records) {
    if (r.team < called.size() && r.call < cut) ++called[r.team];
  }
  std::size_t kept = 0, total = 0;
  for (std::size_t t = 0; t < teams.size(); ++t) {
    called[t] = std::min(called[t], teams[t].size());
    kept += called[t];
    total += teams[t].size();
  }
  if (kept == 0 || kept == total) return std::nullopt;
  run_config n = listed;
  for (std::size_t t = 0; t < teams.size(); ++t) n.script->team_ops[t].resize(called[t]);
  n.script->number_values();
  model::fit_workload(*n.script, n.w);
  return n;
}

std::optional<run_config> without_tail(const run_config& listed, std::size_t team, std::size_t count) {
  if (!listed.script || team >= listed.script->team_ops.size() || count == 0 || count > listed.script->team_ops[team].size()) {
    return std::nullopt;
  }
  run_config n = listed;
  auto& ops = n.script->team_ops[team];
  ops.resize(ops.size() - count);
  n.script->number_values();
  model::fit_workload(*n.script, n.w);
  return n;
}

std::vector<std::uint64_t> cut_points(const judgement& failing) {
  std::uint64_t first = model::no_stamp, last = 0;
  for (const model::op_record& r : failing.run.records) {
    first = std::min(first, r.call);
    last = std::max(last, r.call);
  }
  std::vector<std::uint64_t> points;
  if (first == model::no_stamp || last <= first) return points;
  // The operation a detector names: everything called after it returned
  // can go (a violation that involves it is complete by then).
  for (const detection& d : failing.found) {
    if (d.at_call == model::no_stamp) continue;
    for (const model::op_record& r : failing.run.records) {
      if (r.call == d.at_call && !r.pending()) points.push_back(r.ret + 1);
    }
  }
  // Then halving from the end: the earliest first, as the smallest wins.
  for (std::uint64_t part : {32, 16, 8, 4, 2}) points.push_back(first + (last - first) / part);
  for (std::uint64_t part : {4, 8}) points.push_back(last - (last - first) / part);
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  return points;
}

}  // namespace gfsl::fuzz
