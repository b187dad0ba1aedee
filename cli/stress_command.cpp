// gfsl stress: checker-free oracles (stress/). Every configuration (chunk
// size x key range) runs for --seconds; its answers are judged as they are
// given, its structures by the structure oracle at the end of their life.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <tuple>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/subject_options.hpp"
#include "cli/workers.hpp"
#include "fuzz/journal.hpp"
#include "stress/options.hpp"
#include "linearizability/report.hpp"
#include "stress/report.hpp"
#include "stress/runner.hpp"
#include "traces/json.hpp"
#include "core/gfsl/types.hpp"

namespace gfsl::cli {

namespace {

// "40", "36,40,64" or "24-128:8" (24 to 128 in steps of 8), mixed freely.
bool parse_range_list(const std::string& text, std::vector<std::uint32_t>& out) {
  out.clear();
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    unsigned long a = 0, b = 0, step = 1;
    char extra = 0;
    if (std::sscanf(item.c_str(), "%lu-%lu:%lu%c", &a, &b, &step, &extra) == 3 ||
        (std::sscanf(item.c_str(), "%lu-%lu%c", &a, &b, &extra) == 2 && (step = 1))) {
      if (a == 0 || b < a || step == 0 || b > 0xFFFFFFFEul || (b - a) / step > 4096) return false;
      for (unsigned long r = a; r <= b; r += step) out.push_back(static_cast<std::uint32_t>(r));
    } else if (std::sscanf(item.c_str(), "%lu%c", &a, &extra) == 1 && item.find('-') == std::string::npos) {
      if (a == 0 || a > 0xFFFFFFFEul) return false;
      out.push_back(static_cast<std::uint32_t>(a));
    } else {
      return false;
    }
  }
  return !out.empty();
}

// Column `name` of a CSV row, as a number (0 when missing).
double column(const std::vector<std::string>& header, const std::vector<std::string>& row, const char* name) {
  for (std::size_t i = 0; i < header.size() && i < row.size(); ++i) {
    if (header[i] == name) return std::atof(row[i].c_str());
  }
  return 0;
}

// gfsl stress --devices: the same stress on every device at once, one worker
// process each, then one report with every device's figures and their sum.
// A report in the --json / --csv form, to standard output ("-") or to its
// file (whole or not at all); empty, or the line saying why it was not written.
std::string emit(const std::string& path, const std::string& text) {
  if (is_stdout(path)) {
    std::fputs(text.c_str(), stdout);
    return {};
  }
  return fuzz::write_file_atomically(path, text);
}

// What one of the print_* functions writes, as a string.
template <class Print>
std::string rendered(Print print, const std::vector<stress::config_result>& rs) {
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&buf, &size);
  if (!f) throw std::bad_alloc();
  print(f, rs);
  std::fclose(f);
  std::string text(buf, size);
  std::free(buf);
  return text;
}

