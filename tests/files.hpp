// Whole files in and out, byte for byte, for the tests that write inputs
// and read back what gfsl wrote.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

namespace gfsl::testing_files {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The files and folders a test binary made under the test temp folder, all
// named "<prefix><pid>_...": removed when the binary's tests end, so that
// runs do not pile up in /tmp. Registered once per binary:
//   ::testing::AddGlobalTestEnvironment(new temp_files_removed("gfsl_io_"));
class temp_files_removed : public ::testing::Environment {
 public:
  explicit temp_files_removed(std::string prefix) : prefix_(std::move(prefix) + std::to_string(::getpid()) + "_") {}
  void TearDown() override {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir(), ec)) {
      if (entry.path().filename().string().rfind(prefix_, 0) == 0) std::filesystem::remove_all(entry.path(), ec);
    }
  }

 private:
  std::string prefix_;
};

}  // namespace gfsl::testing_files
