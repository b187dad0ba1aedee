// Loaded with LD_PRELOAD by test_io: pthread_create succeeds for the first
// GFSL_TEST_THREADS_ALLOWED calls of the process and then fails with EAGAIN,
// as it does under a thread or process limit (RLIMIT_NPROC, a pids cgroup),
// which a test running as root cannot impose on itself.
#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace {
using create_fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
std::atomic<long> created{0};
}  // namespace

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  static const auto real = reinterpret_cast<create_fn>(dlsym(RTLD_NEXT, "pthread_create"));
  const char* allowed = std::getenv("GFSL_TEST_THREADS_ALLOWED");
  if (allowed && created.fetch_add(1) >= std::atol(allowed)) return EAGAIN;
  return real(thread, attr, start, arg);
}
