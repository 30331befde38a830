// The typed request record: what it keeps of a response, how it is written (the fields of
// docs/results-schema.md), and that the fact it gives the per-class rows is the one a reader of
// the written record (servebench merge, over samples.jsonl) gets back.
#include "perf/request_record.h"

#include <memory>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perf/request_classes.h"

namespace sb::perf {
namespace {

using client::ChatResponse;
using client::TokenEvent;
using nlohmann::json;

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kT0 = 500 * kMs;

// Sent at 1000 ms (500 ms after the run's start), `tokens` token events 10 ms apart from 40 ms.
ChatResponse Streamed(int tokens) {
  ChatResponse r;
  r.id = 7;
  r.send_ns = 1000 * kMs;
  r.streamed = true;
  r.http_status = 200;
  for (int i = 0; i < tokens; ++i) {
    TokenEvent e;
    e.t_ns = r.send_ns + (40 + 10 * i) * kMs;
    e.kinds = TokenEvent::kAnswer;
    r.events.push_back(e);
  }
  r.usage.prompt_tokens = 120;
  r.usage.completion_tokens = tokens;
  r.finish_reason = "length";
  return r;
}

TEST(RequestRecordTest, AnAnsweredRequestIsWrittenWithItsMetricsAndTimesFromTheRunsStart) {
  const json j = MakeRecord(Streamed(11), "decode", "run 1", kT0).ToJson();
  EXPECT_EQ(j["id"], 7);
  EXPECT_EQ(j["profile"], "decode");
  EXPECT_EQ(j["label"], "run 1");
  EXPECT_EQ(j["status"], "ok");
  EXPECT_TRUE(j["reason"].is_null());
  EXPECT_DOUBLE_EQ(j["sent_at_ms"].get<double>(), 500.0);
  EXPECT_DOUBLE_EQ(j["ttft_ms"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(j["e2e_ms"].get<double>(), 140.0);
  EXPECT_DOUBLE_EQ(j["decode_tok_s"].get<double>(), 100.0);  // 10 tokens in 100 ms after the first
  EXPECT_DOUBLE_EQ(j["tpot_ms"].get<double>(), 10.0);
  EXPECT_EQ(j["prompt_tokens"], 120);
  EXPECT_EQ(j["completion_tokens"], 11);
  EXPECT_EQ(j["chunks"], 11);
  EXPECT_EQ(j["finish_reason"], "length");
  EXPECT_FALSE(j.contains("scheduled_at_ms"));  // a closed loop's request has no schedule
  // No profile's own part was filled: none of their fields is written.
  for (const char* key : {"class", "input_tokens", "schedule_lag_ms", "rate_rps", "trace",
                          "session", "images", "warmup", "retries", "server"}) {
    EXPECT_FALSE(j.contains(key)) << key;
  }
}

TEST(RequestRecordTest, AFailedRequestHasNoSpeedAndNoEstimatedCount) {
  ChatResponse r = Streamed(5);
  r.outcome = client::Outcome::kTransport;
  r.reason = "connection reset";
  r.usage.completion_tokens = -1;  // cut off before the usage: the count would be an estimate
  const RequestRecord rec = MakeRecord(r, "rate", "1 req/s #3", kT0);
  const json j = rec.ToJson();
  EXPECT_EQ(j["status"], "transport");
  EXPECT_EQ(j["reason"], "connection reset");
  EXPECT_TRUE(j["decode_tok_s"].is_null());
  EXPECT_TRUE(j["tpot_ms"].is_null());
  EXPECT_TRUE(j["completion_tokens"].is_null());
  EXPECT_FALSE(j["tokens_estimated"].get<bool>());
  EXPECT_DOUBLE_EQ(j["ttft_ms"].get<double>(), 40.0);  // what was seen is kept
}

TEST(RequestRecordTest, ASampleIsItsRecordWithTheCallersFieldsAdded) {
  const RequestRecord rec = MakeRecord(Streamed(5), "suite", "t1 attempt 1", kT0);
  const Sample plain{rec, nullptr};
  EXPECT_EQ(plain.ToJson(), rec.ToJson());
  const Sample suite{rec, std::make_shared<const json>(json{{"test", "t1"}, {"attempt", 1}})};
  const json j = suite;  // the conversion a sink taking `const json&` uses
  EXPECT_EQ(j["test"], "t1");
  EXPECT_EQ(j["attempt"], 1);
  json without = j;
  without.erase("test");
  without.erase("attempt");
  EXPECT_EQ(without, rec.ToJson());  // and nothing of the record's own changed
}

TEST(RequestRecordTest, EachProfilesPartWritesItsFields) {
  RequestRecord rec = MakeRecord(Streamed(3), "replay", "mooncake #2", kT0);
  RequestRecord::Workload& w = rec.workload.emplace();
  w.cls = "trace:mooncake";
  w.input_tokens = 120;
  w.output_tokens = 3;
  w.cached_tokens = -1;  // the server said nothing
  w.sent_ms = 12.5;
  w.scheduled_ms = 12.0;
  rec.schedule = RequestRecord::Schedule{0.5, 40.5, 60.5, std::nullopt, std::nullopt, true};
  rec.trace = RequestRecord::TraceLine{4, 120, 3, 118};
  const json j = rec.ToJson();
  EXPECT_EQ(j["class"], "trace:mooncake");
  EXPECT_EQ(j["input_tokens"], 120);
  EXPECT_EQ(j["output_tokens"], 3);
  EXPECT_TRUE(j["cached_tokens"].is_null());
  EXPECT_DOUBLE_EQ(j["sent_ms"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(j["scheduled_ms"].get<double>(), 12.0);
  EXPECT_DOUBLE_EQ(j["schedule_lag_ms"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["ttft_from_scheduled_ms"].get<double>(), 40.5);
  EXPECT_DOUBLE_EQ(j["e2e_from_scheduled_ms"].get<double>(), 60.5);
  EXPECT_FALSE(j.contains("rate_rps"));
  EXPECT_FALSE(j.contains("client_queue_ms"));
  EXPECT_EQ(j["good"], true);
  EXPECT_EQ(
      j["trace"],
      (json{
          {"line", 4}, {"input_tokens", 120}, {"output_tokens", 3}, {"asked_input_tokens", 118}}));

  RequestRecord turn = MakeRecord(Streamed(3), "sessions", "s1 turn 2", kT0);
  RequestRecord::Turn& t = turn.turn.emplace();
  t.session = 0;
  t.turn = 2;
  t.cached_tokens = 96;
  t.think_ms = 250;
  t.tool_calls = {"get_weather"};
  t.itl_p50_ms = 10;
  const json s = turn.ToJson();
  EXPECT_EQ(s["session"], 1);  // 1-based in the record
  EXPECT_EQ(s["turn"], 2);
  EXPECT_EQ(s["cached_tokens"], 96);
  EXPECT_TRUE(s["user_tokens"].is_null());
  EXPECT_EQ(s["tool_calls"], json::array({"get_weather"}));
  EXPECT_EQ(s["itl_ms"], (json{{"p50", 10.0}, {"p99", nullptr}}));
}

TEST(RequestRecordTest, ItsFactIsTheFactReadBackFromTheWrittenRecord) {
  auto same = [](const RequestFact& a, const RequestFact& b) {
    EXPECT_EQ(a.cls, b.cls);
    EXPECT_EQ(a.ok, b.ok);
    EXPECT_EQ(a.ttft_ms, b.ttft_ms);
    EXPECT_EQ(a.e2e_ms, b.e2e_ms);
    EXPECT_EQ(a.tpot_ms, b.tpot_ms);
    EXPECT_EQ(a.input_tokens, b.input_tokens);
    EXPECT_EQ(a.output_tokens, b.output_tokens);
    EXPECT_EQ(a.cached_tokens, b.cached_tokens);
  };
  RequestRecord ok = MakeRecord(Streamed(4), "concurrency", "c=2 #1", kT0);
  ok.workload = RequestRecord::Workload{"shared-prefix:2", 120, 4, 64, 500.0, 500.0};
  ChatResponse cut = Streamed(2);
  cut.outcome = client::Outcome::kTimeout;
  RequestRecord failed = MakeRecord(cut, "concurrency", "c=2 #2", kT0);
  failed.workload = RequestRecord::Workload{"synthetic", 120, -1, 0, 510.0, 510.0};
  for (const RequestRecord* rec : {&ok, &failed}) {
    const RequestFact typed = rec->Fact();
    same(typed, FactOfRecord(rec->ToJson()));
  }
  EXPECT_EQ(ok.Fact().cached_tokens, 64);
  EXPECT_TRUE(ok.Fact().tpot_ms.has_value());
  EXPECT_FALSE(failed.Fact().ttft_ms.has_value());  // a failed request adds no latency
  // The rows built from typed facts are those built from the written records.
  const std::vector<RequestFact> facts = {ok.Fact(), failed.Fact()};
  json row = {{"requests", json::array({ok.ToJson(), failed.ToJson()})}};
  AddRequestClasses(row);
  EXPECT_EQ(row["classes"], ClassesJson(facts));
  EXPECT_EQ(row["cache"], CacheJson(facts));
  EXPECT_EQ(row["cache"]["cached_tokens"], 64);
}

}  // namespace
}  // namespace sb::perf
