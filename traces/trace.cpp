#include "traces/trace.hpp"

#include "core/registry.hpp"
#include "core/slabhash/layout.hpp"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <cstring>
#include <algorithm>
#include <memory>

#include <sys/stat.h>
#include <unistd.h>

#include "traces/internal.hpp"
#include "traces/json.hpp"

namespace gfsl::traces {

trace_header make_header(const model::workload& w, const std::string& backend, const std::string& device,
                         model::clock_kind clock, const std::string& replay) {
  trace_header h;
  h.backend = backend;
  h.device = device;
  h.workload = w;
  h.clock = clock;
  h.replay = replay;
  h.delete_value = true;
  return h;
}

const char* clock_name(model::clock_kind c) {
  switch (c) {
    case model::clock_kind::none: return "none";
    case model::clock_kind::global_counter: return "global_counter";
    case model::clock_kind::device_counter: return "device_counter";
    case model::clock_kind::globaltimer: return "globaltimer";
  }
  return "?";
}

bool parse_clock(const std::string& name, model::clock_kind& out) {
  for (auto c : {model::clock_kind::none, model::clock_kind::global_counter, model::clock_kind::device_counter,
                 model::clock_kind::globaltimer}) {
    std::string hyphenated = clock_name(c);
    for (char& ch : hyphenated) ch = ch == '_' ? '-' : ch;
    if (name == clock_name(c) || name == hyphenated) {
      out = c;
      return true;
    }
  }
  return false;
}

bool delete_values_compared(const trace& t) { return t.header.delete_value.value_or(false); }

std::vector<std::uint32_t> unchecked_delete_values(const trace& t) {
  if (delete_values_compared(t)) return t.unrecorded_values;
  std::vector<std::uint32_t> all;
  for (std::size_t i = 0; i < t.history.size(); ++i) {
    const model::op_record& r = t.history[i];
    if (r.op.kind == op_kind::remove && r.ok && !r.pending()) all.push_back(static_cast<std::uint32_t>(i));
  }
  return all;
}

std::string delete_value_convention(const trace& t) {
  if (delete_values_compared(t)) {
    std::string s = t.format == trace_format::binary && t.version == 1
                        ? "compared (a version 1 binary trace: each successful delete records the value it removed)"
                        : "compared (the trace declares delete_value true: each successful delete records the value it removed)";
    if (!t.unrecorded_values.empty()) {
      s += "; " + std::to_string(t.unrecorded_values.size()) + (t.unrecorded_values.size() == 1 ? " delete carries" : " deletes carry") +
           " no value and " + (t.unrecorded_values.size() == 1 ? "is" : "are") + " not compared";
    }
    return s;
  }
  return std::string("not compared (the trace ") +
         (t.header.delete_value ? "declares delete_value false" : "does not declare delete_value") +
         ": a successful delete's value may be anything; declare \"delete_value\":true in the metadata line to compare it)";
}

const char* status_key(status s) {
  switch (s) {
    case status::ok: return "ok";
    case status::key_out_of_range: return "key_out_of_range";
    case status::pool_exhausted: return "pool_exhausted";
    case status::stopped: return "stopped";
    case status::corrupt: return "corrupt";
  }
  return "?";
}

bool parse_status(const std::string& name, status& out) {
  for (auto s : {status::ok, status::key_out_of_range, status::pool_exhausted, status::stopped, status::corrupt}) {
    if (name == status_key(s)) {
      out = s;
      return true;
    }
  }
  return false;
}

std::string validate_record(const model::op_record& r) {
  if (r.call == model::no_stamp) return "expected a call stamp below 2^64-1 (that value means 'never returned')";
  if (r.ret != model::no_stamp && r.ret < r.call) {
    return "expected a return stamp not before the call stamp " + std::to_string(r.call) + ", found " + std::to_string(r.ret);
  }
  if (static_cast<unsigned>(r.op.kind) > 2) return "expected an operation insert, delete or contains";
  if (static_cast<unsigned>(r.st) > max_status) return "expected a status ok, key_out_of_range, pool_exhausted, stopped or corrupt";
  return {};
}

std::string record_json(const model::op_record& r, bool value_recorded) {
  std::string s;
  s.reserve(112);
  s += "{\"team\":";
  s += std::to_string(r.team);
  s += ",\"op\":\"";
  s += model::op_name(r.op.kind);
  s += "\",\"key\":";
  s += std::to_string(r.op.key);
  if (value_recorded) {
    s += ",\"value\":";
    s += std::to_string(r.op.kind == op_kind::insert ? r.op.value : r.value);
  }
  s += ",\"ok\":";
  s += r.ok ? "true" : "false";
  s += ",\"call\":";
  s += std::to_string(r.call);
  s += ",\"ret\":";
  s += r.ret == model::no_stamp ? "null" : std::to_string(r.ret);
  if (r.st != status::ok) {
    s += ",\"status\":\"";
    s += status_key(r.st);
    s += '"';
  }
  s += '}';
  return s;
}

namespace detail {

namespace {
extra_field text(const char* name, const std::string& v) {
  extra_field f;
  f.name = name;
  f.kind = extra_field::type::string;
  f.s = v;
  return f;
}
extra_field number(const char* name, std::uint64_t v) {
  extra_field f;
  f.name = name;
  f.kind = extra_field::type::unsigned_integer;
  f.u = v;
  return f;
}
extra_field real(const char* name, double v) {
  extra_field f;
  f.name = name;
  f.kind = extra_field::type::real;
  f.r = v;
  return f;
}
}  // namespace

std::vector<extra_field> header_fields(const trace_header& h) {
  const model::workload& w = h.workload;
  std::vector<extra_field> out{
      text("backend", h.backend),
      text("device", h.device),
      text("clock", clock_name(h.clock)),
      number("ops", w.ops),
      number("insert_pct", static_cast<std::uint64_t>(w.insert_pct)),
      number("delete_pct", static_cast<std::uint64_t>(w.delete_pct)),
      number("contains_pct", static_cast<std::uint64_t>(w.contains_pct)),
      number("range", w.range),
      real("prefill", w.prefill),
      number("teams", w.teams),
      number("chunk", static_cast<std::uint64_t>(w.chunk)),
      real("p_chunk", w.p_chunk),
      number("seed", w.seed),
      number("hot_keys", w.hot_keys),
      number("hot_pct", static_cast<std::uint64_t>(w.hot_pct)),
      text("replay", h.replay),
  };
  for (const auto& [name, set] : {std::pair<const char*, bool>{"hot_spread", w.hot_spread}, {"sequential_keys", w.sequential_keys},
                                   {"reraise", w.reraise}}) {
    if (!set) continue;
    extra_field f;
    f.name = name;
    f.kind = extra_field::type::boolean;
    f.b = true;
    out.push_back(f);
  }
  // Absent: gfsl, the only subject of the traces written before subjects
  // existed. Then each of its parameters (core/subject.hpp).
  if (w.subject != default_subject) {
    out.push_back(text("subject", subject_name(w.subject)));
    for (const subject_parameter& p : subject_of(w.subject).parameters) out.push_back(number(std::string(p.name).c_str(), p.get(w)));
  }
  if (h.delete_value) {
    extra_field f;
    f.name = "delete_value";
    f.kind = extra_field::type::boolean;
    f.b = *h.delete_value;
    out.push_back(f);
  }
  out.insert(out.end(), h.extra.begin(), h.extra.end());
  return out;
}

std::string apply_field(trace_header& h, const extra_field& f) {
  using t = extra_field::type;
  model::workload& w = h.workload;
  auto want_string = [&](std::string& into) -> std::string {
    if (f.kind != t::string) return "expected a string for \"" + f.name + "\"";
    into = f.s;
    return {};
  };
  auto want_unsigned = [&](auto& into, std::uint64_t max) -> std::string {
    if (f.kind != t::unsigned_integer || f.u > max) {
      return "expected an integer in [0, " + std::to_string(max) + "] for \"" + f.name + "\"";
    }
    into = static_cast<std::remove_reference_t<decltype(into)>>(f.u);
    return {};
  };
  auto want_real = [&](double& into) -> std::string {
    if (f.kind == t::unsigned_integer) into = static_cast<double>(f.u);
    else if (f.kind == t::real) into = f.r;
    else return "expected a number for \"" + f.name + "\"";
    return {};
  };
  if (f.name == "backend") return want_string(h.backend);
  if (f.name == "device") return want_string(h.device);
  if (f.name == "replay") return want_string(h.replay);
  if (f.name == "clock") {
    std::string name;
    if (std::string e = want_string(name); !e.empty()) return e;
    if (!parse_clock(name, h.clock)) {
      std::string shown;  // escaped: the name came from the file
      json::append_string(shown, name);
      return "expected a clock none, global_counter, device_counter or globaltimer, found " + shown;
    }
    return {};
  }
  if (f.name == "ops") return want_unsigned(w.ops, UINT64_MAX);
  if (f.name == "insert_pct") return want_unsigned(w.insert_pct, INT_MAX);
  if (f.name == "delete_pct") return want_unsigned(w.delete_pct, INT_MAX);
  if (f.name == "contains_pct") return want_unsigned(w.contains_pct, INT_MAX);
  if (f.name == "range") return want_unsigned(w.range, UINT32_MAX);
  if (f.name == "teams") return want_unsigned(w.teams, UINT32_MAX);
  if (f.name == "chunk") return want_unsigned(w.chunk, INT_MAX);
  if (f.name == "seed") return want_unsigned(w.seed, UINT64_MAX);
  if (f.name == "hot_keys") return want_unsigned(w.hot_keys, UINT32_MAX);
  if (f.name == "hot_pct") return want_unsigned(w.hot_pct, INT_MAX);
  if (f.name == "hot_spread" || f.name == "sequential_keys" || f.name == "reraise") {
    if (f.kind != t::boolean) return "expected true or false for \"" + f.name + "\"";
    (f.name == "hot_spread" ? w.hot_spread : f.name == "sequential_keys" ? w.sequential_keys : w.reraise) = f.b;
    return {};
  }
  if (f.name == "delete_value") {
    if (f.kind != t::boolean) return "expected true or false for \"delete_value\"";
    h.delete_value = f.b;
    return {};
  }
  if (f.name == "subject") {
    std::string name;
    if (std::string e = want_string(name); !e.empty()) return e;
    auto subject = parse_subject(name);
    // A subject gfsl does not know, named as a user may name one, is a
    // user's structure (core/user/subject.hpp): its history is checked as a
    // set's or a map's.
    if (!subject && user::adopt_name(name)) subject = subject_kind::user;
    if (!subject) {
      std::string shown;
      json::append_string(shown, name);
      return "expected a subject " + subject_names_text() + ", found " + shown;
    }
    w.subject = *subject;
    return {};
  }
  for (const subject_descriptor* s : subject_registry) {
    for (const subject_parameter& p : s->parameters) {
      if (f.name != p.name) continue;
      std::uint32_t v = 0;
      if (std::string e = want_unsigned(v, p.max); !e.empty()) return e;
      p.set(w, v);
      return {};
    }
  }
  if (f.name == "prefill") return want_real(w.prefill);
  if (f.name == "p_chunk") return want_real(w.p_chunk);
  h.extra.push_back(f);
  return {};
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace detail

namespace detail {

input::input(const std::string& path) : name_(path == "-" ? "standard input" : path) {
  if (path == "-") {
    // Standard input is read as a stream even when it is a regular file: it
    // may not start at offset 0 and has no name to open again.
    f_.reset(fdopen(dup(0), "rb"));
  } else {
    f_.reset(std::fopen(path.c_str(), "rb"));
  }
  if (!f_) throw trace_error(name_ + ": cannot open: " + errno_text());
  struct stat st {};
  if (path != "-" && fstat(fileno(f_.get()), &st) == 0 && S_ISREG(st.st_mode)) {
    regular_ = true;
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
}

std::size_t input::read(void* into, std::size_t n) {
  auto* out = static_cast<unsigned char*>(into);
  std::size_t got = 0;
  if (!holding_ && held_at_ < held_.size()) {
    got = std::min(n, held_.size() - held_at_);
    std::memcpy(out, held_.data() + held_at_, got);
    held_at_ += got;
    if (held_at_ == held_.size()) std::vector<unsigned char>().swap(held_), held_at_ = 0;
  }
  while (got < n) {
    const std::size_t k = std::fread(out + got, 1, n - got, f_.get());
    if (k == 0) {
      if (std::ferror(f_.get())) throw trace_error(name_ + ": byte " + std::to_string(position_ + got) + ": cannot read: " + errno_text());
      break;
    }
    if (holding_) held_.insert(held_.end(), out + got, out + got + k);
    got += k;
  }
  position_ += got;
  return got;
}

void input::seek(std::uint64_t offset) {
  if (!regular_ || fseeko(f_.get(), static_cast<off_t>(offset), SEEK_SET) != 0) {
    throw trace_error(name_ + ": byte " + std::to_string(offset) + ": cannot read: " + errno_text());
  }
  held_.clear(), held_at_ = 0, holding_ = false;
  position_ = offset;
}

trace_format sniff(input& in) {
  in.hold();
  std::uint64_t at = 0;
  trace_format form = trace_format::json;
  for (;;) {
    unsigned char c = 0;
    if (in.read(&c, 1) == 0) {
      if (at == 0) throw trace_error(in.name() + ": byte 0: expected a gfsl trace, found an empty file");
      throw trace_error(in.name() + ": byte " + std::to_string(at) + ": expected '{' to start a JSON line, found the end of the file");
    }
    if (at == 0 && c == magic[0]) {
      form = trace_format::binary;
      break;
    }
    // A line break before any '{' is a blank first line, and a first line
    // of 1 MiB of blanks is too long: either way the JSON reader refuses it
    // at once, so the sniffing holds a bounded number of bytes, not a
    // stream of blank lines without end.
    if (c == '{' || c == '\n' || at >= (std::uint64_t{1} << 20)) break;
    if (c != ' ' && c != '\t' && c != '\r') {
      throw trace_error(in.name() + ": byte " + std::to_string(at) +
                        ": expected a gfsl trace (binary, starting with the bytes 89 47 46 53 4c 54 52 0a, or JSON lines, "
                        "starting with '{'), found " + json::show_byte(c));
    }
    ++at;
  }
  in.replay();
  return form;
}

}  // namespace detail

trace_format detect_format(const std::string& path) {
  detail::input in(path);
  return detail::sniff(in);
}

namespace {
// A snapshot section holds the words; which structure they are, and its
// parameters, are the header's (its subject, buckets and variant).
void name_snapshot_subject(trace& t) {
  const model::workload& w = t.header.workload;
  std::uint8_t var = 0;
  for (const extra_field& f : t.header.extra) {
    if (f.name == "variant" && f.kind == extra_field::type::string && subject_of(w.subject).snapshot_has_variant) {
      if (const auto v = subject_of(w.subject).parse_variant(f.s)) var = *v;
    }
  }
  for (invariants::snapshot* s : {&t.final_snapshot, &t.initial_snapshot}) {
    s->subject = w.subject;
    s->buckets = w.buckets;
    s->variant = var;
  }
}
}  // namespace

trace read_trace(const std::string& path, std::atomic<std::uint64_t>* bytes_read, bool keep_cut, const operation_table* ops) {
  detail::input in(path);
  const trace_format form = detail::sniff(in);
  trace t;
  if (in.regular()) {
    // A file by name is read again from its path: JSON lines in parallel ranges.
    t = form == trace_format::binary ? detail::read_binary(in, bytes_read, keep_cut) : detail::read_json(path, 0, bytes_read, ops);
  } else {
    t = form == trace_format::binary ? detail::read_binary(in, bytes_read, keep_cut) : detail::read_json(in, bytes_read, ops);
  }
  name_snapshot_subject(t);
  return t;
}

trace read_trace(const std::string& path, std::atomic<std::uint64_t>* bytes_read, bool keep_cut, const model_chooser& choose) {
  detail::input in(path);
  const trace_format form = detail::sniff(in);
  trace t;
  if (in.regular()) {
    t = form == trace_format::binary ? detail::read_binary(in, bytes_read, keep_cut) : detail::read_json(path, 0, bytes_read, nullptr, &choose);
  } else {
    t = form == trace_format::binary ? detail::read_binary(in, bytes_read, keep_cut) : detail::read_json(in, bytes_read, nullptr, &choose);
  }
  name_snapshot_subject(t);
  return t;
}

namespace {
std::string declared_string(const trace_header& h, const char* name) {
  for (const extra_field& f : h.extra) {
    if (f.name != name) continue;
    if (f.kind != extra_field::type::string) throw trace_error(std::string("expected a string for the header's \"") + name + "\"");
    return f.s;
  }
  return "";
}
}  // namespace

std::string declared_model(const trace_header& h) { return declared_string(h, "model"); }
std::string declared_recorder(const trace_header& h) { return declared_string(h, "recorder"); }

std::string replaced_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path);
  // A bounded walk: a link cycle ends as the path itself, which the write
  // then reports (ELOOP) like any other path it cannot open.
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) return path;
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return fs::is_symlink(fs::symlink_status(p, ec)) ? path : p.string();
}

output_file::output_file(const std::string& path) : path_(path) {
  struct stat st {};
  const bool special = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (!special) {
    target_ = replaced_file(path);
    temp_ = target_ + ".tmp-" + std::to_string(::getpid());
  }
  f_ = std::fopen((special ? path : temp_).c_str(), "wb");
  if (!f_) throw trace_error(path + ": cannot write: " + detail::errno_text());
}

output_file::~output_file() {
  if (!f_) return;
  std::fclose(f_);
  if (!temp_.empty()) std::remove(temp_.c_str());
}

void output_file::write(const void* data, std::size_t n) {
  if (n && std::fwrite(data, 1, n, f_) != n) throw trace_error(path_ + ": cannot write: " + detail::errno_text());
}

void output_file::commit() {
  FILE* f = f_;
  f_ = nullptr;
  // fflush and fsync before the rename: a crash after it leaves the whole
  // new file or the old one, never a file renamed before its bytes landed.
  const bool written = std::fflush(f) == 0 && (temp_.empty() || ::fsync(fileno(f)) == 0);
  const int error = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    if (!written) errno = error;
    const std::string why = detail::errno_text();
    if (!temp_.empty()) std::remove(temp_.c_str());
    throw trace_error(path_ + ": cannot write: " + why);
  }
  if (!temp_.empty() && std::rename(temp_.c_str(), target_.c_str()) != 0) {
    const std::string why = detail::errno_text();
    std::remove(temp_.c_str());
    throw trace_error(path_ + ": cannot write: " + why);
  }
}

void write_file(const std::string& path, const std::string& text) {
  output_file out(path);
  out.write(text.data(), text.size());
  out.commit();
}

void write_trace(const std::string& path, const trace& t, trace_format as) {
  if (as == trace_format::binary) {
    trace_extras extras;
    if (t.has_final_snapshot) extras.final_snapshot = &t.final_snapshot;
    if (t.has_initial_snapshot) extras.initial_snapshot = &t.initial_snapshot;
    if (t.has_events) extras.events = &t.events;
    write_trace(path, t.header, t.history, t.unrecorded_values, extras);
  } else {
    write_trace_json(path, t.header, t.history, t.unrecorded_values);
  }
}

}  // namespace gfsl::traces
