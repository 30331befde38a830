// core/units: the unit of a results.json figure, read from its key, the same for the CSV export
// and the run store (the store read "tok_s" as seconds and the CSV read "_gb_s" as seconds while
// each had its own copy).
#include "core/units.h"

#include <gtest/gtest.h>

namespace sb {
namespace {

TEST(Units, SpeedsAreTokensPerSecondWhateverComesAfterThem) {
  EXPECT_EQ(UnitOfKey("decode_tok_s"), "tok/s");
  EXPECT_EQ(UnitOfKey("tok_s"), "tok/s");  // max-tokens' figure incl. TTFT; not seconds
  EXPECT_EQ(UnitOfKey("tok_s_per_user"), "tok/s");
  EXPECT_EQ(UnitOfKey("total_tok_s_per_gpu"), "tok/s");
}

TEST(Units, LongerSuffixesWinOverSeconds) {
  EXPECT_EQ(UnitOfKey("bandwidth_gb_s"), "GB/s");
  EXPECT_EQ(UnitOfKey("achieved_rate_rps"), "req/s");
  EXPECT_EQ(UnitOfKey("wall_s"), "s");
  EXPECT_EQ(UnitOfKey("ttft_ms"), "ms");
  EXPECT_EQ(UnitOfKey("send_wait_us"), "us");
}

TEST(Units, ShareCountsAndSizesHaveTheirOwnUnits) {
  EXPECT_EQ(UnitOfKey("cpu_pct"), "%");
  EXPECT_EQ(UnitOfKey("percent_of_ceiling"), "%");
  EXPECT_EQ(UnitOfKey("acceptance_rate"), "fraction");
  EXPECT_EQ(UnitOfKey("prompt_tokens"), "tokens");
  EXPECT_EQ(UnitOfKey("size"), "tokens");
  EXPECT_EQ(UnitOfKey("image_bytes"), "bytes");
  EXPECT_EQ(UnitOfKey("errors"), "");
  EXPECT_EQ(UnitOfKey("ok"), "");
}

}  // namespace
}  // namespace sb
