#include "core/result.h"

#include <gtest/gtest.h>

namespace sb {
namespace {

Result<int> Half(int v) {
  if (v % 2 != 0) {
    return MakeError(ErrorCode::kUsage, "odd");
  }
  return v / 2;
}

TEST(ResultTest, CarriesValueOrError) {
  auto ok = Half(4);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*ok, 2);
  auto bad = Half(3);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::kUsage);
  EXPECT_EQ(bad.error().message, "odd");
}

TEST(ResultTest, WithContextPrefixesMessage) {
  Error e = MakeError(ErrorCode::kIo, "no such file").WithContext("reading suite.yaml");
  EXPECT_EQ(e.message, "reading suite.yaml: no such file");
  EXPECT_EQ(e.code, ErrorCode::kIo);
}

TEST(ResultTest, VoidResult) {
  Result<void> ok;
  EXPECT_TRUE(ok.has_value());
  Result<void> bad = MakeError(ErrorCode::kSetup, "x");
  EXPECT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::kSetup);
}

}  // namespace
}  // namespace sb
