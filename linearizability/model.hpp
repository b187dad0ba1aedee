// Sequential specifications for the generic search, in the shape of
// Porcupine's models: init, step, equal, describe. A model is a type with
// static functions, so the search is compiled for it.
//
// step(s, in, out) applies the operation `in` to state s and returns the next
// state when the model's answer equals `out`; with out == nullptr the answer
// is unknown (a pending operation) and any answer is accepted.
#pragma once

#include <concepts>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/types.hpp"
#include "linearizability/ops.hpp"
#include "model/sequential_map.hpp"

namespace gfsl::lin {

template <class M>
concept sequential_model = requires(const typename M::state& s, const typename M::input& in, const typename M::output& out) {
  { M::init() } -> std::same_as<typename M::state>;
  { M::step(s, in, &out) } -> std::same_as<std::optional<typename M::state>>;
  { M::equal(s, s) } -> std::same_as<bool>;
  { M::describe_operation(in, &out) } -> std::convertible_to<std::string>;
  { M::describe_state(s) } -> std::convertible_to<std::string>;
};

// One operation of a history for the generic search.
template <class M>
struct model_op {
  std::uint64_t call = 0;
  std::uint64_t ret = never_returned;  // optional: the last stamp it may take effect at (never_returned: none)
  typename M::input in{};
  typename M::output out{};
  bool optional = false;  // may or may not have taken effect; `out` is not looked at
};

// What the map's answers carry: found / inserted / deleted, and the value of
// contains and delete (when it was recorded).
struct map_output {
  bool ok = false;
  value_type value = 0;
  bool value_known = true;
};

inline bool answers(const model::operation& op, const model::outcome& got, const map_output& want) {
  if (got.ok != want.ok) return false;
  if (op.kind == op_kind::insert || !got.ok || !want.value_known) return true;
  return got.value == want.value;
}

// One key of the map: absent, or present with a value.
struct map_key_model {
  struct state {
    bool present = false;
    value_type value = 0;
  };
  using input = model::operation;  // the key is implied
  using output = map_output;

  static state init() { return {}; }
  static std::optional<state> step(const state& s, const input& in, const output* out) {
    model::outcome got;
    state next = s;
    switch (in.kind) {
      case op_kind::insert:
        got.ok = !s.present;
        if (got.ok) next = {true, in.value};
        break;
      case op_kind::remove:
        got = {s.present, s.present ? s.value : 0};
        next.present = false;
        next.value = 0;
        break;
      case op_kind::contains: got = {s.present, s.present ? s.value : 0}; break;
    }
    if (out && !answers(in, got, *out)) return std::nullopt;
    return next;
  }
  static bool equal(const state& a, const state& b) { return a.present == b.present && a.value == b.value; }
  static std::string describe_operation(const input& in, const output* out) {
    std::string s = model::describe(in);
    if (!out) return s + " -> ?";
    s += out->ok ? " -> true" : " -> false";
    if (out->ok && in.kind != op_kind::insert && out->value_known) s += ", " + std::to_string(out->value);
    return s;
  }
  static std::string describe_state(const state& s) { return s.present ? "present, " + std::to_string(s.value) : "absent"; }
};

// The whole map, for checking a history without splitting it by key.
struct map_model {
  using state = std::map<key_type, value_type>;
  using input = model::operation;
  using output = map_output;

  static state init() { return {}; }
  static std::optional<state> step(const state& s, const input& in, const output* out) {
    model::outcome got;
    state next = s;
    const auto it = next.find(in.key);
    switch (in.kind) {
      case op_kind::insert:
        got.ok = it == next.end();
        if (got.ok) next.emplace(in.key, in.value);
        break;
      case op_kind::remove:
        if (it != next.end()) {
          got = {true, it->second};
          next.erase(it);
        }
        break;
      case op_kind::contains:
        if (it != next.end()) got = {true, it->second};
        break;
    }
    if (out && !answers(in, got, *out)) return std::nullopt;
    return next;
  }
  static bool equal(const state& a, const state& b) { return a == b; }
  static std::string describe_operation(const input& in, const output* out) {
    return map_key_model::describe_operation(in, out);
  }
  static std::string describe_state(const state& s) {
    std::string out = "{";
    for (const auto& [k, v] : s) out += (out.size() > 1 ? ", " : "") + std::to_string(k) + ": " + std::to_string(v);
    return out + "}";
  }
};

static_assert(sequential_model<map_key_model>);
static_assert(sequential_model<map_model>);

inline model_op<map_key_model> to_model_op(const key_op& o) {
  model_op<map_key_model> m;
  m.call = o.call;
  m.ret = o.ret;
  m.in.kind = o.kind;
  m.in.value = o.kind == op_kind::insert ? o.value : 0;
  m.out = {o.ok, o.kind == op_kind::insert ? 0 : o.value, o.value_known};
  m.optional = o.optional;
  return m;
}

}  // namespace gfsl::lin
