// A binary trace taken apart into its sections and put together again, for
// tests that change a trace at the level of its sections (a type, a length,
// an order, a removal, a duplicate) or that write it by an older version's
// rules (traces/FORMAT.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/trace.hpp"

namespace gfsl::testing_files {

struct raw_section {
  std::uint32_t type = 0;
  std::string payload;
  std::uint64_t stored_sum = 0;  // as read
};

inline std::uint64_t le64(const std::string& b, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}
inline void put_le32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>(v >> (8 * i));
}
inline void put_le64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>(v >> (8 * i));
}

// The sections of a whole, well-formed binary trace, in file order.
inline std::vector<raw_section> sections_of(const std::string& bytes) {
  std::vector<raw_section> out;
  for (std::size_t at = 16; at + 16 <= bytes.size();) {
    raw_section s;
    s.type = static_cast<std::uint32_t>(le64(bytes, at) & 0xFFFFFFFFu);
    const std::uint64_t n = le64(bytes, at + 8);
    s.payload = bytes.substr(at + 16, n);
    s.stored_sum = le64(bytes, at + 16 + n);
    out.push_back(s);
    at += 16 + n + 8;
  }
  return out;
}

// The bytes of a trace of `version` with these sections, each checksummed
// by that version's rule. The end section's payload is not made here: a
// version 3 trace gets the payload its sections call for unless
// `end_payload_as_given`, older versions an empty one.
inline std::string assemble(std::uint32_t version, std::vector<raw_section> sections, bool end_payload_as_given = false) {
  std::string out("\x89GFSLTR\n", 8);
  put_le32(out, version);
  put_le32(out, 0);
  std::string chain;
  std::uint64_t count = 0;
  for (raw_section& s : sections) {
    if (s.type == 0 && !end_payload_as_given) {
      s.payload.clear();
      if (version >= 3) {
        put_le64(s.payload, count);
        put_le64(s.payload,
                 traces::section_checksum(reinterpret_cast<const unsigned char*>(chain.data()), chain.size()));
      }
    }
    const auto* p = reinterpret_cast<const unsigned char*>(s.payload.data());
    const std::uint64_t sum =
        version >= 3 ? traces::section_checksum(s.type, p, s.payload.size()) : traces::section_checksum(p, s.payload.size());
    put_le32(out, s.type);
    put_le32(out, 0);
    put_le64(out, s.payload.size());
    out += s.payload;
    put_le64(out, sum);
    put_le64(chain, sum);
    ++count;
  }
  return out;
}

}  // namespace gfsl::testing_files
