#include "stress/report.hpp"

#include <cinttypes>
#include <set>
#include <sstream>

#include "core/gfsl/layout.hpp"
#include "core/registry.hpp"
#include "stress/slab_oracle.hpp"
#include "traces/json.hpp"

namespace gfsl::stress {

namespace {

const char* kind_name(std::uint8_t k) {
  switch (static_cast<op_kind>(k)) {
    case op_kind::insert: return "insert";
    case op_kind::remove: return "delete";
    case op_kind::contains: return "contains";
  }
  return "?";
}

std::string key_text(key_type k) {
  if (k == key_empty) return ".";
  if (k == key_neg_inf) return "-inf";
  return std::to_string(k);
}

std::string lock_text(std::uint64_t w) {
  if (lock_is_zombie(w)) return "ZOMBIE (marked by " + std::to_string(lock_owner(w)) + ")";
  if ((w & 0xFFFFFFFFull) == 0) return "free";
  return "held by " + std::to_string(lock_owner(w));
}

std::string quote(const std::string& s) {
  std::string out;
  traces::json::append_string(out, s);
  return out;
}
// Text for a terminal: control bytes (escape sequences, newlines) shown as
// '?', so that no string can forge a line of the report.
std::string printable(const std::string& s) {
  std::string out = s;
  for (char& ch : out) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7F) ch = '?';
  }
  return out;
}

std::string fmt(double v, const char* f = "%.3f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::string describe_chunk(const std::uint64_t* words, int n) {
  std::ostringstream s;
  const int dsize = n - 2;
  for (int i = 0; i < dsize; ++i) {
    // Entry 16 starts the chunk's second 128-byte line (N = 32 only).
    if (i == 16) s << " ||";
    s << (i ? " " : "") << key_text(entry_key(words[i]));
  }
  if (n == 32 && dsize <= 16) s << " ||";
  const entry_type next = words[n - 2];
  s << " | NEXT(max " << key_text(entry_key(next)) << ", next "
    << (entry_value(next) == no_chunk ? std::string("none") : std::to_string(entry_value(next))) << ") LOCK "
    << lock_text(words[n - 1]);
  return s.str();
}

std::string describe_read(const violation_record& v, std::string (*describe_line)(const violation_record&)) {
  std::ostringstream s;
  s << (v.answer ? "true" : "false") << " " << kind_name(v.kind) << "(" << v.key << ")";
  if (v.answer && v.expected) s << " value " << v.value;
  s << " (expected " << (v.expected ? "true" : "false") << ")  ";
  if (describe_line) {
    s << describe_line(v);
  } else if (v.subject == static_cast<std::uint8_t>(subject_kind::slabhash)) {
    if (v.chunk == no_chunk) s << "no slab read";
    else s << "bucket " << v.bucket << " slab " << v.chunk << " (lanes 2i,2i+1: pair i): " << describe_slab(v.words);
  } else if (v.chunk == no_chunk) {
    s << "no chunk read";
  } else {
    s << "chunk " << v.chunk << ": " << describe_chunk(v.words, v.chunk_size);
  }
  return s.str();
}

std::vector<std::string> slab_summary_lines(const config_result& r) {
  auto first = [](double t) { return t < 0 ? std::string("none") : "first at " + fmt(t, "%.3f") + " s"; };
  auto rate = [&](std::uint64_t n) { return fmt(r.per_1e9_answers(n), "%.4g"); };
  const counters& c = r.totals;
  std::vector<std::string> out;
  out.push_back("answers judged: " + std::to_string(c.reads) + " (" + fmt(r.seconds > 0 ? c.reads / r.seconds / 1e6 : 0, "%.2f") +
                " M/s); false where true was known (a key missing: lost insert) " + std::to_string(c.missing) + ", " +
                rate(c.missing) + " per 10^9 answers, " + first(r.first_missing_s) +
                "; true where false was known (a key present twice or inserted over itself) " + std::to_string(c.extra) + ", " +
                rate(c.extra) + " per 10^9 answers, " + first(r.first_extra_s));
  out.push_back("full scan after each of " + std::to_string(r.structure_checks) + " rounds: duplicate keys " +
                std::to_string(r.duplicates) + " (" + rate(r.duplicates) + " per 10^9 answers, " + first(r.first_duplicate_s) +
                "), lost keys " + std::to_string(r.lost_keys) + " (" + rate(r.lost_keys) + " per 10^9 answers, " +
                first(r.first_lost_s) + "), unexpected keys " + std::to_string(r.unexpected_keys) + ", other invariants " +
                std::to_string(r.malformed));
  return out;
}

