#include "fuzz/corpus.hpp"

#include <algorithm>

#include "fuzz/coverage.hpp"

namespace gfsl::fuzz {

std::uint32_t path_mask(const path_stats& p) {
  std::uint32_t mask = 0;
  for (std::size_t i = 0; i < std::size(rare_paths); ++i) {
    if (p.*rare_paths[i].count) mask |= 1u << i;
  }
  return mask;
}

double rarity(const corpus_entry& e, const path_stats& totals, const std::array<std::uint64_t, 64>& pair_counts) {
  double score = 0;
  for (std::size_t i = 0; i < std::size(rare_paths); ++i) {
    if (e.mask & (1u << i)) score += 1.0 / (1.0 + static_cast<double>(totals.*rare_paths[i].count));
  }
  for (std::size_t b = 0; b < 64; ++b) {
    if (e.pairs >> b & 1u) score += 1.0 / (1.0 + static_cast<double>(pair_counts[b]));
  }
  return score;
}

std::optional<run_config> targeted_run(const std::vector<corpus_entry>& corpus, const std::array<std::uint64_t, 64>& pair_counts,
                                       subject_kind subject, team_rng& rng) {
  const auto can_aim = [](const corpus_entry& c, int bit) {
    const int w = pair_window(bit), e = pair_effect(bit);
    return c.config.backend == "host" && (c.windows >> w & 1u) && (c.effects >> e & 1u) && c.window_opens[static_cast<std::size_t>(w)];
  };
  std::vector<int> aimable;
  for (int bit : pair_bits(subject)) {
    if (std::any_of(corpus.begin(), corpus.end(), [&](const corpus_entry& c) { return can_aim(c, bit); })) aimable.push_back(bit);
  }
  if (aimable.empty()) return std::nullopt;
  int bit = -1;
  for (int k = 0; k < 4; ++k) {  // tournament: the pair the batch reached least
    const int b = aimable[rng.next() % aimable.size()];
    if (bit < 0 || pair_counts[static_cast<std::size_t>(b)] < pair_counts[static_cast<std::size_t>(bit)]) bit = b;
  }
  const std::size_t w = static_cast<std::size_t>(pair_window(bit));
  std::vector<const corpus_entry*> bases;
  for (const corpus_entry& c : corpus) {
    if (can_aim(c, bit)) bases.push_back(&c);
  }
  const corpus_entry* base = nullptr;
  for (int k = 0; k < 4; ++k) {  // tournament: the base that opens the window least
    const corpus_entry* b = bases[rng.next() % bases.size()];
    if (!base || b->window_opens[w] < base->window_opens[w]) base = b;
  }
  run_config c = base->config;
  c.so.hold.active = true;
  c.so.hold.window = static_cast<std::uint8_t>(w);
  c.so.hold.effect = static_cast<std::uint8_t>(pair_effect(bit));
  c.so.hold.nth = 1 + static_cast<std::uint32_t>(rng.next() % base->window_opens[w]);
  c.so.hold.team = sched::hold_directive::any_team;
  return c;
}

run_config reschedule(const corpus_entry& e, const campaign_options& o, team_rng& rng) {
  run_config c = e.config;
  c.so.seed = 1 + rng.next() % 1000000000;
  static constexpr sched::strategy strategies[] = {sched::strategy::random, sched::strategy::pct, sched::strategy::fair_pct,
                                                   sched::strategy::park};
  c.so.strat = strategies[rng.next() % 4];
  c.so.depth = 1 + static_cast<int>(rng.next() % 5);
  const bool pct = c.so.strat == sched::strategy::pct || c.so.strat == sched::strategy::fair_pct;
  c.so.pct_steps = pct ? 0 : std::max<std::uint64_t>(c.so.pct_steps, 1);  // measured again
  static constexpr sched::park_point points[] = {sched::park_point::lock_cas, sched::park_point::after_read,
                                                 sched::park_point::before_write};
  c.so.park_at = points[rng.next() % 3];
  c.so.park_ops = 1 + static_cast<std::uint32_t>(rng.next() % 3);
  c.so.fair_after = 0;
  if (o.limits.vary_granularity) {
    static constexpr sched::granularity grans[] = {sched::granularity::chunk, sched::granularity::line, sched::granularity::lane};
    c.so.gran = grans[rng.next() % 3];
  }
  return c;
}

}  // namespace gfsl::fuzz
