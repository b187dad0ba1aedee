// gfsl fuzz / gfsl fuzz merge / gfsl mutants: property-based campaigns and
// the mutants' kill matrix.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/subject_options.hpp"
#include "cli/commands.hpp"
#include "cli/fuzz_scale.hpp"
#include "cli/run_options.hpp"
#include "cli/shards.hpp"
#include "cli/workers.hpp"
#include "fuzz/campaign.hpp"
#include "fuzz/journal.hpp"
#include "linearizability/report.hpp"

#include <sys/wait.h>
#include <unistd.h>

namespace gfsl::cli {

namespace {

// The largest run a campaign generates (--max-ops): a run is not cut by the
// time budget, so it must be one that ends soon after it (about 1.5 s for
// 100,000 operations on the host; --max-ops 4294967296 ran 65 s past
// --seconds 2 and took 2.7 GB). The smallest: the generator's 4.
std::uint64_t max_run_ops(const std::string& backend) { return backend == "cuda" ? 1000000 : 100000; }
constexpr std::uint64_t min_run_ops = 4;

// The `gfsl replay` line of a fuzzing run.
std::string replay_of(const fuzz::run_config& c) {
  run_options o;
  o.backend = c.backend;
  o.w = c.w;
  o.so = c.so;
  o.sched = sched::name(c.so.strat);
  o.sched_seed_given = true;
  o.events = true;
  o.check_every = c.backend == "host" ? c.check_every : 0;
  o.choice = c.choice;
  o.script = c.script;
  return encode_replay(o);
}

bool parse_granularity_limit(const std::string& text, fuzz::generator_limits& lim) {
  if (text == "any") {
    lim.vary_granularity = true;
    return true;
  }
  lim.vary_granularity = false;
  return sched::parse(text, lim.granularity);
}

// A resumed journal's campaign line is held to the command line's rules:
// a field the command line would refuse (an edited or damaged journal) is
// named in one line, before anything runs. Empty when every field is good.
std::string check_resumed_header(const fuzz::campaign_header& h) {
  const auto bad = [](const char* field, const std::string& value, const char* allowed) {
    return std::string("field \"") + field + "\" is \"" + gfsl::lin::printable(value) + "\" (" + allowed + ")";
  };
  const auto one_of = [](const std::string& v, std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return v == n; });
  };
  if (!one_of(h.backend, {"host", "threads", "cuda"})) return bad("backend", h.backend, "host, threads, cuda");
  const auto subject = parse_subject(h.subject);
  if (!subject) return bad("subject", h.subject, subject_names_text().c_str());
  if (const subject_descriptor& d = subject_of(*subject); *subject != subject_kind::gfsl && *subject != subject_kind::slabhash) {
    if (!d.parse_variant(h.variant)) return bad("variant", h.variant, std::string(d.variants_text).c_str());
    if (h.mutant != "none" && !d.parse_mutant(h.mutant)) {
      return bad("mutant", h.mutant, ("none or a name gfsl mutants --subject " + std::string(d.name) + " --list gives").c_str());
    }
  } else if (*subject == subject_kind::slabhash) {
    if (!slabhash::parse_variant(h.variant)) return bad("variant", h.variant, "fixed, published");
    if (h.mutant != "none" && !slabhash::parse_mutant(h.mutant)) {
      return bad("mutant", h.mutant, "none or a name gfsl mutants --subject slabhash --list gives");
    }
  } else {
    if (!parse_variant(h.variant)) return bad("variant", h.variant, "thesis, robust");
    if (h.mutant != "none" && !find_mutant(h.mutant)) return bad("mutant", h.mutant, "none or a name gfsl mutants --list gives");
  }
  if (!one_of(h.granularity, {"any", "chunk", "line", "lane"})) return bad("granularity", h.granularity, "any, chunk, line, lane");
  if (!one_of(h.upper, {"thesis", "reraise", "mixed"})) return bad("upper", h.upper, "thesis, reraise, mixed");
  if (!one_of(h.memory, {"sc", "ptx", "mixed"})) return bad("memory", h.memory, "sc, ptx, mixed");
  const auto real = [](double d) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", d);
    return std::string(buf);
  };
  if (!(h.seconds > 0) || !std::isfinite(h.seconds)) return bad("seconds", real(h.seconds), "a positive number");
  if (!(h.shrink_seconds > 0) || !std::isfinite(h.shrink_seconds)) {
    return bad("shrink_seconds", real(h.shrink_seconds), "a positive number");
  }
  if (h.max_teams < 2 || h.max_teams > (1u << 20)) return bad("max_teams", std::to_string(h.max_teams), "2 to 1048576");
  if (h.max_range < 2 || h.max_range > 1000000000u) return bad("max_range", std::to_string(h.max_range), "2 to 1000000000");
  if (h.workers > 256) return bad("workers", std::to_string(h.workers), "0 to 256");
  if (h.max_ops < min_run_ops || h.max_ops > max_run_ops(h.backend)) {
    return bad("max_ops", std::to_string(h.max_ops),
               (std::to_string(min_run_ops) + " to " + std::to_string(max_run_ops(h.backend)) + " for backend " + h.backend).c_str());
  }
  return {};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// gfsl mutants' options, as the command line gives them.
struct mutants_options {
  std::string backend = "host";
  double budget = 20;
  double equivalent_budget = 0;  // 0: the budget
  std::uint64_t max_runs = 0, equivalent_max_runs = 0;  // 0: the time bound only
  double shrink_seconds = 0;                            // 0: --seconds
  bool list = false;
  std::string json, junit, only, granularity = "chunk", progress = "auto";
  std::string memory;  // "": mixed on the host, sc on the other backends
  subject_text subject;
  std::uint64_t seed = 1;
  std::string devices;
};

