// The suite runner against the real simulator (HTTP on loopback) with scripted answers: every
// status from the real wire, the probes, reruns, repeats, tool calls, video transports and the
// speed-profile tests.
#include "suite/runner.h"

#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "perf/profiles.h"
#include "sim/sim_server.h"
#include "suite/suite.h"

namespace sb::suite {
namespace {

using nlohmann::json;

Suite ParseOrDie(const std::string& yaml) {
  auto s = ParseSuite(yaml, "runner.yaml", ".");
  EXPECT_TRUE(s) << s.error().message;
  return s ? s.value() : Suite{};
}

// The scripted answers for a suite: every test's reference answer, with changes by id.
std::vector<sim::SimAnswer> Answers(const Suite& s,
                                    const std::map<std::string, sim::SimAnswer>& changes = {}) {
  std::vector<sim::SimAnswer> out;
  for (const TestSpec& t : s.tests) {
    if (!t.profile.empty() || !t.reference_answer) {
      continue;
    }
    sim::SimAnswer a;
    if (auto it = changes.find(t.id); it != changes.end()) {
      a = it->second;
    } else {
      a.content = t.reference_answer->text;
      for (const auto& c : t.reference_answer->tool_calls) {
        a.tool_calls.push_back({c.name, c.arguments});
      }
    }
    a.key = PromptKey(t);
    out.push_back(a);
  }
  return out;
}

sim::SimOptions FastSim() {
  sim::SimOptions o;
  o.ttft_ms = 2;
  o.prefill_us_per_token = 0;
  o.itl_ms = 0.05;
  o.thinking_tokens = 5;
  o.max_model_len = 65536;
  o.stall_ms = 3000;
  return o;
}

struct Harness {
  std::unique_ptr<sim::SimServer> server;
  std::unique_ptr<client::Client> client;
  std::unique_ptr<perf::Session> session;
  std::unique_ptr<SuiteRunner> runner;
  std::vector<json> samples;
  std::vector<std::string> progress;
  std::stop_source stop;

  Harness(const sim::SimOptions& o, RunOptions ro) {
    auto s = sim::SimServer::Start(o);
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    server = std::move(s.value());
    client::ClientOptions co;
    co.endpoint = server->base_url();
    client = std::make_unique<client::Client>(co);
    auto sink = [this](const json& j) { samples.push_back(j); };
    session = std::make_unique<perf::Session>(
        *client, perf::SessionTarget{o.model, client::ServerKind::kSim, o.max_model_len}, sink,
        nullptr, stop.get_token(), 0);
    ro.profile.warmup = 0;
    runner = std::make_unique<SuiteRunner>(
        *client, SuiteTarget{o.model, client::ServerKind::kSim, o.max_model_len}, ro, *session,
        sink, [this](const std::string& line) { progress.push_back(line); }, stop.get_token(), 0);
  }

  // The progress line of a test ("t.pass: PASS (0.01 s, 8 tokens)").
  std::string Line(const std::string& id) const {
    for (const std::string& line : progress) {
      if (line.rfind(id + ": ", 0) == 0) {
        return line;
      }
    }
    ADD_FAILURE() << "no progress line for " << id;
    return "";
  }

