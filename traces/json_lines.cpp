// The JSON-lines form: an optional metadata line
//   {"format":"gfsl-history","version":1,"backend":"threads",...}
// then one record per line
//   {"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":120,"ret":180}
// with "ret":null for a pending operation and "status" for one that ended in
// an error. Members may come in any order; members the reader does not know
// are passed over (their names kept for the reports), as long as their values
// are not nested. Read for a model (gfsl check --model), "op" may name that
// model's operations (operation_table).
//
// simdjson's On-Demand API parses each line (one flat object: no tape, the
// members read in place). When simdjson refuses a line, or the reader refuses
// one of its members, the strict scanner of traces/json.hpp reads the line
// again to name the first byte at fault and what was expected there, in the
// order a reader meets them: syntax first (including what simdjson does not
// check, such as duplicate names and lone surrogates), then the members in
// line order. The metadata line, once per file, is always scanned too: its
// strings are kept, so they must meet every rule.
#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "traces/internal.hpp"
#include "traces/json.hpp"
#include "traces/trace.hpp"

namespace gfsl::traces {

namespace detail {

namespace {

namespace od = simdjson::ondemand;

constexpr std::size_t max_line = std::size_t{1} << 20;
// Read size: four lines of the longest kind, so that one always fits.
constexpr std::size_t block_bytes = std::size_t{4} << 20;

// A refused line, before its line number is known (ranges of the file are
// read in parallel; a range's first line number is the count of the lines
// before it).
struct line_error {
  std::uint64_t byte = 0;        // in the file
  std::uint64_t range_line = 0;  // 1-based, within its range
  std::string what;
};

// Where a range's reader is.
struct position {
  std::uint64_t line_start = 0;  // file offset of the line's first byte
  std::uint64_t line = 0;        // 1-based, within the range
  [[noreturn]] void fail(std::size_t at, const std::string& what) const { throw line_error{line_start + at, line, what}; }
};

// What went wrong on a line before the scanner has looked at it: the message
// and byte the reader would give if the line's syntax is sound.
struct refusal {
  std::size_t at = 0;
  std::string what;
};

// Refuses a line: the scanner's verdict when it finds fault with the syntax
// (or the line is a second metadata line, which it names); else `r`, the
// member the reader refused.
[[noreturn]] void refuse(const position& where, std::string_view line, const refusal& r, bool may_be_metadata) {
  json::parse_failure pf;
  bool has_format = false;
  const bool parsed = json::parse_object(line, pf, [&](const std::string& name, const json::value&) -> std::string {
    has_format = has_format || name == "format";
    return {};
  });
  if (!parsed) where.fail(pf.offset, pf.expected);
  if (has_format && !may_be_metadata) where.fail(0, "expected a record: a metadata line (with \"format\") may only be the first line");
  where.fail(r.at, r.what);
}

std::string simdjson_says(simdjson::error_code e) { return std::string("expected a JSON object (") + simdjson::error_message(e) + ")"; }

// The record members, by bit.
enum member_bit : unsigned { m_team = 1, m_op = 2, m_key = 4, m_value = 8, m_ok = 16, m_call = 32, m_ret = 64, m_status = 128 };

class record_parser {
 public:
  // Parses one record line into `r`. `capacity`: bytes readable from
  // line.data() (at least line.size() + SIMDJSON_PADDING). Returns false with
  // `why` set when the line is refused. `value_known` tells whether the record
  // carries a value (required for inserts and contains that found one).
  // `ops`: the model's operations (null: insert, delete, contains); `code`:
  // the operation's code in it, | ok_not_recorded for "ok":null.
  // `ignored`: the names of unknown members met so far (a few).
  bool parse(std::string_view line, std::size_t capacity, model::op_record& r, bool& value_known, refusal& why,
             const operation_table* ops, std::uint8_t& code, std::vector<std::string>& ignored) {
    const char* base = line.data();
    od::document doc;
    if (auto e = parser_.iterate(base, line.size(), capacity).get(doc)) return refused(why, 0, simdjson_says(e));
    od::object obj;
    if (auto e = doc.get_object().get(obj)) return refused(why, 0, simdjson_says(e));
    unsigned seen = 0;
    bool have_value = false;
    bool ok_null = false;
    const operation_name* named = nullptr;
    std::uint64_t value = 0;
    for (auto field_result : obj) {
      od::field field;
      if (auto e = std::move(field_result).get(field)) return refused(why, 0, simdjson_says(e));
      std::string_view name;
      const unsigned bit = member_of(field, name);
      // A name whose escapes do not unescape: refuse() names the byte.
      if (bit == bad_name) return refused(why, 0, "expected a member name");
      od::value& v = field.value();
      const std::string_view token = v.raw_json_token();
      const std::size_t at = static_cast<std::size_t>(token.data() - base);
      if (bit == 0) {
        // Another recorder's member ("thread", "sm"): passed over. A nested
        // value is refused as the scanner refuses it everywhere.
        if (!token.empty() && (token.front() == '{' || token.front() == '[')) {
          return refused(why, at, "expected a string, number, boolean or null for an unknown member");
        }
        if (ignored.size() < 8 && std::find(ignored.begin(), ignored.end(), name) == ignored.end()) ignored.emplace_back(name);
        continue;
      }
      if (seen & bit) {
        // A member seen twice: the scanner names the duplicate.
        return refused(why, at, "expected each member once");
      }
      seen |= bit;
      auto unsigned_at_most = [&](std::uint64_t max, const char* name, std::uint64_t& out) {
        if (v.get_uint64().get(out) || out > max) {
          return refused(why, at, "expected an integer in [0, " + std::to_string(max) + "] for \"" + name + "\"");
        }
        return true;
      };
      std::uint64_t u = 0;
      switch (bit) {
        case m_team:
          if (!unsigned_at_most(0xFFFFFFFFu, "team", u)) return false;
          r.team = static_cast<team_id>(u);
          break;
        case m_key:
          if (!unsigned_at_most(0xFFFFFFFFu, "key", u)) return false;
          r.op.key = static_cast<key_type>(u);
          break;
        case m_call:
          if (!unsigned_at_most(model::no_stamp - 1, "call", r.call)) return false;
          break;
        case m_ret:
          if (token == "null") {
            r.ret = model::no_stamp;
          } else if (!unsigned_at_most(model::no_stamp - 1, "ret", r.ret)) {
            return false;
          }
          break;
        case m_value:
          if (token != "null") {
            if (!unsigned_at_most(0xFFFFFFFFu, "value", value)) return false;
            have_value = true;
          }
          break;
        case m_ok:
          if (ops && token == "null") {
            ok_null = true;  // allowed or not once "op" is known
            r.ok = false;
          } else if (v.get_bool().get(r.ok)) {
            return refused(why, at, ops ? "expected true, false or null for \"ok\"" : "expected true or false for \"ok\"");
          }
          break;
        case m_op:
          if (ops) {
            named = model_operation(v, *ops);
            if (!named) return refused(why, at, unknown_operation(v, ops));
            r.op.kind = named->base;
          } else if (token == "\"insert\"") r.op.kind = op_kind::insert;
          else if (token == "\"delete\"") r.op.kind = op_kind::remove;
          else if (token == "\"contains\"") r.op.kind = op_kind::contains;
          else if (!escaped_name(v, r.op.kind)) return refused(why, at, unknown_operation(v, nullptr));
          break;
        case m_status: {
          std::string_view text;
          if (v.get_string().get(text) || !parse_status(std::string(text), r.st)) {
            return refused(why, at, "expected \"status\" to be \"ok\", \"key_out_of_range\", \"pool_exhausted\", \"stopped\" or \"corrupt\"");
          }
          break;
        }
      }
    }
    // Nothing may follow the object on its line.
    const char* rest = nullptr;
    if (!doc.current_location().get(rest)) {
      return refused(why, static_cast<std::size_t>(rest - base), "expected the end of the line after the object");
    }
    static constexpr struct {
      unsigned bit;
      const char* name;
    } required[] = {{m_team, "team"}, {m_op, "op"}, {m_key, "key"}, {m_ok, "ok"}, {m_call, "call"}, {m_ret, "ret"}};
    for (const auto& q : required) {
      if (!(seen & q.bit)) return refused(why, line.size(), std::string("expected a member \"") + q.name + "\" in the record");
    }
    code = named ? named->code : 0;
    if (ok_null) {
      if (!named->ok_may_be_null) {
        return refused(why, line.size(), "expected \"ok\" to be true or false in a \"" + named->name + "\" (only " +
                                             null_ok_names(*ops) + " may leave it null)");
      }
      code |= ok_not_recorded;
    }
    const bool completed_ok = r.ok && !r.pending();
    const bool value_required = !named || named->value_required;
    if (!have_value && value_required) {
      if (r.op.kind == op_kind::insert) return refused(why, line.size(), "expected a member \"value\" (the inserted value) in an insert");
      if (r.op.kind == op_kind::contains && completed_ok) {
        return refused(why, line.size(), "expected a member \"value\" (the value found) in a contains that found one");
      }
    } else if (r.op.kind == op_kind::insert) {
      r.op.value = static_cast<value_type>(value);
    } else {
      r.value = static_cast<value_type>(value);
    }
    value_known = have_value;
    if (std::string e = validate_record(r); !e.empty()) return refused(why, 0, e);
    return true;
  }

