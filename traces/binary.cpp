// The binary form (layout in traces/FORMAT.md): a preamble, then sections of
// (type, length, payload, checksum), ending with an end section.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "traces/internal.hpp"
#include "traces/json.hpp"
#include "traces/trace.hpp"

namespace gfsl::traces {

namespace detail {

namespace {

enum section_type : std::uint32_t {
  section_end = 0,
  section_header = 1,
  section_history = 2,
  section_final_snapshot = 3,    // u32 chunk, u32 capacity, u64 stamp, u64 word count, the words
  section_initial_snapshot = 4,  // the same, when the event log began
  section_events = 5,            // u64 count, then 40-byte events
  section_history_block = 6,     // as history; any number of them, their records in order (a recording written as it goes)
};
constexpr std::size_t event_bytes = 40;
constexpr std::size_t preamble_bytes = 16;
constexpr std::size_t section_head_bytes = 16;
constexpr std::size_t record_bytes = 32;
constexpr std::size_t block_records = 32768;  // 1 MiB at a time
// Version 3: types from here up are optional (a reader that does not know
// one checks its checksum and skips it); any other unknown type is refused.
constexpr std::uint32_t optional_sections = 0x80000000u;
constexpr std::uint64_t end_length(std::uint32_t version) { return version >= 3 ? 16 : 0; }

const char* section_name(std::uint32_t t) {
  switch (t) {
    case section_end: return "end";
    case section_header: return "header";
    case section_history: return "history";
    case section_final_snapshot: return "final snapshot";
    case section_initial_snapshot: return "initial snapshot";
    case section_events: return "events";
    case section_history_block: return "history block";
  }
  return "unknown";
}

void put_u32(unsigned char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void put_u64(unsigned char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
std::uint32_t get_u32(const unsigned char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// One 32-byte history record (traces/FORMAT.md).
void encode_record(const model::op_record& r, bool unrecorded, unsigned char* rec) {
  put_u64(rec, r.call);
  put_u64(rec + 8, r.ret);
  put_u32(rec + 16, r.team);
  put_u32(rec + 20, r.op.key);
  put_u32(rec + 24, unrecorded ? 0 : r.op.kind == op_kind::insert ? r.op.value : r.value);
  rec[28] = static_cast<unsigned char>(r.op.kind);
  rec[29] = r.ok ? 1 : 0;
  rec[30] = static_cast<unsigned char>(r.st);
  rec[31] = unrecorded ? 1 : 0;
}

// One 40-byte structural event, appended.
void encode_event(const invariants::structural_event& e, std::vector<unsigned char>& out) {
  unsigned char ev[40] = {};
  put_u64(ev, e.seq);
  put_u64(ev + 8, e.stamp);
  put_u64(ev + 16, e.value);
  put_u32(ev + 24, e.team);
  put_u32(ev + 28, e.chunk);
  ev[32] = static_cast<unsigned char>(e.kind);
  ev[33] = e.lane;
  out.insert(out.end(), ev, ev + 40);
}

}  // namespace

// The section checksum: 8-byte little-endian words (the last one padded with
// zeros) through a step that is a bijection of the running value for each
// word and of each word for the running value, so any change confined to one
// word always changes the result; then the length, and a final mix.
class checksum {
 public:
  void update(const unsigned char* p, std::size_t n) {
    if (n == 0) return;  // p may be null then (an empty section's payload)
    length_ += n;
    if (fill_) {
      while (n && fill_ < 8) pending_[fill_++] = *p++, --n;
      if (fill_ < 8) return;
      step(get_u64(pending_));
      fill_ = 0;
    }
    for (; n >= 8; p += 8, n -= 8) step(get_u64(p));
    // fill_ is 0 here and n under 8.
    std::memcpy(pending_, p, n);
    fill_ = n;
  }
  std::uint64_t value() const {
    std::uint64_t h = h_;
    if (fill_) {
      unsigned char last[8] = {};
      std::memcpy(last, pending_, fill_);
      h = next(h, get_u64(last));
    }
    h ^= length_;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 33);
  }

 private:
  static std::uint64_t next(std::uint64_t h, std::uint64_t w) {
    h ^= w * 0x9E3779B97F4A7C15ull;
    h = (h << 29) | (h >> 35);
    return h * 0xC2B2AE3D27D4EB4Full;
  }
  void step(std::uint64_t w) { h_ = next(h_, w); }
  std::uint64_t h_ = 0x27D4EB2F165667C5ull;
  std::uint64_t length_ = 0;
  unsigned char pending_[8] = {};
  std::size_t fill_ = 0;
};

namespace {

// ---- writing ----

class writer {
 public:
  explicit writer(const std::string& path) : out_(path) { buf_.reserve(1 << 20); }
  void bytes(const unsigned char* p, std::size_t n) {
    if (in_section_) sum_.update(p, n);
    buf_.insert(buf_.end(), p, p + n);
    if (buf_.size() >= (1u << 20)) flush();
  }
  void u32(std::uint32_t v) {
    unsigned char b[4];
    put_u32(b, v);
    bytes(b, 4);
  }
  void u64(std::uint64_t v) {
    unsigned char b[8];
    put_u64(b, v);
    bytes(b, 8);
  }
  // Version 3: the checksum covers the section's head (type, reserved,
  // length) as well as its payload.
  void begin_section(std::uint32_t type, std::uint64_t length) {
    sum_ = checksum{};
    in_section_ = true;
    u32(type);
    u32(0);
    u64(length);
  }
  void end_section() {
    in_section_ = false;
    const std::uint64_t v = sum_.value();
    u64(v);
    unsigned char b[8];
    put_u64(b, v);
    chain_.update(b, 8);
    ++sections_;
  }
  // The end section of version 3: how many sections came before it and the
  // checksum of their checksums, in order.
  void end_of_trace() {
    const std::uint64_t sections = sections_, chain = chain_.value();
    begin_section(section_end, 16);
    u64(sections);
    u64(chain);
    end_section();
  }
  void close() {
    flush();
    out_.commit();
  }

 private:
  void flush() {
    out_.write(buf_.data(), buf_.size());
    buf_.clear();
  }
  output_file out_;
  std::vector<unsigned char> buf_;
  checksum sum_, chain_;
  std::uint64_t sections_ = 0;
  bool in_section_ = false;
};

std::vector<unsigned char> encode_header(const std::string& path, const trace_header& h) {
  const std::vector<extra_field> fields = header_fields(h);
  std::vector<unsigned char> out(4);
  put_u32(out.data(), static_cast<std::uint32_t>(fields.size()));
  for (const extra_field& f : fields) {
    if (f.name.empty() || f.name.size() > 64 ||
        !std::all_of(f.name.begin(), f.name.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; })) {
      throw trace_error(path + ": cannot write header field \"" + f.name + "\": names are 1 to 64 of a-z, 0-9, _");
    }
    out.push_back(static_cast<unsigned char>(f.name.size()));
    out.insert(out.end(), f.name.begin(), f.name.end());
    out.push_back(static_cast<unsigned char>(f.kind));
    unsigned char b[8];
    switch (f.kind) {
      case extra_field::type::unsigned_integer:
        put_u64(b, f.u);
        out.insert(out.end(), b, b + 8);
        break;
      case extra_field::type::real: {
        std::uint64_t bits;
        std::memcpy(&bits, &f.r, 8);
        put_u64(b, bits);
        out.insert(out.end(), b, b + 8);
        break;
      }
      case extra_field::type::string:
        if (!json::valid_utf8(f.s)) throw trace_error(path + ": cannot write header field \"" + f.name + "\": not UTF-8 text");
        if (f.s.size() > 0xFFFFFFFFu) throw trace_error(path + ": cannot write header field \"" + f.name + "\": too long");
        put_u32(b, static_cast<std::uint32_t>(f.s.size()));
        out.insert(out.end(), b, b + 4);
        out.insert(out.end(), f.s.begin(), f.s.end());
        break;
      case extra_field::type::boolean: out.push_back(f.b ? 1 : 0); break;
    }
  }
  return out;
}

}  // namespace

// ---- reading ----

namespace {

// The data ran out (a cut file, a writer stopped mid-way): the reader may
// keep what came before (traces/FORMAT.md, "Cut traces").
struct ended_early : trace_error {
  using trace_error::trace_error;
};

// Reads a file whose size is known (every length is checked against it
// before anything is read or allocated for it) or a stream (a pipe: lengths
// are checked against what has arrived, and payloads are read in blocks, so
// that memory grows only with the bytes that came).
class reader {
 public:
  reader(input& in, std::atomic<std::uint64_t>* bytes_read) : in_(in), bytes_read_(bytes_read) {}
  std::uint64_t pos() const { return pos_; }
  bool sized() const { return in_.regular(); }
  // Bytes left in a file of known size.
  std::uint64_t left() const { return in_.size() - pos_; }

