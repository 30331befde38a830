// Test support: a temporary directory removed with everything in it, and small file readers.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::testing {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/servebench-test-XXXXXX";
    const char* made = mkdtemp(tmpl);
    if (made == nullptr) {  // never fall back to a shared directory: the destructor removes it
      throw std::runtime_error("TempDir: mkdtemp under /tmp failed");
    }
    path_ = made;
  }

  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<nlohmann::json> ReadJsonl(const std::filesystem::path& p) {
  std::vector<nlohmann::json> out;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) {
      out.push_back(nlohmann::json::parse(line));
    }
  }
  return out;
}

}  // namespace sb::testing
