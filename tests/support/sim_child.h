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

  const std::string& url() const { return url_; }

  Child& child() { return *child_; }

 private:
  std::unique_ptr<Child> child_;
  std::string url_;
};

}  // namespace sb::testing