  [[noreturn]] void fail(std::uint64_t at, const std::string& what) const {
    throw trace_error(in_.name() + ": byte " + std::to_string(at) + ": " + what);
  }
  [[noreturn]] void ran_out(std::uint64_t at, const std::string& what) const {
    throw ended_early(in_.name() + ": byte " + std::to_string(at) + ": " + what);
  }
  void read(unsigned char* into, std::size_t n, const char* what) {
    if (sized() && n > left()) {
      ran_out(pos_, std::string("expected ") + what + " (" + std::to_string(n) + " bytes), found the end of the file after " +
                        std::to_string(left()) + " more");
    }
    const std::size_t got = in_.read(into, n);
    if (got < n) {
      ran_out(pos_, std::string("expected ") + what + " (" + std::to_string(n) + " bytes), found the end of the " +
                        (sized() ? "file" : "input") + " after " + std::to_string(got) + " more");
    }
    pos_ += n;
    if (bytes_read_) bytes_read_->store(pos_, std::memory_order_relaxed);
  }
  // A payload of `n` bytes: on a stream, grown block by block as it arrives.
  std::vector<unsigned char> payload(std::uint64_t n, const char* what) {
    std::vector<unsigned char> out;
    if (sized()) {
      out.resize(static_cast<std::size_t>(n));  // checked against the file's size
      read(out.data(), out.size(), what);
      return out;
    }
    const std::uint64_t start = pos_;
    while (out.size() < n) {
      const std::size_t block = static_cast<std::size_t>(std::min<std::uint64_t>(n - out.size(), std::uint64_t{1} << 20));
      const std::size_t have = out.size();
      out.resize(have + block);
      const std::size_t got = in_.read(out.data() + have, block);
      pos_ += got;
      if (got < block) {
        ran_out(start, std::string("expected ") + what + " (" + std::to_string(n) + " bytes), found the end of the input after " +
                        std::to_string(pos_ - start) + " more");
      }
      if (bytes_read_) bytes_read_->store(pos_, std::memory_order_relaxed);
    }
    return out;
  }
  // Whether anything follows (a file: its size; a stream: one more byte).
  bool at_end() {
    if (sized()) return left() == 0;
    unsigned char c;
    return in_.read(&c, 1) == 0;
  }
  std::uint32_t u32(const char* what) {
    unsigned char b[4];
    read(b, 4, what);
    return get_u32(b);
  }
  std::uint64_t u64(const char* what) {
    unsigned char b[8];
    read(b, 8, what);
    return get_u64(b);
  }