void print_text(std::FILE* out, const std::vector<config_result>& results) {
  for (const config_result& r : results) {
    if (r.subject == "slabhash") {
      std::fprintf(out, "configuration: subject slabhash, backend %s (%s), shape %s, variant %s, %u buckets, range %u",
                   printable(r.backend).c_str(), printable(r.device).c_str(), r.shape.c_str(), r.variant.c_str(), r.buckets,
                   r.range);
      if (r.churn) std::fprintf(out, " and %u shared keys", r.churn);
      std::fprintf(out, ", %u teams (%u writing)", r.teams, r.writers);
      if (r.ops_per_round) std::fprintf(out, ", rounds of %" PRIu64 " operations a team", r.ops_per_round);
      if (!r.granularity.empty()) std::fprintf(out, ", %s scheduler at %s granularity", r.sched.c_str(), r.granularity.c_str());
      std::fprintf(out, "\n");
      if (r.mutant != "none") std::fprintf(out, "  mutant: %s (%s)\n", r.mutant.c_str(), r.mutant_role.c_str());
      const counters& c = r.totals;
      std::fprintf(out,
                   "  %" PRIu64 " operations in %s s of running teams, %s s wall (%s M/s): %" PRIu64 " contains, %" PRIu64
                   " inserts, %" PRIu64 " deletes\n",
                   c.ops(), fmt(r.seconds).c_str(), fmt(r.wall_seconds).c_str(), fmt(r.ops_per_second() / 1e6, "%.2f").c_str(),
                   c.contains, c.inserts, c.removes);
      for (const std::string& line : slab_summary_lines(r)) std::fprintf(out, "  %s\n", line.c_str());
      std::fprintf(out, "  rounds: %" PRIu64 " built, %" PRIu64 " failed the full scan (%s); %" PRIu64 " ended early by a full pool\n",
                   r.structures, r.structure_violations, r.invariants_checked.c_str(), r.rebuilt_early);
      std::set<std::uint32_t> tied;
      auto replay_under = [&](std::uint32_t round, const char* indent) {
        if (const std::string* line = r.replay_of(round)) {
          std::fprintf(out, "%sreplay: gfsl stress --replay %s\n", indent, line->c_str());
          tied.insert(round);
        }
      };
      for (const std::string& p : r.structure_problems) {
        std::fprintf(out, "    %s\n", printable(p).c_str());
        unsigned structure = 0;
        if (std::sscanf(p.c_str(), "structure %u:", &structure) == 1) replay_under(structure, "      ");
      }
      for (std::size_t i = 0; i < r.reports.size(); ++i) {
        const violation_record& v = r.reports[i];
        std::fprintf(out, "  violation %zu: team %u, round %u, at %s: %s\n", i + 1, v.team, v.structure,
                     r.backend == "host" ? ("scheduling point " + std::to_string(v.time_ns)).c_str()
                                         : (fmt(static_cast<double>(v.time_ns) / 1e9, "%.6f") + " s").c_str(),
                     describe_read(v).c_str());
        replay_under(v.structure, "    ");
      }
      if (c.violations > r.reports.size()) {
        std::fprintf(out, "  (%" PRIu64 " more violations counted, not shown)\n", c.violations - r.reports.size());
      }
      for (const config_result::structure_replay& rp : r.replays) {
        if (!tied.count(rp.structure)) {
          std::fprintf(out, "  round %u (violations not shown): replay: gfsl stress --replay %s\n", rp.structure, rp.line.c_str());
        }
      }
      if (r.hung) std::fprintf(out, "  HANG: %s\n", printable(r.hang_detail).c_str());
      if (!r.error.empty()) std::fprintf(out, "  ERROR: %s\n", printable(r.error).c_str());
      if (r.interrupted) std::fprintf(out, "  INTERRUPTED: by SIGINT/SIGTERM; the figures cover what ran\n");
      std::fprintf(out, "  verdict: %s\n",
                   !r.error.empty()           ? "run error"
                   : r.violations() || r.hung ? "VIOLATIONS FOUND"
                   : r.interrupted            ? "no violation in what ran (interrupted)"
                   : r.judged_nothing()        ? "nothing judged (not a pass)"
                                              : "no violation");
      continue;
    }
    std::fprintf(out, "configuration: ");
    if (r.subject != "gfsl") std::fprintf(out, "subject %s, ", printable(r.subject).c_str());
    std::fprintf(out, "backend %s (%s), shape %s, variant %s, ", printable(r.backend).c_str(), printable(r.device).c_str(),
                 r.shape.c_str(), r.variant.c_str());
    if (r.levels) std::fprintf(out, "%u levels, ", r.levels);
    else std::fprintf(out, "chunk %d, ", r.chunk);
    std::fprintf(out, "range %u", r.range);
    if (r.churn) std::fprintf(out, " and %u shared keys", r.churn);
    std::fprintf(out, ", %u teams (%u writing)", r.teams, r.writers);
    if (r.ops_per_round) std::fprintf(out, ", rounds of %" PRIu64 " operations a team", r.ops_per_round);
    if (!r.granularity.empty()) std::fprintf(out, ", %s scheduler at %s granularity", r.sched.c_str(), r.granularity.c_str());
    if (r.reraise) std::fprintf(out, ", upper levels re-raised");
    if (r.low_churn) std::fprintf(out, ", writers churn keys 1..%u, keys above stable", r.low_churn);
    std::fprintf(out, "\n");
    if (r.mutant != "none") std::fprintf(out, "  mutant: %s (%s)\n", r.mutant.c_str(), r.mutant_role.c_str());
    const counters& c = r.totals;
    std::fprintf(out,
                 "  %" PRIu64 " operations in %s s of running teams, %s s wall (%s M/s): %" PRIu64 " contains, %" PRIu64
                 " inserts, %" PRIu64 " deletes; %" PRIu64 " answers judged\n",
                 c.ops(), fmt(r.seconds).c_str(), fmt(r.wall_seconds).c_str(), fmt(r.ops_per_second() / 1e6, "%.2f").c_str(), c.contains, c.inserts,
                 c.removes, c.reads);
    std::fprintf(out, "  violations: %" PRIu64 " (%s per 10^9 operations)\n", c.violations,
                 fmt(r.rate_per_1e9_ops(), "%.4g").c_str());
    std::fprintf(out, "  structures: %" PRIu64 " built, %" PRIu64 " judged by the structure oracle (%s, model-state: the contents), %" PRIu64
                 " failed; %" PRIu64 " ended early by a full pool\n",
                 r.structures, r.structure_checks, r.invariants_checked.c_str(), r.structure_violations, r.rebuilt_early);
    // Each replay line under the violations of the structure it runs
    // again; a structure whose violations are not shown gets its own line.
    std::set<std::uint32_t> tied;
    auto replay_under = [&](std::uint32_t structure, const char* indent) {
      if (const std::string* line = r.replay_of(structure)) {
        std::fprintf(out, "%sreplay: gfsl stress --replay %s\n", indent, line->c_str());
        tied.insert(structure);
      }
    };
    for (const std::string& p : r.structure_problems) {
      std::fprintf(out, "    %s\n", printable(p).c_str());
      unsigned structure = 0;
      if (std::sscanf(p.c_str(), "structure %u:", &structure) == 1) replay_under(structure, "      ");
    }
    for (std::size_t i = 0; i < r.reports.size(); ++i) {
      const violation_record& v = r.reports[i];
      std::fprintf(out, "  violation %zu: team %u, structure %u, at %s: %s\n", i + 1, v.team, v.structure,
                   r.backend == "host" ? ("scheduling point " + std::to_string(v.time_ns)).c_str()
                                       : (fmt(static_cast<double>(v.time_ns) / 1e9, "%.6f") + " s").c_str(),
                   describe_read(v, r.describe_line).c_str());
      replay_under(v.structure, "    ");
    }
    if (c.violations > r.reports.size()) {
      std::fprintf(out, "  (%" PRIu64 " more violations counted, not shown)\n", c.violations - r.reports.size());
    }
    for (const config_result::structure_replay& rp : r.replays) {
      if (!tied.count(rp.structure)) {
        std::fprintf(out, "  structure %u (violations not shown): replay: gfsl stress --replay %s\n", rp.structure, rp.line.c_str());
      }
    }
    if (r.hung) std::fprintf(out, "  HANG: %s\n", printable(r.hang_detail).c_str());
    if (!r.error.empty()) std::fprintf(out, "  ERROR: %s\n", printable(r.error).c_str());
    if (r.interrupted) std::fprintf(out, "  INTERRUPTED: by SIGINT/SIGTERM; the figures cover what ran\n");
    std::fprintf(out, "  verdict: %s\n",
                 !r.error.empty()                  ? "run error"
                 : r.violations() || r.hung        ? "VIOLATIONS FOUND"
                 : r.interrupted                   ? "no violation in what ran (interrupted)"
                 : r.judged_nothing()               ? "nothing judged (not a pass)"
                                                   : "no violation");
  }
}

