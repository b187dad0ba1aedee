// Loaded with LD_PRELOAD by test_io and test_scale: a full disk. Writes to
// regular files succeed for the first GFSL_TEST_WRITE_BYTES bytes of the
// process, then fail with ENOSPC (the write that crosses the limit is cut
// short, as a filling disk cuts it). A test cannot mount a small tmpfs
// without root; this reaches the same error paths. Standard output, standard
// error and pipes are left alone, so that the process can still say what
// went wrong. Covers write() (the journal, std::ofstream) and fwrite()
// (traces, output files), whose stdio buffer glibc flushes through a write
// that LD_PRELOAD cannot reach.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace {

std::atomic<long long> written{0};

bool limited(int fd) {
  struct stat st;
  return fd > 2 && std::getenv("GFSL_TEST_WRITE_BYTES") && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

// How many of `n` bytes may still be written (all of them, or what is left).
std::size_t allowance(std::size_t n) {
  const long long limit = std::atoll(std::getenv("GFSL_TEST_WRITE_BYTES"));
  const long long before = written.fetch_add(static_cast<long long>(n));
  if (before >= limit) return 0;
  return static_cast<std::size_t>(std::min<long long>(static_cast<long long>(n), limit - before));
}

}  // namespace

extern "C" ssize_t write(int fd, const void* buf, std::size_t n) {
  static const auto real = reinterpret_cast<ssize_t (*)(int, const void*, std::size_t)>(dlsym(RTLD_NEXT, "write"));
  if (!limited(fd) || n == 0) return real(fd, buf, n);
  const std::size_t ok = allowance(n);
  if (ok == 0) {
    errno = ENOSPC;
    return -1;
  }
  return real(fd, buf, ok);
}

extern "C" std::size_t fwrite(const void* buf, std::size_t size, std::size_t count, FILE* f) {
  static const auto real = reinterpret_cast<std::size_t (*)(const void*, std::size_t, std::size_t, FILE*)>(dlsym(RTLD_NEXT, "fwrite"));
  if (!limited(fileno(f)) || size == 0 || count == 0) return real(buf, size, count, f);
  const std::size_t ok = allowance(size * count) / size;
  const std::size_t done = ok ? real(buf, size, ok, f) : 0;
  if (done < count) errno = ENOSPC;
  return done;
}