int stress_on_devices(const std::vector<device_slot>& devices, const std::string& json_path, const std::string& csv_path) {
  // Each worker prints its report in the form asked for on its standard
  // output; this process writes the combined one where it was asked for.
  std::vector<std::string> extra{"--progress", "off"};
  if (!json_path.empty()) extra.insert(extra.end(), {"--json", "-"});
  if (!csv_path.empty()) extra.insert(extra.end(), {"--csv", "-"});
  const std::vector<device_output> outs =
      run_on_each_device(devices, extra, "--worker-figures", "gfsl stress", {"--json", "--csv", "--progress"});
  for (const device_output& d : outs) {
    std::stringstream err(d.err);
    for (std::string line; std::getline(err, line);) std::fprintf(stderr, "device %u: %s\n", d.slot.index, line.c_str());
  }
  const bool json = !json_path.empty(), csv = !csv_path.empty();
  const bool to_file = (json && !is_stdout(json_path)) || (csv && !is_stdout(csv_path));
  if (outs.size() == 1 && !to_file) {
    // One device: the worker's report as it printed it.
    std::fputs(outs[0].out.c_str(), stdout);
    return combined_exit_code(outs);
  }
  struct figures {
    double ops = 0, violations = 0, structure_violations = 0, ops_per_second = 0, configurations = 0;
  };
  std::vector<figures> per(outs.size());
  figures all;
  std::vector<std::string> csv_header;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const auto rows = parse_csv(outs[i].figures);
    for (std::size_t r = 1; r < rows.size(); ++r) {
      per[i].ops += column(rows[0], rows[r], "operations");
      per[i].violations += column(rows[0], rows[r], "violations");
      per[i].structure_violations += column(rows[0], rows[r], "structure_violations");
      per[i].ops_per_second += column(rows[0], rows[r], "ops_per_second") / (rows.size() - 1);  // configurations run one after another
      per[i].configurations += 1;
    }
    if (!rows.empty() && csv_header.empty()) csv_header = rows[0];
    all.ops += per[i].ops;
    all.violations += per[i].violations;
    all.structure_violations += per[i].structure_violations;
    all.ops_per_second += per[i].ops_per_second;  // devices run side by side
    all.configurations += per[i].configurations;
  }
  std::string report;
  auto add = [&report](const char* format, auto... args) {
    const int n = std::snprintf(nullptr, 0, format, args...);
    std::string piece(static_cast<std::size_t>(n) + 1, '\0');
    std::snprintf(piece.data(), piece.size(), format, args...);
    piece.pop_back();
    report += piece;
  };
  if (csv) {
    bool header_done = false;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      std::stringstream in(outs[i].out);
      bool first = true;
      for (std::string line; std::getline(in, line); first = false) {
        if (first) {
          if (!header_done) add("device_index,visible_device,%s\n", line.c_str());
          header_done = true;
          continue;
        }
        add("%u,\"%s\",%s\n", outs[i].slot.index, outs[i].slot.visible.c_str(), line.c_str());
      }
    }
  } else if (json) {
    add("{\"devices\":[");
    for (std::size_t i = 0; i < outs.size(); ++i) {
      std::string visible;
      traces::json::append_string(visible, outs[i].slot.visible);
      std::string status;
      traces::json::append_string(status, outs[i].result.status);
      std::string results = outs[i].out;
      while (!results.empty() && (results.back() == '\n' || results.back() == ' ')) results.pop_back();
      add("%s{\"device\":%u,\"visible\":%s,\"status\":%s,\"operations\":%.0f,\"violations\":%.0f,"
                  "\"structure_violations\":%.0f,\"ops_per_second\":%.6g,\"results\":%s}",
                  i ? "," : "", outs[i].slot.index, visible.c_str(), status.c_str(), per[i].ops, per[i].violations,
                  per[i].structure_violations, per[i].ops_per_second, results.empty() ? "null" : results.c_str());
    }
    add("],\"operations\":%.0f,\"violations\":%.0f,\"structure_violations\":%.0f,\"ops_per_second\":%.6g}\n", all.ops,
                all.violations, all.structure_violations, all.ops_per_second);
  }
  if (csv || json) {
    if (const std::string e = emit(json ? json_path : csv_path, report); !e.empty()) {
      std::fprintf(stderr, "gfsl stress: %s %s\n", json ? "--json" : "--csv", lin::printable(e).c_str());
      return exit_usage;
    }
  }
  if (!(json && is_stdout(json_path)) && !(csv && is_stdout(csv_path))) {
    // With the report in a file, the workers printed that form: their text is not there to show.
    for (const device_output& d : outs) {
      std::printf("== device %u (CUDA_VISIBLE_DEVICES=%s): %s\n%s", d.slot.index, d.slot.visible.c_str(), d.result.status.c_str(),
                  to_file ? "" : d.out.c_str());
    }
    std::printf("per device:\n");
    for (std::size_t i = 0; i < outs.size(); ++i) {
      std::printf("  device %u: %.0f operations, %.3g ops/s, %.0f violations, %.0f structure violations (%s)\n", outs[i].slot.index,
                  per[i].ops, per[i].ops_per_second, per[i].violations, per[i].structure_violations, outs[i].result.status.c_str());
    }
    std::printf("all %zu devices: %.0f operations, %.3g ops/s, %.0f violations, %.0f structure violations\n", outs.size(), all.ops,
                all.ops_per_second, all.violations, all.structure_violations);
  }
  std::fflush(stdout);
  return combined_exit_code(outs);
}

}  // namespace

