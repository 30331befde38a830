#include "core/profile_table.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace sb {
namespace {

TEST(ProfileTable, EveryIdHasOneEntryAndEveryNameAndKeyIsUnique) {
  std::set<int> ids;
  std::set<std::string_view> names;
  for (const ProfileSpec& p : Profiles()) {
    EXPECT_TRUE(ids.insert(static_cast<int>(p.id)).second) << p.name;
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    if (p.key != p.name) {
      EXPECT_TRUE(names.insert(p.key).second) << p.key;
    }
    EXPECT_EQ(&Profile(p.id), &p);
    EXPECT_FALSE(p.rows.empty()) << p.name;
    EXPECT_FALSE(p.summary.empty()) << p.name;
    EXPECT_EQ(p.dim.empty(), p.dim_unit.empty()) << p.name;
  }
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(ProfileId::kSessions) + 1);
}

TEST(ProfileTable, NamesAndResultKeysFindTheSameProfileAndNothingElseDoes) {
  const ProfileSpec* by_name = FindProfile("max-tokens");
  ASSERT_NE(by_name, nullptr);
  EXPECT_EQ(by_name, FindProfile("max_tokens"));
  EXPECT_EQ(by_name->key, "max_tokens");
  EXPECT_EQ(FindProfile("tttf"), nullptr);
  EXPECT_EQ(FindProfile(""), nullptr);
  EXPECT_EQ(ProfileDisplayName("max_tokens"), "max-tokens");
  EXPECT_EQ(ProfileDisplayName("suite"), "suite");
}

TEST(ProfileTable, RateIsNotInTheDefaultRunNorInSuites) {
  const ProfileSpec& rate = Profile(ProfileId::kRate);
  EXPECT_FALSE(rate.in_default_run);
  EXPECT_FALSE(rate.in_suites);
  EXPECT_EQ(ProfileNameList(),
            "decode, concurrency, max-tokens, ttft, context, rate, replay, sessions");
  EXPECT_EQ(ProfileNameList(/*suites_only=*/true),
            "decode, concurrency, max-tokens, ttft, context");
  EXPECT_NE(rate.flags.find("--rates"), std::string_view::npos);
}

}  // namespace
}  // namespace sb
