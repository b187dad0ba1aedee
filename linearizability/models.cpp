#include "linearizability/models.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <type_traits>
#include <unordered_map>

#include "linearizability/checker.hpp"
#include "linearizability/key_checker.hpp"
#include "linearizability/report.hpp"
#include "linearizability/model_search.hpp"
#include "linearizability/upsert_witness.hpp"
#include "traces/json.hpp"

namespace gfsl::lin {

namespace {

using namespace model_ops;

const char* code_name(std::uint8_t code) {
  switch (code & ~traces::ok_not_recorded) {
    case insert: return "insert";
    case erase: return "erase";
    case find: return "find";
    case upsert: return "upsert";
    case count: return "count";
  }
  return "?";
}

// The code of a record read without a table: its insert, delete or contains.
std::uint8_t base_code(op_kind k) {
  switch (k) {
    case op_kind::insert: return insert;
    case op_kind::remove: return erase;
    default: return find;
  }
}

std::string describe(const key_input& in, const key_output* out) {
  std::string s = code_name(in.code);
  s += "(";
  if (in.code == insert || in.code == upsert) s += std::to_string(in.value);
  s += ") -> ";
  if (!out) return s + "?";
  if (!out->ok_known) return s + "(not recorded)";
  s += out->ok ? "true" : "false";
  if ((out->ok && (in.code == erase || in.code == find)) || in.code == count) {
    s += out->value_known ? ", " + std::to_string(out->value) : ", value not recorded";
  }
  return s;
}

bool ok_matches(const key_output* out, bool ok) { return !out || !out->ok_known || out->ok == ok; }
bool value_matches(const key_output* out, value_type v) { return !out || !out->value_known || out->value == v; }

}  // namespace

std::optional<upsert_key_model::state> upsert_key_model::step(const state& s, const input& in, const output* out) {
  state next = s;
  switch (in.code) {
    case insert:
      if (!ok_matches(out, !s.present)) return std::nullopt;
      if (!s.present) next = {true, in.value};
      break;
    case upsert:
      if (!ok_matches(out, !s.present)) return std::nullopt;
      next = {true, in.value};
      break;
    case erase:
      if (!ok_matches(out, s.present) || (s.present && !value_matches(out, s.value))) return std::nullopt;
      next = {};
      break;
    case find:
      if (!ok_matches(out, s.present) || (s.present && !value_matches(out, s.value))) return std::nullopt;
      break;
    default: return std::nullopt;
  }
  return next;
}

bool upsert_key_model::read_only(const input& in, const output& out) {
  return in.code == find || ((in.code == insert || in.code == erase) && out.ok_known && !out.ok);
}

std::optional<value_type> upsert_key_model::value_needed(const input& in, const output& out) {
  if ((in.code == find || in.code == erase) && out.ok_known && out.ok && out.value_known) return out.value;
  return std::nullopt;
}

std::optional<value_type> upsert_key_model::value_written(const input& in) {
  if (in.code == insert || in.code == upsert) return in.value;
  return std::nullopt;
}

std::string upsert_key_model::describe_operation(const input& in, const output* out) { return describe(in, out); }
std::string upsert_key_model::describe_state(const state& s) { return s.present ? "present, " + std::to_string(s.value) : "absent"; }

std::optional<multiset_key_model::state> multiset_key_model::step(const state& s, const input& in, const output* out) {
  switch (in.code) {
    case insert:
      if (!ok_matches(out, true)) return std::nullopt;
      return s + 1;
    case erase:
      if (!ok_matches(out, s > 0)) return std::nullopt;
      return s > 0 ? s - 1 : 0;
    case find:
      if (!ok_matches(out, s > 0)) return std::nullopt;
      return s;
    case count:
      if (!ok_matches(out, true) || (out && out->value_known && out->value != s)) return std::nullopt;
      return s;
    default: return std::nullopt;
  }
}

bool multiset_key_model::read_only(const input& in, const output& out) {
  return in.code == find || in.code == count || (in.code == erase && out.ok_known && !out.ok);
}

std::string multiset_key_model::describe_operation(const input& in, const output* out) { return describe(in, out); }

const char* model_name(model_kind m) {
  switch (m) {
    case model_kind::set: return "set";
    case model_kind::map: return "map";
    case model_kind::upsert_map: return "upsert-map";
    case model_kind::multiset: return "multiset";
  }
  return "?";
}

bool parse_model(const std::string& name, model_kind& out) {
  for (model_kind m : {model_kind::set, model_kind::map, model_kind::upsert_map, model_kind::multiset}) {
    if (name == model_name(m)) {
      out = m;
      return true;
    }
  }
  return false;
}

std::string model_names() { return "set, map, upsert-map, multiset"; }

traces::operation_table operation_table_of(model_kind m) {
  using traces::operation_name;
  traces::operation_table t;
  t.model = model_name(m);
  // name, base, code, value required, ok may be null
  const operation_name ins{"insert", op_kind::insert, insert, true, false};
  const operation_name del{"delete", op_kind::remove, erase, true, false};
  const operation_name has{"contains", op_kind::contains, find, true, false};
  switch (m) {
    case model_kind::set: t.names = {ins, del, has}; break;
    case model_kind::map:
      t.names = {ins, {"erase", op_kind::remove, erase, true, false}, {"find", op_kind::contains, find, true, false}, del, has};
      break;
    case model_kind::upsert_map:
      t.names = {ins,
                 {"erase", op_kind::remove, erase, true, false},
                 {"find", op_kind::contains, find, true, false},
                 {"upsert", op_kind::insert, upsert, true, true},
                 {"insert_or_assign", op_kind::insert, upsert, true, true},
                 del,
                 has};
      break;
    case model_kind::multiset:
      // Values are not part of a multiset: none is required, but count's.
      t.names = {{"insert", op_kind::insert, insert, false, false},
                 {"erase", op_kind::remove, erase, false, false},
                 {"find", op_kind::contains, find, false, false},
                 {"count", op_kind::contains, count, true, false},
                 {"delete", op_kind::remove, erase, false, false},
                 {"contains", op_kind::contains, find, false, false}};
      break;
  }
  return t;
}

namespace {

template <class M>
model_op<M> to_model_op(const model::op_record& r, std::uint8_t code, bool value_known) {
  model_op<M> o;
  o.call = r.call;
  o.ret = r.ret;
  o.optional = r.pending();
  o.in.code = static_cast<std::uint8_t>(code & ~traces::ok_not_recorded);
  o.in.value = r.op.kind == op_kind::insert ? r.op.value : 0;
  o.out.ok = r.ok;
  o.out.ok_known = (code & traces::ok_not_recorded) == 0;
  o.out.value = r.op.kind == op_kind::insert ? 0 : r.value;
  o.out.value_known = value_known;
  if constexpr (std::is_same_v<M, multiset_key_model>) {
    // Values are not part of a multiset but for count's answer: left out,
    // operations that differ only there are one operation to the search.
    o.in.value = 0;
    if (o.in.code != count) o.out.value = 0, o.out.value_known = true;
  }
  return o;
}

std::uint8_t code_of(const model::op_record& r, const std::vector<std::uint8_t>& codes, std::size_t i) {
  return codes.empty() ? base_code(r.op.kind) : codes[i];
}

// A pending read changes nothing and its answer says nothing: left out.
bool is_read(std::uint8_t code) {
  code &= ~traces::ok_not_recorded;
  return code == find || code == count;
}

// Zones (Gibbons and Korach's, for the upsert map's values): a value v with
// one operation that may write it, a completed one W, is held during one
// period only, which holds every completed operation that needs v (a find
// or erase that answered it) and W first. With lo the earliest return and
// hi the latest call among them, the period reaches from at most lo to at
// least hi. Periods do not overlap, so with u's zone forward (lo_u < hi_u)
// v's period lies before lo_u or after hi_u: all of v's operations were
// called by lo_u (hi_v <= lo_u) or all returned after hi_u (lo_v >= hi_u).
// True when some value breaks that, is needed but never written, is needed
// by an operation that returned before W was called or called after an
// erase of v returned, or is erased twice: no linearization exists. A
// shortcut that refutes in O(n log n) what the search might take
// exponential time to exhaust; never a verdict the search would not reach.
bool refuted_by_zones(const std::vector<model_op<upsert_key_model>>& ops) {
  struct zone {
    std::uint32_t writers = 0, erases = 0;
    const model_op<upsert_key_model>* writer = nullptr;
    const model_op<upsert_key_model>* erase = nullptr;
    std::uint64_t lo = never_returned, hi = 0;
    std::uint64_t first_ret = never_returned, last_call = 0;  // of the ops that need v
    bool needed = false;
  };
  std::unordered_map<value_type, zone> zones;
  for (const auto& o : ops) {
    if (auto v = upsert_key_model::value_written(o.in); v && (o.optional || o.in.code == upsert || o.out.ok)) {
      zone& z = zones[*v];
      ++z.writers;
      z.writer = &o;
    }
    if (o.optional) continue;
    if (auto v = upsert_key_model::value_needed(o.in, o.out)) {
      zone& z = zones[*v];
      z.needed = true;
      z.first_ret = std::min(z.first_ret, o.ret);
      z.last_call = std::max(z.last_call, o.call);
      if (o.in.code == erase) {
        z.erase = &o;
        ++z.erases;
      }
    }
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> forward;  // (lo, hi)
  for (auto& [v, z] : zones) {
    if (!z.needed) continue;
    if (z.writers == 0) return true;
    if (z.writers > 1 || z.writer->optional) continue;
    if (z.erases > 1 || z.first_ret < z.writer->call) return true;
    if (z.erase && z.last_call > z.erase->ret) return true;
    z.lo = std::min(z.first_ret, z.writer->ret);
    z.hi = std::max(z.last_call, z.writer->call);
    if (z.lo < z.hi) forward.emplace_back(z.lo, z.hi);
  }
  std::sort(forward.begin(), forward.end());
  for (std::size_t k = 1; k < forward.size(); ++k) {
    if (forward[k].first < forward[k - 1].second) return true;
  }
  // Disjoint and sorted by lo, the forward zones are sorted by hi too.
  for (const auto& [v, z] : zones) {
    if (!z.needed || z.writers != 1 || z.writer->optional) continue;
    auto it = std::upper_bound(forward.begin(), forward.end(), z.lo,
                               [](std::uint64_t lo, const std::pair<std::uint64_t, std::uint64_t>& f) { return lo < f.second; });
    for (int step = 0; step < 2 && it != forward.end(); ++step, ++it) {
      if (it->first == z.lo && it->second == z.hi) continue;  // v's own (zones of two values never coincide: they are disjoint)
      if (it->first < z.hi) return true;
    }
  }
  return false;
}

template <class M>
key_outcome check_key(const std::vector<model::op_record>& h, const std::vector<std::uint8_t>& codes, const std::uint32_t* idx,
                      std::size_t count, const std::vector<std::uint32_t>& unrecorded, const deadline& d, std::size_t memory_budget) {
  if (memory_budget && count * sizeof(model_op<M>) > memory_budget) return {verdict::unknown, true};
  std::vector<model_op<M>> ops;
  ops.reserve(count);
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint32_t i = idx[k];
    const std::uint8_t code = code_of(h[i], codes, i);
    if (h[i].pending() && is_read(code)) continue;
    ops.push_back(to_model_op<M>(h[i], code, !std::binary_search(unrecorded.begin(), unrecorded.end(), i)));
  }
  if constexpr (std::is_same_v<M, upsert_key_model>) {
    // Exact where it applies (each value written once, no erase that
    // succeeded or may have): the search is left what it does not decide.
    const register_test_result t = upsert_register_test(ops);
    if (t.outcome == register_test::linearizable) return {verdict::linearizable, false};
    if (t.outcome == register_test::not_linearizable) return {verdict::not_linearizable, false};
    if (refuted_by_zones(ops)) return {verdict::not_linearizable, false};
  }
  model_search_options so;
  so.memory_budget = memory_budget;
  model_search_stats stats;
  const verdict v = model_key_search<M>(ops, d, so, &stats);
  return {v, v == verdict::unknown && stats.out_of_memory};
}

// An upsert that answered true did what insert-if-absent does when it
// succeeds (absent before, v after), and insert, erase and find are the
// map's: a key whose upserts all completed and all answered true is a key of
// the map model, decided by the set checker (exact, Theorem 4 of
// linearizability/README.md, at its speed). One that replaced a value, or
// may have, is not.
bool is_map_key(const std::vector<model::op_record>& h, const std::vector<std::uint8_t>& codes, const std::uint32_t* idx,
                std::size_t count) {
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint32_t i = idx[k];
    const std::uint8_t code = code_of(h[i], codes, i);
    if ((code & ~traces::ok_not_recorded) != upsert) continue;
    if ((code & traces::ok_not_recorded) || h[i].pending() || !h[i].ok) return false;
  }
  return true;
}

key_outcome check_map_key(key_checker& checker, const std::vector<model::op_record>& h, const std::uint32_t* idx, std::size_t count,
                          const std::vector<std::uint32_t>& unrecorded, const deadline& d, std::size_t memory_budget) {
  if (memory_budget && count * sizeof(key_op) > memory_budget) return {verdict::unknown, true};
  const std::vector<key_op> ops = key_operations(h, std::vector<std::uint32_t>(idx, idx + count), unrecorded);
  key_check_options ko;
  ko.memory_budget = memory_budget;
  const verdict v = checker.check(ops, d, nullptr, ko);
  return {v, v == verdict::unknown && checker.out_of_memory()};
}

}  // namespace