  od::parser& parser() { return parser_; }

  // The model's operation that "op" names, or null.
  static const operation_name* model_operation(od::value& v, const operation_table& ops) {
    std::string_view text;
    if (v.get_string().get(text)) return nullptr;
    for (const operation_name& n : ops.names) {
      if (n.name == text) return &n;
    }
    return nullptr;
  }

  // "expected "op" to be one of insert, erase, find, upsert (model
  // upsert-map), found "inc"": what the model takes, and what came.
  static std::string unknown_operation(od::value& v, const operation_table* ops) {
    std::string want;
    if (ops) {
      for (const operation_name& n : ops->names) want += (want.empty() ? "" : ", ") + n.name;
      want = "one of " + want + " (model " + ops->model + ")";
    } else {
      want = "insert, delete or contains (model set; gfsl check --model names others)";
    }
    std::string_view text;
    if (v.get_string().get(text)) return "expected \"op\" to be a string: " + want;
    return "expected \"op\" to be " + want + ", found \"" + std::string(text.substr(0, 64)) + "\"";
  }

  static std::string null_ok_names(const operation_table& ops) {
    std::string out;
    for (const operation_name& n : ops.names) {
      if (n.ok_may_be_null) out += (out.empty() ? "" : ", ") + n.name;
    }
    return out.empty() ? "no operation" : out;
  }

