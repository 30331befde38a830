// Test support: `servebench sim` as a child process, with its base URL read from its first line
// ("listening on http://127.0.0.1:PORT/v1"). For the end-to-end tests of the binary.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "support/subprocess.h"

namespace sb::testing {

class SimChild {
 public:
  // Runs `servebench sim --port 0 ARGS...`; url() is empty when it did not start.
  explicit SimChild(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {SB_BINARY, "sim", "--port", "0"};
    argv.insert(argv.end(), args.begin(), args.end());
    child_ = std::make_unique<Child>(argv);
    const std::string line = child_->ReadLine();
    const std::string prefix = "listening on ";
    if (line.rfind(prefix, 0) == 0) {
      url_ = line.substr(prefix.size());
    }
  }

  // Runs `servebench sim --port 0 DEFAULTS... ARGS...`: a test file's usual settings, then a
  // test's own (the two name different flags: a flag given twice is refused).
  SimChild(std::vector<std::string> defaults, const std::vector<std::string>& args)
      : SimChild(Join(std::move(defaults), args)) {}

  const std::string& url() const { return url_; }

  Child& child() { return *child_; }

 private:
  static std::vector<std::string> Join(std::vector<std::string> a,
                                       const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }

  std::unique_ptr<Child> child_;
  std::string url_;
};

}  // namespace sb::testing
