#include "workload.hpp"

#include "../core/registry.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

namespace gfsl::model {

std::string workload::describe() const {
  std::ostringstream s;
  s << "ops=" << ops << " mix=" << insert_pct << "," << delete_pct << "," << contains_pct << " range=" << range
    << " prefill=" << prefill << " teams=" << teams << " chunk=" << chunk << " p_chunk=" << p_chunk
    << " seed=" << seed;
  if (hot_keys) s << " hot=" << hot_pct << "%:" << hot_keys << (hot_spread ? " spread" : "");
  if (sequential_keys) s << " keys=sequential";
  if (reraise) s << " upper=reraise";
  // The default subject unnamed, as before subjects existed.
  if (subject != default_subject) {
    s << " subject=" << subject_name(subject);
    for (const subject_parameter& p : subject_of(subject).parameters) s << " " << p.name << "=" << p.get(*this);
  }
  return s.str();
}

std::string workload::validate() const {
  if (insert_pct < 0 || delete_pct < 0 || contains_pct < 0 || insert_pct + delete_pct + contains_pct != 100) {
    return "mix " + std::to_string(insert_pct) + "," + std::to_string(delete_pct) + "," + std::to_string(contains_pct) +
           " must be three non-negative percentages adding up to 100";
  }
  if (range < 1 || range > max_user_key) return "range must be in [1, " + std::to_string(max_user_key) + "]";
  if (!(prefill >= 0.0 && prefill <= 1.0)) return "prefill must be a fraction in [0, 1]";
  if (teams < 1 || teams > max_team_id) return "teams must be at least 1";
  const subject_descriptor& d = subject_of(subject);
  if (std::string e = d.check_workload(*this); !e.empty()) return e;
  // Another subject's parameters stay 0.
  for (const subject_descriptor* other : subject_registry) {
    if (other == &d) continue;
    for (const subject_parameter& p : other->parameters) {
      if (p.get(*this) != 0) return std::string(p.name) + " is a " + std::string(other->name) + " parameter; " + std::string(d.name) + " has none";
    }
  }
  if (chunk != 8 && chunk != 16 && chunk != 32) return "chunk must be 16 or 32 (or 8 on the host backends)";
  if (!(p_chunk >= 0.0 && p_chunk <= 1.0)) return "p-chunk must be a probability in [0, 1]";
  if (hot_pct < 0 || hot_pct > 100) return "hot percentage must be in [0, 100]";
  if (hot_keys > range) return "hot keys must be at most the range";
  return {};
}

std::vector<operation> prefill_operations(const workload& w) {
  const auto count = static_cast<std::uint64_t>(std::llround(w.prefill * w.range));
  std::vector<operation> out;
  out.reserve(count);
  // Partial Fisher-Yates over [1, range] with the displaced entries kept in a
  // hash map, so that a small prefill of a huge range costs O(count).
  std::unordered_map<std::uint64_t, std::uint64_t> moved;
  auto at = [&](std::uint64_t i) {
    const auto it = moved.find(i);
    return it == moved.end() ? i : it->second;
  };
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t h = mix64(w.seed ^ (0x5851F42D4C957F2Dull * (i + 1)));
    const std::uint64_t j = i + h % (w.range - i);
    const std::uint64_t vi = at(i), vj = at(j);
    moved[j] = vi;
    moved[i] = vj;
    operation op;
    op.kind = op_kind::insert;
    op.key = static_cast<key_type>(vj + 1);
    op.value = static_cast<value_type>(mix64(h));
    out.push_back(op);
  }
  return out;
}

}  // namespace gfsl::model