 private:
  input& in_;
  std::uint64_t pos_ = 0;
  std::atomic<std::uint64_t>* bytes_read_;
};

// Bounds-checked walk over a section held in memory.
struct cursor {
  const reader& r;
  const std::vector<unsigned char>& b;
  std::uint64_t base;  // file offset of b[0]
  std::size_t at = 0;
  [[noreturn]] void fail(const std::string& what) const { r.fail(base + at, what); }
  void need(std::size_t n, const char* what) const {
    if (n > b.size() - at) {
      fail(std::string("expected ") + what + " (" + std::to_string(n) + " bytes), found the end of the header section after " +
           std::to_string(b.size() - at) + " more");
    }
  }
  std::uint8_t u8(const char* what) {
    need(1, what);
    return b[at++];
  }
  std::uint32_t u32(const char* what) {
    need(4, what);
    const std::uint32_t v = get_u32(&b[at]);
    at += 4;
    return v;
  }
  std::uint64_t u64(const char* what) {
    need(8, what);
    const std::uint64_t v = get_u64(&b[at]);
    at += 8;
    return v;
  }
};

void parse_header(const reader& r, const std::vector<unsigned char>& payload, std::uint64_t base, std::uint32_t version,
                  trace_header& h) {
  cursor c{r, payload, base};
  const std::uint32_t count = c.u32("the number of header fields");
  std::vector<std::string> names;
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::size_t field_at = c.at;
    const std::uint8_t len = c.u8("the length of a field name");
    if (len == 0 || len > 64) {
      c.at = field_at;
      c.fail("expected a field name length of 1 to 64, found " + std::to_string(len));
    }
    c.need(len, "a field name");
    extra_field f;
    f.name.assign(reinterpret_cast<const char*>(&payload[c.at]), len);
    for (char ch : f.name) {
      if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_')) {
        c.fail("expected a field name of a-z, 0-9 and _, found " + json::show_byte(static_cast<unsigned char>(ch)));
      }
    }
    if (std::find(names.begin(), names.end(), f.name) != names.end()) c.fail("expected each field once, found \"" + f.name + "\" again");
    names.push_back(f.name);
    c.at += len;
    const std::size_t type_at = c.at;
    const std::uint8_t type = c.u8("a field type");
    switch (type) {
      case 1:
        f.kind = extra_field::type::unsigned_integer;
        f.u = c.u64("an unsigned integer");
        break;
      case 2: {
        f.kind = extra_field::type::real;
        const std::uint64_t bits = c.u64("a real number");
        std::memcpy(&f.r, &bits, 8);
        break;
      }
      case 3: {
        f.kind = extra_field::type::string;
        const std::uint32_t n = c.u32("a string length");
        c.need(n, "the string's bytes");
        f.s.assign(reinterpret_cast<const char*>(&payload[c.at]), n);
        if (!json::valid_utf8(f.s)) c.fail("expected UTF-8 text in field \"" + f.name + "\"");
        c.at += n;
        break;
      }
      case 4: {
        f.kind = extra_field::type::boolean;
        const std::uint8_t v = c.u8("a boolean");
        if (v > 1) {
          --c.at;
          c.fail("expected a boolean 0 or 1, found " + std::to_string(v));
        }
        f.b = v == 1;
        break;
      }
      default:
        c.at = type_at;
        c.fail("expected a field type 1 (unsigned), 2 (real), 3 (string) or 4 (boolean), found " + std::to_string(type));
    }
    if (std::string e = apply_field(h, f); !e.empty()) {
      c.at = type_at + 1;
      c.fail(e);
    }
    if (version == 1 && f.name == "delete_value") {
      c.at = field_at;
      c.fail("expected no \"delete_value\" field in a version 1 trace (version 2 added it; version 1 declares it by its version)");
    }
  }
  // Version 1 had no declaration: its format said that a successful delete
  // records the value it removed unless flag bit 0 says otherwise, so every
  // version 1 file declares it.
  if (version == 1) h.delete_value = true;
  if (c.at != payload.size()) {
    c.fail("expected the end of the header section after its " + std::to_string(count) + " fields, found " +
           std::to_string(payload.size() - c.at) + " more bytes");
  }
}

}  // namespace

trace read_binary(const std::string& path, std::atomic<std::uint64_t>* bytes_read, bool keep_cut) {
  input in(path);
  return read_binary(in, bytes_read, keep_cut);
}

trace read_binary(input& in, std::atomic<std::uint64_t>* bytes_read, bool keep_cut) {
  reader r(in, bytes_read);
  trace t;
  t.format = trace_format::binary;
  unsigned char pre[preamble_bytes];
  r.read(pre, 8, "the magic bytes 89 47 46 53 4c 54 52 0a");
  if (std::memcmp(pre, magic, 8) != 0) r.fail(0, "expected the magic bytes 89 47 46 53 4c 54 52 0a of a binary gfsl trace");
  t.version = r.u32("the format version");
  if (t.version < oldest_binary_version || t.version > binary_version) {
    r.fail(8, "expected format version " + std::to_string(oldest_binary_version) + " to " + std::to_string(binary_version) +
                  " (the ones this reader knows), found " + std::to_string(t.version));
  }
  if (const std::uint32_t reserved = r.u32("a reserved word"); reserved != 0) {
    r.fail(12, "expected 0 in the reserved word, found " + std::to_string(reserved));
  }
  bool have_header = false, have_history = false;
  std::uint64_t blocks = 0;
  // What the complete sections held: a cut trace is kept up to there.
  struct complete_state {
    std::uint64_t end = 16, sections = 0, blocks = 0;
    std::size_t records = 0;
    bool final_snapshot = false, initial_snapshot = false, events = false;
  } complete;
  checksum chain;  // of the sections' checksums, in order (version 3's end section)
  try {
    for (int index = 0;; ++index) {
      const std::uint64_t at = r.pos();
      const std::uint32_t type = r.u32("a section header (type, reserved, length)");
      if (const std::uint32_t reserved = r.u32("a section's reserved word"); reserved != 0) {
        r.fail(at + 4, "expected 0 in the section's reserved word, found " + std::to_string(reserved));
      }
      const std::uint64_t length = r.u64("a section length");
      const std::uint64_t payload_at = r.pos();
      if (r.sized() && (r.left() < 8 || length > r.left() - 8)) {
        r.ran_out(at + 8, "expected a section length that fits in the file (at most " + std::to_string(r.left() < 8 ? 0 : r.left() - 8) +
                           " bytes before the section's checksum), found " + std::to_string(length));
      }
      if (index == 0 && type != section_header) r.fail(at, "expected the header section (type 1) first, found type " + std::to_string(type));
      // Version 3 skips only the types it declares optional, so that a
      // changed type cannot hide a section the verdict depends on. Versions 1
      // and 2 skipped every type they did not know, but their writers are
      // gone and wrote types 0 to 6 only: any other type in such a file is
      // damage (a history block's type byte flipped), never a later addition.
      if (t.version >= 3 && type > section_history_block && type < optional_sections) {
        r.fail(at, "expected a section type 0 to 6, or an optional one (2^31 and above), found " + std::to_string(type) +
                       (type == 7 || type == 8 ? " (an ordered map's records: gfsl check and gfsl convert read them)" : ""));
      }
      if (t.version < 3 && type > section_history_block) {
        r.fail(at, "expected a section type 0 to 6 (the only ones a version " + std::to_string(t.version) + " writer wrote), found " +
                       std::to_string(type));
      }
      checksum sum;
      if (t.version >= 3) {
        unsigned char head[section_head_bytes];
        put_u32(head, type);
        put_u32(head + 4, 0);
        put_u64(head + 8, length);
        sum.update(head, sizeof head);
      }
      std::uint64_t end_sections = 0, end_chain = 0;
      switch (type) {
        case section_end:
          if (length != end_length(t.version)) {
            r.fail(at + 8, "expected an end section of length " + std::to_string(end_length(t.version)) + ", found " + std::to_string(length));
          }
          if (!have_history && blocks == 0) r.fail(at, "expected a history section (type 2) or history blocks (type 6) before the end section");
          if (length) {
            unsigned char eb[16];
            r.read(eb, 16, "the end section's section count and chain");
            sum.update(eb, 16);
            end_sections = get_u64(eb);
            end_chain = get_u64(eb + 8);
          }
          break;
        case section_header: {
          if (have_header) r.fail(at, "expected one header section, found a second");
          have_header = true;
          const std::vector<unsigned char> payload = r.payload(length, "the header section");
          sum.update(payload.data(), payload.size());
          parse_header(r, payload, payload_at, t.version, t.header);
          break;
        }
        case section_history:
        case section_history_block: {
          if (type == section_history) {
            if (have_history) r.fail(at, "expected one history section, found a second");
            if (blocks) r.fail(at, "expected history blocks (type 6) only, found a history section (type 2) after them");
            have_history = true;
          } else {
            if (have_history) r.fail(at, "expected one history section (type 2) only, found a history block (type 6) beside it");
            ++blocks;
          }
          const std::size_t first_record = t.history.size();
          if (length < 8) r.fail(at + 8, "expected a history section of at least 8 bytes (its record count), found " + std::to_string(length));
          unsigned char cb[8];
          r.read(cb, 8, "the record count");
          sum.update(cb, 8);
          const std::uint64_t count = get_u64(cb);
          if ((length - 8) % record_bytes != 0 || (length - 8) / record_bytes != count) {
            r.fail(payload_at, "expected a record count that fills the section (" + std::to_string((length - 8) / record_bytes) +
                                   " records of 32 bytes in " + std::to_string(length) + " bytes), found " + std::to_string(count));
          }
          if (count > 0xFFFFFFFFull - first_record) r.fail(payload_at, "expected at most 4294967295 records in all, found " + std::to_string(count) + " more");
          // Room for the records, never reserved block by block: a device
          // run's trace comes in hundreds of history blocks, and reserving
          // each block's records exactly moved the whole history to fresh
          // pages at every block (quadratic copying, and page faults that
          // took 35 s of system time on a 16-core machine for 10M records).
          // A file of known size: at its first history section, the most
          // records the rest of the file could hold (bounded by its size,
          // checked above; address space, not memory: pages never written
          // cost nothing), so the history is never copied. A stream: what
          // has arrived, grown by doubling.
          if (r.sized()) {
            if (first_record == 0) t.history.reserve(static_cast<std::size_t>(r.left() / record_bytes));
          } else if (const std::size_t need = first_record + static_cast<std::size_t>(std::min<std::uint64_t>(count, block_records));
                     need > t.history.capacity()) {
            t.history.reserve(std::max(need, 2 * t.history.capacity()));
          }
          std::vector<unsigned char> block;
          for (std::uint64_t done = 0; done < count;) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(block_records, count - done));
            block.resize(n * record_bytes);
            const std::uint64_t block_at = r.pos();
            r.read(block.data(), block.size(), "history records");
            sum.update(block.data(), block.size());
            for (std::size_t k = 0; k < n; ++k) {
              const unsigned char* p = &block[k * record_bytes];
              const std::uint64_t rec_at = block_at + k * record_bytes;
              auto bad = [&](std::size_t field, const std::string& what) {
                r.fail(rec_at + field, "record " + std::to_string(first_record + done + k) + ": " + what);
              };
              model::op_record rec;
              rec.call = get_u64(p);
              rec.ret = get_u64(p + 8);
              rec.team = get_u32(p + 16);
              rec.op.key = get_u32(p + 20);
              const std::uint32_t value = get_u32(p + 24);
              const unsigned op = p[28], ok = p[29], st = p[30], flags = p[31];
              if (op > 2) bad(28, "expected an operation code 0 (insert), 1 (delete) or 2 (contains), found " + std::to_string(op));
              if (ok > 1) bad(29, "expected a result 0 or 1, found " + std::to_string(ok));
              if (st > max_status) bad(30, "expected a status 0 to " + std::to_string(max_status) + ", found " + std::to_string(st));
              rec.op.kind = static_cast<op_kind>(op);
              rec.ok = ok == 1;
              rec.st = static_cast<status>(st);
              if (flags & ~1u) bad(31, "expected flags 0 or 1, found " + std::to_string(flags));
              if (flags & 1u) {
                if (rec.op.kind != op_kind::remove || !rec.ok || rec.pending()) {
                  bad(31, "expected the flag 'value not recorded' on successful deletes only");
                }
                t.unrecorded_values.push_back(static_cast<std::uint32_t>(first_record + done + k));
              }
              if (rec.op.kind == op_kind::insert) rec.op.value = value;
              else rec.value = value;
              if (std::string e = validate_record(rec); !e.empty()) bad(rec.call == model::no_stamp ? 0 : 8, e);
              t.history.push_back(rec);
            }
            done += n;
          }
          break;
        }
        case section_final_snapshot:
        case section_initial_snapshot: {
          // The length was checked against the file above: reading it whole is bounded.
          const std::vector<unsigned char> payload = r.payload(length, "a snapshot section");
          sum.update(payload.data(), payload.size());
          cursor c{r, payload, payload_at};
          invariants::snapshot& snap = type == section_final_snapshot ? t.final_snapshot : t.initial_snapshot;
          bool& have = type == section_final_snapshot ? t.has_final_snapshot : t.has_initial_snapshot;
          if (have) r.fail(at, std::string("expected one ") + section_name(type) + " section, found a second");
          have = true;
          snap.chunk = static_cast<int>(c.u32("the snapshot's chunk size"));
          snap.capacity = c.u32("the snapshot's pool capacity");
          snap.stamp = c.u64("the snapshot's stamp");
          const std::uint64_t words = c.u64("the snapshot's word count");
          if (words != (length - 24) / 8 || (length - 24) % 8 != 0) {
            r.fail(payload_at + 16, "expected a word count that fills the snapshot section (" + std::to_string((length - 24) / 8) +
                                        " words), found " + std::to_string(words));
          }
          snap.words.resize(static_cast<std::size_t>(words));
          for (std::uint64_t i = 0; i < words; ++i) snap.words[i] = c.u64("a snapshot word");
          break;
        }
        case section_events: {
          const std::vector<unsigned char> payload = r.payload(length, "the events section");
          sum.update(payload.data(), payload.size());
          cursor c{r, payload, payload_at};
          if (t.has_events) r.fail(at, "expected one events section, found a second");
          t.has_events = true;
          const std::uint64_t count = c.u64("the event count");
          if (length < 8 || (length - 8) % event_bytes != 0 || (length - 8) / event_bytes != count) {
            r.fail(payload_at, "expected an event count that fills the section (" + std::to_string(length < 8 ? 0 : (length - 8) / event_bytes) +
                                   " events of 40 bytes), found " + std::to_string(count));
          }
          t.events.resize(static_cast<std::size_t>(count));
          for (invariants::structural_event& e : t.events) {
            e.seq = c.u64("an event's sequence number");
            e.stamp = c.u64("an event's stamp");
            e.value = c.u64("an event's value");
            e.team = c.u32("an event's team");
            e.chunk = c.u32("an event's chunk");
            const std::uint8_t kind = c.u8("an event's kind");
            if (kind > 2) c.fail("expected an event kind 0 (alloc), 1 (store) or 2 (cas), found " + std::to_string(kind));
            e.kind = static_cast<invariants::event_kind>(kind);
            e.lane = c.u8("an event's lane");
            for (int pad = 0; pad < 6; ++pad) c.u8("an event's padding");
          }
          break;
        }
        default: {
          std::vector<unsigned char> block;
          for (std::uint64_t left = length; left > 0;) {
            block.resize(static_cast<std::size_t>(std::min<std::uint64_t>(left, 1 << 20)));
            r.read(block.data(), block.size(), "a section's payload");
            sum.update(block.data(), block.size());
            left -= block.size();
          }
        }
      }
      const std::uint64_t sum_at = r.pos();
      const std::uint64_t stored = r.u64("the section's checksum");
      if (stored != sum.value()) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "expected the checksum %016llx of the %s section, found %016llx (the section is corrupt)",
                      static_cast<unsigned long long>(sum.value()), section_name(type), static_cast<unsigned long long>(stored));
        r.fail(sum_at, buf);
      }
      if (type == section_end) {
        if (t.version >= 3 && end_sections != complete.sections) {
          r.fail(at + 16, "expected the " + std::to_string(end_sections) + " sections the end section counts before it, found " +
                              std::to_string(complete.sections) + " (a section was removed or added)");
        }
        if (t.version >= 3 && end_chain != chain.value()) {
          r.fail(at + 24, "expected the sections whose checksums the end section chains, in their order; found others (a section was "
                          "replaced, moved or repeated)");
        }
        if (!r.at_end()) {
          r.fail(r.pos(), "expected the end of the file after the end section, found " +
                              (r.sized() ? std::to_string(r.left()) + " more bytes" : std::string("more bytes")));
        }
        return t;
      }
      unsigned char sb[8];
      put_u64(sb, stored);
      chain.update(sb, 8);
      complete = {r.pos(), complete.sections + 1, blocks, t.history.size(), t.has_final_snapshot, t.has_initial_snapshot, t.has_events};
    }
  } catch (const ended_early& e) {
    // A cut trace (its writer stopped, or the copy is short): kept up to its
    // last complete section when asked, and marked so that no one judges it
    // as whole; never without the header.
    if (!keep_cut || !have_header || complete.sections == 0) throw trace_error(e.what());
    t.history.resize(complete.records);
    while (!t.unrecorded_values.empty() && t.unrecorded_values.back() >= complete.records) t.unrecorded_values.pop_back();
    t.has_final_snapshot = complete.final_snapshot;
    t.has_initial_snapshot = complete.initial_snapshot;
    t.has_events = complete.events;
    if (!t.has_final_snapshot) t.final_snapshot = {};
    if (!t.has_initial_snapshot) t.initial_snapshot = {};
    if (!t.has_events) t.events.clear();
    t.cut = "the trace is cut: " + std::string(e.what()) + "; read up to byte " + std::to_string(complete.end) + ", its last complete section (" +
            std::to_string(complete.records) + " records" +
            (complete.blocks ? " in " + std::to_string(complete.blocks) + (complete.blocks == 1 ? " history block" : " history blocks") : std::string()) + ")";
    return t;
  }
}

}  // namespace detail

