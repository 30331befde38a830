// The profiles' logic against a scripted wire (tests/support/scripted_wire.h): every figure has
// an exact truth because the "server" answers on a virtual clock. The loopback tests
// (profiles_test.cpp, against the simulator) keep the transport honest; these keep the
// arithmetic and the bookkeeping honest, with nothing timed.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "perf/profiles.h"
#include "support/scripted_wire.h"

namespace sb::perf {
namespace {

using nlohmann::json;
using testing::ScriptedWire;

struct Scripted {
  ScriptedWire* wire = nullptr;  // owned by client
  std::unique_ptr<client::Client> client;
  std::vector<json> samples;
  std::stop_source stop;

  explicit Scripted(ScriptedWire::Script script) {
    auto w = std::make_unique<ScriptedWire>(std::move(script));
    wire = w.get();
    client = std::make_unique<client::Client>(std::move(w));
  }

  Session MakeSession() {
    return Session(
        *client, {"scripted-model", client::ServerKind::kVllm},
        [this](const json& j) { samples.push_back(j); }, nullptr, stop.get_token(), 0);
  }
};

ProfileOptions NoWarmup() {
  ProfileOptions po;
  po.warmup = 0;
  return po;
}

TEST(ScriptedProfiles, DecodeExcludesTtftAndTakesTheMedianOfItsRuns) {
  // Run k: TTFT 100k ms, a token every 10k ms: decode speed 100/k tok/s whatever the TTFT.
  Scripted s([](const json&, std::size_t i) {
    const double k = static_cast<double>(i + 1);
    return ScriptedWire::Answer{100 * k, 10 * k, 51, 100, 200};
  });
  Session session = s.MakeSession();
  ProfileOptions po = NoWarmup();
  po.runs = 3;
  po.tokens = 51;
  const json d = session.Decode(po);
  ASSERT_EQ(s.wire->requests().size(), 3u);
  for (const json& request : s.wire->requests()) {
    EXPECT_EQ(request["max_tokens"], 51);
    EXPECT_EQ(request["stream"], true);
  }
  ASSERT_EQ(d["decode_tok_s"]["n"], 3);
  EXPECT_DOUBLE_EQ(d["decode_tok_s"]["median"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(d["decode_tok_s"]["max"].get<double>(), 100.0);
  EXPECT_NEAR(d["decode_tok_s"]["min"].get<double>(), 100.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(d["ttft_ms"]["median"].get<double>(), 200.0);
  EXPECT_EQ(d["errors"], 0);
}

TEST(ScriptedProfiles, AFailedRunCountsAsAnErrorAndAddsNoSpeed) {
  Scripted s([](const json&, std::size_t i) {
    ScriptedWire::Answer a{100, 10, 11, 100, 200};
    if (i == 1) {
      a.http_status = 500;
    }
    return a;
  });
  Session session = s.MakeSession();
  ProfileOptions po = NoWarmup();
  po.runs = 3;
  po.tokens = 11;
  const json d = session.Decode(po);
  EXPECT_EQ(d["errors"], 1);
  ASSERT_EQ(d["decode_tok_s"]["n"], 2);
  EXPECT_DOUBLE_EQ(d["decode_tok_s"]["median"].get<double>(), 100.0);
  const json summary = session.Summary();
  EXPECT_EQ(summary["requests"], 3);
  EXPECT_EQ(summary["failed_requests"], 1);
  EXPECT_EQ(summary["completion_tokens"], 22);  // the two answers; the failure added none
}

TEST(ScriptedProfiles, EachConcurrencyLevelSendsItsStreamsAndTakesThePerStreamMedian) {
  // Stream j of a level: a token every (j + 1) x 10 ms -> 100 / (j + 1) tok/s.
  Scripted s([](const json&, std::size_t i) {
    static const int kStarts[] = {0, 1, 3};  // calls 0 | 1-2 | 3-6: levels 1, 2, 4
    int j = static_cast<int>(i);
    for (int start : kStarts) {
      if (static_cast<int>(i) >= start) {
        j = static_cast<int>(i) - start;
      }
    }
    return ScriptedWire::Answer{50, 10.0 * (j + 1), 21, 100, 200};
  });
  Session session = s.MakeSession();
  ProfileOptions po = NoWarmup();
  po.args.SetInts("--levels", {1, 2, 4});
  po.tokens = 21;
  const json c = session.Concurrency(po);
  ASSERT_EQ(s.wire->requests().size(), 7u);
  ASSERT_EQ(c["levels"].size(), 3u);
  const double want_median[] = {100.0, (100.0 + 50.0) / 2, (50.0 + 100.0 / 3) / 2};
  const std::vector<int> levels = po.args.Ints("--levels");
  for (std::size_t l = 0; l < 3; ++l) {
    const json& level = c["levels"][l];
    EXPECT_EQ(level["sent"], levels[l]);
    EXPECT_EQ(level["ok"], levels[l]);
    EXPECT_NEAR(level["per_stream_decode_tok_s"]["median"].get<double>(), want_median[l], 1e-9)
        << "level " << levels[l];
    EXPECT_DOUBLE_EQ(level["ttft_ms"]["median"].get<double>(), 50.0);
  }
}

// The prefix-cache profile's arithmetic on exact truths: a cold request (a new prefix) answers
// in 300 ms, a warm one (the prefix seen before) in 50 ms; the speedup is exactly 6. A cold
// request that fails ends its run: the "warm" requests after it would meet no cached prefix.
TEST(ScriptedProfiles, PrefixCacheSpeedupIsColdOverWarmAndAFailedColdEndsItsRun) {
  std::vector<std::string> seen;  // each prefix's first line, in the order first sent
  Scripted s([&seen](const json& request, std::size_t i) {
    const std::string text = request["messages"][0]["content"];
    const std::string head = text.substr(0, text.find(']') + 1);
    const bool cold = std::find(seen.begin(), seen.end(), head) == seen.end();
    if (cold) {
      seen.push_back(head);
    }
    ScriptedWire::Answer a{cold ? 300.0 : 50.0, 1, 4, 120, 200};
    if (i == 0) {
      a.http_status = 500;  // the first run's cold request
    }
    return a;
  });
  Session session = s.MakeSession();
  ProfileOptions po = NoWarmup();
  po.runs = 2;
  po.args.Set("--prefix-sizes", "200");
  po.args.Set("--prefix-hits", "2");
  const json out = session.Run("prefix-cache", po);
  // Run 1: its cold request failed, so no warm request was sent; run 2: cold + 2 warm.
  ASSERT_EQ(s.wire->requests().size(), 4u) << out.dump();
  const json& row = out["prefixes"][0];
  EXPECT_EQ(row["errors"], 1);
  EXPECT_EQ(row["cold_ttft_ms"]["n"], 1);
  EXPECT_EQ(row["warm_ttft_ms"]["n"], 2);
  EXPECT_DOUBLE_EQ(row["cold_ttft_ms"]["median"].get<double>(), 300.0);
  EXPECT_DOUBLE_EQ(row["warm_ttft_ms"]["median"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(row["speedup"].get<double>(), 6.0);
  EXPECT_EQ(row["prompt_tokens"], 120);
  EXPECT_TRUE(row["cached_tokens"].is_null());  // the script reports no cached tokens
  EXPECT_EQ(row["runs"].size(), 4u);
  // Every request of a run shares its prefix: no unique line before it.
  const auto requests = s.wire->requests();
  const std::string first = requests[1]["messages"][0]["content"];
  EXPECT_EQ(first.rfind("[prefix ", 0), 0u) << first.substr(0, 80);
  for (std::size_t k = 2; k < 4; ++k) {
    const std::string warm = requests[k]["messages"][0]["content"];
    EXPECT_EQ(warm.substr(0, warm.find("\n\n")), first.substr(0, first.find("\n\n")));
    EXPECT_NE(warm, first);  // another question
  }
}

}  // namespace
}  // namespace sb::perf
