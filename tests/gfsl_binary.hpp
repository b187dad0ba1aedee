// Runs the built gfsl program (its path comes from the build as GFSL_BINARY)
// the way a user's shell would, for the tests of its commands.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace gfsl::testing_cli {

struct result {
  int code;         // exit code, -1 when the program did not exit normally
  std::string out;  // standard output and standard error together
};

inline result run(const std::string& args) {
  const std::string cmd = std::string(GFSL_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  result r{-1, {}};
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p)) r.out += buf.data();
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace gfsl::testing_cli
