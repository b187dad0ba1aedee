// gfsl bench: the GPU evaluation of thesis 5.1 (bench/suite.hpp). Writes one
// CSV row per measurement as it is taken; scripts/plot_bench.py draws the
// figure from that CSV.
#include <cstdlib>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include "cli/commands.hpp"
#include "core/gfsl/types.hpp"
#include "cli/workers.hpp"
#include "fuzz/journal.hpp"
#if defined(GFSL_HAVE_CUDA)
#include "bench/suite.hpp"
#include "cli/subject_options.hpp"
#if defined(GFSL_HAVE_CUDA)
#include "bench/slab_bench.hpp"
#endif
#include "exec/cuda/device_runner.hpp"
#endif

namespace gfsl::cli {

namespace {

// "10K,1M,100M" or plain numbers.
[[maybe_unused]] bool parse_ranges(const std::string& text, std::vector<std::uint32_t>& out) {
  out.clear();
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) return false;
    double scale = 1;
    const char last = item.back();
    if (last == 'K' || last == 'k') scale = 1e3;
    if (last == 'M' || last == 'm') scale = 1e6;
    if (scale != 1) item.pop_back();
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (end == item.c_str() || *end != '\0' || v < 1 || v * scale > 4.0e9) return false;
    out.push_back(static_cast<std::uint32_t>(v * scale));
  }
  return !out.empty();
}

// gfsl bench --devices: the suite on every device at once, one worker
// process each; their rows in one CSV, each row led by its device.
int bench_on_devices(const std::vector<device_slot>& devices, const std::string& csv_path) {
  const std::vector<device_output> outs = run_on_each_device(devices, {}, "--csv", "gfsl bench");
  std::string merged;
  bool header_done = false;
  for (const device_output& d : outs) {
    std::stringstream err(d.err);
    for (std::string line; std::getline(err, line);) std::fprintf(stderr, "device %u: %s\n", d.slot.index, line.c_str());
    std::stringstream in(d.figures);
    bool first = true;
    for (std::string line; std::getline(in, line); first = false) {
      if (first) {
        if (!header_done) merged += "device_index,visible_device," + line + "\n";
        header_done = true;
        continue;
      }
      merged += std::to_string(d.slot.index) + ",\"" + d.slot.visible + "\"," + line + "\n";
    }
    std::fprintf(stderr, "gfsl bench: device %u (CUDA_VISIBLE_DEVICES=%s): %s\n", d.slot.index, d.slot.visible.c_str(),
                 d.result.status.c_str());
  }
  if (csv_path.empty()) {
    std::fputs(merged.c_str(), stdout);
  } else if (const std::string e = fuzz::write_file_atomically(csv_path, merged); !e.empty()) {
    std::fprintf(stderr, "gfsl bench: --csv %s\n", e.c_str());
    return exit_usage;
  }
  return combined_exit_code(outs);
}

}  // namespace