void declare_mutants_options(CLI::App* mu, mutants_options& st) {
  mu->add_option("--backend", st.backend, "host or cuda")->check(CLI::IsMember({"host", "cuda"}))->capture_default_str();
  mu->add_option("--seconds", st.budget,
                 "search time of each mutant's campaign (and of the control's); shrinking a kill takes up to --shrink-seconds more")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  mu->add_option("--equivalent-seconds", st.equivalent_budget,
                 "seconds for each mutant marked equivalent for this variant and granularity (0: --seconds); they are run "
                 "to test that claim, and a kill is reported")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  mu->add_option("--max-runs", st.max_runs,
                 "runs of each mutant's campaign (and of the control's); with a fixed seed on the host backend the "
                 "matrix is then the same on any machine, only slower on a loaded one (0: --seconds alone)")
      ->capture_default_str();
  mu->add_option("--equivalent-max-runs", st.equivalent_max_runs,
                 "runs of each mutant marked equivalent for this variant and granularity (0: --max-runs)")
      ->capture_default_str();
  mu->add_option("--shrink-seconds", st.shrink_seconds, "time to shrink each kill (0: --seconds)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  mu->add_option("--seed", st.seed, "campaign seed (fixed: the matrix is reproducible)")->capture_default_str();
  mu->add_option("--only", st.only, "one mutant by name");
  add_subject_options(mu, st.subject, false);
  mu->add_option("--variant", st.subject.variant,
                 "the variant the bugs are planted in: gfsl robust (the default) or thesis; slabhash fixed (the default) or published");
  mu->add_option("--granularity", st.granularity,
                 "host: read granularity of the campaigns (thesis is linearizable only at chunk; robust at every one)")
      ->check(CLI::IsMember({"chunk", "line", "lane"}))
      ->capture_default_str();
  mu->add_option("--memory", st.memory,
                 "host: what the campaigns' loads see: sc (the latest store), ptx (the PTX model, under which the "
                 "memory-order mutants, cuda-only under sc, take effect on the host), or mixed (ptx in one run of 4; the "
                 "default on the host, sc elsewhere)")
      ->check(CLI::IsMember({"sc", "ptx", "mixed"}));
  mu->add_option("--json", st.json, "write the matrix as one JSON object to FILE (-: standard output, instead of the table)")->type_name("FILE");
  mu->add_option("--junit", st.junit, "write JUnit XML to FILE")->type_name("FILE");
  add_progress_option(mu, st.progress);
  mu->add_flag("--list", st.list, "list the mutants and what each breaks");
  mu->add_option("--devices", st.devices,
                 "cuda: all or 0,2,...: one campaign on each device at once, each in a process that sees only its device "
                 "(default: all visible)");
}

void list_mutants(const std::vector<mutant_entry>& catalog) {
  for (const mutant_entry& m : catalog) {
    std::printf("%-32s [%s; %s]%s\n    %s\n", m.name.c_str(), m.backends.c_str(), m.variants.c_str(), m.notes.c_str(),
                m.breaks.c_str());
  }
}

// A row of the matrix: a mutant (the control: none) and what its campaign found.
struct matrix_row {
  const mutant_entry* m = nullptr;
  bool killed = false, applicable = true;
  std::string detector, detail, replay;
  std::vector<std::string> detectors;
  double seconds = 0;
  std::uint64_t ops = 0, prefill = 0, runs = 0;
  int device = -1;  // the device its campaign ran on (-1: this process's)
};

// The matrix once the command line is resolved: its subject, variant and
// memory, which mutants are equivalent here, and the campaign each one gets.
struct kill_matrix {
  explicit kill_matrix(const mutants_options& options) : st(options) {}

  const mutants_options& st;
  subject_kind subject = subject_kind::gfsl;
  std::string variant_text;
  fuzz::campaign_options chosen;
  std::vector<mutant_entry> catalog;
  bool whole_chunk_reads = true;
  // Runs under ptx: the memory-order mutants take effect on the
  // host. Only campaigns all under ptx judge SlabHash's mutants that
  // weaken an order sc gives anyway (mixed ones keep them equivalent).
  bool weak_memory = false, all_ptx = false;

  const mutant_entry* find_entry(int id) const {
    for (const mutant_entry& m : catalog) {
      if (m.id == id) return &m;
    }
    return nullptr;
  }

  // Equivalent for this variant at this read granularity (core/gfsl/mutants.hpp, core/slabhash/mutants.hpp).
  bool equivalent(const mutant_entry* m) const {
    if (!m) return false;
    // The catalog's reason (core/subject.hpp): under ptx a whole-chunk
    // read is not one instant, and an order sc gives is the model's to break.
    const campaign_memory mem = all_ptx ? campaign_memory::ptx : st.memory == "sc" ? campaign_memory::sc : campaign_memory::mixed;
    return !gfsl::subject_of(subject).equivalence(m->id, chosen.choice.variant, whole_chunk_reads, mem).empty();
  }

  // The matrix runs at whole-chunk reads: the only granularity at
  // which the correct core is linearizable, so a kill is the bug's.
  matrix_row campaign(int m) const {
    fuzz::campaign_options o;
    o.backend = st.backend;
    o.seconds = st.budget;
    o.max_runs = st.max_runs;
    if (equivalent(find_entry(m))) {
      if (st.equivalent_budget > 0) o.seconds = st.equivalent_budget;
      if (st.equivalent_max_runs > 0) o.max_runs = st.equivalent_max_runs;
    }
    o.choice = chosen.choice;
    o.limits.subject = subject;
    // Both upper-level rules for gfsl (swarm testing: a fault in either is within reach).
    o.limits.upper = subject == subject_kind::gfsl ? fuzz::upper_choice::mixed : fuzz::upper_choice::thesis;
    o.choice.mutant = static_cast<std::uint8_t>(m);
    o.seed = st.seed;
    o.progress = false;
    o.runs_per_batch = 10;
    o.limits.vary_granularity = false;
    sched::parse(st.granularity, o.limits.granularity);
    fuzz::parse_memory_choice(st.memory, o.limits.memory);
    o.shrink_seconds = st.shrink_seconds > 0 ? st.shrink_seconds : st.budget;
    o.limits.max_teams = st.backend == "cuda" ? 2048 : 8;
    o.limits.max_ops = st.backend == "cuda" ? 20000 : 400;
    o.limits.max_range = 2000;
    // A mutant that hangs on the GPU waits out the device's hang
    // bound at every run of its shrinking: keep it short next to
    // the budget (a correct run at these sizes takes milliseconds).
    o.judge.device_hang_seconds = std::clamp(st.budget / 8, 0.5, 10.0);
    o.replay_line = replay_of;
    const fuzz::campaign_result res = fuzz::run_campaign(o);
    matrix_row r;
    r.runs = res.runs;
    if (res.found) {
      r.killed = true;
      r.seconds = res.found->seconds_to_first;
      r.ops = res.found->shrunk.w.ops;
      r.prefill = res.found->verdict.run.prefill.size();
      r.replay = replay_of(res.found->shrunk);
      // The shrunk run judged again; on the GPU a failure may not
      // repeat, then the first failing run's detectors are shown.
      const auto& found = res.found->verdict.found.empty() ? res.found->first_found : res.found->verdict.found;
      for (const fuzz::detection& d : found) r.detectors.push_back(d.detector);
      if (!r.detectors.empty()) {
        r.detector = r.detectors.front();
        r.detail = found.front().detail;
      }
    }
    return r;
  }
};

// On the GPU each campaign runs in a child process: a mutant that
// makes the device fault (an illegal address) poisons the process's
// CUDA context for good, and must not take the next rows with it.
// The parent never touches the device. With several devices
// (--devices, default every visible one) one campaign runs on each
// at once, its child seeing only its device.
struct running_campaign {
  std::size_t at = 0;  // index in `todo`
  int fd = -1;
  std::size_t slot = 0;
};

std::pair<pid_t, int> start_isolated(const kill_matrix& km, int m, const std::string& visible) {
  int fds[2];
  if (pipe(fds) != 0) return {-1, -1};
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (!visible.empty()) setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1);
    const matrix_row r = km.campaign(m);
    std::string text = std::to_string(r.killed) + "\n" + std::to_string(r.seconds) + "\n" + std::to_string(r.ops) +
                       "\n" + std::to_string(r.prefill) + "\n" + std::to_string(r.runs) + "\n" + r.replay + "\n" +
                       r.detail + "\n";
    for (const std::string& d : r.detectors) text += d + "\n";
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    close(fds[1]);
    std::_Exit(0);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return {-1, -1};
  }
  return {pid, fds[0]};
}

