// The small, strict JSON this project reads and writes: one flat object per
// line (history lines, the metadata line) whose values are strings, numbers,
// booleans or null. Nested arrays and objects are refused.
//
// simdjson parses the lines of a trace (traces/json_lines.cpp). This scanner
// is the format's rules written out: it reads a line simdjson or the reader
// refused, to name the first byte at fault and what was expected there (a
// byte simdjson does not report), and it checks the metadata line, whose
// strings are kept, against the rules simdjson leaves to its caller
// (duplicate names, lone surrogates in escapes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace gfsl::traces::json {

struct value {
  enum class kind : std::uint8_t { null, boolean, unsigned_integer, real, string };
  kind k = kind::null;
  bool b = false;
  std::uint64_t u = 0;
  double r = 0;         // also set for unsigned integers
  std::string s;
  std::size_t offset = 0;  // where the value starts in the line
};

// What went wrong, at which byte of the line.
struct parse_failure {
  std::size_t offset = 0;
  std::string expected;  // "expected ',' or '}' after a value, found 'x'"
};

// Calls on_field(name, value) for each member of the object that makes up
// `line` (whitespace around it allowed). Returns false and fills `failure` on
// the first syntax error, on a duplicate name, or when on_field returns a
// non-empty message (then `failure.expected` is that message, at the value).
template <class OnField>
bool parse_object(std::string_view line, parse_failure& failure, OnField&& on_field);

// Appends `s` as a JSON string literal (quotes included).
void append_string(std::string& out, std::string_view s);
// `s` as a JSON string literal (quotes included).
std::string quote(std::string_view s);
// A finite double written so that it reads back to the same value, always
// with a fraction or an exponent (so that it reads back as a real).
void append_real(std::string& out, double d);

// What a byte looks like in an error message: 'x', or 0x1f.
std::string show_byte(int c);
// Whether `s` is well-formed UTF-8 (no overlongs, no surrogates).
bool valid_utf8(std::string_view s);

// ---- implementation ----

namespace detail {

bool parse_string(std::string_view in, std::size_t& pos, std::string& out, parse_failure& f);
bool parse_number(std::string_view in, std::size_t& pos, value& v, parse_failure& f);
std::size_t utf8_length(std::string_view in, std::size_t p);

inline void skip_ws(std::string_view in, std::size_t& pos) {
  while (pos < in.size() && (in[pos] == ' ' || in[pos] == '\t' || in[pos] == '\r' || in[pos] == '\n')) ++pos;
}

inline std::string found(std::string_view in, std::size_t pos) {
  return pos < in.size() ? show_byte(static_cast<unsigned char>(in[pos])) : std::string("the end of the line");
}

inline bool fail(parse_failure& f, std::size_t at, std::string what) {
  f.offset = at;
  f.expected = std::move(what);
  return false;
}

}  // namespace detail

template <class OnField>
bool parse_object(std::string_view in, parse_failure& f, OnField&& on_field) {
  using namespace detail;
  std::size_t pos = 0;
  skip_ws(in, pos);
  if (pos >= in.size() || in[pos] != '{') return fail(f, pos, "expected '{' (one JSON object per line), found " + found(in, pos));
  ++pos;
  skip_ws(in, pos);
  std::string name;
  value v;
  std::string names[32];  // names so far: objects of this format are small
  std::size_t named = 0;
  bool first = true;
  for (;;) {
    if (pos < in.size() && in[pos] == '}' && first) {
      ++pos;
      break;
    }
    if (pos >= in.size() || in[pos] != '"') return fail(f, pos, std::string("expected ") + (first ? "'\"' or '}'" : "'\"'") + " to start a member name, found " + found(in, pos));
    const std::size_t name_at = pos;
    if (!parse_string(in, pos, name, f)) return false;
    for (std::size_t k = 0; k < named; ++k) {
      if (names[k] == name) return fail(f, name_at, "expected each member name once, found \"" + name + "\" again");
    }
    if (named == 32) return fail(f, name_at, "expected at most 32 members in an object");
    names[named++] = name;
    skip_ws(in, pos);
    if (pos >= in.size() || in[pos] != ':') return fail(f, pos, "expected ':' after the member name, found " + found(in, pos));
    ++pos;
    skip_ws(in, pos);
    v = value{};
    v.offset = pos;
    if (pos >= in.size()) return fail(f, pos, "expected a value, found the end of the line");
    const char c = in[pos];
    if (c == '"') {
      v.k = value::kind::string;
      if (!parse_string(in, pos, v.s, f)) return false;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      if (!parse_number(in, pos, v, f)) return false;
    } else if (in.substr(pos, 4) == "true") {
      v.k = value::kind::boolean, v.b = true, pos += 4;
    } else if (in.substr(pos, 5) == "false") {
      v.k = value::kind::boolean, v.b = false, pos += 5;
    } else if (in.substr(pos, 4) == "null") {
      v.k = value::kind::null, pos += 4;
    } else if (c == '{' || c == '[') {
      return fail(f, pos, "expected a string, number, boolean or null (nested objects and arrays are not part of the format), found " + found(in, pos));
    } else {
      return fail(f, pos, "expected a value (string, number, true, false or null), found " + found(in, pos));
    }
    if (std::string msg = on_field(name, v); !msg.empty()) return fail(f, v.offset, std::move(msg));
    skip_ws(in, pos);
    first = false;
    if (pos < in.size() && in[pos] == ',') {
      ++pos;
      skip_ws(in, pos);
      continue;
    }
    if (pos < in.size() && in[pos] == '}') {
      ++pos;
      break;
    }
    return fail(f, pos, "expected ',' or '}' after a value, found " + found(in, pos));
  }
  skip_ws(in, pos);
  if (pos != in.size()) return fail(f, pos, "expected the end of the line after the object, found " + found(in, pos));
  return true;
}

}  // namespace gfsl::traces::json
