// What the two trace forms share inside the library.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
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

// The bytes of a trace, from a file by name, "-" (standard input), or any
// file that cannot seek (a pipe, a FIFO, a process substitution). The
// format sniffer's bytes are held and given again to the reader, so that a
// stream loses nothing to the sniffing.
class input {
 public:
  // Throws trace_error "NAME: cannot open: ...".
  explicit input(const std::string& path);
  // How errors name it: the path, or "standard input" for "-".
  const std::string& name() const { return name_; }
  // A regular file (not "-"): its size is known, it can seek and be reopened.
  bool regular() const { return regular_; }
  std::uint64_t size() const { return size_; }
  // Up to n bytes; fewer only at the end. Throws trace_error on a read error.
  std::size_t read(void* into, std::size_t n);
  // The sniffer's reads are held; replay() gives them again to the next reads.
  void hold() { holding_ = true; }
  void replay() { holding_ = false, held_at_ = 0, position_ = 0; }
  // Regular files only: continue from this offset.
  void seek(std::uint64_t offset);
  std::uint64_t position() const { return position_; }

 private:
  std::string name_;
  std::unique_ptr<FILE, int (*)(FILE*)> f_{nullptr, &std::fclose};
  bool regular_ = false;
  std::uint64_t size_ = 0;
  std::uint64_t position_ = 0;  // bytes given to the reader (held ones count once replayed)
  bool holding_ = false;
  std::vector<unsigned char> held_;
  std::size_t held_at_ = 0;
};

// Which form the input holds, from its first bytes, which are held for the
// reader (in.replay() gives them again).
trace_format sniff(input& in);

// `bytes_read`: see read_trace.
// `keep_cut`: see read_trace.
trace read_binary(input& in, std::atomic<std::uint64_t>* bytes_read = nullptr, bool keep_cut = false);
trace read_binary(const std::string& path, std::atomic<std::uint64_t>* bytes_read = nullptr, bool keep_cut = false);
// `ranges`: read the file as at most this many ranges, in parallel (cut at
// line starts); 0: one per core, each of at least 16 MiB.
// `ops`: see read_trace.
// `choose`: see read_trace (given, `ops` is not used).
trace read_json(const std::string& path, unsigned ranges = 0, std::atomic<std::uint64_t>* bytes_read = nullptr,
                const operation_table* ops = nullptr, const model_chooser* choose = nullptr);
// One range, from a stream (what the sniffer held is read first).
trace read_json(input& in, std::atomic<std::uint64_t>* bytes_read = nullptr, const operation_table* ops = nullptr,
                const model_chooser* choose = nullptr);

std::string errno_text();

}  // namespace gfsl::traces::detail