model_check_result check_history_model(model_kind m, const std::vector<model::op_record>& h, const std::vector<std::uint8_t>& codes,
                                       const model_check_options& options, const std::vector<std::uint32_t>& unrecorded) {
  if (std::string e = validate_history(h); !e.empty()) throw std::invalid_argument(e);
  if (!codes.empty() && codes.size() != h.size()) throw std::invalid_argument("one operation code per record expected");
  const auto t0 = std::chrono::steady_clock::now();
  model_check_result r;
  r.operations = h.size();
  // Group by key, each key's operations by call stamp.
  std::vector<std::uint32_t> order(h.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (h[a].op.key != h[b].op.key) return h[a].op.key < h[b].op.key;
    if (h[a].call != h[b].call) return h[a].call < h[b].call;
    return a < b;
  });
  std::vector<std::pair<std::size_t, std::size_t>> keys;  // [from, to) in `order`
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && h[order[j]].op.key == h[order[i]].op.key) ++j;
    keys.emplace_back(i, j);
    i = j;
  }
  for (const auto& rec : h) r.optional_operations += rec.pending() ? 1 : 0;
  r.keys = keys.size();
  unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, keys.size())));
  // As in check_history: the grouping stays, the rest of the bound is shared
  // by the threads, and a bound below what is held leaves nothing to any.
  const std::size_t held = order.capacity() * sizeof(std::uint32_t) + keys.capacity() * sizeof(keys[0]);
  const std::size_t per_thread_memory = options.max_memory_bytes == 0 ? 0
                                        : options.max_memory_bytes > held
                                            ? std::max<std::size_t>(1, (options.max_memory_bytes - held) / threads)
                                            : 1;
  schedule_options so;
  so.threads = threads;
  so.whole = deadline::after_seconds(options.timeout_seconds);
  so.key_seconds = options.key_seconds;
  // Every key is decided: the report counts the violating ones.
  so.stop_at_first = false;
  std::vector<key_checker> map_checkers(m == model_kind::upsert_map ? threads : 0);
  const schedule_result sr = decide_keys(keys.size(), {}, so, [&](unsigned t, std::size_t k, const deadline& d) {
    const std::uint32_t* idx = order.data() + keys[k].first;
    const std::size_t count = keys[k].second - keys[k].first;
    if (m == model_kind::upsert_map && is_map_key(h, codes, idx, count)) {
      return check_map_key(map_checkers[t], h, idx, count, unrecorded, d, per_thread_memory);
    }
    return m == model_kind::multiset ? check_key<multiset_key_model>(h, codes, idx, count, unrecorded, d, per_thread_memory)
                                     : check_key<upsert_key_model>(h, codes, idx, count, unrecorded, d, per_thread_memory);
  });
  r.threads = sr.threads;
  for (const scheduled_key& f : sr.found) {
    const key_summary s{h[order[keys[f.group].first]].op.key, keys[f.group].second - keys[f.group].first, f.why};
    if (f.v == verdict::not_linearizable) {
      if (r.violating.size() < 100) r.violating.push_back(s);
      if (!r.failing_key) {
        r.failing_key = s.key;
        r.failing_ops.assign(order.begin() + static_cast<std::ptrdiff_t>(keys[f.group].first),
                             order.begin() + static_cast<std::ptrdiff_t>(keys[f.group].second));
      }
      ++r.violating_keys;
    } else {
      if (r.undecided.size() < 100) r.undecided.push_back(s);
      ++r.undecided_keys;
      r.memory_bound_keys += f.why == undecided_why::memory ? 1 : 0;
    }
  }
  r.v = r.violating_keys ? verdict::not_linearizable : r.undecided_keys ? verdict::unknown : verdict::linearizable;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string describe_model_record(model_kind, const model::op_record& r, std::uint8_t code, bool value_known) {
  key_input in;
  in.code = static_cast<std::uint8_t>(code & ~traces::ok_not_recorded);
  in.value = r.op.kind == op_kind::insert ? r.op.value : 0;
  std::string s = code_name(code);
  s += "(" + std::to_string(r.op.key);
  if (in.code == insert || in.code == upsert) s += ", " + std::to_string(in.value);
  s += ") -> ";
  if (r.pending()) return s + (r.ret == model::no_stamp ? "pending" : "error (may have taken effect)");
  key_output out{r.ok, (code & traces::ok_not_recorded) == 0, r.op.kind == op_kind::insert ? 0 : r.value, value_known};
  const std::string full = describe(in, &out);
  return s + full.substr(full.find("-> ") + 3);
}