command add_stress_command(CLI::App& root) {
  struct state {
    stress::options o;
    std::string chunks = "32", ranges, shape = "stable-contains", writers = "1/32", variant = "robust", mut, replay;
    std::string sched = "random", granularity = "lane";
    std::string json, csv, progress = "auto";
    std::string devices, worker_device, worker_figures;
    subject_text subject;
    CLI::Option *shape_opt = nullptr, *writers_opt = nullptr, *ops_opt = nullptr, *chunk_opt = nullptr, *variant_opt = nullptr, *rebuild_opt = nullptr,
               *upper_opt = nullptr;
  };
  auto st = std::make_shared<state>();
  CLI::App* c = root.add_subcommand(
      "stress", "checker-free oracles at full speed: keys whose every answer is known, judged as they are given");
  c->add_option("--backend", st->o.backend, "host (deterministic scheduler, replayable), threads (OS threads), cuda")
      ->check(CLI::IsMember({"host", "threads", "cuda"}))
      ->capture_default_str();
  add_subject_options(c, st->subject);
  st->shape_opt = c->add_option("--shape", st->shape,
                "stable-contains (readers look up keys that are never deleted), owned-keys (each team knows its own keys)")
      ->check(CLI::IsMember({"stable-contains", "owned-keys"}))
      ->capture_default_str();
  st->variant_opt = c->add_option("--variant", st->variant,
                                  "the algorithm: robust, or thesis (the published one); slabhash: fixed (default) or published; "
                                  "lideng: fixed (default), published or mixed")
                        ->check(CLI::IsMember({"thesis", "robust", "fixed", "published", "mixed"}))
                        ->capture_default_str();
  st->chunk_opt = c->add_option("--chunk", st->chunks, "chunk sizes: 32, 16 or 32,16 (one configuration each)")->capture_default_str();
  c->add_option("--range", st->ranges,
                "key ranges, one configuration each: 40, 36,40 or 24-128:8 (default: 40 for stable-contains, 16 keys "
                "a team for owned-keys)");
  c->add_option("--seconds", st->o.seconds,
                "run time of each configuration (the teams stop at their next operation and the structure under way "
                "is judged, as on SIGINT; a --replay runs its structure whole)")
      ->capture_default_str();
  st->rebuild_opt = c->add_option("--rebuild-seconds", st->o.rebuild_seconds,
                                  "threads, cuda: a fresh structure after R to 2R seconds (the layout varies; default 5, "
                                  "and 0.25 for gfsl's stable-contains on cuda: docs/FINDINGS.md)");
  c->add_option("--slice-seconds", st->o.slice_seconds, "cuda: length of one kernel launch")->capture_default_str();
  st->writers_opt = c->add_option("--writers", st->writers, "writer teams: A/B (team t writes iff t % B < A) or A (the first A teams)")
      ->capture_default_str();
  c->add_option("--stable-every", st->o.stable_every, "stable-contains: the stable keys are the multiples of this")
      ->capture_default_str();
  c->add_option("--low-churn", st->o.low_churn,
                "stable-contains: writers churn keys 1..K and every key above is stable (0: --stable-every's "
                "interleaving)")
      ->capture_default_str();
  c->add_option("--p-chunk", st->o.p_chunk, "probability that a split raises a key to the level above")->capture_default_str();
  st->upper_opt = c->add_option_function<std::string>(
       "--upper", [st](const std::string& v) { st->o.reraise = v == "reraise"; },
       "the upper levels' rule: thesis, or reraise (a delete that removes a raised key raises the next key of its "
       "level-0 chunk in its place); default: reraise for gfsl robust, thesis for gfsl thesis")
      ->check(CLI::IsMember({"thesis", "reraise"}));
  c->add_option("--teams", st->o.teams,
                "teams (default: host 4, threads 2 per hardware thread, cuda all resident; half of them for gfsl's "
                "stable-contains)");
  st->ops_opt = c->add_option("--ops-per-team", st->o.ops_per_team,
                              "host: operations of each team per structure; slabhash, lideng: per round on every backend (default 256)")
                    ->capture_default_str();
  c->add_option("--churn", st->o.churn,
                "owned-keys: keys range+1..range+N shared by every writer, inserted and deleted unjudged half of the "
                "time (default: none; slabhash: 4 per bucket)");
  c->add_option("--max-structures", st->o.max_structures, "stop after this many structures per configuration (0: --seconds only)")
      ->capture_default_str();
  c->add_option("--sched", st->sched, "host: random, pct, fair-pct")
      ->check(CLI::IsMember({"random", "pct", "fair-pct"}))
      ->capture_default_str();
  c->add_option("--granularity", st->granularity, "host: a chunk read is one step (chunk), one per 128-byte line, one per lane")
      ->check(CLI::IsMember({"chunk", "line", "lane"}))
      ->capture_default_str();
  c->add_option("--depth", st->o.so.depth, "host, pct: bug depth")->check(CLI::Range(1, 1000))->capture_default_str();
  c->add_option("--seed", st->o.seed, "seed of the structures and the teams")->capture_default_str();
  c->add_option("--reports", st->o.reports, "violations reported in full per configuration (the rest are counted)")
      ->capture_default_str();
  c->add_option("--mutant", st->mut,
                "a seeded bug or a memory-order amplifier of core/gfsl/mutants.hpp (load-relaxed, release-weakened: cuda)");
  c->add_option("--pool", st->o.pool, "chunks in each structure's pool (0: per backend)")->capture_default_str();
  c->add_option("--hang-seconds", st->o.hang_seconds, "a team without progress for this long is a hang")->capture_default_str();
  c->add_option("--replay", st->replay, "host: run again the one structure a gfsl-stress1: line describes");
  c->add_option("--json", st->json, "write the results as JSON to FILE (-: standard output, instead of the text report)")->type_name("FILE");
  c->add_option("--csv", st->csv, "write the results as CSV, one row per configuration, to FILE (-: standard output, instead of the text report)")->type_name("FILE");
  add_progress_option(c, st->progress);
  c->add_option("--devices", st->devices,
                "cuda: all or 0,2,...: one worker process per GPU, one report with each device's figures (default: all visible)");
  c->add_option("--worker-device", st->worker_device, "(set by a parent for its device workers)")->group("");
  c->add_option("--worker-figures", st->worker_figures, "(set by a parent: also write the figures as CSV to this file)")->group("");
  return {c, [st]() -> int {
            stress::options& o = st->o;
            auto usage = [](const std::string& why) {
              // Option values and replay fields are the input's: escaped.
              std::fprintf(stderr, "gfsl stress: %s\n", gfsl::lin::printable(why).c_str());
              return exit_usage;
            };
            if (is_stdout(st->json) && is_stdout(st->csv)) return usage("--json - and --csv -: one report on standard output; give the other a FILE");
            {
              // The other subjects' defaults (stress/options.hpp): owned keys
              // with shared churn keys, every team writing, rounds of 256
              // operations a team.
              const auto subj = parse_subject(st->subject.subject);
              o.subject = subj ? *subj : subject_kind::gfsl;
              const subject_descriptor& d = subject_of(o.subject);
              if (o.subject != subject_kind::gfsl) {
                if (st->chunk_opt->count() > 0) return usage("--chunk: " + std::string(d.fixed_chunk_note));
                if (st->shape_opt->count() == 0) st->shape = "owned-keys";
                if (st->writers_opt->count() == 0) st->writers = st->shape == "owned-keys" ? "1/1" : "1/2";
                if (st->ops_opt->count() == 0) o.ops_per_team = 256;
                o.buckets = st->subject.parameter("buckets");
                o.levels = st->subject.parameter("levels");
                o.chunks = {d.team_width};
                if (const std::string e = resolve_variant(o.subject, st->variant_opt->count() ? st->variant : "", o.choice); !e.empty()) {
                  return usage(e);
                }
              } else {
                if (st->subject.parameter("buckets")) return usage("--buckets " + std::to_string(st->subject.parameter("buckets")) + ": a slabhash parameter (--subject slabhash)");
                if (st->variant != "thesis" && st->variant != "robust") return usage("--variant " + st->variant + ": gfsl's variants are robust, thesis");
              }
            }
            if (!stress::parse_shape(st->shape, o.sh)) return usage("--shape " + st->shape + ": not a shape");
            if (o.subject == subject_kind::gfsl) o.choice.variant = *subject_of(o.subject).parse_variant(st->variant);
            if (st->upper_opt->count() == 0) o.reraise = subject_of(o.subject).reraises_by_default(o.choice.variant);
            // On the GPU the torn read depends on the structure's layout far more
            // than on the setting: a fresh structure every 0.25 s draws 20 times
            // more layouts (docs/BENCHMARKS.md, "Tuning gfsl stress").
            if (st->rebuild_opt->count() == 0 && o.backend == "cuda" && o.subject == subject_kind::gfsl &&
                o.sh == stress::shape::stable_contains) {
              o.rebuild_seconds = 0.25;
            }
            if (!stress::parse_writers(st->writers, o.writers_num, o.writers_den)) {
              return usage("--writers " + st->writers + ": expected A/B or A");
            }
            if (!st->mut.empty()) {
              const auto m = subject_of(o.subject).parse_mutant(st->mut);
              if (!m) return usage("--mutant " + st->mut + ": no such mutant (gfsl mutants --list names them)");
              o.choice.mutant = static_cast<std::uint8_t>(*m);
            }
            o.sched = st->sched;
            sched::parse(st->sched, o.so.strat);
            sched::parse(st->granularity, o.so.gran);
            o.so.pct_steps = 0;
            if (o.subject == subject_kind::gfsl) o.chunks.clear();
            std::stringstream in(o.subject == subject_kind::gfsl ? st->chunks : std::string());
            for (std::string item; std::getline(in, item, ',');) {
              if (item != "16" && item != "32") return usage("--chunk " + st->chunks + ": chunk sizes are 16 and 32");
              o.chunks.push_back(std::stoi(item));
            }
            if (o.chunks.empty()) return usage("--chunk: give 16, 32 or 32,16");
            if (!st->ranges.empty() && !parse_range_list(st->ranges, o.ranges)) {
              return usage("--range " + st->ranges + ": expected numbers >= 1 or sweeps such as 24-128:8");
            }
            if (!st->replay.empty()) {
              if (const std::string bad = stress::decode_replay(st->replay, o); !bad.empty()) return usage(bad);
            }
            if (o.backend == "cuda") {
              if (const std::string why = stress::gpu_unavailable_reason(); !why.empty()) {
                return usage("--backend cuda: " + why);
              }
            }
            if (o.backend != "cuda") {
              if (const std::string bad = stress::validate(o, stress::default_teams(o)); !bad.empty()) return usage(bad);
            } else if (!(o.seconds > 0) || o.writers_num == 0) {
              // cuda validates the rest once it knows how many teams are resident
              return usage(stress::validate(o, 1));
            }
            // Every visible GPU by default, one worker process each; a
            // worker runs on the one device its parent gave it.
            if (st->worker_device.empty() && (!st->devices.empty() || o.backend == "cuda")) {
              if (!st->devices.empty() && o.backend != "cuda" && !std::getenv("GFSL_DEVICE_COUNT")) {
                return usage("--devices goes with --backend cuda");
              }
              std::vector<device_slot> devices;
              if (const std::string bad = resolve_devices(st->devices.empty() ? "all" : st->devices, devices); !bad.empty()) {
                return usage(o.backend == "cuda" && st->devices.empty() ? "--backend cuda: " + bad : bad);
              }
              if (!st->json.empty() && !st->csv.empty()) return usage("--json and --csv with --devices: choose one");
              return stress_on_devices(devices, st->json, st->csv);
            }
            const bool progress = progress_wanted(st->progress);
            std::vector<stress::config_result> results;
            // The text report on standard output unless a form asked for
            // takes its place there ("-"); a FILE gets its form whole.
            std::string output_error;
            auto print = [&](const std::vector<stress::config_result>& rs) {
              if (is_stdout(st->json)) stress::print_json(stdout, rs);
              else if (is_stdout(st->csv)) stress::print_csv(stdout, rs);
              else stress::print_text(stdout, rs);
              std::fflush(stdout);
              for (const auto& [option, path, form] : {std::tuple{"--json", st->json, &stress::print_json},
                                                       std::tuple{"--csv", st->csv, &stress::print_csv}}) {
                if (path.empty() || is_stdout(path)) continue;
                if (const std::string e = emit(path, rendered(form, rs)); !e.empty() && output_error.empty()) {
                  output_error = std::string(option) + " " + e;
                }
              }
            };
            stress::progress_fn on_progress;
            // On a terminal one line redrawn after every structure; in a log
            // (--progress on) a line every ten seconds at most.
            const bool tty = isatty(2) != 0;
            auto next_line = std::chrono::steady_clock::now();
            if (progress) {
              on_progress = [tty, &next_line](const stress::config_result& r) {
                if (!tty) {
                  if (std::chrono::steady_clock::now() < next_line) return;
                  next_line = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                }
                std::fprintf(stderr, "%s[stress] chunk %d range %u: %llu structures, %.3g ops, %llu violations%s", tty ? "\r" : "",
                             r.chunk, r.range, static_cast<unsigned long long>(r.structures), static_cast<double>(r.totals.ops()),
                             static_cast<unsigned long long>(r.violations()), tty ? "   " : "\n");
                std::fflush(stderr);
              };
            }
            // A team that cannot be stopped: print everything recorded, then
            // the process ends (the caller exits with 1).
            stress::fatal_fn on_fatal = [&](const stress::config_result& r) {
              if (progress && tty) std::fprintf(stderr, "\n");
              std::vector<stress::config_result> all = results;
              all.push_back(r);
              print(all);
              std::fprintf(stderr, "gfsl stress: %s\n", r.hang_detail.c_str());
              std::fflush(stderr);
            };
            // SIGINT/SIGTERM: the teams stop at their next operation, the
            // structure under way is judged, the report covers what ran and
            // the exit code is 3 (undecided), unless a violation was found.
            static std::atomic<bool> stop_requested{false};
            stop_on_signals(stop_requested);
            o.stop = &stop_requested;
            const std::vector<std::uint32_t> ranges = o.ranges;
            bool violation = false, run_error = false, nothing_judged = false;
            try {
              for (int chunk : o.chunks) {
                for (std::size_t i = 0; i < std::max<std::size_t>(1, ranges.size()); ++i) {
                  const std::uint32_t teams = stress::default_teams(o);
                  const std::uint32_t range = ranges.empty() ? stress::default_range(o, teams) : ranges[i];
                  stress::config_result r = o.backend == "cuda" ? stress::run_on_gpu(o, chunk, range, on_progress, on_fatal)
                                                                : stress::run_on_cpu(o, chunk, range, on_progress, on_fatal);
                  if (progress && tty) std::fprintf(stderr, "\n");
                  violation = violation || r.violations() > 0 || r.hung;
                  run_error = run_error || !r.error.empty();
                  nothing_judged = nothing_judged || r.judged_nothing();
                  results.push_back(std::move(r));
                  if (run_error || stop_requested) break;
                }
                if (run_error || stop_requested) break;
              }
            } catch (const std::invalid_argument& e) {
              print(results);
              return usage(e.what());
            } catch (const std::exception& e) {
              print(results);
              std::fprintf(stderr, "gfsl stress: %s\n", e.what());
              return exit_run_error;
            }
            print(results);
            if (!output_error.empty()) {
              std::fprintf(stderr, "gfsl stress: %s\n", lin::printable(output_error).c_str());
              return exit_usage;
            }
            if (!st->worker_figures.empty()) {
              if (std::FILE* f = std::fopen(st->worker_figures.c_str(), "w")) {
                stress::print_csv(f, results);
                std::fclose(f);
              }
            }
            if (violation) return exit_violation;
            if (run_error) return exit_run_error;
            if (stop_requested) {
              std::fprintf(stderr, "gfsl stress: interrupted by a signal; the report covers what ran\n");
              return exit_undecided;
            }
            // A configuration that judged no answer and no structure tested
            // nothing: not a pass.
            if (nothing_judged) {
              std::fprintf(stderr, "gfsl stress: a configuration judged nothing (0 answers, 0 structures): give it more --seconds or "
                                   "fewer --ops-per-team\n");
              return exit_undecided;
            }
            return exit_ok;
          }};
}

}  // namespace gfsl::cli
