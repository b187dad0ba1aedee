#include "stress/options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <thread>

namespace gfsl::stress {

bool parse_writers(const std::string& text, std::uint32_t& num, std::uint32_t& den) {
  unsigned a = 0, b = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%u/%u%c", &a, &b, &extra) == 2) {
    num = a;
    den = b;
    return b != 0;
  }
  if (std::sscanf(text.c_str(), "%u%c", &a, &extra) == 1) {
    num = a;
    den = 0;  // the first `a` teams: resolved once the team count is known
    return true;
  }
  return false;
}

std::uint32_t default_teams(const options& o) {
  if (o.teams) return o.teams;
  const std::uint32_t most = subject_of(o.subject).max_teams;
  if (o.backend == "host") return most ? std::min<std::uint32_t>(4, most) : 4;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return most ? std::min<std::uint32_t>(2 * hw, most) : 2 * hw;
}

std::uint32_t slabhash_default_buckets(std::uint32_t teams) { return std::max<std::uint32_t>(1, teams / 64); }
std::uint32_t slabhash_default_churn(std::uint32_t buckets) { return 4 * std::max<std::uint32_t>(1, buckets); }

std::uint32_t default_range(const options& o, std::uint32_t teams) {
  if (o.subject == subject_kind::slabhash && o.sh == shape::owned_keys) {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(2ull * teams, 0xFFFFFFFEull));
  }
  // stable-contains: the measured H200 setup (2-3 level-0 chunks of 32);
  // owned-keys: 16 keys a team, several levels once p_chunk raises keys.
  return o.sh == shape::stable_contains ? 40u : std::min<std::uint64_t>(16ull * teams, 0xFFFFFFFEull);
}

params params_of(const options& o, std::uint32_t range, std::uint32_t teams) {
  params p;
  p.sh = o.sh;
  p.range = range;
  p.stable_every = o.stable_every;
  p.low_churn = o.sh == shape::stable_contains ? o.low_churn : 0;
  p.teams = teams;
  if (o.writers_den == 0) {  // "the first A teams"
    p.writers_num = 1;
    p.writers_den = 1;
    if (o.writers_num < teams) {
      // t % teams < A for t < teams: exactly the first A teams.
      p.writers_num = o.writers_num;
      p.writers_den = teams;
    }
  } else {
    p.writers_num = o.writers_num;
    p.writers_den = o.writers_den;
  }
  if (o.sh == shape::owned_keys) {
    p.churn = o.churn;
    if (o.subject == subject_kind::slabhash && p.churn == 0) {
      p.churn = slabhash_default_churn(o.buckets ? o.buckets : slabhash_default_buckets(teams));
    }
    // A batched subject: shared keys, so that one batch holds a key twice.
    if (subject_of(o.subject).batched && p.churn == 0) p.churn = 4;
  }
  return p;
}