// The child's answer; read before the child is waited for, so a
// long answer cannot fill the pipe and stall it.
matrix_row finish_isolated(pid_t pid, int fd) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  close(fd);
  int status = 0;
  waitpid(pid, &status, 0);
  matrix_row r;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) {
    r.killed = true;  // the child died: the device faulted past recovery, a detection too
    r.detectors = {"run-error"};
    r.detector = "run-error";
    r.detail = "the campaign's process ended abnormally (status " + std::to_string(status) + ")";
    return r;
  }
  r.killed = line == "1";
  std::getline(in, line);
  r.seconds = std::atof(line.c_str());
  std::getline(in, line);
  r.ops = std::strtoull(line.c_str(), nullptr, 10);
  std::getline(in, line);
  r.prefill = std::strtoull(line.c_str(), nullptr, 10);
  std::getline(in, line);
  r.runs = std::strtoull(line.c_str(), nullptr, 10);
  std::getline(in, r.replay);
  std::getline(in, r.detail);
  while (std::getline(in, line)) {
    if (!line.empty()) r.detectors.push_back(line);
  }
  if (!r.detectors.empty()) r.detector = r.detectors.front();
  return r;
}

// One line on stderr as each campaign ends (a matrix takes
// minutes), numbered by the mutant's place in the matrix.
void announce(const kill_matrix& km, const std::vector<int>& todo, const std::vector<matrix_row>& done, std::size_t at) {
  const matrix_row& r = done[at];
  const std::string found = r.detector.empty() ? "" : " (" + r.detector + ")";
  if (at == 0) {
    std::fprintf(stderr, "control (the correct core): %s %llu runs%s\n", r.killed ? "FAILED after" : "passed",
                 (unsigned long long)r.runs, r.killed ? found.c_str() : "");
  } else {
    const mutant_entry* m = km.find_entry(todo[at]);
    const bool equiv = km.equivalent(m);
    std::fprintf(stderr, "mutant %zu/%zu %s: %s %llu runs%s\n", at, todo.size() - 1, m ? m->name.c_str() : "?",
                 r.killed ? "killed after" : equiv ? "survived (equivalent here)" : "NOT killed in", (unsigned long long)r.runs,
                 r.killed ? found.c_str() : "");
  }
  std::fflush(stderr);
}

