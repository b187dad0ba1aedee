// gfsl check --model upsert-map at scale: writes a JSON-lines history of an
// upsert map, linearizable by construction (operations around the points of
// a sequential run, each value written once, erases' values declared), and
// runs `gfsl check --model upsert-map` on it N times: median wall seconds
// and the exit code. Figures: docs/RESULTS.md (checker).
//
//   upsert_bench [--gfsl PATH] [--records N] [--keys K] [--half-width W] [--erases P] [--runs R] [--file PATH] [--keep]
//
// A key's operations are 10 stamps apart with intervals of up to W either
// side of their points: W = 40 gives about 4.6 in flight on a key. Of the
// operations, 30% are upserts, 10% inserts, P% erases (15 unless told) and
// the rest finds; with --erases 0 no erase succeeds, and every key is one the
// read-mapping test decides (linearizability/README.md).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "timed_run.hpp"

namespace {

using gfsl::bench::outcome;
outcome run(const std::vector<std::string>& argv) { return gfsl::bench::timed_run(argv); }

// Returns the share of upserts that replaced a value.
double write_history(const std::string& path, std::uint64_t records, std::uint64_t keys, std::uint64_t w, unsigned erases) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::perror(path.c_str());
    std::exit(2);
  }
  std::fprintf(f, "{\"format\":\"gfsl-history\",\"version\":1,\"delete_value\":true}\n");
  std::mt19937_64 rng(7);
  std::uint64_t value = 0, replaced = 0;
  const std::uint64_t per_key = records / keys;
  for (std::uint64_t key = 0; key < keys; ++key) {
    bool present = false;
    std::uint64_t held = 0;
    for (std::uint64_t i = 0; i < per_key; ++i) {
      const std::uint64_t point = 10 * i + w + 100, call = point - rng() % (w + 1), ret = point + rng() % (w + 1);
      const unsigned r = static_cast<unsigned>(rng() % 100);
      std::string op;
      if (r < 30) {
        ++value;
        op = "\"op\":\"upsert\",\"value\":" + std::to_string(value) + ",\"ok\":" + (present ? "false" : "true");
        replaced += present ? 1 : 0;
        present = true, held = value;
      } else if (r < 40) {
        ++value;
        op = "\"op\":\"insert\",\"value\":" + std::to_string(value) + ",\"ok\":" + (present ? "false" : "true");
        if (!present) present = true, held = value;
      } else if (r < 40 + erases) {
        op = present ? "\"op\":\"erase\",\"value\":" + std::to_string(held) + ",\"ok\":true" : std::string("\"op\":\"erase\",\"ok\":false");
        present = false;
      } else {
        op = present ? "\"op\":\"find\",\"value\":" + std::to_string(held) + ",\"ok\":true" : std::string("\"op\":\"find\",\"ok\":false");
      }
      std::fprintf(f, "{\"team\":%llu,%s,\"key\":%llu,\"call\":%llu,\"ret\":%llu}\n", static_cast<unsigned long long>(i % 64), op.c_str(),
                   static_cast<unsigned long long>(key), static_cast<unsigned long long>(call), static_cast<unsigned long long>(ret));
    }
  }
  std::fclose(f);
  return static_cast<double>(replaced) / static_cast<double>(std::max<std::uint64_t>(1, per_key * keys));
}

}  // namespace

int main(int argc, char** argv) {
  std::string gfsl = GFSL_BINARY, file = "/tmp/upsert_bench.jsonl";
  std::uint64_t records = 1000000, keys = 1000, w = 40;
  int runs = 3;
  unsigned erases = 15;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--gfsl" && i + 1 < argc) gfsl = argv[++i];
    else if (a == "--records" && i + 1 < argc) records = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--keys" && i + 1 < argc) keys = std::max<std::uint64_t>(1, std::strtoull(argv[++i], nullptr, 10));
    else if (a == "--half-width" && i + 1 < argc) w = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--erases" && i + 1 < argc) erases = static_cast<unsigned>(std::min<unsigned long>(60, std::strtoul(argv[++i], nullptr, 10)));
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--file" && i + 1 < argc) file = argv[++i];
    else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr, "usage: upsert_bench [--gfsl PATH] [--records N] [--keys K] [--half-width W] [--erases P] [--runs R] [--file PATH] [--keep]\n");
      return 2;
    }
  }
  const double replaced = write_history(file, records, keys, w, erases);
  std::vector<outcome> rs;
  for (int k = 0; k < runs; ++k) rs.push_back(run({gfsl, "check", "--model", "upsert-map", file}));
  std::sort(rs.begin(), rs.end(), [](const outcome& a, const outcome& b) { return a.wall < b.wall; });
  const outcome m = rs[rs.size() / 2];
  std::printf("upsert-map: %llu records on %llu keys, half-width %llu, %u%% erases, %.0f%% of operations upserts that replaced: median %.3f s "
              "of %d (%.3f-%.3f), exit %d\n",
              static_cast<unsigned long long>(records / keys * keys), static_cast<unsigned long long>(keys), static_cast<unsigned long long>(w),
              erases, 100 * replaced, m.wall, runs, rs.front().wall, rs.back().wall, m.code);
  if (!keep) ::unlink(file.c_str());
  return m.code == 0 ? 0 : 1;
}
