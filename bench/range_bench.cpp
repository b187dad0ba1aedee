// The range checker's benchmark: an ordered-map history linearizable by
// construction (linearizability/range_synthetic.hpp), by default 1 M
// operations on 10^5 keys, 10% of them ranges of width 100, 8 teams (a few
// operations in flight at once), written as a JSON-lines trace; then the
// trace read back and checked in this process, each phase timed. The file
// is kept for `gfsl check --model ordered-map FILE`. Figures:
// docs/BENCHMARKS.md, "Range queries"; docs/RESULTS.md (checker).
//
//   range_bench [--ops N] [--keys K] [--range-pct P] [--width W] [--teams T] [--snapshot-pct P] [--handle-pct P]
//               [--pending-pct P] [--seed S] [--out FILE] [--violate]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "linearizability/range_checker.hpp"
#include "linearizability/range_synthetic.hpp"

int main(int argc, char** argv) {
  using namespace gfsl::lin::ranges;
  range_gen_options o;
  o.ops = 1000000;
  o.keys = 100000;
  o.teams = 8;
  o.insert_pct = 30;
  o.erase_pct = 20;
  o.range_pct = 10;
  o.range_width = 100;
  o.max_gap = 4;
  o.max_duration = 20;
  std::string out = "range-bench.jsonl";
  bool violate = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "range_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--ops") o.ops = static_cast<std::uint32_t>(std::strtoul(next(), nullptr, 10));
    else if (a == "--keys") o.keys = static_cast<std::uint32_t>(std::strtoul(next(), nullptr, 10));
    else if (a == "--range-pct") o.range_pct = std::strtod(next(), nullptr);
    else if (a == "--width") o.range_width = static_cast<std::uint32_t>(std::strtoul(next(), nullptr, 10));
    else if (a == "--teams") o.teams = static_cast<std::uint32_t>(std::strtoul(next(), nullptr, 10));
    else if (a == "--snapshot-pct") o.snapshot_pct = std::strtod(next(), nullptr);
    else if (a == "--handle-pct") o.handle_read_pct = std::strtod(next(), nullptr);
    else if (a == "--pending-pct") o.pending_pct = std::strtod(next(), nullptr);
    else if (a == "--seed") o.seed = std::strtoull(next(), nullptr, 10);
    else if (a == "--out") out = next();
    else if (a == "--violate") violate = true;
    else {
      std::fprintf(stderr, "range_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  using clock = std::chrono::steady_clock;
  auto secs = [](clock::time_point a, clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  const auto t0 = clock::now();
  range_history h = linearizable_range_history(o);
  if (violate) {
    // The last completed range that holds a pair loses it: a key whose
    // insert completed before the range began, or one it saw, missing.
    for (std::size_t i = h.ops.size(); i-- > 0;) {
      range_record& r = h.ops[i];
      if (r.op == range_op::range && !r.pending() && r.pairs_count > 1 && r.handle == no_handle) {
        h.pairs.erase(h.pairs.begin() + r.pairs_from);
        --r.pairs_count;
        for (range_record& s : h.ops) {
          if (s.op == range_op::range && s.pairs_from > r.pairs_from) --s.pairs_from;
        }
        break;
      }
    }
  }
  const auto t1 = clock::now();
  write_range_trace(out, h);
  const auto t2 = clock::now();
  const range_history back = read_range_trace(out, o.model);
  const auto t3 = clock::now();
  const range_check_result r = check_range_history(back);
  const auto t4 = clock::now();
  std::printf("history:  %u operations, %u keys, %.0f%% ranges of width %u, %u teams: generated in %.2f s, written to %s in %.2f s\n", o.ops,
              o.keys, o.range_pct, o.range_width, o.teams, secs(t0, t1), out.c_str(), secs(t1, t2));
  std::printf("read:     %.2f s (%zu pairs)\n", secs(t2, t3), back.pairs.size());
  std::printf("check:    %.2f s: %s; %llu answers of a key, %llu constraints (%llu implied by real time), %llu choices, %llu search steps\n",
              secs(t3, t4), r.refusal.empty() ? gfsl::lin::verdict_name(r.v) : ("refused: " + r.refusal).c_str(),
              static_cast<unsigned long long>(r.range_items), static_cast<unsigned long long>(r.constraints),
              static_cast<unsigned long long>(r.pruned), static_cast<unsigned long long>(r.choices),
              static_cast<unsigned long long>(r.search_steps));
  std::printf("total:    read and check %.2f s\n", secs(t2, t4));
  if (violate) return r.v == gfsl::lin::verdict::not_linearizable ? 0 : 1;
  return r.v == gfsl::lin::verdict::linearizable ? 0 : 1;
}