// Runs each campaign of `todo` into `done`: here one after another, or each
// in a child process (isolated: cuda, --devices). Returns exit_usage when
// --devices is refused, exit_ok otherwise.
int run_matrix(const kill_matrix& km, const std::vector<int>& todo, std::vector<matrix_row>& done, bool progress) {
  const mutants_options& st = km.st;
  const bool isolate = st.backend == "cuda" || !st.devices.empty();
  if (!isolate) {
    for (std::size_t i = 0; i < todo.size(); ++i) {
      done[i] = km.campaign(todo[i]);
      if (progress) announce(km, todo, done, i);
    }
  } else {
    std::vector<device_slot> devices;
    if (!st.devices.empty() && st.backend != "cuda" && !std::getenv("GFSL_DEVICE_COUNT")) {
      std::fprintf(stderr, "gfsl mutants: --devices goes with --backend cuda\n");
      return exit_usage;
    }
    if (const std::string bad = resolve_devices(st.devices.empty() ? "all" : st.devices, devices); !bad.empty()) {
      if (!st.devices.empty()) {
        std::fprintf(stderr, "gfsl mutants: %s\n", bad.c_str());
        return exit_usage;
      }
      devices = {device_slot{0, ""}};  // no device to spread over: the campaigns report what they meet
    }
    std::map<pid_t, running_campaign> running;
    std::vector<bool> busy(devices.size(), false);
    std::size_t next = 0;
    while (next < todo.size() || !running.empty()) {
      for (std::size_t slot = 0; slot < devices.size() && next < todo.size(); ++slot) {
        if (busy[slot]) continue;
        const auto [pid, fd] = start_isolated(km, todo[next], devices[slot].visible);
        if (pid < 0) {
          done[next] = km.campaign(todo[next]);  // no process to spare: run it here
          done[next].device = devices[slot].index;
          if (progress) announce(km, todo, done, next);
          ++next;
          continue;
        }
        running[pid] = running_campaign{next, fd, slot};
        busy[slot] = true;
        ++next;
      }
      if (running.empty()) continue;
      // Whichever campaign ends first frees its device.
      siginfo_t info{};
      pid_t ended = -1;
      if (waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) == 0) ended = info.si_pid;
      auto it = running.find(ended);
      if (it == running.end()) it = running.begin();
      done[it->second.at] = finish_isolated(it->first, it->second.fd);
      done[it->second.at].device = devices[it->second.slot].index;
      if (progress) announce(km, todo, done, it->second.at);
      busy[it->second.slot] = false;
      running.erase(it);
    }
  }
  return exit_ok;
}

// Each applicable row takes its campaign's outcome. exit_violation when the
// control failed, a mutant not equivalent here survived, or one marked
// equivalent was killed; exit_ok otherwise.
int judge_matrix(const kill_matrix& km, std::vector<matrix_row>& rows, const std::vector<matrix_row>& done) {
  int rc = exit_ok;
  const matrix_row& control = done[0];
  if (control.killed) {
    std::fprintf(stderr, "gfsl mutants: the correct core failed its control campaign: %s\n", control.detail.c_str());
    rc = exit_violation;
  }
  {
    std::size_t k = 1;
    for (matrix_row& r : rows) {
      if (!r.applicable) continue;
      const mutant_entry* m = r.m;
      r = done[k++];
      r.m = m;
      if (!r.killed && !km.equivalent(m)) rc = exit_violation;
      // A kill refutes an equivalence claim: the argument in
      // core/gfsl/mutants.hpp is wrong and must go.
      if (r.killed && km.equivalent(m)) {
        std::fprintf(stderr, "gfsl mutants: %s is marked equivalent here (its catalog's argument) but was killed by %s: "
                             "the equivalence argument is wrong; gfsl replay %s\n",
                     m->name.c_str(), r.detector.c_str(), r.replay.c_str());
        rc = exit_violation;
      }
    }
  }
  return rc;
}

struct matrix_score {
  std::size_t counted = 0, killed = 0;  // mutants not equivalent here, and of them those killed
};

matrix_score score_of(const kill_matrix& km, const std::vector<matrix_row>& rows) {
  matrix_score s;
  for (const matrix_row& r : rows) {
    if (!r.applicable || km.equivalent(r.m)) continue;
    ++s.counted;
    s.killed += r.killed;
  }
  return s;
}

// The JSON form on standard output in the table's place ("-"),
// or written whole to its FILE beside the table. exit_usage when it cannot
// be written.
int write_matrix_json(const kill_matrix& km, const std::vector<matrix_row>& rows, const matrix_row& control, matrix_score s) {
  const mutants_options& st = km.st;
  std::FILE* json_out = nullptr;
  char* json_text = nullptr;
  std::size_t json_size = 0;
  if (!st.json.empty()) json_out = is_stdout(st.json) ? stdout : open_memstream(&json_text, &json_size);
  if (!st.json.empty() && !json_out) {
    std::fprintf(stderr, "gfsl mutants: --json %s: out of memory\n", st.json.c_str());
    return exit_usage;
  }
  if (json_out) {
    std::fprintf(json_out, "{\"backend\":\"%s\",\"budget_seconds\":%g,\"seed\":%llu,\"control_passed\":%s,\"mutation_score\":%.3f,"
                "\"mutants\":[",
                st.backend.c_str(), st.budget, (unsigned long long)st.seed, control.killed ? "false" : "true",
                s.counted ? static_cast<double>(s.killed) / s.counted : 0.0);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const matrix_row& r = rows[i];
      std::fprintf(json_out, "%s{\"name\":\"%s\",\"applicable\":%s,\"equivalent\":%s,\"killed\":%s,\"detector\":\"%s\",\"detectors\":[",
                  i ? "," : "", std::string(r.m->name).c_str(), r.applicable ? "true" : "false",
                  km.equivalent(r.m) ? "true" : "false", r.killed ? "true" : "false", r.detector.c_str());
      for (std::size_t k = 0; k < r.detectors.size(); ++k) std::fprintf(json_out, "%s\"%s\"", k ? "," : "", r.detectors[k].c_str());
      std::fprintf(json_out, "],\"device\":%d,\"seconds\":%.3f,\"ops\":%llu,\"prefill\":%llu,\"runs\":%llu,\"replay\":\"%s\"}", r.device,
                  r.seconds, (unsigned long long)r.ops, (unsigned long long)r.prefill, (unsigned long long)r.runs,
                  r.replay.c_str());
    }
    std::fprintf(json_out, "]}\n");
    if (json_out != stdout) {
      std::fclose(json_out);
      const std::string text(json_text, json_size);
      std::free(json_text);
      if (const std::string e = fuzz::write_file_atomically(st.json, text); !e.empty()) {
        std::fprintf(stderr, "gfsl mutants: --json %s\n", e.c_str());
        return exit_usage;
      }
    }
  }
  return exit_ok;
}

