#include "snapshot.hpp"

#include <sstream>

#include "../core/registry.hpp"

namespace gfsl::invariants {

std::string violation::describe() const {
  std::ostringstream s;
  s << invariant << ": ";
  if (event) s << "event " << *event << (team ? " by team " + std::to_string(*team) : std::string()) << ": ";
  s << detail;
  if (!chunks.empty()) {
    s << " [chunk";
    if (chunks.size() > 1) s << "s";
    for (std::size_t i = 0; i < chunks.size(); ++i) s << (i ? ", " : " ") << chunks[i];
    s << "]";
  }
  s << " at " << when;
  if (!in_flight.empty()) {
    s << "; in flight:";
    for (const std::string& op : in_flight) s << " " << op;
  }
  return s.str();
}

snapshot_report check_snapshot(const snapshot& s, bool quiescent,
                               const std::vector<std::pair<key_type, value_type>>* expected_bottom,
                               std::size_t max_violations) {
  return subject_of(s.subject).check_snapshot(s, quiescent, expected_bottom, max_violations);
}

}  // namespace gfsl::invariants