std::uint64_t section_checksum(const unsigned char* payload, std::size_t size) {
  detail::checksum c;
  c.update(payload, size);
  return c.value();
}

std::uint64_t section_checksum(std::uint32_t type, const unsigned char* payload, std::size_t size) {
  unsigned char head[detail::section_head_bytes];
  detail::put_u32(head, type);
  detail::put_u32(head + 4, 0);
  detail::put_u64(head + 8, size);
  detail::checksum c;
  c.update(head, sizeof head);
  c.update(payload, size);
  return c.value();
}

void write_trace(const std::string& path, const trace_header& header, const std::vector<model::op_record>& history,
                 const std::vector<std::uint32_t>& unrecorded_values, const trace_extras& extras) {
  using namespace detail;
  if (history.size() > 0xFFFFFFFFull) throw trace_error(path + ": cannot write more than 4294967295 records");
  const std::vector<unsigned char> head = encode_header(path, header);
  writer w(path);
  w.bytes(magic, 8);
  w.u32(binary_version);
  w.u32(0);
  w.begin_section(section_header, head.size());
  w.bytes(head.data(), head.size());
  w.end_section();
  w.begin_section(section_history, 8 + record_bytes * static_cast<std::uint64_t>(history.size()));
  w.u64(history.size());
  std::size_t next_unrecorded = 0;
  unsigned char rec[record_bytes];
  for (std::size_t i = 0; i < history.size(); ++i) {
    const model::op_record& r = history[i];
    if (std::string e = validate_record(r); !e.empty()) throw trace_error(path + ": cannot write record " + std::to_string(i) + ": " + e);
    bool unrecorded = false;
    while (next_unrecorded < unrecorded_values.size() && unrecorded_values[next_unrecorded] < i) ++next_unrecorded;
    if (next_unrecorded < unrecorded_values.size() && unrecorded_values[next_unrecorded] == i) {
      unrecorded = r.op.kind == op_kind::remove && r.ok && !r.pending();  // only a removed value can be missing
    }
    put_u64(rec, r.call);
    put_u64(rec + 8, r.ret);
    put_u32(rec + 16, r.team);
    put_u32(rec + 20, r.op.key);
    put_u32(rec + 24, unrecorded ? 0 : r.op.kind == op_kind::insert ? r.op.value : r.value);
    rec[28] = static_cast<unsigned char>(r.op.kind);
    rec[29] = r.ok ? 1 : 0;
    rec[30] = static_cast<unsigned char>(r.st);
    rec[31] = unrecorded ? 1 : 0;
    w.bytes(rec, record_bytes);
  }
  w.end_section();
  auto snapshot_section = [&](std::uint32_t type, const invariants::snapshot& snap) {
    w.begin_section(type, 24 + 8 * static_cast<std::uint64_t>(snap.words.size()));
    w.u32(static_cast<std::uint32_t>(snap.chunk));
    w.u32(snap.capacity);
    w.u64(snap.stamp);
    w.u64(snap.words.size());
    for (std::uint64_t word : snap.words) w.u64(word);
    w.end_section();
  };
  if (extras.final_snapshot) snapshot_section(section_final_snapshot, *extras.final_snapshot);
  if (extras.initial_snapshot) snapshot_section(section_initial_snapshot, *extras.initial_snapshot);
  if (extras.events) {
    w.begin_section(section_events, 8 + event_bytes * static_cast<std::uint64_t>(extras.events->size()));
    w.u64(extras.events->size());
    unsigned char ev[event_bytes] = {};
    for (const invariants::structural_event& e : *extras.events) {
      put_u64(ev, e.seq);
      put_u64(ev + 8, e.stamp);
      put_u64(ev + 16, e.value);
      put_u32(ev + 24, e.team);
      put_u32(ev + 28, e.chunk);
      ev[32] = static_cast<unsigned char>(e.kind);
      ev[33] = e.lane;
      w.bytes(ev, event_bytes);
    }
    w.end_section();
  }
  w.end_of_trace();
  w.close();
}

}  // namespace gfsl::traces