void print_matrix_table(const kill_matrix& km, const std::vector<matrix_row>& rows, const matrix_row& control, matrix_score s) {
  const mutants_options& st = km.st;
  std::printf("%-32s %-8s %-34s %8s %6s %7s  %s\n", "mutant", "killed", "first detector", "seconds", "ops", "prefill",
              "all detectors");
  for (const matrix_row& r : rows) {
    std::string all;
    for (const std::string& d : r.detectors) all += (all.empty() ? "" : ",") + d;
    const char* state = !r.applicable                   ? "n/a"
                        : r.killed && km.equivalent(r.m) ? "EQUIV?"
                        : r.killed                       ? "yes"
                        : !km.equivalent(r.m)            ? "NO"
                                                         : "equiv.";
    std::printf("%-32s %-8s %-34s %8.2f %6llu %7llu  %s\n", std::string(r.m->name).c_str(), state, r.detector.c_str(),
                r.seconds, (unsigned long long)r.ops, (unsigned long long)r.prefill, all.c_str());
  }
  std::vector<double> seconds, sizes;
  for (const matrix_row& r : rows) {
    if (!r.killed) continue;
    seconds.push_back(r.seconds);
    sizes.push_back(static_cast<double>(r.ops + r.prefill));
  }
  if (!seconds.empty()) {
    std::printf("median time to kill %.2f s; median counterexample %.1f operations, prefill included\n",
                median(seconds), median(sizes));
  }
  std::map<int, std::pair<std::size_t, double>> per_device;  // campaigns, seconds to a kill
  for (const matrix_row& r : rows) {
    if (r.applicable && r.device >= 0) ++per_device[r.device].first, per_device[r.device].second += r.seconds;
  }
  if (per_device.size() > 1) {
    for (const auto& [device, f] : per_device) {
      std::printf("device %d: %zu mutant campaigns, %.2f s to their kills\n", device, f.first, f.second);
    }
  }
  std::printf("mutation score: %zu of %zu non-equivalent %s mutants killed; control %s\n", s.killed, s.counted,
              st.backend.c_str(), control.killed ? "FAILED" : "passed");
}

// False when the file cannot be written (said on stderr, with the matrix's
// exit code `rc`).
bool write_junit(const kill_matrix& km, const std::vector<matrix_row>& rows, const matrix_row& control, matrix_score s, int rc) {
  const mutants_options& st = km.st;
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"gfsl-mutants-" << st.backend << "\" tests=\""
    << rows.size() + 1 << "\" failures=\""
    << (s.counted - s.killed) + (control.killed ? 1 : 0) +
           std::count_if(rows.begin(), rows.end(), [&](const matrix_row& r) { return r.applicable && r.killed && km.equivalent(r.m); })
    << "\">\n";
  x << "  <testcase classname=\"control\" name=\"correct-core\">"
    << (control.killed ? "<failure message=\"the correct core failed\"/>" : "") << "</testcase>\n";
  for (const matrix_row& r : rows) {
    x << "  <testcase classname=\"mutants\" name=\"" << r.m->name << "\" time=\"" << r.seconds << "\">";
    if (r.applicable && km.equivalent(r.m) && r.killed) x << "<failure message=\"marked equivalent, but killed\"/>";
    else if (!r.applicable || km.equivalent(r.m)) x << "<skipped/>";
    else if (!r.killed) x << "<failure message=\"survived its budget\"/>";
    x << "</testcase>\n";
  }
  x << "</testsuite>\n";
  // A CI that reads the JUnit file must not read a stale or empty one as this run's.
  if (std::string e = fuzz::write_file_atomically(st.junit, x.str()); !e.empty()) {
    std::fprintf(stderr, "gfsl mutants: --junit: %s (the matrix's exit code was %d)\n", gfsl::lin::printable(e).c_str(), rc);
    return false;
  }
  return true;
}

