// The binary form of an ordered map's history (traces/FORMAT.md, "Ordered
// maps in the binary form"): the container of every binary trace (preamble,
// sections with checksums over head and payload, an end section with the
// count and chain of the sections before it), with a record section of its
// own (type 7, 56-byte records: the handle, a range's end and its pair
// count) and the ranges' answers in one section of 8-byte pairs (type 8).
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <memory>

#include "linearizability/range_model.hpp"
#include "traces/json.hpp"
#include "traces/trace.hpp"

namespace gfsl::lin::ranges {

namespace {

constexpr unsigned char magic[8] = {0x89, 'G', 'F', 'S', 'L', 'T', 'R', '\n'};
constexpr std::uint32_t ordered_version = 3;
enum : std::uint32_t { section_end = 0, section_header = 1, section_ordered_history = 7, section_range_pairs = 8 };
constexpr std::uint32_t optional_sections = 0x80000000u;
constexpr std::size_t record_bytes = 56;
constexpr std::uint8_t flag_value_not_recorded = 1, flag_ok_not_recorded = 2;

void put_u32(std::vector<unsigned char>& o, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) o.push_back(static_cast<unsigned char>(v >> (8 * i)));
}
void put_u64(std::vector<unsigned char>& o, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) o.push_back(static_cast<unsigned char>(v >> (8 * i)));
}
std::uint32_t get_u32(const unsigned char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | p[i];
  return v;
}
std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

std::uint8_t op_code(range_op o) { return static_cast<std::uint8_t>(o); }

