#include "linearizability/range_model.hpp"

#include <simdjson.h>

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>

#include "traces/json.hpp"
#include "traces/trace.hpp"

namespace gfsl::lin::ranges {

const char* range_model_name(range_model m) {
  return m == range_model::ordered_map ? "ordered-map" : "ordered-upsert-map";
}

bool parse_range_model(const std::string& name, range_model& out) {
  for (range_model m : {range_model::ordered_map, range_model::ordered_upsert_map}) {
    if (name == range_model_name(m)) {
      out = m;
      return true;
    }
  }
  return false;
}

const char* range_op_name(range_op o) {
  switch (o) {
    case range_op::insert: return "insert";
    case range_op::upsert: return "upsert";
    case range_op::erase: return "erase";
    case range_op::find: return "find";
    case range_op::range: return "range";
    case range_op::snapshot: return "snapshot";
  }
  return "?";
}

range_record& range_history::add_range(team_id team, key_type lo, std::uint64_t hi,
                                       const std::vector<std::pair<key_type, value_type>>& answer, std::uint64_t call,
                                       std::uint64_t ret, std::uint64_t handle) {
  range_record r;
  r.team = team;
  r.op = range_op::range;
  r.key = lo;
  r.hi = hi;
  r.call = call;
  r.ret = ret;
  r.handle = handle;
  r.ok = true;
  r.pairs_from = static_cast<std::uint32_t>(pairs.size());
  r.pairs_count = static_cast<std::uint32_t>(answer.size());
  pairs.insert(pairs.end(), answer.begin(), answer.end());
  ops.push_back(r);
  return ops.back();
}

std::string describe_range_record(const range_history& h, std::uint32_t i, std::size_t max_pairs) {
  const range_record& r = h.ops[i];
  const std::string at = r.handle == no_handle ? "" : " @h" + std::to_string(r.handle);
  std::string s;
  switch (r.op) {
    case range_op::insert:
    case range_op::upsert: s = std::string(range_op_name(r.op)) + "(" + std::to_string(r.key) + ", " + std::to_string(r.value) + ")"; break;
    case range_op::erase: s = "erase(" + std::to_string(r.key) + ")"; break;
    case range_op::find: s = "find(" + std::to_string(r.key) + at + ")"; break;
    case range_op::range: s = "range[" + std::to_string(r.key) + ", " + std::to_string(r.hi) + at + ")"; break;
    case range_op::snapshot: s = "snapshot"; break;
  }
  s += " -> ";
  if (r.pending()) return s + (r.ret == model::no_stamp ? "pending" : "error (may have taken effect)");
  switch (r.op) {
    case range_op::insert:
    case range_op::upsert:
      if (!r.ok_known) return s + "(not recorded)";
      return s + (r.op == range_op::upsert ? (r.ok ? "inserted" : "replaced") : (r.ok ? "true" : "false"));
    case range_op::erase:
    case range_op::find:
      s += r.ok ? "true" : "false";
      if (r.ok) s += r.value_known ? ", " + std::to_string(r.value) : ", value not recorded";
      return s;
    case range_op::range: {
      s += "{";
      for (std::uint32_t p = 0; p < r.pairs_count; ++p) {
        if (p == max_pairs) {
          s += ", ... " + std::to_string(r.pairs_count - p) + " more";
          break;
        }
        const auto& kv = h.pairs[r.pairs_from + p];
        s += (p ? ", " : "") + std::to_string(kv.first) + ":" + std::to_string(kv.second);
      }
      return s + "}";
    }
    case range_op::snapshot: return s + "h" + std::to_string(r.handle);
  }
  return s;
}

bool names_range_model(const std::string& line) {
  // A metadata line only (it has "format"): "model":"ordered-...".
  if (line.find("\"format\"") == std::string::npos) return false;
  for (const char* m : {"ordered-map", "ordered-upsert-map"}) {
    for (const char* sep : {"\"model\":\"", "\"model\": \""}) {
      if (line.find(std::string(sep) + m + "\"") != std::string::npos) return true;
    }
  }
  return false;
}

std::string range_model_named(const std::string& path) {
  if (std::string b = binary_range_model(path); !b.empty()) return b;
  const std::string line = first_line_of(path);
  if (!names_range_model(line)) return "";
  return line.find("\"ordered-upsert-map\"") != std::string::npos ? "ordered-upsert-map" : "ordered-map";
}

std::string first_line_of(const std::string& path) {
  if (path == "-") return "";
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return "";
  std::string s;
  for (int c; s.size() < 65536 && (c = std::fgetc(f.get())) != EOF && c != '\n';) s.push_back(static_cast<char>(c));
  if (!s.empty() && static_cast<unsigned char>(s[0]) == 0x89) return "";  // binary
  return s;
}

namespace {

namespace od = simdjson::ondemand;

std::string read_all(const std::string& path, std::string& name) {
  name = path == "-" ? "standard input" : path;
  std::unique_ptr<FILE, int (*)(FILE*)> f(path == "-" ? nullptr : std::fopen(path.c_str(), "rb"), &std::fclose);
  FILE* in = path == "-" ? stdin : f.get();
  if (!in) throw traces::trace_error(name + ": cannot open: " + std::strerror(errno));
  std::string s;
  char block[1 << 16];
  for (std::size_t n; (n = std::fread(block, 1, sizeof block, in)) > 0;) s.append(block, n);
  if (std::ferror(in)) throw traces::trace_error(name + ": cannot read: " + std::strerror(errno));
  return s;
}

struct line_failure {
  std::size_t at;
  std::string what;
};

[[noreturn]] void fail(std::size_t at, std::string what) { throw line_failure{at, std::move(what)}; }

std::uint64_t get_u(od::value& v, const char* name, std::uint64_t max, std::size_t at) {
  std::uint64_t u = 0;
  if (v.get_uint64().get(u) || u > max) fail(at, "expected an integer in [0, " + std::to_string(max) + "] for \"" + name + "\"");
  return u;
}

bool parse_op(std::string_view s, range_model m, range_op& out) {
  if (s == "insert") out = range_op::insert;
  else if (s == "erase" || s == "delete") out = range_op::erase;
  else if (s == "find" || s == "contains") out = range_op::find;
  else if (s == "range" || s == "range_query") out = range_op::range;
  else if (s == "snapshot" || s == "take_snapshot") out = range_op::snapshot;
  else if (m == range_model::ordered_upsert_map && (s == "upsert" || s == "insert_or_assign")) out = range_op::upsert;
  else return false;
  return true;
}

enum member : unsigned {
  m_team = 1, m_op = 2, m_key = 4, m_value = 8, m_ok = 16, m_call = 32, m_ret = 64, m_status = 128,
  m_lo = 256, m_hi = 512, m_pairs = 1024, m_handle = 2048
};

void parse_record(od::parser& parser, const char* base, std::size_t len, std::size_t capacity, range_history& h, range_model m) {
  od::document doc;
  if (auto e = parser.iterate(base, len, capacity).get(doc)) fail(0, std::string("expected a JSON object (") + simdjson::error_message(e) + ")");
  od::object obj;
  if (auto e = doc.get_object().get(obj)) fail(0, std::string("expected a JSON object (") + simdjson::error_message(e) + ")");
  range_record r;
  unsigned seen = 0;
  bool have_value = false, ok_null = false;
  std::vector<std::pair<key_type, value_type>> pairs;
  std::size_t pairs_at = 0;
  static constexpr struct {
    const char* name;
    unsigned bit;
  } names[] = {{"team", m_team}, {"op", m_op},     {"key", m_key}, {"value", m_value}, {"ok", m_ok},       {"call", m_call},
               {"ret", m_ret},   {"status", m_status}, {"lo", m_lo}, {"hi", m_hi},     {"pairs", m_pairs}, {"handle", m_handle}};
  for (auto fr : obj) {
    od::field f;
    if (auto e = std::move(fr).get(f)) fail(0, std::string("expected a JSON object (") + simdjson::error_message(e) + ")");
    std::string_view key;
    if (f.unescaped_key().get(key)) fail(0, "expected a member name");
    unsigned bit = 0;
    for (const auto& n : names) {
      if (key == n.name) bit = n.bit;
    }
    od::value& v = f.value();
    const std::string_view token = v.raw_json_token();
    const std::size_t at = static_cast<std::size_t>(token.data() - base);
    if (bit == 0) {
      if (!token.empty() && (token.front() == '{' || token.front() == '[')) {
        fail(at, "expected a string, number, boolean or null for an unknown member");
      }
      if (h.ignored_members.size() < 8 && std::find(h.ignored_members.begin(), h.ignored_members.end(), key) == h.ignored_members.end()) {
        h.ignored_members.emplace_back(key);
      }
      continue;
    }
    if (seen & bit) fail(at, "expected each member once");
    seen |= bit;
    switch (bit) {
      case m_team: r.team = static_cast<team_id>(get_u(v, "team", 0xFFFFFFFFu, at)); break;
      case m_key: r.key = static_cast<key_type>(get_u(v, "key", 0xFFFFFFFFu, at)); break;
      case m_lo: r.key = static_cast<key_type>(get_u(v, "lo", 0xFFFFFFFFu, at)); break;
      case m_hi: r.hi = get_u(v, "hi", 0x100000000ull, at); break;
      case m_call: r.call = get_u(v, "call", model::no_stamp - 1, at); break;
      case m_ret:
        if (token.substr(0, 4) == "null") r.ret = model::no_stamp;
        else r.ret = get_u(v, "ret", model::no_stamp - 1, at);
        break;
      case m_handle: r.handle = get_u(v, "handle", model::no_stamp - 1, at); break;
      case m_value:
        if (token.substr(0, 4) != "null") {
          r.value = static_cast<value_type>(get_u(v, "value", 0xFFFFFFFFu, at));
          have_value = true;
        }
        break;
      case m_ok:
        if (token.substr(0, 4) == "null") ok_null = true;
        else if (v.get_bool().get(r.ok)) fail(at, "expected true, false or null for \"ok\"");
        break;
      case m_op: {
        std::string_view s;
        if (v.get_string().get(s) || !parse_op(s, m, r.op)) {
          fail(at, std::string("expected \"op\" to be one of insert, erase, find, range, snapshot") +
                       (m == range_model::ordered_upsert_map ? ", upsert" : "") + " (model " + range_model_name(m) + ")");
        }
        break;
      }
      case m_status: {
        std::string_view s;
        if (v.get_string().get(s) || !traces::parse_status(std::string(s), r.st)) {
          fail(at, "expected \"status\" to be \"ok\", \"key_out_of_range\", \"pool_exhausted\", \"stopped\" or \"corrupt\"");
        }
        break;
      }
      case m_pairs: {
        pairs_at = at;
        if (token.substr(0, 4) == "null") break;
        od::array arr;
        if (v.get_array().get(arr)) fail(at, "expected \"pairs\" to be an array of [key, value] arrays");
        for (auto er : arr) {
          od::array kv;
          if (std::move(er).get_array().get(kv)) fail(at, "expected \"pairs\" to be an array of [key, value] arrays");
          std::uint64_t x[2] = {0, 0};
          int n = 0;
          for (auto xr : kv) {
            std::uint64_t u = 0;
            if (n >= 2 || std::move(xr).get_uint64().get(u) || u > 0xFFFFFFFFu) fail(at, "expected each pair to be [key, value], integers below 2^32");
            x[n++] = u;
          }
          if (n != 2) fail(at, "expected each pair to be [key, value], integers below 2^32");
          pairs.emplace_back(static_cast<key_type>(x[0]), static_cast<value_type>(x[1]));
        }
        break;
      }
    }
  }
  const char* rest = nullptr;
  if (!doc.current_location().get(rest)) fail(static_cast<std::size_t>(rest - base), "expected the end of the line after the object");
  auto need = [&](unsigned bit, const char* name, const char* why) {
    if (!(seen & bit)) fail(len, std::string("expected a member \"") + name + "\"" + why);
  };
  need(m_team, "team", " in the record");
  need(m_op, "op", " in the record");
  need(m_call, "call", " in the record");
  need(m_ret, "ret", " in the record");
  if (r.ret != model::no_stamp && r.ret < r.call) fail(len, "expected \"ret\" at or after \"call\"");
  const bool done = !r.pending();
  const char* name = range_op_name(r.op);
  switch (r.op) {
    case range_op::insert:
    case range_op::upsert:
      need(m_key, "key", " in an insert or upsert");
      need(m_value, "value", " (the value written) in an insert or upsert");
      if (!have_value) fail(len, "expected a \"value\" (the value written), not null");
      need(m_ok, "ok", " in an insert or upsert");
      if (ok_null && r.op != range_op::upsert) fail(len, "expected \"ok\" to be true or false in an insert (only upsert may leave it null)");
      r.ok_known = !ok_null;
      break;
    case range_op::erase:
    case range_op::find:
      need(m_key, "key", (std::string(" in a ") + name).c_str());
      need(m_ok, "ok", (std::string(" in a ") + name).c_str());
      if (ok_null) fail(len, std::string("expected \"ok\" to be true or false in a ") + name);
      if (r.op == range_op::erase && r.handle != no_handle) fail(len, "expected no \"handle\" in an erase (only find and range read at one)");
      if (r.op == range_op::find && done && r.ok && !have_value) fail(len, "expected a member \"value\" (the value found) in a find that found one");
      r.value_known = have_value;
      break;
    case range_op::range:
      need(m_lo, "lo", " in a range");
      need(m_hi, "hi", " in a range");
      if (r.hi < r.key) fail(len, "expected \"hi\" at or above \"lo\" (the range is [lo, hi))");
      if (done && pairs.empty() && !(seen & m_pairs)) fail(len, "expected a member \"pairs\" (the range's answer) in a range that returned");
      for (std::size_t p = 0; p < pairs.size(); ++p) {
        if (pairs[p].first < r.key || pairs[p].first >= r.hi) fail(pairs_at, "expected every pair's key in [lo, hi)");
        if (p && pairs[p].first <= pairs[p - 1].first) fail(pairs_at, "expected the pairs in increasing key order, each key once");
      }
      r.ok = true;
      break;
    case range_op::snapshot:
      if (done) need(m_handle, "handle", " (the handle it returned) in a snapshot that returned");
      break;
  }
  if (r.op != range_op::range && (seen & (m_lo | m_hi | m_pairs))) fail(len, "expected \"lo\", \"hi\" and \"pairs\" in a range only");
  if (r.op == range_op::range && (seen & m_key)) fail(len, "expected \"lo\" and \"hi\", not \"key\", in a range");
  r.pairs_from = static_cast<std::uint32_t>(h.pairs.size());
  r.pairs_count = static_cast<std::uint32_t>(pairs.size());
  h.pairs.insert(h.pairs.end(), pairs.begin(), pairs.end());
  h.ops.push_back(r);
}

}  // namespace

range_history read_range_trace(const std::string& path, range_model m) {
  std::string name;
  std::string text = read_all(path, name);
  const std::size_t size = text.size();
  text.append(simdjson::SIMDJSON_PADDING, ' ');
  if (size && static_cast<unsigned char>(text[0]) == 0x89) {
    return read_range_binary(name, reinterpret_cast<const unsigned char*>(text.data()), size, m);
  }
  range_history h;
  h.model = m;
  od::parser parser;
  std::size_t line_no = 0;
  for (std::size_t start = 0; start < size;) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos || end > size) end = size;
    ++line_no;
    std::size_t len = end - start;
    if (len && text[start + len - 1] == '\r') --len;
    try {
      if (len == 0) fail(0, "expected a JSON object, found a blank line");
      const std::string_view line(text.data() + start, len);
      if (line_no == 1 && line.find("\"format\"") != std::string_view::npos) {
        traces::json::parse_failure pf;
        std::string model_named;
        bool has_format = false;
        if (!traces::json::parse_object(line, pf, [&](const std::string& key, const traces::json::value& v) -> std::string {
              if (key == "format") has_format = true;
              if (key == "model") {
                if (v.k != traces::json::value::kind::string) return "expected \"model\" to be a string";
                model_named = v.s;
              }
              return {};
            })) {
          fail(pf.offset, pf.expected);
        }
        if (has_format) {
          if (!model_named.empty() && model_named != range_model_name(m)) {
            fail(0, "expected the trace's \"model\" to be " + std::string(range_model_name(m)) + " (--model), found \"" +
                        model_named.substr(0, 64) + "\"");
          }
          h.metadata = std::string(line);
          start = end + 1;
          continue;
        }
      }
      parse_record(parser, text.data() + start, len, text.size() - start, h, m);
    } catch (const line_failure& f) {
      throw traces::trace_error(name + ": byte " + std::to_string(start + f.at) + " (line " + std::to_string(line_no) + "): " + f.what);
    }
    if (h.ops.size() >= 0xFFFFFFFFu) throw traces::trace_error(name + ": more than 2^32 - 1 records");
    start = end + 1;
  }
  return h;
}

