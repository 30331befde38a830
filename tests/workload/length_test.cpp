// Length distributions (--input-tokens, --output-tokens): parsing, errors, seeded draws whose
// mean is the asked mean within 2% over 10,000 draws, clamping.
#include "workload/length.h"

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace sb::workload {
namespace {

double MeanOf(const LengthSpec& spec, int n, std::uint64_t seed) {
  LengthSampler s(spec, seed);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    sum += s.Next();
  }
  return sum / n;
}

TEST(LengthTest, EveryKindHasItsMeanWithinTwoPercentOver10000Draws) {
  for (const char* text :
       {"500", "uniform:100-900", "normal:500,120", "lognormal:300,0.6", "uniform:1-3"}) {
    const auto spec = ParseLengthSpec(text);
    ASSERT_TRUE(spec) << text << ": " << spec.error().message;
    const double want = SpecMean(*spec);
    const double got = MeanOf(*spec, 10'000, 7);
    EXPECT_NEAR(got, want, 0.02 * want) << text;
  }
  // The lognormal's mean is MEDIAN x exp(SIGMA^2 / 2), not the median.
  EXPECT_NEAR(SpecMean(*ParseLengthSpec("lognormal:300,0.6")), 300 * 1.197217, 0.01);
}

TEST(LengthTest, DrawsAreSeededAndStayInRange) {
  const auto spec = ParseLengthSpec("uniform:10-20");
  ASSERT_TRUE(spec);
  LengthSampler a(*spec, 1), b(*spec, 1), c(*spec, 2);
  bool differs = false;
  int lo = 1000, hi = 0;
  for (int i = 0; i < 1000; ++i) {
    const int x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs = differs || x != c.Next();
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_TRUE(differs);
  EXPECT_EQ(lo, 10);
  EXPECT_EQ(hi, 20);
}

TEST(LengthTest, ClampedToTheContextAndAtLeastOne) {
  LengthSampler wide(*ParseLengthSpec("normal:100,400"), 3, 150);
  for (int i = 0; i < 2000; ++i) {
    const int x = wide.Next();
    EXPECT_GE(x, 1);
    EXPECT_LE(x, 150);
  }
  LengthSampler fixed(*ParseLengthSpec("5000"), 3, 4096);
  EXPECT_EQ(fixed.Next(), 4096);
}

TEST(LengthTest, FileLengthsAreSampledFromTheFile) {
  const auto spec =
      ParseLengthSpec(std::string("file:") + SB_FIXTURES_DIR + "/workloads/lengths.txt");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->values, (std::vector<int>{100, 200, 300, 400, 1000}));
  LengthSampler s(*spec, 9);
  for (int i = 0; i < 100; ++i) {
    const int x = s.Next();
    EXPECT_TRUE(x == 100 || x == 200 || x == 300 || x == 400 || x == 1000) << x;
  }
  EXPECT_NEAR(MeanOf(*spec, 10'000, 5), 400, 8);
}

TEST(LengthTest, BadSpecsAndBadFileLinesAreClearErrors) {
  for (const char* text : {"0", "-3", "abc", "uniform:9-3", "uniform:5", "normal:100",
                           "lognormal:0,1", "poisson:4", "file:", "12.5"}) {
    const auto spec = ParseLengthSpec(text);
    ASSERT_FALSE(spec) << text;
    EXPECT_EQ(spec.error().code, ErrorCode::kUsage) << text;
  }
  const std::string path = ::testing::TempDir() + "/bad-lengths.txt";
  std::ofstream(path) << "100\n200\nlots\n";
  const auto bad = ParseLengthSpec("file:" + path);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find(path + ":3:"), std::string::npos) << bad.error().message;
  const auto missing = ParseLengthSpec("file:/nonexistent/lengths.txt");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kSetup);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace sb::workload
