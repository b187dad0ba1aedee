// What the two trace forms share inside the library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/trace.hpp"

namespace gfsl::traces::detail {

// "\x89GFSLTR\n": a non-ASCII first byte, so that no text file starts like
// it, and a newline that text-mode transfers would mangle visibly.
inline constexpr unsigned char magic[8] = {0x89, 'G', 'F', 'S', 'L', 'T', 'R', '\n'};

// Every header field, known ones first, then the extra ones, as written.
std::vector<extra_field> header_fields(const trace_header& h);
// Sets a known field or keeps an unknown one; empty, or what was expected.
std::string apply_field(trace_header& h, const extra_field& f);

// `bytes_read`: see read_trace.
trace read_binary(const std::string& path, std::atomic<std::uint64_t>* bytes_read = nullptr);
// `ranges`: read the file as at most this many ranges, in parallel (cut at
// line starts); 0: one per core, each of at least 16 MiB.
trace read_json(const std::string& path, unsigned ranges = 0, std::atomic<std::uint64_t>* bytes_read = nullptr);

std::string errno_text();

}  // namespace gfsl::traces::detail