std::string range_trace_text(const range_history& h) {
  std::string s;
  if (h.metadata.empty()) {
    s = std::string("{\"format\":\"gfsl-history\",\"version\":1,\"model\":\"") + range_model_name(h.model) + "\"}\n";
  } else if (h.metadata.find("\"model\"") == std::string::npos && h.metadata.size() >= 2 && h.metadata.back() == '}') {
    s = h.metadata.substr(0, h.metadata.size() - 1) + ",\"model\":\"" + range_model_name(h.model) + "\"}\n";
  } else {
    s = h.metadata + "\n";
  }
  s.reserve(s.size() + h.ops.size() * 72 + h.pairs.size() * 16);
  auto u = [&](std::uint64_t x) { s += std::to_string(x); };
  for (const range_record& r : h.ops) {
    s += "{\"team\":";
    u(r.team);
    s += ",\"op\":\"";
    s += range_op_name(r.op);
    s += "\"";
    if (r.op == range_op::range) {
      s += ",\"lo\":";
      u(r.key);
      s += ",\"hi\":";
      u(r.hi);
    } else if (r.op != range_op::snapshot) {
      s += ",\"key\":";
      u(r.key);
    }
    if (r.handle != no_handle) {
      s += ",\"handle\":";
      u(r.handle);
    }
    switch (r.op) {
      case range_op::insert:
      case range_op::upsert:
        s += ",\"value\":";
        u(r.value);
        s += r.ok_known ? (r.ok ? ",\"ok\":true" : ",\"ok\":false") : ",\"ok\":null";
        break;
      case range_op::erase:
      case range_op::find:
        if (r.ok && r.value_known) {
          s += ",\"value\":";
          u(r.value);
        }
        s += r.ok ? ",\"ok\":true" : ",\"ok\":false";
        break;
      case range_op::range:
        s += ",\"pairs\":[";
        for (std::uint32_t p = 0; p < r.pairs_count; ++p) {
          const auto& kv = h.pairs[r.pairs_from + p];
          s += p ? ",[" : "[";
          u(kv.first);
          s += ",";
          u(kv.second);
          s += "]";
        }
        s += "]";
        break;
      case range_op::snapshot: break;
    }
    s += ",\"call\":";
    u(r.call);
    s += ",\"ret\":";
    if (r.ret == model::no_stamp) s += "null";
    else u(r.ret);
    if (r.st != status::ok) {
      s += ",\"status\":\"";
      s += traces::status_key(r.st);
      s += "\"";
    }
    s += "}\n";
  }
  return s;
}

void write_range_trace(const std::string& path, const range_history& h) { traces::write_file(path, range_trace_text(h)); }

}  // namespace gfsl::lin::ranges