bool field_name_ok(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (char c : n) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// The header: the metadata line's members but "format" and "version" (the
// form says those), as typed fields, "model" among them.
std::vector<unsigned char> header_payload(const range_history& h) {
  struct field {
    std::string name;
    traces::json::value v;
  };
  std::vector<field> fields;
  bool has_model = false;
  if (!h.metadata.empty()) {
    traces::json::parse_failure pf;
    std::string problem;
    const bool parsed = traces::json::parse_object(h.metadata, pf, [&](const std::string& name, const traces::json::value& v) -> std::string {
      if (name == "format" || name == "version") return {};
      if (!field_name_ok(name)) return "a header field name of 1 to 64 characters a-z, 0-9, _ (the binary header's), found \"" + name + "\"";
      if (v.k == traces::json::value::kind::null) return "a value for \"" + name + "\" (the binary header holds no null)";
      if (name == "model") {
        has_model = true;
        if (v.k != traces::json::value::kind::string || v.s != range_model_name(h.model)) return "\"model\" to be \"" + std::string(range_model_name(h.model)) + "\"";
      }
      fields.push_back({name, v});
      return {};
    });
    if (!parsed) throw traces::trace_error("cannot write the metadata line in the binary form: byte " + std::to_string(pf.offset) + ": expected " + pf.expected);
  }
  if (!has_model) {
    traces::json::value v;
    v.k = traces::json::value::kind::string;
    v.s = range_model_name(h.model);
    fields.push_back({"model", v});
  }
  std::vector<unsigned char> p;
  put_u32(p, static_cast<std::uint32_t>(fields.size()));
  for (const field& f : fields) {
    p.push_back(static_cast<unsigned char>(f.name.size()));
    p.insert(p.end(), f.name.begin(), f.name.end());
    switch (f.v.k) {
      case traces::json::value::kind::boolean:
        p.push_back(4);
        p.push_back(f.v.b ? 1 : 0);
        break;
      case traces::json::value::kind::unsigned_integer:
        p.push_back(1);
        put_u64(p, f.v.u);
        break;
      case traces::json::value::kind::real: {
        p.push_back(2);
        std::uint64_t bits = 0;
        std::memcpy(&bits, &f.v.r, 8);
        put_u64(p, bits);
        break;
      }
      default:
        p.push_back(3);
        put_u32(p, static_cast<std::uint32_t>(f.v.s.size()));
        p.insert(p.end(), f.v.s.begin(), f.v.s.end());
        break;
    }
  }
  return p;
}

struct section_writer {
  std::vector<unsigned char> out;
  std::vector<unsigned char> chain;  // the stored checksums, in order
  std::uint64_t sections = 0;
  void section(std::uint32_t type, const std::vector<unsigned char>& payload) {
    put_u32(out, type);
    put_u32(out, 0);
    put_u64(out, payload.size());
    out.insert(out.end(), payload.begin(), payload.end());
    const std::uint64_t sum = traces::section_checksum(type, payload.data(), payload.size());
    put_u64(out, sum);
    put_u64(chain, sum);
    ++sections;
  }
  void end() {
    std::vector<unsigned char> p;
    put_u64(p, sections);
    put_u64(p, traces::section_checksum(chain.data(), chain.size()));
    section(section_end, p);
  }
};

// Reads the form from bytes held in memory, every length checked against
// what is there before it is used.
class binary_reader {
 public:
  binary_reader(const std::string& name, const unsigned char* b, std::size_t n) : name_(name), b_(b), n_(n) {}
  [[noreturn]] void fail(std::uint64_t at, const std::string& what) const {
    throw traces::trace_error(name_ + ": byte " + std::to_string(at) + ": " + what);
  }
  void need(std::uint64_t at, std::uint64_t bytes, const char* what) const {
    if (at > n_ || bytes > n_ - at) {
      fail(at, std::string("expected ") + what + " (" + std::to_string(bytes) + " bytes), found the end of the file after " +
                   std::to_string(at > n_ ? 0 : n_ - at) + " more");
    }
  }
  const unsigned char* at(std::uint64_t p) const { return b_ + p; }
  std::uint64_t size() const { return n_; }

 private:
  std::string name_;
  const unsigned char* b_;
  std::size_t n_;
};

const char* status_names = "0 ok, 1 key out of range, 2 pool exhausted, 3 stopped, 4 corrupt";

// Fills h.metadata from the header's fields; returns the model it names ("" for none).
std::string parse_header(const binary_reader& r, std::uint64_t base, std::uint64_t length, range_history& h) {
  std::uint64_t p = base;
  const std::uint64_t end = base + length;
  auto need = [&](std::uint64_t n, const char* what) {
    if (n > end - p) r.fail(p, std::string("expected ") + what + " (" + std::to_string(n) + " bytes), found the end of the header section after " + std::to_string(end - p) + " more");
  };
  need(4, "the header's field count");
  const std::uint32_t count = get_u32(r.at(p));
  p += 4;
  std::string model, line = "{\"format\":\"gfsl-history\",\"version\":1";
  for (std::uint32_t k = 0; k < count; ++k) {
    need(1, "a field name's length");
    const std::uint8_t len = *r.at(p);
    if (len < 1 || len > 64) r.fail(p, "expected a field name of 1 to 64 bytes, found a length of " + std::to_string(len));
    ++p;
    need(len, "a field name");
    const std::string name(reinterpret_cast<const char*>(r.at(p)), len);
    if (!field_name_ok(name)) r.fail(p, "expected a field name of a-z, 0-9 and _");
    p += len;
    need(1, "a field type");
    const std::uint8_t type = *r.at(p);
    const std::uint64_t value_at = ++p;
    line += ",";
    traces::json::append_string(line, name);
    line += ":";
    switch (type) {
      case 1:
        need(8, "an unsigned field");
        line += std::to_string(get_u64(r.at(p)));
        p += 8;
        break;
      case 2: {
        need(8, "a real field");
        const std::uint64_t bits = get_u64(r.at(p));
        double d;
        std::memcpy(&d, &bits, 8);
        if (!(d - d == 0)) r.fail(value_at, "expected a finite real");
        traces::json::append_real(line, d);
        p += 8;
        break;
      }
      case 3: {
        need(4, "a string field's length");
        const std::uint32_t n = get_u32(r.at(p));
        p += 4;
        need(n, "a string field");
        const std::string s(reinterpret_cast<const char*>(r.at(p)), n);
        if (!traces::json::valid_utf8(s) || s.find('\0') != std::string::npos) r.fail(p, "expected UTF-8 text without NUL in a string field");
        if (name == "model") model = s;
        traces::json::append_string(line, s);
        p += n;
        break;
      }
      case 4:
        need(1, "a boolean field");
        if (*r.at(p) > 1) r.fail(p, "expected a boolean field of 0 or 1, found " + std::to_string(*r.at(p)));
        line += *r.at(p) ? "true" : "false";
        p += 1;
        break;
      default: r.fail(value_at - 1, "expected a field type 1 (unsigned), 2 (real), 3 (string) or 4 (boolean), found " + std::to_string(type));
    }
    if (name == "model" && type != 3) r.fail(value_at - 1, "expected \"model\" to be a string field");
  }
  if (p != end) r.fail(p, "expected the end of the header section after its " + std::to_string(count) + " fields, found " + std::to_string(end - p) + " more bytes");
  h.metadata = line + "}";
  return model;
}

void parse_record(const binary_reader& r, std::uint64_t at, range_model m, range_history& h, std::uint64_t& pairs_wanted) {
  const unsigned char* b = r.at(at);
  range_record x;
  x.call = get_u64(b);
  x.ret = get_u64(b + 8);
  x.team = get_u32(b + 16);
  x.key = get_u32(b + 20);
  x.value = get_u32(b + 24);
  const std::uint8_t op = b[28], ok = b[29], st = b[30], flags = b[31];
  x.handle = get_u64(b + 32);
  x.hi = get_u64(b + 40);
  const std::uint32_t count = get_u32(b + 48);
  if (x.call == model::no_stamp) r.fail(at, "expected a call stamp below 2^64 - 1");
  if (x.ret != model::no_stamp && x.ret < x.call) r.fail(at + 8, "expected the return stamp at or after the call stamp " + std::to_string(x.call) + ", found " + std::to_string(x.ret));
  if (op > op_code(range_op::snapshot) || (op == op_code(range_op::upsert) && m != range_model::ordered_upsert_map)) {
    r.fail(at + 28, std::string("expected an op code 0 insert, 1 erase, 2 find, ") + (m == range_model::ordered_upsert_map ? "3 upsert, " : "") +
                        "4 range or 5 snapshot (model " + range_model_name(m) + "), found " + std::to_string(op));
  }
  x.op = static_cast<range_op>(op);
  if (ok > 1) r.fail(at + 29, "expected ok 0 or 1, found " + std::to_string(ok));
  x.ok = ok == 1;
  if (st > static_cast<unsigned>(status::corrupt)) r.fail(at + 30, std::string("expected a status (") + status_names + "), found " + std::to_string(st));
  x.st = static_cast<status>(st);
  if (flags & ~(flag_value_not_recorded | flag_ok_not_recorded)) r.fail(at + 31, "expected flag bits 0 and 1 only, found " + std::to_string(flags));
  if ((flags & flag_ok_not_recorded) && x.op != range_op::upsert) r.fail(at + 31, "expected flag bit 1 (ok not recorded) in an upsert only");
  if ((flags & flag_value_not_recorded) && x.op != range_op::erase && x.op != range_op::find) {
    r.fail(at + 31, "expected flag bit 0 (value not recorded) in an erase or find only");
  }
  x.ok_known = !(flags & flag_ok_not_recorded);
  x.value_known = !(flags & flag_value_not_recorded);
  if (get_u32(b + 52) != 0) r.fail(at + 52, "expected 0 in the record's reserved word");
  const bool done = !x.pending();
  if (x.op == range_op::erase && x.handle != no_handle) r.fail(at + 32, "expected no handle (2^64 - 1) in an erase (only find and range read at one)");
  if (x.op == range_op::find && done && x.ok && !x.value_known) r.fail(at + 31, "expected the value found in a find that found one (flag bit 0 clear)");
  if (x.op == range_op::snapshot && done && x.handle == no_handle) r.fail(at + 32, "expected the handle a snapshot that returned returned");
  if (x.op == range_op::range) {
    if (x.hi > 0x100000000ull || x.hi < x.key) r.fail(at + 40, "expected the range's end at or above its start " + std::to_string(x.key) + " and at most 2^32, found " + std::to_string(x.hi));
    if (!x.ok) r.fail(at + 29, "expected ok 1 in a range");
    x.pairs_from = static_cast<std::uint32_t>(pairs_wanted);
    x.pairs_count = count;
    pairs_wanted += count;
  } else if (x.hi != 0 || count != 0) {
    r.fail(at + 40, "expected a range end and a pair count of 0 in a record that is not a range");
  }
  h.ops.push_back(x);
}

}  // namespace

