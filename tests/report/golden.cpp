#include "report/golden.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>

#include <gtest/gtest.h>

namespace sb::report::testing {

namespace {

std::string Dir(std::string_view sub) {
  return std::string(SB_SOURCE_DIR) + "/tests/report/" + std::string(sub) + "/";
}

bool ReadAll(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

}  // namespace

nlohmann::json LoadData(const std::string& name) {
  std::string text;
  if (!ReadAll(Dir("data") + name, &text)) {
    ADD_FAILURE() << "cannot read test data " << Dir("data") + name;
    return nullptr;
  }
  return nlohmann::json::parse(text);
}

void ExpectGolden(const std::string& actual, const std::string& name) {
  std::string path = Dir("golden") + name;
  const char* update = std::getenv("UPDATE_GOLDEN");
  if (update != nullptr && std::string_view(update) == "1") {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << actual;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    std::cerr << "updated golden " << path << "\n";
    return;
  }
  std::string expected;
  ASSERT_TRUE(ReadAll(path, &expected))
      << "missing golden " << path << "; run with UPDATE_GOLDEN=1 and review it";
  EXPECT_EQ(actual, expected) << "golden " << path
                              << " differs; if the change is intended, rerun with "
                                 "UPDATE_GOLDEN=1 and review the diff";
}

}  // namespace sb::report::testing
