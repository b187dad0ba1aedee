// The JSON-lines form: an optional metadata line
//   {"format":"gfsl-history","version":1,"backend":"threads",...}
// then one record per line
//   {"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":120,"ret":180}
// with "ret":null for a pending operation and "status" for one that ended in
// an error. Members may come in any order.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "traces/internal.hpp"
#include "traces/json.hpp"
#include "traces/trace.hpp"

namespace gfsl::traces {

namespace detail {

namespace {

constexpr std::size_t max_line = std::size_t{1} << 20;

struct member {
  std::string name;
  json::value v;
};

// Reads a file line by line, keeping the byte offset of each line.
class line_reader {
 public:
  explicit line_reader(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "rb"), &std::fclose) {
    if (!f_) throw trace_error(path + ": cannot open: " + errno_text());
    buf_.resize(1 << 20);
  }
  // False at the end of the file.
  bool next(std::string& line) {
    line.clear();
    start_ = offset_;
    bool any = false;
    for (;;) {
      if (pos_ == len_) {
        len_ = std::fread(buf_.data(), 1, buf_.size(), f_.get());
        pos_ = 0;
        if (len_ == 0) {
          if (std::ferror(f_.get())) throw trace_error(path_ + ": byte " + std::to_string(offset_) + ": cannot read: " + errno_text());
          if (any) ++number_;
          return any;
        }
      }
      any = true;
      const char* b = buf_.data() + pos_;
      const void* nl = std::memchr(b, '\n', len_ - pos_);
      const std::size_t take = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - b) : len_ - pos_;
      if (line.size() + take > max_line) {
        throw trace_error(path_ + ": byte " + std::to_string(start_) + " (line " + std::to_string(number_ + 1) +
                          "): expected a line of at most 1 MiB");
      }
      line.append(b, take);
      pos_ += take;
      offset_ += take;
      if (nl) {
        ++pos_;
        ++offset_;
        ++number_;
        return true;
      }
    }
  }
  std::uint64_t start() const { return start_; }
  std::uint64_t number() const { return number_; }

 private:
  std::string path_;
  std::unique_ptr<FILE, int (*)(FILE*)> f_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, len_ = 0;
  std::uint64_t offset_ = 0, start_ = 0, number_ = 0;
};

const json::value* find(const std::vector<member>& ms, std::size_t n, std::string_view name) {
  for (std::size_t i = 0; i < n; ++i) {
    if (ms[i].name == name) return &ms[i].v;
  }
  return nullptr;
}

}  // namespace