std::vector<unsigned char> range_trace_bytes(const range_history& h) {
  if (h.ops.size() > 0xFFFFFFFFull) throw traces::trace_error("cannot write more than 4294967295 records");
  section_writer w;
  w.out.assign(magic, magic + 8);
  put_u32(w.out, ordered_version);
  put_u32(w.out, 0);
  w.section(section_header, header_payload(h));
  std::vector<unsigned char> p;
  p.reserve(8 + record_bytes * h.ops.size());
  put_u64(p, h.ops.size());
  std::uint64_t pairs = 0;
  for (const range_record& r : h.ops) {
    put_u64(p, r.call);
    put_u64(p, r.ret);
    put_u32(p, r.team);
    put_u32(p, r.key);
    put_u32(p, r.value);
    p.push_back(op_code(r.op));
    p.push_back(r.ok ? 1 : 0);
    p.push_back(static_cast<unsigned char>(r.st));
    p.push_back(static_cast<unsigned char>((r.value_known ? 0 : flag_value_not_recorded) | (r.ok_known ? 0 : flag_ok_not_recorded)));
    put_u64(p, r.handle);
    const bool range = r.op == range_op::range;
    put_u64(p, range ? r.hi : 0);
    put_u32(p, range ? r.pairs_count : 0);
    put_u32(p, 0);
    pairs += range ? r.pairs_count : 0;
  }
  w.section(section_ordered_history, p);
  p.clear();
  p.reserve(8 + 8 * pairs);
  put_u64(p, pairs);
  for (const range_record& r : h.ops) {
    if (r.op != range_op::range) continue;
    for (std::uint32_t k = 0; k < r.pairs_count; ++k) {
      put_u32(p, h.pairs[r.pairs_from + k].first);
      put_u32(p, h.pairs[r.pairs_from + k].second);
    }
  }
  w.section(section_range_pairs, p);
  w.end();
  return std::move(w.out);
}