namespace gfsl::traces {

namespace {

void append_u32(std::vector<unsigned char>& out, std::uint32_t v) {
  unsigned char b[4];
  detail::put_u32(b, v);
  out.insert(out.end(), b, b + 4);
}
void append_u64(std::vector<unsigned char>& out, std::uint64_t v) {
  unsigned char b[8];
  detail::put_u64(b, v);
  out.insert(out.end(), b, b + 8);
}

}  // namespace

trace_recorder::trace_recorder(const std::string& path, const trace_header& header) : path_(path) {
  const std::vector<unsigned char> head = detail::encode_header(path, header);
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) throw trace_error(path + ": cannot write: " + detail::errno_text());
  std::vector<unsigned char> pre(detail::magic, detail::magic + 8);
  append_u32(pre, binary_version);
  append_u32(pre, 0);
  if (std::fwrite(pre.data(), 1, pre.size(), f_) != pre.size()) throw trace_error(path + ": cannot write: " + detail::errno_text());
  write_section(detail::section_header, head);
}

trace_recorder::~trace_recorder() {
  if (f_) std::fclose(f_);
}

void trace_recorder::write_section(std::uint32_t type, const std::vector<unsigned char>& payload) {
  std::vector<unsigned char> out;
  out.reserve(payload.size() + 24);
  append_u32(out, type);
  append_u32(out, 0);
  append_u64(out, payload.size());
  out.insert(out.end(), payload.begin(), payload.end());
  const std::uint64_t sum = section_checksum(type, payload.data(), payload.size());
  append_u64(out, sum);
  if (std::fwrite(out.data(), 1, out.size(), f_) != out.size() || std::fflush(f_) != 0) {
    throw trace_error(path_ + ": cannot write: " + detail::errno_text());
  }
  unsigned char b[8];
  detail::put_u64(b, sum);
  chain_.append(reinterpret_cast<const char*>(b), 8);
  ++sections_;
}

