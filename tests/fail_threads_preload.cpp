// Loaded with LD_PRELOAD by test_io and test_scale: a thread or process
// limit (RLIMIT_NPROC, a pids cgroup), which a test running as root cannot
// impose on itself (root is exempt from RLIMIT_NPROC). pthread_create
// succeeds for the first GFSL_TEST_THREADS_ALLOWED calls of the process and
// then fails with EAGAIN; fork, for the first GFSL_TEST_FORKS_ALLOWED calls,
// then fails with EAGAIN as it does at the limit. Each variable left unset
// leaves its call alone.
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace {
using create_fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using fork_fn = pid_t (*)();
std::atomic<long> created{0};
std::atomic<long> forked{0};
}  // namespace

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  static const auto real = reinterpret_cast<create_fn>(dlsym(RTLD_NEXT, "pthread_create"));
  const char* allowed = std::getenv("GFSL_TEST_THREADS_ALLOWED");
  if (allowed && created.fetch_add(1) >= std::atol(allowed)) return EAGAIN;
  return real(thread, attr, start, arg);
}

extern "C" pid_t fork() {
  static const auto real = reinterpret_cast<fork_fn>(dlsym(RTLD_NEXT, "fork"));
  const char* allowed = std::getenv("GFSL_TEST_FORKS_ALLOWED");
  if (allowed && forked.fetch_add(1) >= std::atol(allowed)) {
    errno = EAGAIN;
    return -1;
  }
  return real();
}
