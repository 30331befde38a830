// RunCode: Python and C++ sources through the sandbox.
#include <string>

#include <gtest/gtest.h>

#include "sandbox/sandbox.h"
#include "sandbox/sandbox_test_util.h"

namespace sb::sandbox {
namespace {

CodeOptions Options() {
  CodeOptions o;
  o.run = testutil::Small();
  return o;
}

TEST(SandboxRunCode, Python) {
  auto r = RunCode(Language::kPython, "s = input()\nprint(s[::-1])\n", "abc\n", Options());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::kExited) << testutil::Describe(*r);
  EXPECT_EQ(r->stdout_data, "cba\n");
}

TEST(SandboxRunCode, MissingInterpreterIsASetupError) {
  CodeOptions o = Options();
  o.python = "/nonexistent/python3";
  auto r = RunCode(Language::kPython, "print(1)", "", o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kSetup);
  EXPECT_NE(r.error().message.find("/nonexistent/python3"), std::string::npos);

  o.python = "no-such-python-anywhere";
  r = RunCode(Language::kPython, "print(1)", "", o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kSetup);
}

TEST(SandboxRunCode, MissingCompilerIsASetupError) {
  CodeOptions o = Options();
  o.cxx = "/nonexistent/g++";
  auto r = RunCode(Language::kCpp, "int main() {}", "", o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kSetup);
  EXPECT_NE(r.error().message.find("/nonexistent/g++"), std::string::npos);
}

TEST(SandboxRunCode, Cpp) {
  auto r = RunCode(Language::kCpp,
                   "#include <iostream>\n#include <string>\n"
                   "int main() { std::string s; std::cin >> s;\n"
                   "  std::cout << \"hello \" << s << std::endl; return 4; }\n",
                   "sandbox\n", Options());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::kExited) << testutil::Describe(*r);
  EXPECT_EQ(r->exit_code, 4);
  EXPECT_EQ(r->stdout_data, "hello sandbox\n");
}

TEST(SandboxRunCode, CppCompileError) {
  auto r = RunCode(Language::kCpp, "int main() { return undeclared_name; }\n", "", Options());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::kCompileError) << testutil::Describe(*r);
  EXPECT_EQ(r->reason.rfind("compile error: ", 0), 0u) << r->reason;
  EXPECT_NE(r->reason.find("error"), std::string::npos);
  EXPECT_NE(r->reason.find("undeclared_name"), std::string::npos) << r->reason;
  EXPECT_EQ(r->reason.find('\n'), std::string::npos);
  EXPECT_NE(r->stderr_data.find("main.cpp"), std::string::npos);
}

TEST(SandboxRunCode, CppBadAllocIsAMemoryLimit) {
  CodeOptions o = Options();
  o.run.memory_bytes = 256ull << 20;
  auto r = RunCode(Language::kCpp,
                   "#include <vector>\n#include <cstdio>\n"
                   "int main() { std::vector<char> v(std::size_t(1) << 32, 1);\n"
                   "  std::printf(\"%d\\n\", v[12345]); }\n",
                   "", o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::kMemoryLimit) << testutil::Describe(*r);
  EXPECT_NE(r->reason.find("std::bad_alloc"), std::string::npos) << r->reason;
}

}  // namespace
}  // namespace sb::sandbox
