#include "core/profile_table.h"

#include <set>
#include <string>
#include <vector>

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
  // The ids are 0 .. N-1: one entry each, none missing.
  EXPECT_EQ(ids.size(), Profiles().size());
  EXPECT_EQ(*ids.rbegin(), static_cast<int>(Profiles().size()) - 1);
}

TEST(ProfileTable, EveryProfileIsDrawnByTheReports) {
  // The profiles with report sections of their own (src/report: RenderProfile's cases) say so in
  // their entries; every other profile must be drawn from its rows: metrics, a title and a dim.
  const std::set<ProfileId> own = {
      ProfileId::kDecode,  ProfileId::kConcurrency, ProfileId::kMaxTokens, ProfileId::kTtft,
      ProfileId::kContext, ProfileId::kRate,        ProfileId::kReplay,    ProfileId::kSessions};
  for (const ProfileSpec& p : Profiles()) {
    EXPECT_EQ(p.own_sections, own.contains(p.id)) << p.name;
    if (!p.own_sections) {
      EXPECT_FALSE(p.metrics.empty()) << p.name << " has no writer and no metrics";
      EXPECT_FALSE(p.title.empty()) << p.name;
    }
    // A profile with metrics is compared from them: its rows need a place and a title.
    if (!p.metrics.empty()) {
      EXPECT_FALSE(p.title.empty()) << p.name;
      EXPECT_FALSE(p.dim.empty()) << p.name;
      EXPECT_FALSE(p.dim_unit.empty()) << p.name;
    }
  }
}

TEST(ProfileTable, EveryOptionIsOneProfilesAndItsDefaultIsValid) {
  std::set<std::string_view> flags;
  for (const ProfileSpec& p : Profiles()) {
    for (const OptionSpec& o : p.options) {
      EXPECT_TRUE(o.flag.starts_with("--")) << o.flag;
      EXPECT_TRUE(flags.insert(o.flag).second) << o.flag;
      EXPECT_EQ(CheckOption(o, o.default_value), "") << o.flag;
      EXPECT_TRUE(ProfileReads(p, o.flag));
      EXPECT_EQ(FindOption(o.flag).first, &p);
      EXPECT_FALSE(o.help.empty()) << o.flag;
    }
  }
  EXPECT_TRUE(ProfileReads(Profile(ProfileId::kMaxTokens), "--lengths"));
  EXPECT_FALSE(ProfileReads(Profile(ProfileId::kMaxTokens), "--levels"));
  EXPECT_EQ(FindOption("--levels").first, &Profile(ProfileId::kConcurrency));
  EXPECT_EQ(FindOption("--dataset").second, nullptr);  // shared and text: hand-registered
  // A flag is declared once: as a table option or in `flags`, never both.
  for (const ProfileSpec& p : Profiles()) {
    for (const OptionSpec& o : p.options) {
      EXPECT_EQ(std::string_view(p.flags).find(o.flag), std::string_view::npos) << o.flag;
    }
  }
}

TEST(ProfileTable, TheOlderProfilesNumbersReadAsTheirDefaultsOrAsSet) {
  ProfileArgs args;
  EXPECT_EQ(args.Ints("--levels"), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(args.Ints("--lengths"), (std::vector<int>{64, 128, 256, 512, 1024}));
  EXPECT_EQ(args.Int("--length-runs"), 1);
  EXPECT_EQ(args.Ints("--sizes"), (std::vector<int>{100, 500, 2000, 8000, 32000, 128000}));
  EXPECT_EQ(args.Number("--depth"), 0.5);
  args.SetInts("--levels", {3, 12});
  args.SetNumber("--depth", 0.25);
  EXPECT_EQ(args.Ints("--levels"), (std::vector<int>{3, 12}));
  EXPECT_EQ(args.Number("--depth"), 0.25);
  EXPECT_EQ(args.given().at("--levels"), "3,12");
  EXPECT_EQ(CheckOption(*FindOption("--levels").second, "1,0"),
            "--levels must be whole numbers in [1, 1000000], got '0'");
  EXPECT_EQ(CheckOption(*FindOption("--depth").second, "1.5"),
            "--depth must be a number in [0, 1], got '1.5'");
}

TEST(ProfileTable, OptionValuesAreCheckedAndReadWithTheirDefaults) {
  const OptionSpec count{"--hits", OptionSpec::kNumber, "3", 1, 1000, true, "hits"};
  const OptionSpec sizes{"--sizes-x", OptionSpec::kNumbers, "10,20", 16, 1e6, true, "sizes"};
  const OptionSpec share{"--share", OptionSpec::kNumber, "0.5", 0, 1, false, "share"};
  EXPECT_EQ(CheckOption(count, "7"), "");
  EXPECT_EQ(CheckOption(count, "0"), "--hits must be a whole number in [1, 1000], got '0'");
  EXPECT_EQ(CheckOption(count, "2.5"), "--hits must be a whole number in [1, 1000], got '2.5'");
  EXPECT_EQ(CheckOption(count, "1,2"), "--hits takes one number, got '1,2'");
  EXPECT_EQ(CheckOption(count, "abc"), "--hits must be a whole number in [1, 1000], got 'abc'");
  EXPECT_EQ(CheckOption(count, "nan"), "--hits must be a whole number in [1, 1000], got 'nan'");
  EXPECT_EQ(CheckOption(sizes, "1000, 4000"), "");
  EXPECT_EQ(CheckOption(sizes, "1000,,4000"), "--sizes-x 1000,,4000: an empty item in the list");
  EXPECT_EQ(CheckOption(sizes, ""), "--sizes-x must be whole numbers in [16, 1000000], got ''");
  EXPECT_EQ(CheckOption(sizes, "8"), "--sizes-x must be whole numbers in [16, 1000000], got '8'");
  EXPECT_EQ(CheckOption(share, "0.25"), "");
  EXPECT_EQ(CheckOption(share, "1.5"), "--share must be a number in [0, 1], got '1.5'");

  // Values given are read as given; a flag the table does not know reads as nothing.
  ProfileArgs args;
  EXPECT_TRUE(args.given().empty());
  EXPECT_EQ(args.Number("--no-such-flag"), 0);
  EXPECT_TRUE(args.Numbers("--no-such-flag").empty());
  args.Set("--no-such-flag", "1000, 4000");
  EXPECT_EQ(args.Numbers("--no-such-flag"), (std::vector<double>{1000, 4000}));
  args.Set("--no-such-flag", "5");
  EXPECT_EQ(args.Number("--no-such-flag"), 5);
  EXPECT_EQ(args.given().size(), 1U);
  // Every table option reads as its default until given.
  for (const ProfileSpec& p : Profiles()) {
    for (const OptionSpec& o : p.options) {
      EXPECT_FALSE(ProfileArgs().Numbers(o.flag).empty()) << o.flag;
    }
  }
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
            "decode, concurrency, max-tokens, ttft, context, rate, replay, sessions, prefix-cache");
  EXPECT_EQ(ProfileNameList(/*suites_only=*/true),
            "decode, concurrency, max-tokens, ttft, context");
  EXPECT_NE(rate.flags.find("--rates"), std::string_view::npos);
}

}  // namespace
}  // namespace sb
