// The context-scaling profile against the simulator: exact prompt sizes by the server's own
// tokenizer, the buried question answered, sizes over the context window skipped.
#include <memory>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "core/clock.h"
#include "perf/profiles.h"
#include "sim/engine.h"
#include "sim/sim_server.h"

namespace sb::perf {
namespace {

using nlohmann::json;

json RunContext(sim::SimOptions so, ProfileOptions po, std::int64_t max_model_len) {
  auto sim = std::move(sim::SimServer::Start(so).value());
  client::ClientOptions co;
  co.endpoint = sim->base_url();
  client::Client client(co);
  Session s(client, {"sim-model", client::ServerKind::kSim, max_model_len}, nullptr, nullptr,
            std::stop_token(), ToNanos(std::chrono::steady_clock::now()));
  return s.Context(po);
}

// The ttft profile's long prompt (~1,500 filler words) against a server whose context the run
// already read was sent anyway and refused with a 400 on every run; it is now counted with the
// server's tokenizer and skipped with the reason, as the context profile skips.
TEST(ContextTest, TtftSkipsAPromptTheServersContextCannotHold) {
  sim::SimOptions so;
  so.ttft_ms = 2;
  so.itl_ms = 0.2;
  so.prefill_us_per_token = 0;
  so.max_model_len = 1200;
  auto sim = std::move(sim::SimServer::Start(so).value());
  client::ClientOptions co;
  co.endpoint = sim->base_url();
  client::Client client(co);
  Session s(client, {"sim-model", client::ServerKind::kSim, 1200}, nullptr, nullptr,
            std::stop_token(), ToNanos(std::chrono::steady_clock::now()));
  ProfileOptions po;
  po.warmup = 0;
  po.runs = 2;
  json t = s.Run("ttft", po);
  const json& prompts = t["prompts"];
  ASSERT_EQ(prompts.size(), 3u) << t.dump();
  for (int i = 0; i < 2; ++i) {
    EXPECT_FALSE(prompts[i].contains("skipped")) << prompts[i].dump();
    EXPECT_EQ(prompts[i]["ttft_ms"]["n"], 2) << prompts[i].dump();
    EXPECT_EQ(prompts[i]["errors"], 0);
  }
  const json& long_prompt = prompts[2];
  EXPECT_EQ(long_prompt["name"], "long");
  ASSERT_TRUE(long_prompt.contains("skipped")) << long_prompt.dump();
  const int tokens = long_prompt["prompt_tokens"];
  EXPECT_GT(tokens + 16, 1200);
  EXPECT_EQ(long_prompt["skipped"],
            "over the server's max model length (1200 tokens): the prompt is " +
                std::to_string(tokens) + " tokens, plus 16 for the answer");
  EXPECT_EQ(long_prompt["ttft_ms"]["n"], 0);
  EXPECT_EQ(long_prompt["runs"].size(), 0u);
  EXPECT_EQ(sim->stats().chat_requests, 4u);  // short and medium, twice each
}

TEST(ContextTest, PromptSizesAreExactAndTheBuriedQuestionIsAnswered) {
  sim::SimOptions so;
  so.ttft_ms = 5;
  so.itl_ms = 0.5;
  so.prefill_us_per_token = 10;
  so.max_model_len = 9000;
  ProfileOptions po;
  po.args.SetInts("--sizes", {100, 777, 4000, 8990, 20000});
  po.warmup = 0;
  json c = RunContext(so, po, 9000);
  EXPECT_EQ(c["counted_by"], "tokenize");
  const json& rows = c["rows"];
  ASSERT_EQ(rows.size(), 5u);
  for (int i = 0; i < 3; ++i) {
    const json& r = rows[i];
    EXPECT_EQ(r["prompt_tokens"], r["size"]) << r.dump();  // billed == requested, exactly
    EXPECT_TRUE(r["correct"].get<bool>()) << r["answer"] << " expected " << r["expected"];
    EXPECT_EQ(r["status"], "ok");
  }
  // 8990 + 16 answer tokens do not fit in 9000; neither does 20000.
  EXPECT_TRUE(rows[3].contains("skipped"));
  EXPECT_TRUE(rows[4].contains("skipped"));
  // Prefill speed: prompt / TTFT, with TTFT = 5 ms + 10 µs per token: 4000 tokens -> 45 ms. The
  // simulator cannot be early; under a loaded machine (ctest -j) it and the client can be late
  // by several ms, so the upper bound is loose (the timing tests proper run alone).
  const double ttft = rows[2]["ttft_ms"].get<double>();
  EXPECT_GE(ttft, 44.0);
  EXPECT_LT(ttft, 65.0);
  EXPECT_GE(rows[2]["prefill_tok_s"].get<double>(), 4000 / 0.065);
  EXPECT_LE(rows[2]["prefill_tok_s"].get<double>(), 4000 / 0.044);
}

TEST(ContextTest, QuestionDepthMovesTheQuestion) {
  sim::SimOptions so;
  so.ttft_ms = 1;
  so.itl_ms = 0.2;
  ProfileOptions po;
  po.args.SetInts("--sizes", {600});
  po.warmup = 0;
  for (double depth : {0.0, 1.0}) {
    po.args.SetNumber("--depth", depth);
    json c = RunContext(so, po, 0);
    const json& r = c["rows"][0];
    EXPECT_TRUE(r["correct"].get<bool>()) << depth;
    EXPECT_EQ(r["prompt_tokens"], 600);
  }
}

TEST(ContextTest, SimulatorAnswersOnlyTheLastArithmeticQuestion) {
  EXPECT_EQ(sim::ArithmeticAnswer("filler What is 7 \u00d7 8? more"), 56);
  EXPECT_EQ(sim::ArithmeticAnswer("What is 2 x 3? What is 12*12?"), 144);
  EXPECT_FALSE(sim::ArithmeticAnswer("What is the answer?").has_value());
  EXPECT_FALSE(sim::ArithmeticAnswer("What is 7 plus 8?").has_value());
}

}  // namespace
}  // namespace sb::perf