void trace_recorder::append(const model::op_record* records, std::size_t n) {
  if (n == 0) return;
  if (records_ + n > 0xFFFFFFFFull) throw trace_error(path_ + ": cannot write more than 4294967295 records");
  std::vector<unsigned char> payload;
  payload.reserve(8 + detail::record_bytes * n);
  append_u64(payload, n);
  payload.resize(8 + detail::record_bytes * n);
  for (std::size_t i = 0; i < n; ++i) {
    if (std::string e = validate_record(records[i]); !e.empty()) {
      throw trace_error(path_ + ": cannot write record " + std::to_string(records_ + i) + ": " + e);
    }
    detail::encode_record(records[i], false, &payload[8 + detail::record_bytes * i]);
  }
  write_section(detail::section_history_block, payload);
  records_ += n;
}

void trace_recorder::finish(const trace_extras& extras) {
  auto snapshot_payload = [](const invariants::snapshot& snap) {
    std::vector<unsigned char> p;
    append_u32(p, static_cast<std::uint32_t>(snap.chunk));
    append_u32(p, snap.capacity);
    append_u64(p, snap.stamp);
    append_u64(p, snap.words.size());
    for (std::uint64_t w : snap.words) append_u64(p, w);
    return p;
  };
  if (records_ == 0) {
    // A history section, even an empty one, is what makes a trace whole.
    std::vector<unsigned char> empty;
    append_u64(empty, 0);
    write_section(detail::section_history_block, empty);
  }
  if (extras.final_snapshot) write_section(detail::section_final_snapshot, snapshot_payload(*extras.final_snapshot));
  if (extras.initial_snapshot) write_section(detail::section_initial_snapshot, snapshot_payload(*extras.initial_snapshot));
  if (extras.events) {
    std::vector<unsigned char> p;
    append_u64(p, extras.events->size());
    for (const invariants::structural_event& e : *extras.events) detail::encode_event(e, p);
    write_section(detail::section_events, p);
  }
  std::vector<unsigned char> end;
  append_u64(end, sections_);
  append_u64(end, section_checksum(reinterpret_cast<const unsigned char*>(chain_.data()), chain_.size()));
  write_section(detail::section_end, end);
  FILE* f = f_;
  f_ = nullptr;
  const bool synced = ::fsync(fileno(f)) == 0;
  const int error = errno;
  if (std::fclose(f) != 0 || !synced) {
    if (!synced) errno = error;
    throw trace_error(path_ + ": cannot write: " + detail::errno_text());
  }
}

}  // namespace gfsl::traces
