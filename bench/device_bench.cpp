// GPU figures for docs/BENCHMARKS.md: throughput of the concurrent phase with
// recording off, with device-counter stamps (one per call and return, then in
// stamp groups of 4 and 16 operations) and with %globaltimer stamps; and
// grouping the history by key on the device (CUB) against the host.
//
//   build/bench/device_bench [ops] [range] [teams] [repeats] [batch]
//
// `batch`: the most operations a team takes at a time (device_options::batch;
// 0: fixed blocks).
//
// Each figure is the median of `repeats` runs (different seeds), all in this
// one process, so ratios compare like with like.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "exec/cuda/device_runner.hpp"

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  if (const std::string why = gfsl::cuda_unavailable_reason(); !why.empty()) {
    std::fprintf(stderr, "device_bench: %s\n", why.c_str());
    return 2;
  }
  gfsl::model::workload w;
  w.ops = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000000;
  w.range = argc > 2 ? static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10)) : 1000000;
  w.teams = argc > 3 ? static_cast<std::uint32_t>(std::strtoul(argv[3], nullptr, 10)) : 8192;
  const int repeats = argc > 4 ? std::atoi(argv[4]) : 5;
  const std::uint32_t batch = argc > 5 ? static_cast<std::uint32_t>(std::strtoul(argv[5], nullptr, 10)) : 64;
  w.insert_pct = 10;
  w.delete_pct = 10;
  w.contains_pct = 80;
  std::string device;
  for (int chunk : {32, 16}) {
    w.chunk = chunk;
    double off_mops = 0;
    for (const char* mode : {"off", "counter", "counter/4", "counter/16", "globaltimer"}) {
      std::vector<double> mops, part_dev, part_host;
      for (int r = 0; r < repeats; ++r) {
        w.seed = 1 + r;
        gfsl::device_options o;
        o.keep_records = std::string(mode) != "off";
        o.stamp_group = std::string(mode) == "counter/4" ? 4 : std::string(mode) == "counter/16" ? 16 : 1;
        o.batch = batch;
        o.clock = std::string(mode) == "globaltimer" ? gfsl::model::clock_kind::globaltimer : gfsl::model::clock_kind::device_counter;
        o.compare_host_partition = std::string(mode) == "counter";
        const gfsl::device_run d = gfsl::run_on_device(w, o);
        device = d.device_name;
        if (d.timed_out || d.hung || d.run.report.first_error != gfsl::status::ok) {
          std::fprintf(stderr, "device_bench: run failed: %s %s\n", d.hang_detail.c_str(), d.run.report.error_detail.c_str());
          return 1;
        }
        mops.push_back(w.ops / d.run.report.seconds / 1e6);
        part_dev.push_back(d.partition_ms_device);
        part_host.push_back(d.partition_ms_host);
      }
      const double m = median(mops);
      if (std::string(mode) == "off") off_mops = m;
      std::printf("%s N=%d ops=%llu range=%u teams=%u batch=%u recording %-11s median %8.1f Mops/s (%.2fx of off)",
                  device.c_str(), chunk, (unsigned long long)w.ops, w.range, w.teams, batch, mode, m,
                  off_mops > 0 ? m / off_mops : 1.0);
      if (std::string(mode) == "counter") {
        std::printf("; group by key: device %.1f ms, host %.1f ms", median(part_dev), median(part_host));
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
}