 private:
  static bool refused(refusal& why, std::size_t at, std::string what) {
    why.at = at;
    why.what = std::move(what);
    return false;
  }

  // The member a field names: its bit, or 0, with its name in `name`; or
  // bad_name. Names are compared as they stand in the line; one with
  // escapes is unescaped first (the format does not forbid "te\u0061m"),
  // once: simdjson unescapes a key at most once (a second call after a
  // failed one crashed on "c\ll").
  static constexpr unsigned bad_name = ~0u;
  static unsigned member_of(od::field& field, std::string_view& name) {
    const od::raw_json_string raw = field.key();
    static constexpr struct {
      const char* name;
      unsigned bit;
    } names[] = {{"team", m_team}, {"op", m_op}, {"key", m_key}, {"value", m_value},
                 {"ok", m_ok}, {"call", m_call}, {"ret", m_ret}, {"status", m_status}};
    for (const auto& n : names) {
      if (raw.unsafe_is_equal(n.name)) return n.bit;
    }
    name = std::string_view(raw.raw(), std::strcspn(raw.raw(), "\""));
    if (std::memchr(name.data(), '\\', name.size()) == nullptr) return 0;
    if (field.unescaped_key().get(name)) return bad_name;
    for (const auto& n : names) {
      if (name == n.name) return n.bit;
    }
    return 0;
  }

