// perf::ApplyProfileArgs: the profile table's options into the option structs the runners read.
#include <gtest/gtest.h>

#include "perf/profiles.h"

namespace sb::perf {
namespace {

TEST(ProfileArgsTest, EachGivenFlagSetsItsField) {
  ProfileOptions o;
  ProfileArgs& a = o.args;
  a.Set("--rates", "2,8.5");
  a.Set("--arrival", "gamma");
  a.Set("--burstiness", "0.5");
  a.Set("--rate-tokens", "32");
  a.Set("--slo", "ttft_ms=500,e2e_ms=4000");
  a.Set("--slo-fraction", "0.9");
  a.Set("--search-rate", "1:16");
  a.Set("--search-steps", "3");
  a.Set("--max-concurrency", "12");
  a.Set("--trace", "t.jsonl");
  a.Set("--trace-format", "mooncake");
  a.Set("--time-scale", "0.25");
  a.Set("--block-tokens", "16");
  a.Set("--sessions", "s.jsonl");
  a.Set("--turns", "7");
  a.Set("--turn-input-tokens", "uniform:10-20");
  a.Set("--system-prompt-tokens", "900");
  a.Set("--think-ms", "250");
  a.Set("--session-concurrency", "3");
  a.Set("--session-rate", "1.5");
  a.Set("--max-sessions", "40");
  a.Set("--max-tool-rounds", "2");
  a.Set("--tool-result-tokens", "9");
  a.Set("--keep-reasoning", "1");
  a.Set("--dataset", "d.json");
  a.Set("--dataset-format", "sharegpt");
  a.Set("--dataset-order", "shuffle");
  a.Set("--skip-bad-lines", "1");
  a.Set("--shared-prefix", "4:512");
  a.Set("--context-cached", "1");
  a.Set("--tokens", "40");
  a.Set("--runs", "5");
  a.Set("--gpus", "8");
  a.Set("--images-per-request", "2");
  a.Set("--image-size", "64x32");
  a.Set("--requests", "30");
  a.Set("--duration-s", "2.5");
  a.Set("--max-requests", "11");
  a.Set("--input-tokens", "normal:100,10");
  a.Set("--output-tokens", "48");
  ASSERT_TRUE(ApplyProfileArgs(o));

  EXPECT_EQ(o.rate.rates, (std::vector<double>{2, 8.5}));
  EXPECT_EQ(o.rate.arrival, Arrival::kGamma);
  EXPECT_EQ(o.rate.burstiness, 0.5);
  EXPECT_EQ(o.rate.tokens, 32);
  EXPECT_EQ(o.rate.slo.ttft_ms, 500);
  EXPECT_FALSE(o.rate.slo.tpot_ms.has_value());
  EXPECT_EQ(o.rate.slo.e2e_ms, 4000);
  EXPECT_EQ(o.rate.slo_fraction, 0.9);
  ASSERT_TRUE(o.rate.search.has_value());
  EXPECT_EQ(o.rate.search->first, 1);
  EXPECT_EQ(o.rate.search->second, 16);
  EXPECT_EQ(o.rate.search_steps, 3);
  EXPECT_EQ(o.rate.max_concurrency, 12);
  EXPECT_EQ(o.replay.trace, "t.jsonl");
  EXPECT_EQ(o.replay.format, "mooncake");
  EXPECT_EQ(o.replay.time_scale, 0.25);
  EXPECT_EQ(o.replay.block_tokens, 16);
  EXPECT_EQ(o.sessions.file, "s.jsonl");
  EXPECT_EQ(o.sessions.turns, 7);
  ASSERT_TRUE(o.sessions.turn_input.has_value());
  EXPECT_EQ(o.sessions.turn_input->kind, workload::LengthSpec::Kind::kUniform);
  EXPECT_EQ(o.sessions.system_prompt_tokens, 900);
  ASSERT_TRUE(o.sessions.think_ms.has_value());
  EXPECT_EQ(o.sessions.think_ms->kind, workload::LengthSpec::Kind::kFixed);
  EXPECT_EQ(o.sessions.concurrency, 3);
  EXPECT_EQ(o.sessions.rate, 1.5);
  EXPECT_EQ(o.sessions.max_sessions, 40);
  EXPECT_EQ(o.sessions.max_tool_rounds, 2);
  EXPECT_EQ(o.sessions.tool_result_tokens, 9);
  EXPECT_TRUE(o.sessions.keep_reasoning);
  EXPECT_EQ(o.dataset.path, "d.json");
  EXPECT_EQ(o.dataset.format, "sharegpt");
  EXPECT_EQ(o.dataset.order, "shuffle");
  EXPECT_TRUE(o.dataset.skip_bad);
  EXPECT_EQ(o.shared_prefix.groups, 4);
  EXPECT_EQ(o.shared_prefix.tokens, 512);
  EXPECT_TRUE(o.context_cached);
  EXPECT_EQ(o.tokens, 40);
  EXPECT_EQ(o.runs, 5);
  EXPECT_EQ(o.gpus, 8);
  EXPECT_EQ(o.images.per_request, 2);
  EXPECT_EQ(o.images.size, "64x32");
  EXPECT_EQ(o.rate.requests, 30);
  EXPECT_EQ(o.level_requests, 30);
  EXPECT_EQ(o.rate.duration_s, 2.5);
  EXPECT_EQ(o.level_duration_s, 2.5);
  EXPECT_EQ(o.sessions.duration_s, 2.5);
  EXPECT_EQ(o.replay.max_requests, 11);
  EXPECT_EQ(o.input_tokens, 0);
  ASSERT_TRUE(o.input_lengths.has_value());
  EXPECT_EQ(o.input_lengths->kind, workload::LengthSpec::Kind::kNormal);
  ASSERT_TRUE(o.output_lengths.has_value());
  EXPECT_EQ(o.output_lengths->a, 48);
}

// --input-tokens N is a fixed prompt size, 0 a short prompt, anything else a distribution.
TEST(ProfileArgsTest, InputTokensIsAFixedSizeAShortPromptOrADistribution) {
  ProfileOptions o;
  o.args.Set("--input-tokens", "1000");
  ASSERT_TRUE(ApplyProfileArgs(o));
  EXPECT_EQ(o.input_tokens, 1000);
  EXPECT_FALSE(o.input_lengths.has_value());
  o.args.Set("--input-tokens", "uniform:10-20");
  ASSERT_TRUE(ApplyProfileArgs(o));
  EXPECT_EQ(o.input_tokens, 0);
  ASSERT_TRUE(o.input_lengths.has_value());
  o.args.Set("--input-tokens", "0");
  ASSERT_TRUE(ApplyProfileArgs(o));
  EXPECT_EQ(o.input_tokens, 0);
  EXPECT_FALSE(o.input_lengths.has_value());
}

// The table's defaults (shown by --help) are the structs' own: giving every option its
// default changes nothing a runner reads.
TEST(ProfileArgsTest, TheTablesDefaultsAreTheStructsDefaults) {
  ProfileOptions given;
  int options = 0;
  for (const ProfileSpec& p : Profiles()) {
    for (const OptionSpec& o : p.options) {
      // A text default of --turn-input-tokens ("64" tokens) stands for an unset distribution,
      // checked below.
      if (!o.default_value.empty() && o.flag != "--turn-input-tokens") {
        given.args.Set(o.flag, std::string(o.default_value));
        ++options;
      }
    }
  }
  EXPECT_GE(options, 20);
  ASSERT_TRUE(ApplyProfileArgs(given));
  const ProfileOptions d;
  EXPECT_EQ(given.rate.arrival, d.rate.arrival);
  EXPECT_EQ(given.rate.burstiness, d.rate.burstiness);
  EXPECT_EQ(given.rate.tokens, d.rate.tokens);
  EXPECT_EQ(given.rate.slo_fraction, d.rate.slo_fraction);
  EXPECT_EQ(given.rate.search_steps, d.rate.search_steps);
  EXPECT_EQ(given.rate.max_concurrency, d.rate.max_concurrency);
  EXPECT_EQ(given.replay.time_scale, d.replay.time_scale);
  EXPECT_EQ(given.replay.block_tokens, d.replay.block_tokens);
  EXPECT_EQ(given.sessions.turns, d.sessions.turns);
  EXPECT_EQ(given.sessions.system_prompt_tokens, d.sessions.system_prompt_tokens);
  EXPECT_EQ(given.sessions.concurrency, d.sessions.concurrency);
  EXPECT_EQ(given.sessions.rate, d.sessions.rate);
  EXPECT_EQ(given.sessions.max_sessions, d.sessions.max_sessions);
  EXPECT_EQ(given.sessions.max_tool_rounds, d.sessions.max_tool_rounds);
  EXPECT_EQ(given.sessions.tool_result_tokens, d.sessions.tool_result_tokens);
  EXPECT_EQ(given.dataset.order, d.dataset.order);
  EXPECT_EQ(given.tokens, d.tokens);
  EXPECT_EQ(given.runs, d.runs);
  EXPECT_EQ(given.images.per_request, d.images.per_request);
  EXPECT_EQ(given.images.size, d.images.size);
  EXPECT_EQ(given.input_tokens, d.input_tokens);
  EXPECT_FALSE(given.input_lengths.has_value());
  EXPECT_EQ(given.replay.max_requests, d.replay.max_requests);
  // --turn-input-tokens' default: 64 tokens when unset (sessions.h).
  EXPECT_EQ(FindOption("--turn-input-tokens").second->default_value, "64");
}

TEST(ProfileArgsTest, NothingGivenChangesNothing) {
  ProfileOptions o;
  o.rate.rates = {3};
  o.sessions.turns = 9;
  ASSERT_TRUE(ApplyProfileArgs(o));
  EXPECT_EQ(o.rate.rates, (std::vector<double>{3}));
  EXPECT_EQ(o.sessions.turns, 9);
  EXPECT_FALSE(o.context_cached);
  EXPECT_FALSE(o.rate.search.has_value());
}

TEST(ProfileArgsTest, ABadGrammarIsAUsageErrorNamingTheFlag) {
  struct Case {
    const char* flag;
    const char* value;
    const char* says;
  };

  for (const Case& c : {Case{"--slo", "ttft=5", "--slo: 'ttft=5' is not KEY=MS"},
                        Case{"--slo", "ttft_ms=5,ttft_ms=6", "--slo: ttft_ms is given twice"},
                        Case{"--search-rate", "8", "--search-rate: '8' is not MIN:MAX"},
                        Case{"--search-rate", "8:2", "--search-rate: MIN (8) must be below"},
                        Case{"--shared-prefix", "4", "--shared-prefix"},
                        Case{"--turn-input-tokens", "uniform:9", "--turn-input-tokens: "},
                        Case{"--think-ms", "lognormal:x", "--think-ms: "},
                        Case{"--input-tokens", "uniform:5", "--input-tokens: "},
                        Case{"--output-tokens", "-3", "--output-tokens: "}}) {
    ProfileOptions o;
    o.args.Set(c.flag, c.value);
    auto ok = ApplyProfileArgs(o);
    ASSERT_FALSE(ok) << c.flag << " " << c.value;
    EXPECT_EQ(ok.error().code, ErrorCode::kUsage);
    EXPECT_NE(ok.error().message.find(c.says), std::string::npos) << ok.error().message;
  }
}

}  // namespace
}  // namespace sb::perf