int run_mutants(mutants_options& st) {
  model::workload subject_of;
  kill_matrix km(st);
  if (const std::string e = resolve_subject(st.subject, subject_of, km.chosen.choice); !e.empty()) {
    std::fprintf(stderr, "gfsl mutants: %s\n", e.c_str());
    return exit_usage;
  }
  km.subject = subject_of.subject;
  km.variant_text = variant_label(km.subject, km.chosen.choice);
  km.catalog = gfsl::subject_of(km.subject).mutant_entries();
  const subject_kind subject = km.subject;
  const std::vector<mutant_entry>& catalog = km.catalog;
  if (st.list) {
    list_mutants(catalog);
    return exit_ok;
  }
  // The published GFSL is linearizable only under sc with whole-chunk
  // reads (docs/ALGORITHM.md): its matrix's control would fail in
  // the ptx runs, so its default is sc.
  if (st.memory.empty()) st.memory = st.backend == "host" && km.variant_text != "thesis" ? "mixed" : "sc";
  km.whole_chunk_reads = st.granularity == "chunk" || st.backend == "cuda";
  km.weak_memory = st.memory != "sc";
  km.all_ptx = st.memory == "ptx";
  if (km.weak_memory && st.backend != "host") {
    std::fprintf(stderr, "gfsl mutants: --memory %s needs --backend host: its stale loads are choices of the "
                         "deterministic scheduler\n", st.memory.c_str());
    return exit_usage;
  }
  std::vector<matrix_row> rows;
  // A name that matches no mutant would run the control alone and pass.
  if (!st.only.empty() && std::none_of(catalog.begin(), catalog.end(), [&](const mutant_entry& m) { return m.name == st.only; })) {
    std::fprintf(stderr, "gfsl mutants: --only: no %s mutant is named \"%s\" (gfsl mutants --subject %s --list names them)\n",
                 subject_name(subject), gfsl::lin::printable(st.only).c_str(), subject_name(subject));
    return exit_usage;
  }
  // Control first: the correct core must survive the same campaign.
  std::vector<int> todo{0};
  for (const mutant_entry& m : catalog) {
    if (!st.only.empty() && m.name != st.only) continue;
    matrix_row r;
    r.m = &m;
    // A backend the bug cannot take effect on, or a variant without
    // the mechanism it breaks: nothing to kill.
    // The cuda-only mutants weaken memory orders (core/gfsl/mutants.hpp):
    // the host's ptx model is where they take effect on the CPU.
    const bool on_backend = m.backends.find(st.backend) != std::string::npos ||
                            (km.weak_memory && st.backend == "host" && m.backends.find("cuda") != std::string::npos);
    if (!on_backend || m.variants.find(km.variant_text) == std::string::npos) {
      r.applicable = false;
    } else {
      todo.push_back(m.id);
    }
    rows.push_back(r);
  }
  std::vector<matrix_row> done(todo.size());
  const bool progress = progress_wanted(st.progress);
  if (progress) {
    std::fprintf(stderr, "gfsl mutants: seed %llu, %zu %s and the control, %g s of search each\n",
                 (unsigned long long)st.seed, todo.size() - 1, todo.size() == 2 ? "mutant" : "mutants", st.budget);
  }
  if (const int e = run_matrix(km, todo, done, progress); e != exit_ok) return e;
  const int rc = judge_matrix(km, rows, done);
  const matrix_row control = done[0];
  const matrix_score score = score_of(km, rows);
  if (const int e = write_matrix_json(km, rows, control, score); e != exit_ok) return e;
  if (!is_stdout(st.json)) print_matrix_table(km, rows, control, score);
  if (!st.junit.empty() && !write_junit(km, rows, control, score, rc)) return exit_usage;
  return rc;
}

// gfsl fuzz's options as the command line gives them (or a resumed
// campaign's journal): campaign_options, and the texts turned into its fields.
struct fuzz_command_options {
  fuzz::campaign_options o;
  std::string shard = "0/1";
  unsigned shard_count = 0;
  subject_text subject;
  std::string granularity = "any";
  std::string upper;  // "": mixed for gfsl, thesis (no upper levels) for the others
  std::string memory;  // "": mixed on the host, sc on the other backends
  scale_options scale;
  std::string resume;
  std::vector<std::string> merge_dirs;
  std::string merge_json, merge_junit;
  std::string progress = "auto";
};