  const json& Test(const std::string& id) const {
    for (const json& t : runner->tests()) {
      if (t["id"] == id) {
        return t;
      }
    }
    static const json kNone;
    ADD_FAILURE() << "no test " << id;
    return kNone;
  }
};

const char* kTextSuite = R"(
suite: statuses
defaults: {max_tokens: 256, timeout_s: 20}
tests:
  - id: t.pass
    name: Arithmetic
    category: reasoning
    prompt: "What is 6 times 7? Reply with the number."
    check: {number: 42}
    reference_answer: "The answer is **42**."
  - id: t.fail
    category: reasoning
    prompt: "Name the capital of Australia."
    check: {contains: Canberra}
    reference_answer: "Canberra"
    bad_answers: ["Sydney"]
  - id: t.empty
    category: reasoning
    prompt: "Think hard, then answer: what is 2 + 2?"
    thinking: on
    max_tokens: 64
    check: {number: 4}
    reference_answer: "4"
  - id: t.loop
    category: reasoning
    prompt: "Schedule four meetings."
    thinking: on
    check: {contains: "9:00"}
    reference_answer: "A at 9:00"
  - id: t.error
    category: writing
    prompt: "Write one sentence about rain."
    check: {length: {unit: words, min: 3}}
    reference_answer: "Rain fell all night."
  - id: t.timeout
    category: coding
    prompt: "Write SELECT 1 as SQL."
    timeout_s: 1
    check: {contains: SELECT}
    reference_answer: "SELECT 1;"
  - id: t.tool
    category: tool_calling
    prompt: "Weather in Tokyo?"
    tools: [{name: get_weather, parameters: {type: object, properties: {city: {type: string}}}}]
    check:
      tool_call: {calls: [{name: get_weather, arguments: {city: Tokyo}}]}
    reference_answer:
      tool_calls: [{name: get_weather, arguments: {city: "Tokyo"}}]
  - id: t.image
    category: image
    prompt: "How many blue circles?"
    image: shapes_a
    check: {number: 2}
    reference_answer: "2"
)";

TEST(SuiteRunner, EveryStatusFromTheWire) {
  Suite s = ParseOrDie(kTextSuite);
  sim::SimOptions o = FastSim();
  sim::SimAnswer wrong;
  wrong.content = "Sydney";
  sim::SimAnswer empty;
  empty.content = "4";
  empty.reasoning_tokens = 500;  // more than max_tokens 64
  sim::SimAnswer loop;
  loop.loop = true;
  sim::SimAnswer error;
  error.fault = "500";
  sim::SimAnswer stall;
  stall.content = "SELECT 1;";
  stall.fault = "stall";
  o.answers = Answers(s, {{"t.fail", wrong},
                          {"t.empty", empty},
                          {"t.loop", loop},
                          {"t.error", error},
                          {"t.timeout", stall}});
  o.reject = {"image"};
  Harness h(o, RunOptions{});
  h.runner->Run(s);
  EXPECT_EQ(h.Test("t.pass")["status"], "PASS");
  EXPECT_EQ(h.Test("t.fail")["status"], "FAIL");
  EXPECT_EQ(h.Test("t.fail")["reason"], "none of \"Canberra\" in the answer \"Sydney\"");
  const json& e = h.Test("t.empty");
  EXPECT_EQ(e["status"], "EMPTY");
  EXPECT_EQ(e["reason"],
            "no answer: thinking used the whole budget (finish_reason length at 64 tokens)");
  EXPECT_EQ(e["reasoning_tokens"], 64);
  const json& l = h.Test("t.loop");
  EXPECT_EQ(l["status"], "LOOP");
  EXPECT_NE(l["reason"].get<std::string>().find("the reasoning repeats a 20-token span 10 times"),
            std::string::npos)
      << l["reason"];
  EXPECT_LT(l["completion_tokens"].get<int>(), 1000);  // cancelled early, not at the budget
  EXPECT_EQ(h.Test("t.error")["status"], "ERROR");
  EXPECT_NE(h.Test("t.error")["reason"].get<std::string>().find("HTTP 500"), std::string::npos);
  const json& timeout = h.Test("t.timeout");
  EXPECT_EQ(timeout["status"], "TIMEOUT");
  EXPECT_EQ(timeout["reason"],
            "no answer within the test's time limit of 1 s (raise with --test-timeout-s)");
  // Its time is the time waited (the stream stalled after a few tokens), on the progress line
  // too; its partial tokens are no count.
  EXPECT_GE(timeout["time_ms"].get<double>(), 1000.0);
  EXPECT_LT(timeout["e2e_ms"].get<double>(), 900.0) << "the last token came early";
  EXPECT_EQ(h.Line("t.timeout").rfind("t.timeout: TIMEOUT (1.", 0), 0u) << h.Line("t.timeout");
  EXPECT_TRUE(timeout["completion_tokens"].is_null()) << timeout.dump();
  EXPECT_TRUE(timeout["reasoning_tokens"].is_null());
  EXPECT_EQ(timeout["tokens_estimated"], false);
  EXPECT_TRUE(timeout["attempts"][0]["completion_tokens"].is_null());
  EXPECT_TRUE(h.Test("t.error")["completion_tokens"].is_null());
  const json& tool = h.Test("t.tool");
  EXPECT_EQ(tool["status"], "PASS") << tool.dump();
  EXPECT_EQ(tool["finish_reason"], "tool_calls");
  EXPECT_EQ(tool["tool_calls"][0]["arguments"]["city"], "Tokyo");
  const json& img = h.Test("t.image");
  EXPECT_EQ(img["status"], "UNSUPPORTED");
  EXPECT_NE(img["reason"].get<std::string>().find("At most 0 image(s)"), std::string::npos);
  EXPECT_EQ(img["sent"], false);

  const json summary = h.runner->StatusSummary();
  EXPECT_EQ(summary["total"], 8);
  EXPECT_EQ(summary["pass"], 2);
  EXPECT_EQ(summary["fail"], 1);
  EXPECT_EQ(summary["empty"], 1);
  EXPECT_EQ(summary["loop"], 1);
  EXPECT_EQ(summary["unsupported"], 1);
  EXPECT_EQ(summary["error"], 1);
  EXPECT_EQ(summary["timeout"], 1);
  EXPECT_DOUBLE_EQ(summary["effective_pass_rate"].get<double>(), 2.0 / 7.0);
  // One probe request for the refused modality; the image test itself sent nothing.
  const json suite = h.runner->SuiteJson();
  EXPECT_EQ(suite["probes"]["image:image_url"]["supported"], false);
  int probes = 0, image_requests = 0;
  for (const json& rec : h.samples) {
    probes += rec.value("profile", "") == "probe" ? 1 : 0;
    image_requests += rec.value("test", "") == "t.image" ? 1 : 0;
  }
  EXPECT_EQ(probes, 1);
  EXPECT_EQ(image_requests, 0);
  // The suite's totals count the tests whose response arrived (PASS, FAIL, EMPTY, LOOP), not
  // the ERROR and the TIMEOUT.
  long long tokens = 0;
  for (const json& t : h.runner->tests()) {
    // find, not operator[]: a const json's operator[] on a missing key is undefined (the
    // UNSUPPORTED test that was never sent has no completion_tokens).
    const auto c = t.find("completion_tokens");
    if (c != t.end() && c->is_number()) {
      tokens += c->get<long long>();
    }
  }
  EXPECT_GT(tokens, 0);
  EXPECT_EQ(suite["completion_tokens"], tokens);
  EXPECT_EQ(h.runner->completion_tokens(), tokens);
  EXPECT_EQ(h.runner->failed_requests(), 2);  // the ERROR and the TIMEOUT
  EXPECT_LT(h.runner->wall_time_s(), 1.0) << "the TIMEOUT's second is not in the total";
  // Every request carries the full answer in samples.jsonl.
  for (const json& rec : h.samples) {
    if (rec.value("test", "") == "t.pass") {
      EXPECT_EQ(rec["answer"], "The answer is **42**.");
    }
  }
}

TEST(SuiteRunner, EmptyIsRetriedWithLargerBudgetsAndEveryAttemptIsKept) {
  Suite s = ParseOrDie(kTextSuite);
  sim::SimOptions o = FastSim();
  sim::SimAnswer slow;
  slow.content = "4";
  slow.reasoning_tokens = 150;  // > 64 and > 128, < 256
  o.answers = Answers(s, {{"t.empty", slow}});
  RunOptions ro;
  ro.rerun_budgets = {128, 256, 512};
  ro.only = {"t.empty"};
  Harness h(o, ro);
  h.runner->Run(s);
  const json& t = h.Test("t.empty");
  EXPECT_EQ(t["status"], "PASS");
  ASSERT_EQ(t["attempts"].size(), 3u);
  EXPECT_EQ(t["attempts"][0]["max_tokens"], 64);
  EXPECT_EQ(t["attempts"][0]["status"], "EMPTY");
  EXPECT_EQ(t["attempts"][1]["max_tokens"], 128);
  EXPECT_EQ(t["attempts"][1]["status"], "EMPTY");
  EXPECT_EQ(t["attempts"][2]["max_tokens"], 256);
  EXPECT_EQ(t["attempts"][2]["status"], "PASS");
  EXPECT_EQ(t["max_tokens"], 256);
  EXPECT_EQ(t["reasoning_tokens"], 150);
  EXPECT_EQ(h.runner->tests().size(), 1u);
}

TEST(SuiteRunner, RepeatGivesPassAtKAndAConfidenceInterval) {
  Suite s = ParseOrDie(kTextSuite);
  sim::SimOptions o = FastSim();
  o.answers = Answers(s);
  RunOptions ro;
  ro.repeat = 3;
  ro.only = {"t.pass", "t.fail"};
  Harness h(o, ro);
  h.runner->Run(s);
  ASSERT_EQ(h.runner->tests().size(), 6u);
  const json suite = h.runner->SuiteJson();
  const json& pk = suite["pass_at_k"];
  EXPECT_EQ(pk["k"], json::array({1, 2, 3}));
  ASSERT_EQ(pk["tests"].size(), 2u);
  EXPECT_EQ(pk["tests"][0]["n"], 3);
  EXPECT_EQ(pk["tests"][0]["c"], 3);
  EXPECT_DOUBLE_EQ(pk["tests"][0]["pass_at"]["1"].get<double>(), 1.0);
  const json summary = h.runner->StatusSummary();
  EXPECT_EQ(summary["pass"], 6);
  const double lo = summary["pass_rate_ci95"][0], hi = summary["pass_rate_ci95"][1];
  EXPECT_GT(lo, 0.5);  // Wilson interval for 6/6
  EXPECT_NEAR(lo, 0.6097, 1e-3);
  EXPECT_DOUBLE_EQ(hi, 1.0);
}

TEST(SuiteRunner, VideoFallsBackToFramesWhenVideoUrlIsRefused) {
  Suite s = ParseOrDie(R"(
suite: v
tests:
  - id: v.count
    category: video
    prompt: "How many dots appear?"
    video: counting_dots
    check: {number: 5}
    reference_answer: "5"
)");
  sim::SimOptions o = FastSim();
  o.answers = Answers(s);
  o.reject = {"video"};
  RunOptions ro;
  ro.video_frames = 4;
  Harness h(o, ro);
  h.runner->Run(s);
  const json& t = h.Test("v.count");
  EXPECT_EQ(t["status"], "PASS") << t.dump();
  EXPECT_EQ(t["transport"]["video"], "frames");
  // The simulator counts 64 prompt tokens per media part: 4 frames.
  EXPECT_GE(t["prompt_tokens"].get<int>(), 4 * 64);
  EXPECT_LT(t["prompt_tokens"].get<int>(), 5 * 64);
  ASSERT_FALSE(h.runner->warnings().empty());
  EXPECT_NE(h.runner->warnings()[0].find("sent as 4 frames"), std::string::npos);
}

TEST(SuiteRunner, SpeedProfileTestsBecomeOneTestPerRow) {
  Suite s = ParseOrDie(R"(
suite: speed
tests:
  - {id: conc, category: concurrency, profile: concurrency, levels: [1, 2], tokens: 8}
  - {id: ctx, category: context_scaling, profile: context, sizes: [100, 200000], context_max_tokens: 8}
)");
  sim::SimOptions o = FastSim();
  Harness h(o, RunOptions{});
  h.runner->Run(s);
  ASSERT_EQ(h.runner->tests().size(), 4u);
  EXPECT_EQ(h.Test("conc.c1")["status"], "PASS");
  EXPECT_EQ(h.Test("conc.c2")["status"], "PASS");
  EXPECT_EQ(h.Test("conc.c2")["completion_tokens"], 16);
  EXPECT_EQ(h.Test("ctx.100")["status"], "PASS") << h.Test("ctx.100").dump();
  EXPECT_EQ(h.Test("ctx.200000")["status"], "UNSUPPORTED");
  EXPECT_TRUE(h.runner->perf_results().count("concurrency"));
  EXPECT_TRUE(h.runner->perf_results().count("context"));
}

TEST(SuiteRunner, AServerThatStopsAnsweringEndsTheSuite) {
  Suite s = ParseOrDie(kTextSuite);
  client::ClientOptions co;
  co.endpoint = "http://127.0.0.1:1/v1";  // nothing listens there: connection refused
  client::Client client(co);
  std::stop_source stop;
  perf::Session session(client, perf::SessionTarget{"m", client::ServerKind::kVllm, 0}, nullptr,
                        nullptr, stop.get_token(), 0);
  RunOptions ro;
  ro.only = {"reasoning", "writing", "coding"};
  SuiteRunner runner(client, SuiteTarget{"m", client::ServerKind::kVllm, 0}, ro, session, nullptr,
                     nullptr, stop.get_token(), 0);
  runner.Run(s);
  // Two tests with no answer, then an unanswered probe: the rest is not sent (docs/bounds.md).
  ASSERT_EQ(runner.tests().size(), 2u);
  for (const json& t : runner.tests()) {
    EXPECT_EQ(t["status"], "ERROR");
  }
  const json suite = runner.SuiteJson();
  EXPECT_EQ(suite["not_run"].size(), 4u);  // 6 selected: 2 failed, the rest never sent
  ASSERT_FALSE(runner.warnings().empty());
  EXPECT_NE(runner.warnings().back().find("stopped answering"), std::string::npos);
}

TEST(SuiteRunner, UnsupportedPatterns) {
  EXPECT_TRUE(IsUnsupportedError(400, "At most 0 audio(s) may be provided in one prompt."));
  EXPECT_TRUE(IsUnsupportedError(500,
                                 "image input is not supported - hint: if this is "
                                 "unexpected, you may need to provide the mmproj"));
  EXPECT_TRUE(IsUnsupportedError(400,
                                 "\"auto\" tool choice requires --enable-auto-tool-choice "
                                 "and --tool-call-parser to be set"));
  EXPECT_TRUE(IsUnsupportedError(400, "This model does not support image input"));
  EXPECT_TRUE(IsUnsupportedError(400, "unsupported content[].type"));  // llama.cpp b9821, video
  EXPECT_FALSE(IsUnsupportedError(400, "This model's maximum context length is 4096 tokens."));
  EXPECT_FALSE(IsUnsupportedError(503, "image input is not supported"));
  EXPECT_FALSE(IsUnsupportedError(500, "simulated internal error"));
}

}  // namespace
}  // namespace sb::suite