void write_range_trace_binary(const std::string& path, const range_history& h) {
  std::vector<unsigned char> bytes;
  try {
    bytes = range_trace_bytes(h);
  } catch (const traces::trace_error& e) {
    throw traces::trace_error(path + ": " + e.what());
  }
  traces::output_file out(path);
  out.write(bytes.data(), bytes.size());
  out.commit();
}

range_history read_range_binary(const std::string& name, const unsigned char* bytes, std::size_t size, range_model m) {
  const binary_reader r(name, bytes, size);
  range_history h;
  h.model = m;
  h.binary = true;
  r.need(0, 16, "the preamble (magic, version, reserved word)");
  if (std::memcmp(bytes, magic, 8) != 0) r.fail(0, "expected the magic bytes 89 47 46 53 4c 54 52 0a of a binary gfsl trace");
  if (const std::uint32_t v = get_u32(bytes + 8); v != ordered_version) {
    r.fail(8, "expected format version 3 (an ordered map's trace has no other), found " + std::to_string(v));
  }
  if (get_u32(bytes + 12) != 0) r.fail(12, "expected 0 in the reserved word");
  std::uint64_t p = 16, sections = 0, pairs_wanted = 0;
  bool have_header = false, have_history = false, have_pairs = false;
  std::vector<unsigned char> chain;
  for (;;) {
    const std::uint64_t at = p;
    r.need(at, 16, "a section head (type, reserved word, length)");
    const std::uint32_t type = get_u32(r.at(at));
    if (get_u32(r.at(at + 4)) != 0) r.fail(at + 4, "expected 0 in the section's reserved word");
    const std::uint64_t length = get_u64(r.at(at + 8));
    const std::uint64_t payload = at + 16, left = size - payload;
    if (left < 8 || length > left - 8) {
      r.fail(at + 8, "expected a section length that fits in the file (at most " + std::to_string(left < 8 ? 0 : left - 8) +
                         " bytes before the section's checksum), found " + std::to_string(length));
    }
    const std::uint64_t stored = get_u64(r.at(payload + length));
    if (const std::uint64_t sum = traces::section_checksum(type, r.at(payload), length); sum != stored) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "expected the checksum %016llx of the section at byte %llu, found %016llx", static_cast<unsigned long long>(sum),
                    static_cast<unsigned long long>(at), static_cast<unsigned long long>(stored));
      r.fail(payload + length, buf);
    }
    if (sections == 0 && type != section_header) r.fail(at, "expected the header section (type 1) first, found type " + std::to_string(type));
    switch (type) {
      case section_header:
        if (have_header) r.fail(at, "expected one header section, found a second");
        have_header = true;
        if (std::string named = parse_header(r, payload, length, h); !named.empty() && named != range_model_name(m)) {
          r.fail(payload, "expected the trace's \"model\" to be " + std::string(range_model_name(m)) + " (--model), found \"" + named.substr(0, 64) + "\"");
        }
        break;
      case section_ordered_history: {
        if (have_history) r.fail(at, "expected one ordered history section (type 7), found a second");
        have_history = true;
        if (length < 8) r.fail(at + 8, "expected an ordered history section of at least 8 bytes (its record count), found " + std::to_string(length));
        const std::uint64_t count = get_u64(r.at(payload));
        if ((length - 8) % record_bytes != 0 || (length - 8) / record_bytes != count) {
          r.fail(payload, "expected a record count that fills the section (" + std::to_string((length - 8) / record_bytes) + " records of 56 bytes in " +
                              std::to_string(length) + " bytes), found " + std::to_string(count));
        }
        if (count > 0xFFFFFFFEull) r.fail(payload, "expected fewer than 2^32 - 1 records, found " + std::to_string(count));
        h.ops.reserve(static_cast<std::size_t>(count));
        for (std::uint64_t k = 0; k < count; ++k) parse_record(r, payload + 8 + k * record_bytes, m, h, pairs_wanted);
        break;
      }
      case section_range_pairs: {
        if (!have_history) r.fail(at, "expected the ordered history section (type 7) before the range pairs (type 8)");
        if (have_pairs) r.fail(at, "expected one range pairs section (type 8), found a second");
        have_pairs = true;
        if (length < 8) r.fail(at + 8, "expected a range pairs section of at least 8 bytes (its pair count), found " + std::to_string(length));
        const std::uint64_t count = get_u64(r.at(payload));
        if ((length - 8) % 8 != 0 || (length - 8) / 8 != count) {
          r.fail(payload, "expected a pair count that fills the section (" + std::to_string((length - 8) / 8) + " pairs of 8 bytes), found " + std::to_string(count));
        }
        if (count != pairs_wanted) {
          r.fail(payload, "expected the " + std::to_string(pairs_wanted) + " pairs the ranges' pair counts add up to, found " + std::to_string(count));
        }
        h.pairs.resize(static_cast<std::size_t>(count));
        for (std::uint64_t k = 0; k < count; ++k) {
          h.pairs[k] = {get_u32(r.at(payload + 8 + 8 * k)), get_u32(r.at(payload + 12 + 8 * k))};
        }
        for (std::uint32_t i = 0; i < h.ops.size(); ++i) {
          const range_record& x = h.ops[i];
          if (x.op != range_op::range) continue;
          for (std::uint32_t k = 0; k < x.pairs_count; ++k) {
            const auto& kv = h.pairs[x.pairs_from + k];
            const std::uint64_t pair_at = payload + 8 + 8 * static_cast<std::uint64_t>(x.pairs_from + k);
            if (kv.first < x.key || kv.first >= x.hi) r.fail(pair_at, "expected every pair's key in [lo, hi) of its range, record " + std::to_string(i));
            if (k && kv.first <= h.pairs[x.pairs_from + k - 1].first) {
              r.fail(pair_at, "expected the pairs of record " + std::to_string(i) + " in increasing key order, each key once");
            }
          }
        }
        break;
      }
      case section_end: {
        if (!have_pairs) r.fail(at, "expected the ordered history (type 7) and range pairs (type 8) sections before the end section");
        if (length != 16) r.fail(at + 8, "expected an end section of length 16, found " + std::to_string(length));
        if (get_u64(r.at(payload)) != sections) {
          r.fail(payload, "expected the " + std::to_string(get_u64(r.at(payload))) + " sections the end section counts before it, found " + std::to_string(sections) +
                              " (a section was removed or added)");
        }
        if (get_u64(r.at(payload + 8)) != traces::section_checksum(chain.data(), chain.size())) {
          r.fail(payload + 8, "expected the sections whose checksums the end section chains, in their order; found others (a section was replaced, moved or repeated)");
        }
        if (payload + 24 != size) r.fail(payload + 24, "expected the end of the file after the end section, found " + std::to_string(size - payload - 24) + " more bytes");
        return h;
      }
      default:
        if (type < optional_sections) {
          r.fail(at, "expected a section type 0, 1, 7 or 8 (an ordered map's trace), or an optional one (2^31 and above), found " + std::to_string(type));
        }
        break;  // optional: its checksum was checked, its content is not needed
    }
    put_u64(chain, stored);
    ++sections;
    p = payload + length + 8;
    if (p == size) r.fail(p, "expected a section head (type, reserved word, length), found the end of the file (the trace is cut: no end section)");
  }
}

