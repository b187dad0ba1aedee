#include "final_state.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace gfsl::model {

namespace {
struct key_account {
  bool prefilled = false;
  value_type prefill_value = 0;
  std::int64_t inserts_ok = 0;
  std::int64_t deletes_ok = 0;
  std::set<value_type> written;    // prefill value and successful inserts' values
  std::vector<value_type> seen;    // values returned by successful deletes and contains
  bool indeterminate = false;      // an operation on it ended in an error
};
}  // namespace

std::vector<std::string> check_implied_final_state(const std::vector<operation>& prefill,
                                                   const std::vector<op_record>& records,
                                                   const std::vector<std::pair<key_type, value_type>>& final_entries,
                                                   std::size_t max_problems) {
  std::vector<std::string> problems;
  auto say = [&](std::string m) {
    if (problems.size() < max_problems) problems.push_back(std::move(m));
  };
  std::map<key_type, key_account> keys;
  for (const operation& op : prefill) {
    key_account& a = keys[op.key];
    a.prefilled = true;
    a.prefill_value = op.value;
    a.written.insert(op.value);
  }
  for (const op_record& r : records) {
    key_account& a = keys[r.op.key];
    if (r.call != no_stamp && r.ret == no_stamp) {
      // In flight when the run stopped: it may have taken effect, or not.
      a.indeterminate = true;
      if (r.op.kind == op_kind::insert) a.written.insert(r.op.value);
      continue;
    }
    if (r.st != status::ok) {
      a.indeterminate = true;
      continue;
    }
    if (!r.ok) continue;
    switch (r.op.kind) {
      case op_kind::insert:
        ++a.inserts_ok;
        a.written.insert(r.op.value);
        break;
      case op_kind::remove:
        ++a.deletes_ok;
        a.seen.push_back(r.value);
        break;
      case op_kind::contains: a.seen.push_back(r.value); break;
    }
  }
  std::map<key_type, value_type> final_map;
  for (const auto& [k, v] : final_entries) {
    if (!final_map.emplace(k, v).second) say("key " + std::to_string(k) + " appears twice in the final contents");
  }
  for (const auto& [k, v] : final_map) {
    if (!keys.count(k)) say("key " + std::to_string(k) + " is present at the end but was never inserted");
  }
  for (const auto& [k, a] : keys) {
    if (a.indeterminate) continue;
    const auto it = final_map.find(k);
    const bool present = it != final_map.end();
    const std::int64_t balance = (a.prefilled ? 1 : 0) + a.inserts_ok - a.deletes_ok;
    const std::string name = "key " + std::to_string(k) + ": ";
    const std::string counts = std::to_string(a.inserts_ok) + " successful inserts, " + std::to_string(a.deletes_ok) +
                               " successful deletes" + (a.prefilled ? ", prefilled" : "");
    if (balance != 0 && balance != 1) {
      say(name + counts + ": successful inserts and deletes cannot alternate");
      continue;
    }
    if (present != (balance == 1)) {
      say(name + (present ? "present" : "absent") + " at the end, but " + counts);
      continue;
    }
    if (present && !a.written.count(it->second)) {
      say(name + "final value " + std::to_string(it->second) + " was never written to it");
    }
    for (value_type v : a.seen) {
      if (!a.written.count(v)) {
        say(name + "an operation returned value " + std::to_string(v) + ", which was never written to it");
        break;
      }
    }
  }
  return problems;
}

std::string first_sequential_mismatch(const std::vector<operation>& prefill, const std::vector<op_record>& records) {
  sequential_map m;
  for (const operation& op : prefill) m.apply(op);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const op_record& r = records[i];
    if (r.st != status::ok) return {};  // the run stopped here; nothing later ran
    const outcome want = m.apply(r.op);
    if (want.ok != r.ok || (want.ok && want.value != r.value)) {
      return "operation " + std::to_string(i) + " by team " + std::to_string(r.team) + ": " + describe(r.op) +
             " returned " + (r.ok ? "true" : "false") + "/" + std::to_string(r.value) + ", the model says " +
             (want.ok ? "true" : "false") + "/" + std::to_string(want.value);
    }
  }
  return {};
}

}  // namespace gfsl::model