void print_json(std::FILE* out, const std::vector<config_result>& results) {
  std::fprintf(out, "{\"configurations\":[");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const config_result& r = results[i];
    const counters& c = r.totals;
    std::fprintf(out,
                 "%s{\"backend\":%s,\"device\":%s,\"shape\":%s,\"variant\":%s,\"mutant\":%s,\"mutant_role\":%s,"
                 "\"granularity\":%s,\"sched\":%s,\"chunk\":%d,\"range\":%u,\"low_churn\":%u,\"teams\":%u,\"writers\":%u,\"seconds\":%.6f,"
                 "\"wall_seconds\":%.6f,"
                 "\"operations\":%" PRIu64 ",\"contains\":%" PRIu64 ",\"inserts\":%" PRIu64 ",\"deletes\":%" PRIu64
                 ",\"judged\":%" PRIu64 ",\"violations\":%" PRIu64 ",\"rate_per_1e9\":%.6g,\"ops_per_second\":%.6g,"
                 "\"structures\":%" PRIu64 ",\"structure_checks\":%" PRIu64 ",\"structure_violations\":%" PRIu64
                 ",\"ended_early\":%" PRIu64 ",\"invariants_checked\":%s,\"hung\":%s,\"hang\":%s,\"error\":%s,\"interrupted\":%s,",
                 i ? "," : "", quote(r.backend).c_str(), quote(r.device).c_str(), quote(r.shape).c_str(),
                 quote(r.variant).c_str(), quote(r.mutant).c_str(), quote(r.mutant_role).c_str(),
                 quote(r.granularity).c_str(), quote(r.sched).c_str(), r.chunk, r.range, r.low_churn, r.teams, r.writers,
                 r.seconds, r.wall_seconds, c.ops(), c.contains, c.inserts, c.removes, c.reads, c.violations, r.rate_per_1e9_ops(),
                 r.ops_per_second(), r.structures, r.structure_checks, r.structure_violations, r.rebuilt_early,
                 quote(r.invariants_checked).c_str(), r.hung ? "true" : "false", quote(r.hang_detail).c_str(),
                 quote(r.error).c_str(), r.interrupted ? "true" : "false");
    if (r.subject == "slabhash") {
      std::fprintf(out,
                   "\"subject\":\"slabhash\",\"buckets\":%u,\"shared_keys\":%u,\"ops_per_round\":%" PRIu64
                   ",\"missing\":%" PRIu64 ",\"extra\":%" PRIu64 ",\"duplicates\":%" PRIu64 ",\"lost_keys\":%" PRIu64
                   ",\"unexpected_keys\":%" PRIu64 ",\"malformed\":%" PRIu64
                   ",\"first_missing_s\":%.6g,\"first_extra_s\":%.6g,\"first_duplicate_s\":%.6g,\"first_lost_s\":%.6g,",
                   r.buckets, r.churn, r.ops_per_round, c.missing, c.extra, r.duplicates, r.lost_keys, r.unexpected_keys,
                   r.malformed, r.first_missing_s, r.first_extra_s, r.first_duplicate_s, r.first_lost_s);
    } else if (r.subject != "gfsl") {
      std::fprintf(out, "\"subject\":%s,\"levels\":%u,\"shared_keys\":%u,\"ops_per_round\":%" PRIu64 ",\"missing\":%" PRIu64
                        ",\"extra\":%" PRIu64 ",",
                   quote(r.subject).c_str(), r.levels, r.churn, r.ops_per_round, c.missing, c.extra);
    }
    std::fprintf(out, "\"structure_problems\":[");
    for (std::size_t j = 0; j < r.structure_problems.size(); ++j) {
      std::fprintf(out, "%s%s", j ? "," : "", quote(r.structure_problems[j]).c_str());
    }
    std::fprintf(out, "],\"replay\":[");
    for (std::size_t j = 0; j < r.replays.size(); ++j) {
      std::fprintf(out, "%s{\"structure\":%u,\"line\":%s}", j ? "," : "", r.replays[j].structure, quote(r.replays[j].line).c_str());
    }
    std::fprintf(out, "],\"reports\":[");
    for (std::size_t j = 0; j < r.reports.size(); ++j) {
      const violation_record& v = r.reports[j];
      std::fprintf(out,
                   "%s{\"team\":%u,\"structure\":%u,\"time\":%" PRIu64 ",\"op\":\"%s\",\"key\":%u,\"answer\":%s,"
                   "\"expected\":%s,\"value\":%u,\"chunk\":%s,\"words\":[",
                   j ? "," : "", v.team, v.structure, v.time_ns, kind_name(v.kind), v.key, v.answer ? "true" : "false",
                   v.expected ? "true" : "false", v.value, v.chunk == no_chunk ? "null" : std::to_string(v.chunk).c_str());
      for (int w = 0; w < v.chunk_size && v.chunk != no_chunk; ++w) std::fprintf(out, "%s%" PRIu64, w ? "," : "", v.words[w]);
      const std::string* replay = r.replay_of(v.structure);
      std::fprintf(out, "],\"read\":%s,\"replay\":%s}", quote(describe_read(v, r.describe_line)).c_str(), replay ? quote(*replay).c_str() : "null");
    }
    std::fprintf(out, "]}");
  }
  std::fprintf(out, "]}\n");
}