std::string binary_range_model(const std::string& path) {
  // Regular files only: reading a pipe or a FIFO here would take its first
  // bytes away from the reader that comes next.
  struct stat st;
  if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return "";
  unsigned char head[32];
  if (std::fread(head, 1, sizeof head, f.get()) != sizeof head || std::memcmp(head, magic, 8) != 0) return "";
  if (get_u32(head + 16) != section_header) return "";
  const std::uint64_t length = get_u64(head + 24);
  if (length > (1u << 20)) return "";
  std::vector<unsigned char> payload(static_cast<std::size_t>(length));
  if (std::fread(payload.data(), 1, payload.size(), f.get()) != payload.size()) return "";
  // Fields: u32 count, then name length, name, type, value.
  std::size_t p = 4;
  if (payload.size() < 4) return "";
  for (std::uint32_t k = 0, n = get_u32(payload.data()); k < n; ++k) {
    if (p >= payload.size()) return "";
    const std::size_t len = payload[p++];
    if (len > payload.size() - p || payload.size() - p - len < 1) return "";
    const std::string name(reinterpret_cast<const char*>(&payload[p]), len);
    p += len;
    const std::uint8_t type = payload[p++];
    std::size_t value = type == 1 || type == 2 ? 8 : type == 4 ? 1 : 0;
    if (type == 3) {
      if (payload.size() - p < 4) return "";
      value = get_u32(&payload[p]);
      p += 4;
    }
    if (value > payload.size() - p) return "";
    if (name == "model" && type == 3) {
      const std::string s(reinterpret_cast<const char*>(&payload[p]), value);
      range_model rm;
      return parse_range_model(s, rm) ? s : "";
    }
    p += value;
  }
  return "";
}

}  // namespace gfsl::lin::ranges