std::string validate(const options& o, std::uint32_t teams) {
  if (!(o.seconds > 0) || o.seconds > 1e7) return "--seconds must be a positive number of seconds";
  if (!(o.rebuild_seconds > 0)) return "--rebuild-seconds must be positive";
  if (!(o.slice_seconds > 0) || o.slice_seconds > 60) return "--slice-seconds must be in (0, 60]";
  if (!(o.hang_seconds > 0)) return "--hang-seconds must be positive";
  if (o.writers_num == 0) return "--writers: at least one writer team is needed (e.g. 1/32)";
  if (o.writers_den != 0 && o.writers_num > o.writers_den) return "--writers A/B: A must not exceed B";
  if (!(o.p_chunk >= 0 && o.p_chunk <= 1)) return "--p-chunk must be in [0, 1]";
  if (teams == 0) return "--teams must be at least 1";
  if (o.backend == "host" && teams > 4096) return "--teams: the host backend runs at most 4096 teams";
  for (int c : o.chunks) {
    if (c != 16 && c != 32) return "--chunk: chunk sizes are 16 and 32";
  }
  if (o.subject == subject_kind::slabhash) {
    if (o.backend == "cuda" && o.choice.mutated()) {
      return "--mutant: stress runs slabhash on the GPU without seeded bugs (the CPU backends run them)";
    }
    if (o.buckets > 0x7FFFFFFFu) return "--buckets: too many";
  }
  const subject_descriptor& d = subject_of(o.subject);
  if (d.max_teams && teams > d.max_teams) {
    return "--teams " + std::to_string(teams) + ": " + std::string(d.name) + " runs at most " + std::to_string(d.max_teams) + " teams";
  }
  if (const params w = params_of(o, 1, teams); d.batched && o.sh == shape::owned_keys && w.writers_num < w.writers_den) {
    return "--writers: " + std::string(d.name) + " runs batches of one kind, every team the batch's: owned-keys needs every team writing (1/1)";
  }
  if (o.stable_every < 2) return "--stable-every must be at least 2 (the other keys are the writers')";
  const std::vector<std::uint32_t> ranges = o.ranges.empty() ? std::vector<std::uint32_t>{default_range(o, teams)} : o.ranges;
  for (std::uint32_t r : ranges) {
    if (r < 1 || r > max_user_key) return "--range " + std::to_string(r) + ": keys are 1..range, range in [1, 4294967294]";
    const params p = params_of(o, r, teams);
    if (o.sh == shape::stable_contains) {
      if (p.low_churn && stable_count(p) == 0) {
        return "--range " + std::to_string(r) + ": no key above --low-churn " + std::to_string(p.low_churn) + " is left to be stable";
      }
      if (stable_count(p) == 0) {
        return "--range " + std::to_string(r) + ": the stable set is empty (no multiple of " + std::to_string(o.stable_every) +
               " in 1.." + std::to_string(r) + ")";
      }
      if (churn_count(p) == 0) return "--range " + std::to_string(r) + ": no key is left for the writers";
      if (p.writers_num >= p.writers_den && p.writers_den != 0 && teams > 0) {
        // every team writes: nobody reads the stable keys
        return "--writers: every team would be a writer; stable-contains needs reader teams";
      }
    } else {
      if (r < teams) return "--range " + std::to_string(r) + ": owned-keys needs at least one key per team (" + std::to_string(teams) + " teams)";
      if (static_cast<std::uint64_t>(r) + p.churn > max_user_key) {
        return "--churn " + std::to_string(p.churn) + ": keys range+1..range+churn pass the largest key";
      }
      if (static_cast<std::uint64_t>(r) > static_cast<std::uint64_t>(teams) * max_owned_per_team) {
        return "--range " + std::to_string(r) + ": owned-keys gives a team at most " + std::to_string(max_owned_per_team) +
               " keys (" + std::to_string(teams) + " teams)";
      }
    }
  }
  if (o.backend == "host" && o.ops_per_team == 0) return "--ops-per-team must be at least 1";
  if (o.reports > 100000) return "--reports: at most 100000";
  return {};
}

std::uint64_t structure_seed(std::uint64_t seed, int chunk, std::uint32_t range, std::uint64_t i) {
  team_rng mix(seed ^ (0x9E3779B97F4A7C15ull * (i + 1)) ^ (static_cast<std::uint64_t>(chunk) << 56) ^
               (static_cast<std::uint64_t>(range) << 20));
  mix.next();
  return mix.next() & 0xFFFFFFFFFFFFull;  // 48 bits: short enough to read in a replay line
}

namespace {
std::string fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
}  // namespace

std::string encode_replay(const options& o, int chunk, std::uint32_t range, std::uint32_t teams, std::uint64_t seed) {
  const params p = params_of(o, range, teams);
  std::ostringstream s;
  s << replay_magic << "shape=" << shape_name(o.sh) << ":variant=" << variant_label(o.subject, o.choice) << ":chunk=" << chunk
    << ":range=" << range << ":teams=" << teams << ":writers=" << p.writers_num << "/" << p.writers_den
    << ":stable-every=" << o.stable_every << ":p-chunk=" << fmt_double(o.p_chunk) << ":ops-per-team=" << o.ops_per_team
    << ":sched=" << o.sched << ":granularity=" << sched::name(o.so.gran) << ":depth=" << o.so.depth
    << ":pct-steps=" << o.so.pct_steps << ":livelock-steps=" << o.so.livelock_steps << ":pool=" << o.pool
    << ":structure-seed=" << seed;
  if (o.choice.mutated()) s << ":mutant=" << mutant_label(o.subject, o.choice);
  if (o.reraise) s << ":upper=reraise";
  if (p.low_churn) s << ":low-churn=" << p.low_churn;
  // Another subject's line names it and what it was given beyond gfsl's fields.
  if (o.subject != default_subject) s << ":subject=" << subject_name(o.subject);
  if (o.buckets) s << ":buckets=" << o.buckets;
  if (o.levels) s << ":levels=" << o.levels;
  if (o.churn) s << ":churn=" << o.churn;
  return s.str();
}