  // "op" written with escapes ("ins\u0065rt").
  static bool escaped_name(od::value& v, op_kind& kind) {
    std::string_view text;
    if (v.get_string().get(text)) return false;
    if (text == "insert") kind = op_kind::insert;
    else if (text == "delete") kind = op_kind::remove;
    else if (text == "contains") kind = op_kind::contains;
    else return false;
    return true;
  }

  od::parser parser_;
};

// The metadata line: every member, in line order, as header fields.
// Returns false when the line has no "format" member (it is a record).
bool parse_metadata(const position& where, std::string_view line, std::size_t capacity, od::parser& parser, trace& t) {
  // The scanner first: the metadata line's strings are kept, so they meet
  // every rule (simdjson lets some through: lone surrogates in escapes).
  json::parse_failure pf;
  bool has_format = false;
  if (!json::parse_object(line, pf, [&](const std::string& name, const json::value&) -> std::string {
        has_format = has_format || name == "format";
        return {};
      })) {
    where.fail(pf.offset, pf.expected);
  }
  if (!has_format) return false;
  const char* base = line.data();
  struct member {
    std::string_view name;
    std::size_t at;
    extra_field f;
    bool null = false;
  };
  std::vector<member> members;
  od::document doc;
  od::object obj;
  if (auto e = parser.iterate(base, line.size(), capacity).get(doc)) where.fail(0, simdjson_says(e));
  if (auto e = doc.get_object().get(obj)) where.fail(0, simdjson_says(e));
  for (auto field_result : obj) {
    od::field field;
    if (auto e = std::move(field_result).get(field)) where.fail(0, simdjson_says(e));
    member m;
    if (auto e = field.unescaped_key().get(m.name)) where.fail(0, simdjson_says(e));
    od::value& v = field.value();
    const std::string_view token = v.raw_json_token();
    m.at = static_cast<std::size_t>(token.data() - base);
    m.f.name = std::string(m.name);
    od::json_type type;
    if (auto e = v.type().get(type)) where.fail(m.at, simdjson_says(e));
    simdjson::error_code e = simdjson::SUCCESS;
    switch (type) {
      case od::json_type::string: {
        std::string_view text;
        e = v.get_string().get(text);
        m.f.kind = extra_field::type::string;
        m.f.s = std::string(text);
        break;
      }
      case od::json_type::number:
        // As the format reads numbers: digits alone are an unsigned integer,
        // anything with a sign, a fraction or an exponent a real.
        if (token.find_first_of("-.eE") == std::string_view::npos) {
          m.f.kind = extra_field::type::unsigned_integer;
          e = v.get_uint64().get(m.f.u);
        } else {
          m.f.kind = extra_field::type::real;
          e = v.get_double().get(m.f.r);
        }
        break;
      case od::json_type::boolean:
        m.f.kind = extra_field::type::boolean;
        e = v.get_bool().get(m.f.b);
        break;
      case od::json_type::null:
        m.null = true;
        break;
      default:
        e = simdjson::INCORRECT_TYPE;  // the scanner refuses nested values before this
    }
    if (e) where.fail(m.at, simdjson_says(e));
    members.push_back(std::move(m));
  }
  auto find = [&](std::string_view name) -> const member* {
    for (const member& m : members) {
      if (m.name == name) return &m;
    }
    return nullptr;
  };
  const member* format = find("format");
  if (format->f.kind != extra_field::type::string || format->null || format->f.s != "gfsl-history") {
    where.fail(format->at, "expected \"format\":\"gfsl-history\"");
  }
  const member* version = find("version");
  if (!version) where.fail(0, "expected a \"version\" member in the metadata line");
  if (version->null || version->f.kind != extra_field::type::unsigned_integer || version->f.u != json_version) {
    where.fail(version->at, "expected \"version\":" + std::to_string(json_version) + " (the only version this reader knows)");
  }
  t.version = json_version;
  for (const member& m : members) {
    if (m.name == "format" || m.name == "version") continue;
    bool name_ok = !m.name.empty() && m.name.size() <= 64;
    for (char c : m.name) name_ok = name_ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
    if (!name_ok) where.fail(m.at, "expected metadata names of 1 to 64 of a-z, 0-9 and _, found \"" + m.f.name + "\"");
    if (m.null) where.fail(m.at, "expected a string, number or boolean for \"" + m.f.name + "\", found null");
    if (std::string e = apply_field(t.header, m.f); !e.empty()) where.fail(m.at, e);
  }
  return true;
}

// One range of the file, [begin, end), starting at a line's start: its
// records, the successful deletes among them without a value (indices within
// the range), its line count, and the first error.
struct range_result {
  std::vector<model::op_record> history;
  std::vector<std::uint32_t> unrecorded_values;
  std::vector<std::uint8_t> op_codes;       // read with an operation table
  std::vector<std::string> ignored_members;
  std::uint64_t lines = 0;
  std::optional<line_error> error;        // a refused line
  std::optional<std::string> read_error;  // the file could not be read
};

// `header`: the range that starts the file, whose first line may be the
// metadata line (its fields go there); null for the others.
// `in`: positioned at `begin`; `end`: where the range stops (a stream: no end
// but its own).
// `choose` (the range that starts the file only): picks `ops` from the
// metadata line, before the first record.
void read_range(input& in, std::uint64_t begin, std::uint64_t end, trace* header, range_result& out,
                std::atomic<std::uint64_t>* bytes_read, const operation_table* ops, const model_chooser* choose = nullptr) {
  try {
    // Room for as many records as the range could hold (a record line is
    // over 64 bytes): reserved, not touched, so it costs address space, not
    // memory, and the records are never copied while they come in. A stream
    // of unknown length grows as it comes.
    if (in.regular()) out.history.reserve(static_cast<std::size_t>(std::min<std::uint64_t>((end - begin) / 64 + 1, 0xFFFFFFFFull)));
    // simdjson reads up to SIMDJSON_PADDING bytes past a line's end: every
    // line parsed lies in `buf` with at least that much after it.
    std::vector<char> buf(block_bytes + simdjson::SIMDJSON_PADDING);
    record_parser records;
    position where;
    std::uint64_t buf_offset = begin;  // file offset of buf[0]
    std::size_t carry = 0;             // bytes of an unfinished line at buf[0]
    bool first = header != nullptr;
    auto take_line = [&](std::size_t from, std::size_t length) {
      const std::string_view line(buf.data() + from, length);
      const std::size_t capacity = buf.size() - from;
      where.line_start = buf_offset + from;
      ++where.line;
      if (first) {
        first = false;
        const bool metadata = parse_metadata(where, line, capacity, records.parser(), *header);
        if (choose) {
          ops = (*choose)(header->header);
          choose = nullptr;
        }
        if (metadata) return;
      }
      model::op_record r;
      bool value_known = false;
      refusal why;
      std::uint8_t code = 0;
      if (!records.parse(line, capacity, r, value_known, why, ops, code, out.ignored_members)) refuse(where, line, why, false);
      if (ops) out.op_codes.push_back(code);
      if (out.history.size() == 0xFFFFFFFFull) where.fail(0, "expected at most 4294967295 records");
      if (!value_known && r.op.kind == op_kind::remove && r.ok && !r.pending()) {
        out.unrecorded_values.push_back(static_cast<std::uint32_t>(out.history.size()));
      }
      out.history.push_back(r);
    };
    auto too_long = [&](std::size_t from) {
      where.line_start = buf_offset + from;
      ++where.line;
      where.fail(0, "expected a line of at most 1 MiB");
    };
    for (;;) {
      const std::uint64_t left = end - (buf_offset + carry);
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(block_bytes - carry, left));
      const std::size_t n = want ? in.read(buf.data() + carry, want) : 0;
      const std::size_t len = carry + n;
      if (bytes_read) bytes_read->fetch_add(n, std::memory_order_relaxed);
      std::memset(buf.data() + len, 0, simdjson::SIMDJSON_PADDING);
      std::size_t pos = 0;
      while (pos < len) {
        const char* nl = static_cast<const char*>(std::memchr(buf.data() + pos, '\n', len - pos));
        if (!nl) break;
        const std::size_t length = static_cast<std::size_t>(nl - (buf.data() + pos));
        if (length > max_line) too_long(pos);
        take_line(pos, length);
        pos += length + 1;
      }
      if (len - pos > max_line) too_long(pos);
      if (n == 0) {
        if (pos < len) take_line(pos, len - pos);  // the last line, without a newline
        break;
      }
      carry = len - pos;
      std::memmove(buf.data(), buf.data() + pos, carry);
      buf_offset += pos;
    }
    out.lines = where.line;
  } catch (const line_error& e) {
    out.error = e;
  } catch (const trace_error& e) {
    out.read_error = e.what();
  } catch (const std::bad_alloc&) {
    // Said as every other command says it (gfsl check: FILE: out of memory).
    out.read_error = in.name() + ": out of memory";
  } catch (const std::exception& e) {
    out.read_error = in.name() + ": byte " + std::to_string(begin) + ": cannot read: " + e.what();
  }
}

// The ranges' records in order, or the first range's error with its line
// number counted from the start of the file.
trace join_ranges(const std::string& path, std::uint64_t size, std::vector<range_result>& ranges, trace t) {
  std::uint64_t lines_before = 0;
  std::size_t records = 0;
  for (const range_result& r : ranges) {
    if (r.read_error) throw trace_error(*r.read_error);
    if (r.error) {
      throw trace_error(path + ": byte " + std::to_string(r.error->byte) + " (line " + std::to_string(lines_before + r.error->range_line) +
                        "): " + r.error->what);
    }
    lines_before += r.lines;
    records += r.history.size();
  }
  if (lines_before == 0) throw trace_error(path + ": byte 0: expected a JSON line, found an empty file");
  if (records > 0xFFFFFFFFull) throw trace_error(path + ": byte " + std::to_string(size) + ": expected at most 4294967295 records");
  t.history = std::move(ranges[0].history);
  t.unrecorded_values = std::move(ranges[0].unrecorded_values);
  t.op_codes = std::move(ranges[0].op_codes);
  for (const range_result& r : ranges) {
    for (const std::string& name : r.ignored_members) {
      if (t.ignored_members.size() < 8 && std::find(t.ignored_members.begin(), t.ignored_members.end(), name) == t.ignored_members.end()) {
        t.ignored_members.push_back(name);
      }
    }
  }
  for (std::size_t k = 1; k < ranges.size(); ++k) {
    t.op_codes.insert(t.op_codes.end(), ranges[k].op_codes.begin(), ranges[k].op_codes.end());
    const auto offset = static_cast<std::uint32_t>(t.history.size());
    for (std::uint32_t i : ranges[k].unrecorded_values) t.unrecorded_values.push_back(offset + i);
    t.history.insert(t.history.end(), ranges[k].history.begin(), ranges[k].history.end());
    std::vector<model::op_record>().swap(ranges[k].history);
  }
  return t;
}

}  // namespace

// The file is cut into ranges at line starts, one per core (ranges of at
// least 16 MiB), read in parallel and joined in order: a refused line is
// reported from the first range that has one, so the error is the one a
// reader from the start would meet, with its line number.
trace read_json(const std::string& path, unsigned ranges_wanted, std::atomic<std::uint64_t>* bytes_read, const operation_table* ops,
                const model_chooser* choose) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw trace_error(path + ": cannot open: " + errno_text());
  const std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  constexpr std::uint64_t min_range = std::uint64_t{16} << 20;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::uint64_t parts = ranges_wanted ? ranges_wanted
                                            : std::max<std::uint64_t>(1, std::min<std::uint64_t>(std::min(cores, 8u), size / min_range));
  std::vector<std::uint64_t> cuts{0};
  if (parts > 1) {
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) throw trace_error(path + ": cannot open: " + errno_text());
    for (std::uint64_t k = 1; k < parts; ++k) {
      // The first line start after the k-th share of the file, if any.
      std::uint64_t at = size * k / parts;
      if (at <= cuts.back() || fseeko(f.get(), static_cast<off_t>(at), SEEK_SET) != 0) continue;
      for (int c; (c = std::fgetc(f.get())) != EOF;) {
        ++at;
        if (c == '\n') break;
      }
      if (at < size) cuts.push_back(at);
    }
  }
  cuts.push_back(size);
  std::vector<range_result> ranges(cuts.size() - 1);
  trace t;
  t.format = trace_format::json;
  if (choose && ranges.size() > 1) {
    // Every range needs the operations before it starts: the first line
    // alone is read first, and picks them.
    range_result first;
    trace scratch;
    const model_chooser pick = [&](const trace_header& h) { return ops = (*choose)(h); };
    std::uint64_t first_end = 0;  // past the first line's newline (or where the 1 MiB a line may have ends)
    {
      std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
      if (!f) throw trace_error(path + ": cannot open: " + errno_text());
      for (int c; first_end < cuts[1] && first_end <= block_bytes && (c = std::fgetc(f.get())) != EOF;) {
        ++first_end;
        if (c == '\n') break;
      }
    }
    {
      input in(path);
      read_range(in, 0, first_end, &scratch, first, nullptr, nullptr, &pick);
    }
    if (first.read_error) throw trace_error(*first.read_error);
    choose = nullptr;
  }
  {
    auto read_part = [&](std::size_t k) {
      try {
        input in(path);
        if (cuts[k] != 0) in.seek(cuts[k]);
        read_range(in, cuts[k], cuts[k + 1], k == 0 ? &t : nullptr, ranges[k], bytes_read, ops, k == 0 ? choose : nullptr);
      } catch (const trace_error& e) {
        ranges[k].read_error = e.what();
      }
    };
    // A range whose thread cannot be started (a thread or process limit) is
    // read here, after the others: slower, never lost.
    std::vector<std::thread> readers;
    std::vector<std::size_t> left_here;
    for (std::size_t k = 1; k < ranges.size(); ++k) {
      try {
        readers.emplace_back(read_part, k);
      } catch (const std::system_error&) {
        left_here.push_back(k);
      }
    }
    read_part(0);
    for (std::thread& r : readers) r.join();
    for (std::size_t k : left_here) read_part(k);
  }
  return join_ranges(path, size, ranges, std::move(t));
}

trace read_json(input& in, std::atomic<std::uint64_t>* bytes_read, const operation_table* ops, const model_chooser* choose) {
  std::vector<range_result> ranges(1);
  trace t;
  t.format = trace_format::json;
  read_range(in, 0, UINT64_MAX, &t, ranges[0], bytes_read, ops, choose);
  return join_ranges(in.name(), in.position(), ranges, std::move(t));
}

}  // namespace detail

void write_trace_json(const std::string& path, const trace_header& header, const std::vector<model::op_record>& history,
                      const std::vector<std::uint32_t>& unrecorded_values) {
  output_file f(path);
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
      f.write(out.data(), out.size());
      out.clear();
    }
  }
  f.write(out.data(), out.size());
  f.commit();
}

}  // namespace gfsl::traces
