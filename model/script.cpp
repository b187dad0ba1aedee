#include "script.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace gfsl::model {

std::uint64_t script::ops() const {
  std::uint64_t n = 0;
  for (const auto& t : team_ops) n += t.size();
  return n;
}

void script::number_values() {
  value_type next = 1;
  for (operation& op : prefill) op.value = next++;
  for (auto& team : team_ops) {
    for (operation& op : team) op.value = op.kind == op_kind::insert ? next++ : 0;
  }
}

namespace {

char letter(op_kind k) { return k == op_kind::insert ? 'i' : k == op_kind::remove ? 'd' : 'c'; }

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string::size_type from = 0;
  for (;;) {
    const auto at = text.find(sep, from);
    parts.push_back(text.substr(from, at - from));
    if (at == std::string::npos) return parts;
    from = at + 1;
  }
}

bool parse_key(const std::string& text, key_type& key) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || !is_user_key(static_cast<key_type>(v)) || v > max_user_key) return false;
  key = static_cast<key_type>(v);
  return true;
}

}  // namespace

std::string script::encode_prefill() const {
  std::string s;
  for (std::size_t i = 0; i < prefill.size(); ++i) s += (i ? "," : "") + std::to_string(prefill[i].key);
  return s;
}

std::string script::encode_team_ops() const {
  std::string s;
  for (std::size_t t = 0; t < team_ops.size(); ++t) {
    if (t) s += '/';
    for (std::size_t i = 0; i < team_ops[t].size(); ++i) {
      if (i) s += ',';
      s += letter(team_ops[t][i].kind);
      s += std::to_string(team_ops[t][i].key);
    }
  }
  return s;
}

std::string script::describe() const {
  std::string s = "prefill {";
  for (std::size_t i = 0; i < prefill.size(); ++i) s += (i ? ", " : "") + std::to_string(prefill[i].key);
  s += "}";
  for (std::size_t t = 0; t < team_ops.size(); ++t) {
    s += " | team " + std::to_string(t) + ":";
    for (std::size_t i = 0; i < team_ops[t].size(); ++i) s += (i ? ", " : " ") + model::describe(team_ops[t][i]);
  }
  return s;
}

script script_of(const workload& w) {
  script s;
  s.prefill = prefill_operations(w);
  s.team_ops.resize(w.teams);
  for (std::uint32_t t = 0; t < w.teams; ++t) {
    for (std::uint64_t j = team_first_op(w, t); j < team_first_op(w, t + 1); ++j) s.team_ops[t].push_back(operation_at(w, j));
  }
  s.number_values();
  return s;
}

std::optional<script> parse_script(const std::string& prefill_keys, const std::string& team_ops, std::string& error) {
  script s;
  if (!prefill_keys.empty()) {
    for (const std::string& item : split(prefill_keys, ',')) {
      operation op;
      op.kind = op_kind::insert;
      if (!parse_key(item, op.key)) {
        error = "prefill key '" + item + "' is not a key in [1, " + std::to_string(max_user_key) + "]";
        return std::nullopt;
      }
      for (const operation& earlier : s.prefill) {
        if (earlier.key == op.key) {
          error = "prefill key " + item + " is listed twice";
          return std::nullopt;
        }
      }
      s.prefill.push_back(op);
    }
  }
  const std::vector<std::string> teams = split(team_ops, '/');
  if (teams.size() > max_team_id) {
    error = "team-ops lists " + std::to_string(teams.size()) + " teams, more than " + std::to_string(max_team_id);
    return std::nullopt;
  }
  for (std::size_t t = 0; t < teams.size(); ++t) {
    s.team_ops.emplace_back();
    if (teams[t].empty()) continue;
    for (const std::string& item : split(teams[t], ',')) {
      operation op;
      const char kind = item.empty() ? '\0' : item[0];
      op.kind = kind == 'i' ? op_kind::insert : kind == 'd' ? op_kind::remove : op_kind::contains;
      if ((kind != 'i' && kind != 'd' && kind != 'c') || !parse_key(item.substr(1), op.key)) {
        error = "team " + std::to_string(t) + "'s operation '" + item + "' is not i<key>, d<key> or c<key>";
        return std::nullopt;
      }
      s.team_ops[t].push_back(op);
    }
  }
  s.number_values();
  return s;
}

void fit_workload(const script& s, workload& w) {
  w.teams = static_cast<std::uint32_t>(s.team_ops.size());
  w.ops = s.ops();
  key_type top = 1;
  for (const operation& op : s.prefill) top = std::max(top, op.key);
  for (const auto& team : s.team_ops)
    for (const operation& op : team) top = std::max(top, op.key);
  w.range = std::max(w.range, top);
  w.range = std::max<std::uint32_t>(w.range, static_cast<std::uint32_t>(std::min<std::size_t>(s.prefill.size(), max_user_key)));
  w.prefill = static_cast<double>(s.prefill.size()) / w.range;
}

}  // namespace gfsl::model
