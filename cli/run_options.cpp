#include "cli/run_options.hpp"

#include "cli/subject_options.hpp"
#include "fuzz/coverage.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <vector>

namespace gfsl::cli {

bool parse_mix(const std::string& text, model::workload& w) {
  int i = -1, d = -1, c = -1;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%d,%d,%d%c", &i, &d, &c, &extra) != 3) return false;
  w.insert_pct = i;
  w.delete_pct = d;
  w.contains_pct = c;
  return true;
}

bool parse_hot(const std::string& text, model::workload& w) {
  int pct = -1;
  unsigned keys = 0;
  int used = -1;
  if (std::sscanf(text.c_str(), "%d,%u%n", &pct, &keys, &used) != 2 || used < 0) return false;
  const std::string rest = text.substr(static_cast<std::size_t>(used));
  if (!rest.empty() && rest != ",spread") return false;
  w.hot_pct = pct;
  w.hot_keys = keys;
  w.hot_spread = !rest.empty();
  return true;
}

void resolve_defaults(run_options& o) {
  if (!o.sched_seed_given) o.so.seed = o.w.seed;
  if (o.so.pct_steps == 0) {
    // Steps per operation, measured on mixed workloads: about 17 team-wide
    // reads and writes per operation; a lane-granular read is N steps.
    const std::uint64_t per_op = o.so.gran == sched::granularity::lane   ? 12ull * o.w.chunk
                                 : o.so.gran == sched::granularity::line ? 30ull
                                                                         : 17ull;
    o.so.pct_steps = std::max<std::uint64_t>(1, o.w.ops * per_op);
  }
  if (o.so.strat == sched::strategy::fair_pct && o.so.fair_after == 0) o.so.fair_after = o.so.pct_steps / 2;
}

namespace {
std::string fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
}  // namespace

std::string encode_replay(const run_options& o) {
  std::ostringstream s;
  s << "gfsl1:backend=" << o.backend << ":teams=" << o.w.teams << ":ops=" << o.w.ops << ":mix=" << o.w.insert_pct << ","
    << o.w.delete_pct << "," << o.w.contains_pct << ":range=" << o.w.range << ":prefill=" << fmt_double(o.w.prefill)
    << ":chunk=" << o.w.chunk << ":p-chunk=" << fmt_double(o.w.p_chunk) << ":seed=" << o.w.seed << ":pool=" << o.pool;
  if (o.backend == "cuda") s << ":clock=" << o.clock;
  if (o.backend == "cuda" && o.stamp_group != 1) s << ":stamp-group=" << o.stamp_group;
  if (o.w.hot_keys) s << ":hot=" << o.w.hot_pct << "," << o.w.hot_keys << (o.w.hot_spread ? ",spread" : "");
  if (o.w.sequential_keys) s << ":keys=sequential";
  if (o.w.reraise) s << ":upper=reraise";
  if (o.events) s << ":events=on";
  // Written only for another subject than the default: lines from before
  // subjects existed ran gfsl. Then each of its parameters (core/subject.hpp).
  if (o.w.subject != default_subject) {
    s << ":subject=" << subject_name(o.w.subject);
    for (const subject_parameter& p : subject_of(o.w.subject).parameters) s << ":" << p.name << "=" << p.get(o.w);
  }
  if (has_mutant(o.choice)) s << ":mutant=" << mutant_label(o.w, o.choice);
  s << ":variant=" << variant_label(o.w, o.choice);
  if (o.check_every) s << ":check-every=" << o.check_every;
  if (o.script) s << ":prefill-keys=" << o.script->encode_prefill() << ":team-ops=" << o.script->encode_team_ops();
  if (o.backend == "host") {
    s << ":sched=" << o.sched;
    if (o.sched != "turns") {
      s << ":depth=" << o.so.depth << ":granularity=" << sched::name(o.so.gran) << ":sched-seed=" << o.so.seed
        << ":pct-steps=" << o.so.pct_steps << ":fair-after=" << o.so.fair_after << ":livelock-steps=" << o.so.livelock_steps
        << ":max-steps=" << o.so.max_steps;
      // Written only when not sc: lines from before the memory models ran sc.
      if (o.so.mem != sched::memory::sc) s << ":memory=" << sched::name(o.so.mem);
      // Written only for stale choices of their own stream (lines from
      // before them drew stale loads from the schedule's).
      if (o.so.mem == sched::memory::ptx && o.so.stale_seed != 0) s << ":stale=" << o.so.stale_pct << "," << o.so.stale_seed;
      // Written only for a run with a targeted park (lines from before it had none).
      if (o.so.hold.active) s << ":hold=" << fuzz::hold_text(o.w.subject, o.so.hold);
      if (o.so.strat == sched::strategy::park) {
        s << ":park-at=" << sched::name(o.so.park_at) << ":park-ops=" << o.so.park_ops << ":park-every=" << o.so.park_every;
        if (o.so.park_teams) s << ":park-teams=" << o.so.park_teams;
      }
      // Written only when set: lines from before directed tears held nothing.
      if (o.so.tear != sched::tear_target::none) s << ":tear=" << sched::name(o.so.tear);
    }
  }
  return s.str();
}

std::string decode_replay(const std::string& text, run_options& o) {
  const std::string magic = "gfsl1:";
  if (text.rfind(magic, 0) != 0) return "replay string must start with '" + magic + "'";
  std::map<std::string, std::string> fields;
  std::stringstream in(text.substr(magic.size()));
  std::string item;
  while (std::getline(in, item, ':')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return "replay string: field '" + item + "' is not name=value";
    if (!fields.emplace(item.substr(0, eq), item.substr(eq + 1)).second) return "replay string: field '" + item.substr(0, eq) + "' given twice";
  }
  run_options r;
  auto take = [&](const char* name, auto& into) -> std::string {
    const auto it = fields.find(name);
    if (it == fields.end()) return std::string("replay string: field '") + name + "' is missing";
    const std::string v = it->second;
    fields.erase(it);
    char* end = nullptr;
    if constexpr (std::is_same_v<std::decay_t<decltype(into)>, double>) {
      into = std::strtod(v.c_str(), &end);
      if (!std::isfinite(into) || into < 0) end = nullptr;
    } else if constexpr (std::is_same_v<std::decay_t<decltype(into)>, std::string>) {
      into = v;
      return {};
    } else {
      const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
      into = static_cast<std::decay_t<decltype(into)>>(x);
      if (static_cast<unsigned long long>(into) != x || v.empty() || v[0] == '-') end = nullptr;
    }
    if (end == nullptr || *end != '\0' || v.empty()) return std::string("replay string: field '") + name + "' has a bad value '" + v + "'";
    return {};
  };
  std::string mix, gran;
  // Observation options: optional, they do not change the run.
  if (const auto it = fields.find("events"); it != fields.end()) {
    if (it->second != "on" && it->second != "off") return "replay string: field 'events' has a bad value '" + it->second + "'";
    r.events = it->second == "on";
    fields.erase(it);
  }
  if (const auto it = fields.find("hot"); it != fields.end()) {
    if (!parse_hot(it->second, r.w)) return "replay string: field 'hot' has a bad value '" + it->second + "'";
    fields.erase(it);
  }
  if (const auto it = fields.find("keys"); it != fields.end()) {
    if (it->second != "sequential" && it->second != "uniform") return "replay string: field 'keys' has a bad value '" + it->second + "'";
    r.w.sequential_keys = it->second == "sequential";
    fields.erase(it);
  }
  if (const auto it = fields.find("upper"); it != fields.end()) {
    if (it->second != "reraise" && it->second != "thesis") return "replay string: field 'upper' has a bad value '" + it->second + "'";
    r.w.reraise = it->second == "reraise";
    fields.erase(it);
  }
  if (const auto it = fields.find("subject"); it != fields.end()) {
    const auto subject = parse_subject(it->second);
    if (!subject) return "replay string: field 'subject' has a bad value '" + it->second + "' (the subjects are " + subject_names_text() + ")";
    r.w.subject = *subject;
    fields.erase(it);
    for (const subject_parameter& p : subject_of(r.w.subject).parameters) {
      std::uint32_t v = 0;
      if (std::string e = take(std::string(p.name).c_str(), v); !e.empty()) return e;
      p.set(r.w, v);
    }
  }
  if (const auto it = fields.find("mutant"); it != fields.end()) {
    if (std::string e = resolve_mutant(r.w.subject, it->second, r.choice); !e.empty()) {
      return "replay string: field 'mutant' names no " + std::string(subject_name(r.w.subject)) + " mutant: '" + it->second + "'";
    }
    fields.erase(it);
  }
  // Lines written before a subject had variants ran the one it had then
  // (gfsl: the published algorithm).
  r.choice.variant = subject_of(r.w.subject).unnamed_variant;
  if (const auto it = fields.find("variant"); it != fields.end()) {
    if (std::string e = resolve_variant(r.w.subject, it->second, r.choice); !e.empty()) {
      return "replay string: field 'variant' has a bad value '" + it->second + "'";
    }
    fields.erase(it);
  }
  if (fields.count("check-every")) {
    if (std::string e = take("check-every", r.check_every); !e.empty()) return e;
  }
  for (std::string e : {take("backend", r.backend), take("teams", r.w.teams), take("ops", r.w.ops), take("mix", mix),
                        take("range", r.w.range), take("prefill", r.w.prefill), take("chunk", r.w.chunk),
                        take("p-chunk", r.w.p_chunk), take("seed", r.w.seed), take("pool", r.pool)}) {
    if (!e.empty()) return e;
  }
  if (!parse_mix(mix, r.w)) return "replay string: field 'mix' has a bad value '" + mix + "'";
  // A replay line is a command line written down: the same limits as gfsl run's options.
  auto outside = [](const char* name, auto v, auto lo, auto hi) -> std::string {
    if (v >= lo && v <= hi) return {};
    std::ostringstream m;
    m << "replay string: field '" << name << "' is " << v << ", expected " << lo << " to " << hi << " (as gfsl run's --" << name << ")";
    return m.str();
  };
  for (std::string e : {outside("teams", r.w.teams, 1u, 1u << 24), outside("range", r.w.range, 1u, gfsl::max_user_key),
                        outside("prefill", r.w.prefill, 0.0, 1.0), outside("p-chunk", r.w.p_chunk, 0.0, 1.0)}) {
    if (!e.empty()) return e;
  }
  if (fields.count("team-ops") || fields.count("prefill-keys")) {
    std::string keys, ops, bad;
    if (std::string e = take("team-ops", ops); !e.empty()) return e;
    if (fields.count("prefill-keys")) take("prefill-keys", keys);
    r.script = model::parse_script(keys, ops, bad);
    if (!r.script) return "replay string: " + bad;
    const std::uint32_t teams = r.w.teams;
    const std::uint64_t count = r.w.ops;
    model::fit_workload(*r.script, r.w);
    if (r.w.teams != teams || r.w.ops != count) {
      return "replay string: field 'team-ops' lists " + std::to_string(r.w.ops) + " operations on " + std::to_string(r.w.teams) +
             " teams where 'teams' and 'ops' say " + std::to_string(count) + " on " + std::to_string(teams);
    }
  }
  if (r.backend == "host") {
    if (std::string e = take("sched", r.sched); !e.empty()) return e;
    if (r.sched != "turns") {
      for (std::string e : {take("depth", r.so.depth), take("granularity", gran), take("sched-seed", r.so.seed),
                            take("pct-steps", r.so.pct_steps), take("fair-after", r.so.fair_after),
                            take("livelock-steps", r.so.livelock_steps), take("max-steps", r.so.max_steps)}) {
        if (!e.empty()) return e;
      }
      if (std::string e = outside("depth", r.so.depth, 1, 1000); !e.empty()) return e;
      if (r.so.livelock_steps == 0) return "replay string: field 'livelock-steps' is 0, expected 1 or more (as gfsl run's --livelock-steps)";
      if (!sched::parse(r.sched, r.so.strat)) return "replay string: field 'sched' has a bad value '" + r.sched + "'";
      if (!sched::parse(gran, r.so.gran)) return "replay string: field 'granularity' has a bad value '" + gran + "'";
      if (const auto it = fields.find("memory"); it != fields.end()) {
        if (!sched::parse(it->second, r.so.mem)) return "replay string: field 'memory' has a bad value '" + it->second + "' (sc or ptx)";
        fields.erase(it);
      }
      if (const auto it = fields.find("stale"); it != fields.end()) {
        unsigned pct = 0;
        unsigned long long seed = 0;
        char extra = 0;
        if (std::sscanf(it->second.c_str(), "%u,%llu%c", &pct, &seed, &extra) != 2 || pct > 100 || seed == 0 ||
            it->second.find('-') != std::string::npos) {
          return "replay string: field 'stale' has a bad value '" + it->second + "' (PCT,SEED: a percentage and a seed of 1 or more)";
        }
        if (r.so.mem != sched::memory::ptx) return "replay string: field 'stale' needs memory=ptx";
        r.so.stale_pct = pct;
        r.so.stale_seed = seed;
        fields.erase(it);
      }
      if (const auto it = fields.find("hold"); it != fields.end()) {
        if (std::string e = fuzz::parse_hold(r.w.subject, it->second, r.so.hold); !e.empty()) return "replay string: field " + e;
        if (r.so.hold.team != sched::hold_directive::any_team && r.so.hold.team >= r.w.teams) {
          return "replay string: field 'hold' names team " + std::to_string(r.so.hold.team) + " in a run of " + std::to_string(r.w.teams) + " teams";
        }
        fields.erase(it);
      }
      if (const auto it = fields.find("tear"); it != fields.end()) {
        if (!sched::parse(it->second, r.so.tear)) return "replay string: field 'tear' has a bad value '" + it->second + "' (none or validation)";
        fields.erase(it);
      }
      if (r.so.strat == sched::strategy::park) {
        std::string at;
        for (std::string e : {take("park-at", at), take("park-ops", r.so.park_ops), take("park-every", r.so.park_every)}) {
          if (!e.empty()) return e;
        }
        if (!sched::parse(at, r.so.park_at)) return "replay string: field 'park-at' has a bad value '" + at + "'";
        for (std::string e : {outside("park-ops", r.so.park_ops, 1u, 1000000u), outside("park-every", r.so.park_every, 1u, 1000000000u)}) {
          if (!e.empty()) return e;
        }
        if (fields.count("park-teams")) {
          if (std::string e = take("park-teams", r.so.park_teams); !e.empty()) return e;
          if (r.so.park_teams > r.w.teams) {
            return "replay string: field 'park-teams' is " + std::to_string(r.so.park_teams) + " in a run of " + std::to_string(r.w.teams) + " teams";
          }
        }
      }
      r.sched_seed_given = true;
    }
  } else if (r.backend == "cuda") {
    if (std::string e = take("clock", r.clock); !e.empty()) return e;
    if (r.clock != "counter" && r.clock != "globaltimer" && r.clock != "off") {
      return "replay string: field 'clock' has a bad value '" + r.clock + "'";
    }
    // Written only when not 1 (lines from before stamp groups have none).
    if (fields.count("stamp-group")) {
      if (std::string e = take("stamp-group", r.stamp_group); !e.empty()) return e;
      if (r.stamp_group < 1 || r.stamp_group > static_cast<std::uint32_t>(r.w.chunk)) {
        return "replay string: field 'stamp-group' is " + std::to_string(r.stamp_group) + ", expected 1 to the chunk size " +
               std::to_string(r.w.chunk);
      }
    }
  } else if (r.backend != "threads") {
    return "replay string: field 'backend' has a bad value '" + r.backend + "'";
  }
  if (!fields.empty()) return "replay string: unknown field '" + fields.begin()->first + "'";
  if (const std::string bad = r.w.validate(); !bad.empty()) return "replay string: " + bad;
  r.trace = o.trace;
  r.trace_format = o.trace_format;
  r.watchdog = o.watchdog;
  r.hang_timeout = o.hang_timeout;
  o = r;
  return {};
}

}  // namespace gfsl::cli