trace read_json(const std::string& path) {
  line_reader in(path);
  trace t;
  t.format = trace_format::json;
  std::string line;
  std::vector<member> ms(32);
  std::size_t count = 0;
  auto fail = [&](std::size_t at, const std::string& what) -> void {
    throw trace_error(path + ": byte " + std::to_string(in.start() + at) + " (line " + std::to_string(in.number()) + "): " + what);
  };
  bool first = true;
  while (in.next(line)) {
    count = 0;
    json::parse_failure pf;
    const bool parsed = json::parse_object(line, pf, [&](const std::string& name, const json::value& v) -> std::string {
      ms[count].name = name;
      ms[count].v = v;
      ++count;
      return {};
    });
    if (!parsed) fail(pf.offset, pf.expected);

    if (first && find(ms, count, "format")) {
      first = false;
      const json::value* format = find(ms, count, "format");
      if (format->k != json::value::kind::string || format->s != "gfsl-history") {
        fail(format->offset, "expected \"format\":\"gfsl-history\"");
      }
      const json::value* version = find(ms, count, "version");
      if (!version) fail(0, "expected a \"version\" member in the metadata line");
      if (version->k != json::value::kind::unsigned_integer || version->u != json_version) {
        fail(version->offset, "expected \"version\":" + std::to_string(json_version) + " (the only version this reader knows)");
      }
      t.version = json_version;
      for (std::size_t i = 0; i < count; ++i) {
        const member& m = ms[i];
        if (m.name == "format" || m.name == "version") continue;
        bool name_ok = !m.name.empty() && m.name.size() <= 64;
        for (char c : m.name) name_ok = name_ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
        if (!name_ok) fail(m.v.offset, "expected metadata names of 1 to 64 of a-z, 0-9 and _, found \"" + m.name + "\"");
        extra_field f;
        f.name = m.name;
        switch (m.v.k) {
          case json::value::kind::unsigned_integer: f.kind = extra_field::type::unsigned_integer, f.u = m.v.u; break;
          case json::value::kind::real: f.kind = extra_field::type::real, f.r = m.v.r; break;
          case json::value::kind::string: f.kind = extra_field::type::string, f.s = m.v.s; break;
          case json::value::kind::boolean: f.kind = extra_field::type::boolean, f.b = m.v.b; break;
          case json::value::kind::null: fail(m.v.offset, "expected a string, number or boolean for \"" + m.name + "\", found null");
        }
        if (std::string e = apply_field(t.header, f); !e.empty()) fail(m.v.offset, e);
      }
      continue;
    }
    first = false;
    if (find(ms, count, "format")) fail(0, "expected a record: a metadata line (with \"format\") may only be the first line");

    model::op_record r;
    bool have[6] = {};  // team op key ok call ret
    const json::value* value = nullptr;
    for (std::size_t i = 0; i < count; ++i) {
      const member& m = ms[i];
      const json::value& v = m.v;
      using k = json::value::kind;
      auto unsigned_at_most = [&](std::uint64_t max) -> std::uint64_t {
        if (v.k != k::unsigned_integer || v.u > max) {
          fail(v.offset, "expected an integer in [0, " + std::to_string(max) + "] for \"" + m.name + "\"");
        }
        return v.u;
      };
      if (m.name == "team") {
        r.team = static_cast<team_id>(unsigned_at_most(0xFFFFFFFFu));
        have[0] = true;
      } else if (m.name == "op") {
        if (v.k == k::string && v.s == "insert") r.op.kind = op_kind::insert;
        else if (v.k == k::string && v.s == "delete") r.op.kind = op_kind::remove;
        else if (v.k == k::string && v.s == "contains") r.op.kind = op_kind::contains;
        else fail(v.offset, "expected \"op\" to be \"insert\", \"delete\" or \"contains\"");
        have[1] = true;
      } else if (m.name == "key") {
        r.op.key = static_cast<key_type>(unsigned_at_most(0xFFFFFFFFu));
        have[2] = true;
      } else if (m.name == "ok") {
        if (v.k != k::boolean) fail(v.offset, "expected true or false for \"ok\"");
        r.ok = v.b;
        have[3] = true;
      } else if (m.name == "call") {
        r.call = unsigned_at_most(model::no_stamp - 1);
        have[4] = true;
      } else if (m.name == "ret") {
        r.ret = v.k == k::null ? model::no_stamp : unsigned_at_most(model::no_stamp - 1);
        have[5] = true;
      } else if (m.name == "value") {
        if (v.k != k::null) unsigned_at_most(0xFFFFFFFFu);
        value = &v;
      } else if (m.name == "status") {
        if (v.k != k::string || !parse_status(v.s, r.st)) {
          fail(v.offset, "expected \"status\" to be \"ok\", \"key_out_of_range\", \"pool_exhausted\", \"stopped\" or \"corrupt\"");
        }
      } else {
        fail(v.offset, "expected only the members team, op, key, value, ok, call, ret and status, found \"" + m.name + "\"");
      }
    }
    static const char* const required[6] = {"team", "op", "key", "ok", "call", "ret"};
    for (int i = 0; i < 6; ++i) {
      if (!have[i]) fail(line.size(), std::string("expected a member \"") + required[i] + "\" in the record");
    }
    const bool has_value = value && value->k != json::value::kind::null;
    const bool completed_ok = r.ok && !r.pending();
    if (!has_value) {
      if (r.op.kind == op_kind::insert) fail(line.size(), "expected a member \"value\" (the inserted value) in an insert");
      if (r.op.kind == op_kind::contains && completed_ok) fail(line.size(), "expected a member \"value\" (the value found) in a contains that found one");
      if (r.op.kind == op_kind::remove && completed_ok) t.unrecorded_values.push_back(static_cast<std::uint32_t>(t.history.size()));
    } else if (r.op.kind == op_kind::insert) {
      r.op.value = static_cast<value_type>(value->u);
    } else {
      r.value = static_cast<value_type>(value->u);
    }
    if (std::string e = validate_record(r); !e.empty()) fail(0, e);
    if (t.history.size() == 0xFFFFFFFFull) fail(0, "expected at most 4294967295 records");
    t.history.push_back(r);
  }
  if (first) throw trace_error(path + ": byte 0: expected a JSON line, found an empty file");
  return t;
}

}  // namespace detail

void write_trace_json(const std::string& path, const trace_header& header, const std::vector<model::op_record>& history,
                      const std::vector<std::uint32_t>& unrecorded_values) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) throw trace_error(path + ": cannot write: " + detail::errno_text());
  std::string out = "{\"format\":\"gfsl-history\",\"version\":" + std::to_string(json_version);
  for (const extra_field& x : detail::header_fields(header)) {
    out += ',';
    json::append_string(out, x.name);
    out += ':';
    switch (x.kind) {
      case extra_field::type::unsigned_integer: out += std::to_string(x.u); break;
      case extra_field::type::real: json::append_real(out, x.r); break;
      case extra_field::type::string:
        if (!json::valid_utf8(x.s)) throw trace_error(path + ": cannot write metadata \"" + x.name + "\": not UTF-8 text");
        json::append_string(out, x.s);
        break;
      case extra_field::type::boolean: out += x.b ? "true" : "false"; break;
    }
  }
  out += "}\n";
  std::size_t next_unrecorded = 0;
  for (std::size_t i = 0; i < history.size(); ++i) {
    const model::op_record& r = history[i];
    if (std::string e = validate_record(r); !e.empty()) throw trace_error(path + ": cannot write record " + std::to_string(i) + ": " + e);
    while (next_unrecorded < unrecorded_values.size() && unrecorded_values[next_unrecorded] < i) ++next_unrecorded;
    const bool unrecorded = next_unrecorded < unrecorded_values.size() && unrecorded_values[next_unrecorded] == i &&
                            r.op.kind == op_kind::remove && r.ok && !r.pending();
    out += record_json(r, !unrecorded);
    out += '\n';
    if (out.size() >= (1u << 20)) {
      if (std::fwrite(out.data(), 1, out.size(), f.get()) != out.size()) throw trace_error(path + ": cannot write: " + detail::errno_text());
      out.clear();
    }
  }
  if (std::fwrite(out.data(), 1, out.size(), f.get()) != out.size()) throw trace_error(path + ": cannot write: " + detail::errno_text());
  FILE* raw = f.release();
  if (std::fclose(raw) != 0) throw trace_error(path + ": cannot write: " + detail::errno_text());
}

}  // namespace gfsl::traces