namespace {

std::string stamp(std::uint64_t s) { return s == model::no_stamp ? "-" : std::to_string(s); }

}  // namespace

std::string model_text_report(model_kind m, const std::vector<model::op_record>& h, const std::vector<std::uint8_t>& codes,
                              const model_check_result& r, const std::string& file, const std::string& form,
                              const std::vector<std::uint32_t>& unrecorded) {
  std::string s = "gfsl check: " + printable(file) + " (" + form + ", model " + model_name(m) + ")\n";
  s += "verdict:  ";
  const std::string of_keys = std::to_string(r.keys) + " keys";
  if (r.v == verdict::linearizable) s += "linearizable (every key)\n";
  else if (r.v == verdict::not_linearizable) s += "NOT LINEARIZABLE: " + std::to_string(r.violating_keys) + " of " + of_keys + "\n";
  else s += "undecided: " + std::to_string(r.undecided_keys) + " of " + of_keys + " within the limits (exit 3)\n";
  s += "history:  " + std::to_string(r.operations) + " operations (" + std::to_string(r.optional_operations) +
       " pending or failed), " + std::to_string(r.keys) + " keys\n";
  s += std::string("checked:  key by key, ") +
       (m == model_kind::upsert_map ? "the segmented checker where every upsert inserted, the read-mapping test where values are "
                                      "written once and no erase succeeded, elsewhere "
                                    : "") +
       "the generic search (split at cuts) against the " + model_name(m) + " model, " + std::to_string(r.threads) + " threads\n";
  s += undecided_key_lines(r.undecided, r.undecided_keys);
  if (r.failing_key) {
    s += "violating: " + std::to_string(r.violating_keys) + " keys; the smallest, key " + std::to_string(*r.failing_key) +
         ", has no linearization:\n";
    std::size_t shown = 0;
    for (std::uint32_t i : r.failing_ops) {
      if (++shown > 40) {
        s += "  ... " + std::to_string(r.failing_ops.size() - 40) + " more\n";
        break;
      }
      const bool known = !std::binary_search(unrecorded.begin(), unrecorded.end(), i);
      s += "  record " + std::to_string(i) + "  team " + std::to_string(h[i].team) + "  [" + std::to_string(h[i].call) + ", " +
           stamp(h[i].ret) + "]  " + describe_model_record(m, h[i], code_of(h[i], codes, i), known) + "\n";
    }
  }
  return s;
}

