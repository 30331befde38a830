// The sizes the code keeps (docs/architecture.md "Build"): no file of src/ over 800 lines and no
// function over 120, so a module stays readable in one sitting and a function on one screen or
// two. A file or function that grows past them is split before it lands.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sb {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxFileLines = 800;
constexpr std::size_t kMaxFunctionLines = 120;

std::vector<std::string> Lines(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

std::vector<fs::path> SourceFiles() {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SB_SOURCE_DIR) / "src")) {
    const auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".cpp" || ext == ".h")) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct Function {
  std::string where;  // file:line of its first line
  std::size_t lines = 0;
};

// The functions defined at namespace scope, as clang-format lays them out (namespaces are not
// indented): a definition starts on a line at column 0 that is not a preprocessor line, a
// comment, a declaration of a type or a namespace, and ends at a line that is exactly "}".
// Members defined inside a class body are indented and counted with the class, not here.
std::vector<Function> Functions(const fs::path& file, const std::vector<std::string>& lines) {
  std::vector<Function> out;
  std::size_t start = 0;
  bool open = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l == "}") {
      if (open) {
        out.push_back({file.filename().string() + ":" + std::to_string(start + 1), i - start + 1});
      }
      open = false;
      continue;
    }
    if (open || l.empty() || l[0] == ' ' || l[0] == '#' || l[0] == '/' || l[0] == '}' ||
        l.starts_with("namespace") || l.starts_with("using") || l.starts_with("struct") ||
        l.starts_with("class") || l.starts_with("enum") || l.starts_with("union") ||
        l.starts_with("template") || l.starts_with("extern")) {
      continue;
    }
    // The signature may run over several lines: the definition opens where one ends in "{".
    for (std::size_t j = i; j < lines.size() && j < i + 8; ++j) {
      if (lines[j].ends_with(";")) {
        break;  // a declaration, or a variable
      }
      if (lines[j].ends_with("{")) {
        open = lines[j].find('=') == std::string::npos;  // not an initializer: `T x[] = {`
        start = i;
        break;
      }
    }
  }
  return out;
}

TEST(SourceSize, NoFileOfSrcIsOver800Lines) {
  const auto files = SourceFiles();
  ASSERT_GT(files.size(), 100U);  // the tree was found
  for (const fs::path& f : files) {
    EXPECT_LE(Lines(f).size(), kMaxFileLines) << f.lexically_relative(SB_SOURCE_DIR).string();
  }
}

TEST(SourceSize, NoFunctionOfSrcIsOver120Lines) {
  std::size_t functions = 0;
  for (const fs::path& f : SourceFiles()) {
    for (const Function& fn : Functions(f, Lines(f))) {
      ++functions;
      EXPECT_LE(fn.lines, kMaxFunctionLines) << fn.where;
    }
  }
  EXPECT_GT(functions, 1000U);  // the scan finds the functions it is meant to measure
}

TEST(SourceSize, TheFunctionScanMeasuresADefinitionAndSkipsTypesAndTables) {
  const std::vector<std::string> lines = {
      "namespace sb {",
      "int Add(int a,",
      "        int b) {",
      "  return a + b;",
      "}",
      "struct S {",
      "  int x;",
      "};",
      "const int kTable[] = {",
      "    1, 2,",
      "};",
      "int Declared(int);",
      "}  // namespace sb",
  };
  const auto fns = Functions("x.cpp", lines);
  ASSERT_EQ(fns.size(), 1U);
  EXPECT_EQ(fns[0].where, "x.cpp:2");
  EXPECT_EQ(fns[0].lines, 4U);
}

}  // namespace
}  // namespace sb