std::string decode_replay(const std::string& text, options& o) {
  const std::string magic = replay_magic;
  if (text.rfind(magic, 0) != 0) return "replay string must start with '" + magic + "'";
  std::map<std::string, std::string> fields;
  std::stringstream in(text.substr(magic.size()));
  for (std::string item; std::getline(in, item, ':');) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return "replay string: field '" + item + "' is not name=value";
    if (!fields.emplace(item.substr(0, eq), item.substr(eq + 1)).second) {
      return "replay string: field '" + item.substr(0, eq) + "' given twice";
    }
  }
  options r = o;
  auto text_of = [&](const char* name, std::string& into) -> std::string {
    const auto it = fields.find(name);
    if (it == fields.end()) return std::string("replay string: field '") + name + "' is missing";
    into = it->second;
    fields.erase(it);
    return {};
  };
  auto number = [&](const char* name, auto& into) -> std::string {
    std::string v;
    if (std::string e = text_of(name, v); !e.empty()) return e;
    char* end = nullptr;
    if constexpr (std::is_same_v<std::decay_t<decltype(into)>, double>) {
      into = std::strtod(v.c_str(), &end);
    } else {
      const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
      into = static_cast<std::decay_t<decltype(into)>>(x);
      if (static_cast<unsigned long long>(into) != x || v.empty() || v[0] == '-') end = nullptr;
    }
    if (end == nullptr || *end != '\0' || v.empty()) return std::string("replay string: field '") + name + "' has a bad value '" + v + "'";
    return {};
  };
  std::string shape_text, variant_text, writers, gran, mut;
  int chunk = 0;
  std::uint32_t range = 0;
  for (std::string e : {text_of("shape", shape_text), number("chunk", chunk), number("range", range), number("teams", r.teams),
                        text_of("writers", writers), number("stable-every", r.stable_every), number("p-chunk", r.p_chunk),
                        number("ops-per-team", r.ops_per_team), text_of("sched", r.sched), text_of("granularity", gran),
                        number("depth", r.so.depth), number("pct-steps", r.so.pct_steps),
                        number("livelock-steps", r.so.livelock_steps), number("pool", r.pool),
                        number("structure-seed", r.replay_structure_seed)}) {
    if (!e.empty()) return e;
  }
  r.low_churn = 0;
  if (fields.count("low-churn")) {
    if (std::string e = number("low-churn", r.low_churn); !e.empty()) return e;
  }
  r.reraise = false;
  if (fields.count("upper")) {
    std::string upper;
    text_of("upper", upper);
    if (upper != "reraise" && upper != "thesis") return "replay string: field 'upper' has a bad value '" + upper + "'";
    r.reraise = upper == "reraise";
  }
  r.subject = default_subject;
  if (fields.count("subject")) {
    std::string name;
    text_of("subject", name);
    const auto k = parse_subject(name);
    if (!k) return "replay string: field 'subject' names no subject: '" + name + "'";
    r.subject = *k;
  }
  r.buckets = r.levels = r.churn = 0;
  for (auto [name, into] : {std::pair{"buckets", &r.buckets}, std::pair{"levels", &r.levels}, std::pair{"churn", &r.churn}}) {
    if (!fields.count(name)) continue;
    if (std::string e = number(name, *into); !e.empty()) return e;
  }
  // A line written before variants existed ran the published algorithm.
  const subject_descriptor& d = subject_of(r.subject);
  r.choice.variant = d.unnamed_variant;
  if (fields.count("variant")) {
    text_of("variant", variant_text);
    const auto v = d.parse_variant(variant_text);
    if (!v) return "replay string: field 'variant' has a bad value '" + variant_text + "'";
    r.choice.variant = *v;
  }
  if (fields.count("mutant")) {
    text_of("mutant", mut);
    const auto m = d.parse_mutant(mut);
    if (!m) return "replay string: field 'mutant' names no mutant: '" + mut + "'";
    r.choice.mutant = static_cast<std::uint8_t>(*m);
  } else {
    r.choice.mutant = 0;
  }
  if (!fields.empty()) return "replay string: unknown field '" + fields.begin()->first + "'";
  if (!parse_shape(shape_text, r.sh)) return "replay string: field 'shape' has a bad value '" + shape_text + "'";
  if (!parse_writers(writers, r.writers_num, r.writers_den) || r.writers_den == 0) {
    return "replay string: field 'writers' has a bad value '" + writers + "'";
  }
  if (!sched::parse(r.sched, r.so.strat)) return "replay string: field 'sched' has a bad value '" + r.sched + "'";
  if (!sched::parse(gran, r.so.gran)) return "replay string: field 'granularity' has a bad value '" + gran + "'";
  r.backend = "host";
  r.chunks = {chunk};
  r.ranges = {range};
  r.max_structures = 1;
  r.replay = text;
  if (std::string bad = validate(r, r.teams); !bad.empty()) return "replay string: " + bad;
  o = r;
  return {};
}

const char* mutant_role(mutant m) {
  if (m == mutant::none) return "";
  if (m == mutant::release_weakened || m == mutant::load_relaxed) return "amplifier";
  return "seeded bug";
}

bool parse_shape(const std::string& text, shape& out) {
  if (text == "stable-contains") out = shape::stable_contains;
  else if (text == "owned-keys") out = shape::owned_keys;
  else return false;
  return true;
}

}  // namespace gfsl::stress