std::string model_json_report(model_kind m, const std::vector<model::op_record>& h, const std::vector<std::uint8_t>& codes,
                              const model_check_result& r, const std::string& file, const std::vector<std::uint32_t>& unrecorded) {
  std::string s = "{\"file\":";
  traces::json::append_string(s, file);
  s += ",\"model\":\"" + std::string(model_name(m)) + "\",\"verdict\":\"" + verdict_name(r.v) + "\"";
  s += ",\"operations\":" + std::to_string(r.operations) + ",\"optional_operations\":" + std::to_string(r.optional_operations);
  s += ",\"keys\":" + std::to_string(r.keys) + ",\"violating_keys\":" + std::to_string(r.violating_keys);
  s += ",\"undecided_keys\":" + std::to_string(r.undecided_keys) + ",\"memory_bound_keys\":" + std::to_string(r.memory_bound_keys);
  // The keys as the set checker's report lists them: {"key", "operations"},
  // and for the undecided "why", the option whose bound stopped it.
  auto keys = [&](const char* name, const std::vector<key_summary>& ks, bool why) {
    s += ",\"" + std::string(name) + "\":[";
    for (std::size_t k = 0; k < ks.size(); ++k) {
      s += (k ? "," : "") + std::string("{\"key\":") + std::to_string(ks[k].key) + ",\"operations\":" + std::to_string(ks[k].operations);
      if (why) s += ",\"why\":\"" + std::string(undecided_why_option(ks[k].why)) + "\"";
      s += "}";
    }
    s += "]";
  };
  keys("violating", r.violating, false);
  keys("undecided", r.undecided, true);
  if (r.failing_key) {
    s += ",\"failing_key\":" + std::to_string(*r.failing_key) + ",\"failing_operations\":[";
    for (std::size_t k = 0; k < r.failing_ops.size(); ++k) {
      const std::uint32_t i = r.failing_ops[k];
      const bool known = !std::binary_search(unrecorded.begin(), unrecorded.end(), i);
      s += (k ? "," : "") + std::string("{\"record\":") + std::to_string(i) + ",\"team\":" + std::to_string(h[i].team) +
           ",\"call\":" + std::to_string(h[i].call) + ",\"ret\":" + (h[i].ret == model::no_stamp ? "null" : std::to_string(h[i].ret)) +
           ",\"operation\":";
      traces::json::append_string(s, describe_model_record(m, h[i], code_of(h[i], codes, i), known));
      s += "}";
    }
    s += "]";
  }
  s += ",\"seconds\":";
  traces::json::append_real(s, r.seconds);
  return s + "}";
}

}  // namespace gfsl::lin