// Declares gfsl fuzz's options; returns its merge subcommand.
CLI::App* declare_fuzz_options(CLI::App* fz, fuzz_command_options& st) {
  fuzz::campaign_options& o = st.o;
  fz->add_option("--backend", o.backend, "host (scheduled, replayable), threads, cuda")
      ->check(CLI::IsMember({"host", "threads", "cuda"}))
      ->capture_default_str();
  fz->add_option("--seconds", o.seconds,
                 "time budget of the search; the shrinking of what it found comes after it (up to --shrink-seconds for "
                 "each failure signature), so a campaign that fails ends within --seconds + signatures x --shrink-seconds, "
                 "plus the run under way and the writing of each failure's folder")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  fz->add_option("--max-runs", o.max_runs, "stop after this many runs (0: time budget only)")->capture_default_str();
  fz->add_option("--shrink-seconds", o.shrink_seconds,
                 "shrinking a failure stops after this long, keeping the smallest failing run found so far")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_subject_options(fz, st.subject, false);
  fz->add_option("--mutant", st.subject.mutant, "fuzz a seeded bug instead of the correct core (gfsl mutants --subject S --list lists them)");
  fz->add_option("--variant", st.subject.variant,
                 "the structure's variant: gfsl robust (the default) or thesis (the published algorithm); slabhash fixed "
                 "(the default) or published");
  fz->add_option("--upper", st.upper,
                 "the upper levels' rule of the generated runs: thesis, reraise (a delete re-raises the next key of its "
                 "chunk), or mixed (each run's own; the default for gfsl, so that both rules are exercised)")
      ->check(CLI::IsMember({"thesis", "reraise", "mixed"}));
  fz->add_option("--jobs", st.scale.jobs, "worker processes, each a shard of this campaign (folders worker-<j>/, one merged report)")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  fz->add_option("--devices", st.scale.devices,
                 "cuda: all or 0,2,...: one worker process per GPU (default with --backend cuda: all visible devices)");
  fz->add_option("--shard", st.shard,
                 "i/n: this campaign takes every n-th batch of the seed space, from the i-th; auto: from a Slurm job array "
                 "or a Kubernetes indexed Job (docs/SCALE.md)")
      ->capture_default_str();
  fz->add_option("--shard-count", st.shard_count, "with --shard auto: the number of shards (a Kubernetes Job's completions)")
      ->check(CLI::Range(1u, 1u << 24));
  fz->add_option("--resume", st.resume, "continue the interrupted campaign of this folder, with its options");
  fz->add_flag("--overwrite", st.scale.overwrite, "start over in an --out folder that holds a campaign (it is removed)");
  fz->add_option("--worker-device", st.scale.worker_device, "(set by a parent for its device workers)")->group("");
  fz->add_option("--seed", o.seed, "campaign seed")->capture_default_str();
  fz->add_option("--out", o.out_dir, "folder for the journal, report.json and a failure's files");
  fz->add_option("--max-ops", o.limits.max_ops,
                 "largest run to generate (operations): 4 to 100000, to 1000000 with --backend cuda (a run is not cut by "
                 "--seconds)")->capture_default_str();
  fz->add_option("--max-teams", o.limits.max_teams, "most teams to generate")->check(CLI::Range(2u, 1u << 20))->capture_default_str();
  fz->add_option("--max-range", o.limits.max_range, "largest key range to generate")->check(CLI::Range(2u, 1000000000u))->capture_default_str();
  fz->add_option("--granularity", st.granularity,
                 "host: read granularities to generate: any, chunk, line, lane (thesis is linearizable only at chunk; "
                 "robust, the default variant, at every one)")
      ->check(CLI::IsMember({"any", "chunk", "line", "lane"}))
      ->capture_default_str();
  fz->add_option("--memory", st.memory,
                 "host: what the runs' loads see: sc (the latest store), ptx (the PTX model: a load that no acquire, "
                 "fence or RMW orders may return an older store), or mixed (ptx in one run of 4, sc in the others; the "
                 "default on the host, sc elsewhere)")
      ->check(CLI::IsMember({"sc", "ptx", "mixed"}));
  add_progress_option(fz, st.progress);
  fz->add_flag("--keep-going", o.keep_going,
               "go on after a failure: group failures by signature (first detector, invariant, where), shrink and write one "
               "per signature");
  CLI::App* merge = fz->add_subcommand("merge", "combine the report.json of several campaign folders (shards)");
  merge->add_option("dirs", st.merge_dirs, "campaign folders (a folder of worker processes stands for its workers)")->required();
  merge->add_option("--json", st.merge_json, "write the merged report as JSON to FILE (-: standard output, instead of the text report)")->type_name("FILE");
  merge->add_option("--junit", st.merge_junit, "write JUnit XML to FILE (a test case per shard and per failure signature)")->type_name("FILE");
  return merge;
}

// --resume: the campaign's own options, from its journal's first line.
// exit_ok, or exit_usage after one line that says what is wrong.
int take_resumed_options(fuzz_command_options& st) {
  fuzz::campaign_options& o = st.o;
  scale_options& sc = st.scale;
  if (!o.out_dir.empty()) {
    std::fprintf(stderr, "gfsl fuzz: --resume %s: the folder is the campaign's; --out goes with a new campaign\n",
                 gfsl::lin::printable(st.resume).c_str());
    return exit_usage;
  }
  fuzz::journal_summary prior;
  const std::string path = (std::filesystem::path(st.resume) / fuzz::journal_file).string();
  if (std::string e = fuzz::read_journal(path, prior); !e.empty()) {
    std::fprintf(stderr, "gfsl fuzz: --resume: %s\n", gfsl::lin::printable(e).c_str());
    return exit_usage;
  }
  const fuzz::campaign_header& h = prior.header;
  if (std::string e = check_resumed_header(h); !e.empty()) {
    std::fprintf(stderr, "gfsl fuzz: --resume: %s: line 1: %s\n", gfsl::lin::printable(path).c_str(), e.c_str());
    return exit_usage;
  }
  o.out_dir = st.resume;
  o.backend = h.backend;
  o.seconds = h.seconds;
  o.shrink_seconds = h.shrink_seconds;
  o.keep_going = h.keep_going;
  o.max_runs = h.max_runs;
  o.seed = h.seed;
  o.shard = h.shard;
  o.shards = h.shards;
  o.limits.max_ops = h.max_ops;
  o.limits.max_teams = static_cast<unsigned>(h.max_teams);
  o.limits.max_range = static_cast<std::uint32_t>(h.max_range);
  st.subject.subject = h.subject;
  st.subject.variant = h.variant;
  st.upper = h.upper;
  st.subject.mutant = h.mutant == "none" ? "" : h.mutant;
  st.granularity = h.granularity;
  st.memory = h.memory;
  sc.jobs = std::max(1u, h.workers);
  sc.devices = h.devices;
  if (sc.worker_device.empty()) sc.worker_device = h.device;
  sc.shard_source = h.shard_source;
  sc.resuming = true;
  model::workload subject_of;
  if (const std::string e = resolve_subject(st.subject, subject_of, o.choice); !e.empty()) {
    std::fprintf(stderr, "gfsl fuzz: --resume: %s: %s\n", gfsl::lin::printable(path).c_str(), e.c_str());
    return exit_usage;
  }
  return exit_ok;
}

