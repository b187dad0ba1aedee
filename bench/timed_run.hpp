// A program run to its end with its standard output discarded, timed by
// the wall clock: how the checker benchmarks time `gfsl check` (and its
// peers) as a user's shell would run them.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace gfsl::bench {

struct outcome {
  double wall = 0;
  int code = -1;  // the exit code; -1 when the program did not exit normally
};

inline outcome timed_run(const std::vector<std::string>& argv) {
  const auto start = std::chrono::steady_clock::now();
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen("/dev/null", "w", stdout)) _exit(127);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  outcome r;
  r.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace gfsl::bench