void print_csv(std::FILE* out, const std::vector<config_result>& results) {
  std::fprintf(out,
               "backend,device,shape,variant,mutant,granularity,sched,chunk,range,teams,writers,seconds,operations,judged,"
               "violations,rate_per_1e9,ops_per_second,structures,structure_checks,structure_violations,hung,error\n");
  auto csv = [](const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
      if (ch == '"') out += '"';
      out += (static_cast<unsigned char>(ch) < 0x20) ? ' ' : ch;
    }
    return out + "\"";
  };
  for (const config_result& r : results) {
    const counters& c = r.totals;
    std::fprintf(out, "%s,%s,%s,%s,%s,%s,%s,%d,%u,%u,%u,%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6g,%.6g,%" PRIu64 ",%" PRIu64
                      ",%" PRIu64 ",%d,%s\n",
                 csv(r.backend).c_str(), csv(r.device).c_str(), r.shape.c_str(), r.variant.c_str(), r.mutant.c_str(),
                 r.granularity.c_str(), r.sched.c_str(), r.chunk, r.range, r.teams, r.writers, r.seconds, c.ops(), c.reads,
                 c.violations, r.rate_per_1e9_ops(), r.ops_per_second(), r.structures, r.structure_checks,
                 r.structure_violations, r.hung ? 1 : 0, csv(r.error).c_str());
  }
}

}  // namespace gfsl::stress