command add_bench_command(CLI::App& root) {
  struct state {
    std::string suite = "thesis", chunks = "32,16", ranges = "10K,30K,100K,300K,1M,3M,10M,30M,100M";
    std::string workloads = "1-1-98,5-5-90,10-10-80,20-20-60,contains,insert,delete";
    std::string launch = "auto", csv, baseline = "on", variants = "robust", counters = "off", upper;  // upper "": each variant's rule
    std::uint64_t ops = 10000000, seed = 1;
    int repeats = 5;
    std::uint32_t batch = 64;
    std::uint32_t baseline_max = 10000000;
    std::string devices, worker_device;
    subject_text subject;
    std::string utilisations = "20,30,40,50,60,70,80";
    std::uint64_t elements = 1u << 22;
    CLI::Option *ops_opt = nullptr, *variant_opt = nullptr, *repeats_opt = nullptr;
  };
  auto st = std::make_shared<state>();
  CLI::App* b = root.add_subcommand("bench", "GPU throughput: the evaluation of thesis 5.1 (CSV; scripts/plot_bench.py draws it)");
  b->add_option("--suite", st->suite,
                "thesis (mixes x key ranges, GFSL and the per-thread baseline), launch (Table 5.1: launch "
                "configurations at [10,10,80], 1M keys), recording (history recording on against off)")
      ->check(CLI::IsMember({"thesis", "launch", "recording"}))
      ->capture_default_str();
  b->add_option("--chunk", st->chunks, "chunk sizes: 32, 16 or 32,16 (one row set each)")->capture_default_str();
  b->add_option("--range", st->ranges, "key ranges, a comma list (K and M suffixes)")->capture_default_str();
  b->add_option("--workload", st->workloads, "workloads of thesis 5.1, a comma list")->capture_default_str();
  add_subject_options(b, st->subject, false);
  b->add_option("--utilisation", st->utilisations,
                "slabhash: initial memory utilisations in percent, a comma list (the paper's concurrent benchmark)")
      ->capture_default_str();
  b->add_option("--elements", st->elements, "slabhash: elements in the table before the mixed run")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 30))
      ->capture_default_str();
  st->ops_opt = b->add_option("--ops", st->ops, "operations of the mixed and contains-only runs (insert-/delete-only: the range)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  st->repeats_opt = b->add_option("--repeats", st->repeats, "timed runs per figure")->check(CLI::Range(1, 20))->capture_default_str();
  b->add_option("--batch", st->batch,
                "GFSL: the most operations a team takes at a time from a shared cursor (fewer where a team's share "
                "is under eight batches); 0: each team runs a fixed block of ops / teams (the prefill always does)")
      ->check(CLI::Range(0u, 1u << 20))
      ->capture_default_str();
  b->add_option("--launch", st->launch, "threads per block / min blocks per SM (e.g. 256/4), or auto: the best at 1M keys")
      ->capture_default_str();
  b->add_option("--baseline", st->baseline, "also run the per-thread lock-free skiplist: on, off")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  b->add_option("--baseline-max-range", st->baseline_max, "largest key range for the baseline")->capture_default_str();
  b->add_option("--seed", st->seed, "seed of the initial structures and the operations")->capture_default_str();
  b->add_option("--csv", st->csv, "write the rows as CSV to FILE (default, and -: standard output)")->type_name("FILE");
  st->variant_opt = b->add_option("--variant", st->variants,
                "slabhash: fixed,published (default), fixed or published; gfsl: robust, thesis, or robust,thesis (each point measured for both in turn from one initial structure; thesis runs at 512/4)")
      ->capture_default_str();
  b->add_option("--upper", st->upper,
                "the upper levels' rule: thesis, reraise (a delete re-raises the next key of its chunk), or both (each "
                "variant measured under both rules, in turn, from one initial structure); default: reraise for robust, "
                "thesis for thesis")
      ->check(CLI::IsMember({"thesis", "reraise", "both"}));
  b->add_option("--counters", st->counters,
                "on: each GFSL measurement runs once more, untimed, under CUPTI's range profiler and its row gains warp "
                "instructions, local loads and stores per operation and issue-slot use (needs the CUDA toolkit's "
                "libcupti.so.13 and profiling permission)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  b->add_option("--devices", st->devices,
                 "all or 0,2,...: the suite on every device at once, one worker process each; the CSV gains the device's "
                 "number (default: all visible)");
  b->add_option("--worker-device", st->worker_device, "(set by a parent for its device workers)")->group("");
  return {b, [st]() -> int {
    if (is_stdout(st->csv)) st->csv.clear();
    // The GPU benchmarks exist for these two; another subject is refused
    // rather than measured as GFSL.
    if (st->subject.subject != "gfsl" && st->subject.subject != "slabhash") {
      std::fprintf(stderr, "gfsl bench: --subject %s: no GPU benchmark for it (gfsl and slabhash have one)\n", st->subject.subject.c_str());
      return exit_usage;
    }
#if defined(GFSL_CUDA_QUICK)
    // SlabHash's benchmark kernels are compiled inlined in every build (bench/slab_bench.cu).
    if (st->subject.subject != "slabhash")
    std::fprintf(stderr, "gfsl bench: a quick device build (GFSL_CUDA_QUICK): the algorithm runs out of line, so these "
                         "figures are not the structure's; configure with -DGFSL_CUDA_QUICK=OFF to measure\n");
#endif
    // Every visible GPU by default, one worker process each (the options
    // checked here first); a worker runs on the one device its parent gave it.
    auto on_devices = [&]() -> int {
      std::vector<device_slot> devices;
      if (const std::string bad = resolve_devices(st->devices.empty() ? "all" : st->devices, devices); !bad.empty()) {
        std::fprintf(stderr, "gfsl bench: %s\n", bad.c_str());
        return exit_usage;
      }
      return bench_on_devices(devices, st->csv);
    };
#if defined(GFSL_HAVE_CUDA)
            if (st->subject.subject == "slabhash") {
              // The paper's concurrent benchmark (bench/slab_bench.hpp): its
              // own options; the gfsl suites' do not apply.
              gfsl::bench::slab_suite_options so;
              so.elements = st->elements;
              so.ops = st->ops_opt->count() ? st->ops : so.elements;
              so.repeats = st->repeats_opt->count() ? st->repeats : 5;
              so.seed = st->seed;
              if (st->variant_opt->count()) {
                so.variants.clear();
                std::stringstream vin(st->variants);
                for (std::string v; std::getline(vin, v, ',');) {
                  const auto parsed = gfsl::slabhash::parse_variant(v);
                  if (!parsed) {
                    std::fprintf(stderr, "gfsl bench: --variant %s: slabhash's variants are fixed, published\n", st->variants.c_str());
                    return exit_usage;
                  }
                  so.variants.push_back(*parsed);
                }
              }
              so.utilisations.clear();
              std::stringstream uin(st->utilisations);
              for (std::string u; std::getline(uin, u, ',');) {
                char* end = nullptr;
                const long x = std::strtol(u.c_str(), &end, 10);
                if (u.empty() || *end != '\0' || x < 1 || x > 93) {
                  std::fprintf(stderr, "gfsl bench: --utilisation %s: percentages from 1 to 93 (a slab holds at most 15/16)\n",
                               st->utilisations.c_str());
                  return exit_usage;
                }
                so.utilisations.push_back(static_cast<int>(x));
              }
              if (so.elements + 2 * so.ops > 0xFFFFFFF0ull) {
                std::fprintf(stderr, "gfsl bench: --elements and --ops: too many keys for 32-bit keys\n");
                return exit_usage;
              }
              if (const std::string why = gfsl::cuda_unavailable_reason(); !why.empty()) {
                std::fprintf(stderr, "gfsl bench: %s\n", why.c_str());
                return exit_usage;
              }
              std::FILE* csv = stdout;
              if (!st->csv.empty()) {
                csv = std::fopen(st->csv.c_str(), "w");
                if (!csv) {
                  std::fprintf(stderr, "gfsl bench: --csv %s: cannot write it\n", st->csv.c_str());
                  return exit_usage;
                }
              }
              const auto rows = gfsl::bench::run_slab_suite(so, csv, stderr);
              if (csv != stdout) std::fclose(csv);
              std::size_t failed = 0;
              for (const auto& r : rows) failed += !r.error.empty();
              return failed ? exit_run_error : exit_ok;
            }
            gfsl::bench::suite_options o;
            o.suite = st->suite;
            o.ops = st->ops;
            o.repeats = st->repeats;
            o.batch = st->batch;
            o.launch = st->launch;
            o.baseline = st->baseline == "on";
            o.baseline_max_range = st->baseline_max;
            o.seed = st->seed;
            o.variants.clear();
            {
              std::stringstream vin(st->variants);
              for (std::string v; std::getline(vin, v, ',');) {
                const auto parsed = gfsl::parse_variant(v);
                if (!parsed) {
                  std::fprintf(stderr, "gfsl bench: --variant %s: variants are robust and thesis\n", st->variants.c_str());
                  return exit_usage;
                }
                if (st->upper.empty()) {
                  o.variants.push_back({*parsed, gfsl::reraises_by_default(*parsed)});
                  continue;
                }
                if (st->upper != "reraise") o.variants.push_back({*parsed, false});
                if (st->upper != "thesis") o.variants.push_back({*parsed, true});
              }
            }
            o.chunks.clear();
            std::stringstream in(st->chunks);
            for (std::string c; std::getline(in, c, ',');) {
              if (c != "16" && c != "32") {
                std::fprintf(stderr, "gfsl bench: --chunk %s: chunk sizes are 16 and 32\n", st->chunks.c_str());
                return exit_usage;
              }
              o.chunks.push_back(std::stoi(c));
            }
            if (!parse_ranges(st->ranges, o.ranges)) {
              std::fprintf(stderr, "gfsl bench: --range %s: expected a comma list such as 10K,1M,100M\n", st->ranges.c_str());
              return exit_usage;
            }
            std::string error;
            if (!gfsl::bench::parse_workloads(st->workloads, o.workloads, error)) {
              std::fprintf(stderr, "gfsl bench: --workload: %s\n", error.c_str());
              return exit_usage;
            }
            if (o.suite == "launch" && gfsl::bench::compiled_launch_configs(32).size() < 2) {
              std::fprintf(stderr,
                           "gfsl bench: --suite launch: this build compiles one launch configuration (512/4); "
                           "configure with -DGFSL_LAUNCH_TABLE=ON for the nine of thesis Table 5.1\n");
              return exit_usage;
            }
            if (o.launch != "auto") {
              gfsl::bench::launch_config lc;
              for (int chunk : o.chunks) {
                if (!gfsl::bench::parse_launch_config(o.launch, chunk, lc)) {
                  std::string known;
                  for (const auto& k : gfsl::bench::compiled_launch_configs(chunk)) known += " " + k.name();
                  std::fprintf(stderr, "gfsl bench: --launch %s: not a compiled configuration (compiled:%s)\n",
                               o.launch.c_str(), known.c_str());
                  return exit_usage;
                }
              }
            }
            if (const std::string why = gfsl::cuda_unavailable_reason(); !why.empty()) {
              std::fprintf(stderr, "gfsl bench: %s\n", why.c_str());
              return exit_usage;
            }
            if (st->worker_device.empty()) return on_devices();
            std::unique_ptr<gfsl::bench::counter_session> counters;
            if (st->counters == "on") {
              std::string why;
              counters = gfsl::bench::counter_session::open(why);
              if (!counters) {
                std::fprintf(stderr, "gfsl bench: --counters on: %s\n", why.c_str());
                return exit_usage;
              }
              o.counters = counters.get();
            }
            std::FILE* csv = stdout;
            if (!st->csv.empty()) {
              csv = std::fopen(st->csv.c_str(), "w");
              if (!csv) {
                std::fprintf(stderr, "gfsl bench: --csv %s: cannot write it\n", st->csv.c_str());
                return exit_usage;
              }
            }
            const auto rows = gfsl::bench::run_suite(o, csv, stderr);
            if (csv != stdout) std::fclose(csv);
            std::size_t failed = 0;
            for (const auto& r : rows) failed += !r.error.empty();
            if (failed) {
              std::fprintf(stderr, "gfsl bench: %zu of %zu measurements failed (their rows say why)\n", failed, rows.size());
              return exit_run_error;
            }
            return exit_ok;
#else
            if (st->worker_device.empty() && !st->devices.empty()) return on_devices();
            std::fprintf(stderr, "gfsl bench: not available in this build (configured without nvcc)\n");
            return exit_usage;
#endif
          }};
}

}  // namespace gfsl::cli
