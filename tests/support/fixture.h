// Test support: reading the captured server traffic vendored in tests/fixtures/ (SB_FIXTURES_DIR,
// set by sb_test) and other test data files.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace sb::testing {

// tests/fixtures/<rel>, e.g. FixturePath("llama.cpp/b4748/resp_stream.txt").
inline std::filesystem::path FixturePath(const std::string& rel) {
  return std::filesystem::path(SB_FIXTURES_DIR) / rel;
}

// The whole file, byte for byte. A file that cannot be opened ends the current test as a failure
// naming the path (googletest reports the exception: "C++ exception with description ... thrown
// in the test body"); it never hands an empty string on to code that would index into nothing.
// A helper returning a value cannot use ASSERT_*, hence the exception.
inline std::string ReadTestFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) {
    throw std::runtime_error("cannot open test file " + path.string() +
                             " (captured traffic lives in tests/fixtures/ of the repository)");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace sb::testing
