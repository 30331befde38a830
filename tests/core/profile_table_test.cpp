#include "core/profile_table.h"

#include <map>
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

bool SameDeclaration(const OptionSpec& a, const OptionSpec& b) {
  return a.flag == b.flag && a.kind == b.kind && a.default_value == b.default_value &&
         a.min == b.min && a.max == b.max && a.integer == b.integer && a.help == b.help &&
         a.choices == b.choices && a.min_open == b.min_open;
}

TEST(ProfileTable, EveryOptionIsDeclaredOnceAndItsDefaultIsValid) {
  std::map<std::string_view, const OptionSpec*> first;
  for (const ProfileSpec& p : Profiles()) {
    std::set<std::string_view> own;
    for (const OptionSpec& o : p.options) {
      EXPECT_TRUE(o.flag.starts_with("--")) << o.flag;
      EXPECT_TRUE(own.insert(o.flag).second) << p.name << " lists " << o.flag << " twice";
      // A flag two profiles read is one declaration in both lists.
      if (auto [it, fresh] = first.emplace(o.flag, &o); !fresh) {
        EXPECT_TRUE(SameDeclaration(*it->second, o)) << o.flag;
      }
      if (!o.default_value.empty()) {
        EXPECT_EQ(CheckOption(o, o.default_value), "") << o.flag;
      }
      EXPECT_EQ(o.kind == OptionSpec::kChoice, !o.choices.empty()) << o.flag;
      EXPECT_FALSE(o.kind == OptionSpec::kFlag && !o.default_value.empty()) << o.flag;
      EXPECT_TRUE(ProfileReads(p, o.flag));
      EXPECT_NE(FindOption(o.flag).first, nullptr);
      EXPECT_FALSE(o.help.empty()) << o.flag;
    }
  }
  EXPECT_TRUE(ProfileReads(Profile(ProfileId::kMaxTokens), "--lengths"));
  EXPECT_FALSE(ProfileReads(Profile(ProfileId::kMaxTokens), "--levels"));
  EXPECT_EQ(FindOption("--levels").first, &Profile(ProfileId::kConcurrency));
  // --dataset: concurrency's and rate's; FindOption names the first in the table's order.
  EXPECT_EQ(FindOption("--dataset").first, &Profile(ProfileId::kConcurrency));
  EXPECT_TRUE(ProfileReads(Profile(ProfileId::kRate), "--dataset"));
  EXPECT_FALSE(ProfileReads(Profile(ProfileId::kDecode), "--dataset"));
  EXPECT_TRUE(ProfileReads(Profile(ProfileId::kSessions), "--arrival"));
  // --tokens: the profiles that send generated prompts and forced answers, and no other.
  std::vector<std::string_view> readers;
  for (const ProfileSpec& p : Profiles()) {
    if (ProfileReads(p, "--tokens")) {
      readers.push_back(p.name);
    }
  }
  EXPECT_EQ(readers, (std::vector<std::string_view>{"decode", "concurrency", "sessions"}));
  EXPECT_EQ(FindOption("--warmup").second, nullptr);  // every profile's: the CLI's own
}

TEST(ProfileTable, TextChoiceAndFlagOptionsAreCheckedByKind) {
  const OptionSpec& arrival = *FindOption("--arrival").second;
  EXPECT_EQ(CheckOption(arrival, "gamma"), "");
  EXPECT_EQ(CheckOption(arrival, "Gamma"),
            "--arrival must be one of constant, poisson, gamma, got 'Gamma'");
  EXPECT_EQ(CheckOption(arrival, ""), "--arrival must be one of constant, poisson, gamma, got ''");
  const OptionSpec& cached = *FindOption("--context-cached").second;
  EXPECT_EQ(CheckOption(cached, "1"), "");
  EXPECT_EQ(CheckOption(cached, "yes"), "--context-cached takes no value, got 'yes'");
  // Text: its grammar is its profile's to check (perf::ApplyProfileArgs).
  EXPECT_EQ(CheckOption(*FindOption("--trace").second, "any text, even ,,"), "");
  const OptionSpec& slo = *FindOption("--slo").second;
  EXPECT_EQ(CheckOption(slo, "ttft_ms=500,tpot_ms=50"), "");
  EXPECT_EQ(CheckOption(slo, "ttft_ms=500,,tpot_ms=50"),
            "--slo ttft_ms=500,,tpot_ms=50: an empty item in the list");
  // An open lower end: (0, 1e6].
  const OptionSpec& rates = *FindOption("--rates").second;
  EXPECT_EQ(CheckOption(rates, "0.5,2"), "");
  EXPECT_EQ(CheckOption(rates, "2,0"), "--rates must be numbers in (0, 1000000], got '0'");
  EXPECT_EQ(CheckOption(*FindOption("--slo-fraction").second, "0"),
            "--slo-fraction must be a number in (0, 1], got '0'");
  EXPECT_EQ(CheckOption(*FindOption("--slo-fraction").second, "1"), "");

  ProfileArgs args;
  EXPECT_FALSE(args.Given("--arrival"));
  EXPECT_EQ(args.Value("--arrival"), "poisson");  // the table's default
  EXPECT_EQ(args.Value("--trace"), "");
  EXPECT_FALSE(args.Flag("--keep-reasoning"));
  args.Set("--keep-reasoning", "1");
  args.Set("--slo", "ttft_ms=500, e2e_ms=900");
  EXPECT_TRUE(args.Flag("--keep-reasoning"));
  EXPECT_EQ(args.Texts("--slo"), (std::vector<std::string>{"ttft_ms=500", "e2e_ms=900"}));
  EXPECT_TRUE(args.Texts("--trace").empty());
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
  const OptionSpec count = IntOption("--hits", "3", 1, 1000, "hits");
  const OptionSpec sizes = IntsOption("--sizes-x", "10,20", 16, 1e6, "sizes");
  const OptionSpec share = RealOption("--share", "0.5", 0, 1, "share");
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
  // Every numeric table option with a default reads as it until given.
  int numbers = 0;
  for (const ProfileSpec& p : Profiles()) {
    for (const OptionSpec& o : p.options) {
      if (!o.default_value.empty() &&
          (o.kind == OptionSpec::kNumber || o.kind == OptionSpec::kNumbers)) {
        EXPECT_FALSE(ProfileArgs().Numbers(o.flag).empty()) << o.flag;
        ++numbers;
      }
    }
  }
  EXPECT_GE(numbers, 10);
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
  EXPECT_TRUE(ProfileReads(rate, "--rates"));
}

}  // namespace
}  // namespace sb