// A new campaign: its folder, its shard and where its workers run.
// exit_ok, or exit_usage after one line that says what is wrong.
int check_new_campaign(fuzz_command_options& st) {
  fuzz::campaign_options& o = st.o;
  scale_options& sc = st.scale;
  if (o.out_dir.empty()) {
    std::fprintf(stderr, "gfsl fuzz: --out DIR is needed (or --resume DIR)\n");
    return exit_usage;
  }
  shard_choice shard;
  if (std::string e = choose_shard(st.shard, st.shard_count, shard, [](const char* n) { return std::getenv(n); }); !e.empty()) {
    std::fprintf(stderr, "gfsl fuzz: %s\n", gfsl::lin::printable(e).c_str());
    return exit_usage;
  }
  o.shard = shard.shard;
  o.shards = shard.shards;
  sc.shard_source = shard.source + (shard.detail.empty() ? "" : " " + shard.detail);
  if (!sc.devices.empty() && o.backend != "cuda" && !std::getenv("GFSL_DEVICE_COUNT")) {
    std::fprintf(stderr, "gfsl fuzz: --devices goes with --backend cuda (--jobs N runs CPU workers)\n");
    return exit_usage;
  }
  if (!sc.devices.empty() && sc.jobs > 1) {
    std::fprintf(stderr, "gfsl fuzz: --devices and --jobs: choose one (a device runs one worker)\n");
    return exit_usage;
  }
  // Every visible GPU by default; a device worker itself runs on
  // the one device its parent gave it.
  if (o.backend == "cuda" && sc.devices.empty() && sc.worker_device.empty() && sc.jobs == 1) sc.devices = "all";
  if (o.limits.max_ops < min_run_ops || o.limits.max_ops > max_run_ops(o.backend)) {
    std::fprintf(stderr, "gfsl fuzz: --max-ops %llu: a run of a %s campaign has %llu to %llu operations\n",
                 (unsigned long long)o.limits.max_ops, o.backend.c_str(), (unsigned long long)min_run_ops,
                 (unsigned long long)max_run_ops(o.backend));
    return exit_usage;
  }
  return exit_ok;
}

// The options every campaign resolves, new or resumed: the device, the
// progress line, granularity, memory, subject and upper rule. exit_ok, or
// exit_usage after one line that says what is wrong.
int resolve_fuzz_options(fuzz_command_options& st) {
  fuzz::campaign_options& o = st.o;
  scale_options& sc = st.scale;
  // No run is made only to fail: a cuda campaign, given here or
  // resumed from its journal, needs a usable CUDA device.
  if (o.backend == "cuda") {
    if (const std::string why = cuda_unusable_reason(); !why.empty()) {
      if (st.resume.empty()) {
        std::fprintf(stderr, "gfsl fuzz: --backend cuda: %s\n", gfsl::lin::printable(why).c_str());
      } else {
        const std::string path = (std::filesystem::path(st.resume) / fuzz::journal_file).string();
        std::fprintf(stderr, "gfsl fuzz: --resume: %s: line 1: field \"backend\" is \"cuda\": %s\n",
                     gfsl::lin::printable(path).c_str(), gfsl::lin::printable(why).c_str());
      }
      return exit_usage;
    }
  }
  sc.granularity = st.granularity;
  o.progress = progress_wanted(st.progress);
  sc.progress = o.progress;
  if (!parse_granularity_limit(st.granularity, o.limits)) return exit_usage;
  if (st.memory.empty()) st.memory = o.backend == "host" ? "mixed" : "sc";
  fuzz::parse_memory_choice(st.memory, o.limits.memory);
  if (o.limits.memory != fuzz::memory_choice::sc && o.backend != "host") {
    std::fprintf(stderr, "gfsl fuzz: --memory %s needs --backend host: its stale loads are choices of the "
                         "deterministic scheduler\n", fuzz::memory_choice_name(o.limits.memory));
    return exit_usage;
  }
  {
    model::workload subject_of;
    if (const std::string e = resolve_subject(st.subject, subject_of, o.choice); !e.empty()) {
      std::fprintf(stderr, "gfsl fuzz: %s\n", e.c_str());
      return exit_usage;
    }
    o.limits.subject = subject_of.subject;
  }
  if (st.upper.empty()) st.upper = o.limits.subject == subject_kind::gfsl ? "mixed" : "thesis";
  if (!fuzz::parse_upper_choice(st.upper, o.limits.upper)) {
    std::fprintf(stderr, "gfsl fuzz: --resume: upper rule %s is not known (thesis, reraise, mixed)\n",
                 gfsl::lin::printable(st.upper).c_str());
    return exit_usage;
  }
  if (o.limits.subject != subject_kind::gfsl && o.limits.upper != fuzz::upper_choice::thesis) {
    std::fprintf(stderr, "gfsl fuzz: --upper is a gfsl rule; %s has no upper levels\n", subject_name(o.limits.subject));
    return exit_usage;
  }
  if (o.backend == "cuda") o.limits.max_teams = std::max(o.limits.max_teams, 1024u);
  o.replay_line = replay_of;
  return exit_ok;
}

}  // namespace

command add_fuzz_command(CLI::App& root) {
  auto st = std::make_shared<fuzz_command_options>();
  st->o.out_dir = "";
  CLI::App* fz = root.add_subcommand("fuzz", "property-based fuzzing campaign: generate runs, judge them, shrink the first failure");
  CLI::App* merge = declare_fuzz_options(fz, *st);
  return {fz, [st, merge] {
            if (merge->parsed()) return merge_fuzz_campaigns(st->merge_dirs, st->merge_json, st->merge_junit);
            if (const int e = st->resume.empty() ? check_new_campaign(*st) : take_resumed_options(*st); e != exit_ok) return e;
            if (const int e = resolve_fuzz_options(*st); e != exit_ok) return e;
            return run_fuzz_campaign(st->o, st->scale);
          }};
}

command add_mutants_command(CLI::App& root) {
  auto st = std::make_shared<mutants_options>();
  CLI::App* mu = root.add_subcommand("mutants", "the kill matrix: every seeded bug against every detector");
  declare_mutants_options(mu, *st);
  return {mu, [st] { return run_mutants(*st); }};
}

}  // namespace gfsl::cli
