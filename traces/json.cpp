#include "traces/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gfsl::traces::json {

std::string show_byte(int c) {
  if (c >= 0x20 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", c & 0xFF);
  return buf;
}

namespace detail {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

// Length of the UTF-8 sequence at `p` (0 when malformed).
std::size_t utf8_length(std::string_view in, std::size_t p) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(in[i]); };
  const unsigned char c = b(p);
  std::size_t n;
  std::uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) n = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0) n = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0) n = 4, cp = c & 0x07;
  else return 0;
  if (p + n > in.size()) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((b(p + i) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(p + i) & 0x3F);
  }
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  return n;
}

bool parse_string(std::string_view in, std::size_t& pos, std::string& out, parse_failure& f) {
  out.clear();
  ++pos;  // the opening quote
  for (;;) {
    if (pos >= in.size()) return fail(f, pos, "expected '\"' to end the string, found the end of the line");
    const char c = in[pos];
    if (c == '"') {
      ++pos;
      return true;
    }
    if (static_cast<unsigned char>(c) < 0x20) return fail(f, pos, "expected a printable character or an escape in the string, found " + show_byte(static_cast<unsigned char>(c)));
    if (c != '\\') {
      const std::size_t n = utf8_length(in, pos);
      if (n == 0) return fail(f, pos, "expected UTF-8 text in the string, found the byte " + show_byte(static_cast<unsigned char>(c)));
      out.append(in.substr(pos, n));
      pos += n;
      continue;
    }
    if (pos + 1 >= in.size()) return fail(f, pos, "expected an escape after '\\', found the end of the line");
    const char e = in[pos + 1];
    pos += 2;
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        auto read4 = [&](std::uint32_t& cp) {
          if (pos + 4 > in.size()) return false;
          cp = 0;
          for (int i = 0; i < 4; ++i) {
            const int d = hex_digit(in[pos + i]);
            if (d < 0) return false;
            cp = cp * 16 + static_cast<std::uint32_t>(d);
          }
          pos += 4;
          return true;
        };
        std::uint32_t cp;
        if (!read4(cp)) return fail(f, pos, "expected four hex digits after \\u");
        if (cp >= 0xDC00 && cp <= 0xDFFF) return fail(f, pos - 6, "expected a high surrogate before a low one in \\u escapes");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          std::uint32_t lo;
          if (pos + 2 > in.size() || in[pos] != '\\' || in[pos + 1] != 'u') return fail(f, pos, "expected a \\u low surrogate after a high one");
          pos += 2;
          if (!read4(lo) || lo < 0xDC00 || lo > 0xDFFF) return fail(f, pos, "expected a \\u low surrogate (DC00-DFFF) after a high one");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        // A NUL would end the name or value wherever it is passed on as C
        // text; the format has no use for one.
        if (cp == 0) return fail(f, pos - 6, "expected no NUL character (\\u0000) in a string");
        append_utf8(out, cp);
        break;
      }
      default: return fail(f, pos - 1, "expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u, found " + show_byte(static_cast<unsigned char>(e)));
    }
  }
}

bool parse_number(std::string_view in, std::size_t& pos, value& v, parse_failure& f) {
  const std::size_t start = pos;
  bool integral = true;
  if (in[pos] == '-') ++pos, integral = false;
  auto digits = [&] {
    const std::size_t s = pos;
    while (pos < in.size() && in[pos] >= '0' && in[pos] <= '9') ++pos;
    return pos - s;
  };
  if (pos >= in.size() || !(in[pos] >= '0' && in[pos] <= '9')) return fail(f, pos, "expected a digit, found " + found(in, pos));
  if (in[pos] == '0' && pos + 1 < in.size() && in[pos + 1] >= '0' && in[pos + 1] <= '9') return fail(f, pos, "expected a number without leading zeros");
  digits();
  if (pos < in.size() && in[pos] == '.') {
    ++pos;
    integral = false;
    if (digits() == 0) return fail(f, pos, "expected a digit after '.', found " + found(in, pos));
  }
  if (pos < in.size() && (in[pos] == 'e' || in[pos] == 'E')) {
    ++pos;
    integral = false;
    if (pos < in.size() && (in[pos] == '+' || in[pos] == '-')) ++pos;
    if (digits() == 0) return fail(f, pos, "expected a digit in the exponent, found " + found(in, pos));
  }
  const std::string_view text = in.substr(start, pos - start);
  if (integral) {
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v.u);
    if (ec != std::errc() || p != text.data() + text.size()) return fail(f, start, "expected an integer below 2^64, found " + std::string(text));
    v.k = value::kind::unsigned_integer;
    v.r = static_cast<double>(v.u);
    return true;
  }
  const std::string copy(text);
  char* end = nullptr;
  v.r = std::strtod(copy.c_str(), &end);
  if (!std::isfinite(v.r)) return fail(f, start, "expected a finite number, found " + copy);
  v.k = value::kind::real;
  return true;
}

}  // namespace detail

bool valid_utf8(std::string_view s) {
  for (std::size_t p = 0; p < s.size();) {
    const std::size_t n = detail::utf8_length(s, p);
    if (n == 0) return false;
    p += n;
  }
  return true;
}

void append_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const auto c = static_cast<unsigned char>(ch);
    // DEL and the C1 controls (U+0080..U+009F, C2 80..C2 9F in UTF-8) are
    // written as escapes too: a terminal showing the JSON must not obey them.
    if (c == 0x7F || (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                      static_cast<unsigned char>(s[i + 1]) <= 0x9F)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c == 0x7F ? 0x7F : static_cast<unsigned char>(s[++i]));
      out += buf;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

std::string quote(std::string_view s) {
  std::string out;
  append_string(out, s);
  return out;
}

void append_real(std::string& out, double d) {
  char buf[64];
  const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string_view text(buf, ec == std::errc() ? static_cast<std::size_t>(p - buf) : 0);
  out += text;
  if (text.find_first_of(".eE") == std::string_view::npos) out += ".0";
}

}  // namespace gfsl::traces::json
