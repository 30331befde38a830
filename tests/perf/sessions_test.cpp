// The sessions profile against the simulator (a real HTTP server in this process) with its
// prefix cache: every turn resends the whole history with the server's actual answers, so each
// turn's prompt is the previous prompt + its answer + the new user message (plus the simulator
// template's 4 tokens per message, docs/simulator.md), and the cached tokens the server reports
// are the previous prompt's full blocks. Tool-calling sessions: the scripted tool results reach
// the server (its request log), and --max-tool-rounds stops a model that always calls a tool.
#include "perf/sessions.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perf/profiles.h"
#include "profiles_fixture.h"

namespace sb::perf {
namespace {

using fixture::Fixture;
using nlohmann::json;

constexpr int kBlock = 16;
constexpr int kPerMessage = 4;  // the simulator's template tokens per message
constexpr int kPerChat = 2;     // ... and per chat (BOS, assistant header)

sim::SimOptions Caching() {
  sim::SimOptions o = fixture::Quiet();
  o.ttft_ms = 2;
  o.prefill_us_per_token = 10;
  o.itl_ms = 0.5;
  o.concurrency_slowdown = 0;
  o.prefix_cache_tokens = 1'000'000;
  o.block_tokens = kBlock;
  return o;
}

ProfileOptions Options(Fixture& f) {
  ProfileOptions po;
  po.warmup = 0;
  po.rate.new_client = [](const std::string& root) {
    client::ClientOptions co;
    co.endpoint = root;
    return std::make_unique<client::Client>(co);
  };
  (void)f;
  return po;
}

// The records of each session, in request order.
std::map<int, std::vector<json>> BySession(const std::vector<json>& samples) {
  std::map<int, std::vector<json>> by;
  for (const json& r : samples) {
    if (r["profile"] == "sessions") {
      by[r["session"].get<int>()].push_back(r);
    }
  }
  return by;
}

TEST(SessionsTest, EachTurnResendsTheHistoryAndThePrefixCacheServesThePreviousPrompt) {
  Fixture f(Caching());
  Session s = f.MakeSession();
  ProfileOptions po = Options(f);
  po.sessions.turns = 4;
  po.sessions.max_sessions = 8;
  po.sessions.concurrency = 4;
  po.sessions.system_prompt_tokens = 40;
  po.sessions.turn_input = workload::ParseLengthSpec("uniform:20-40").value();
  po.output_lengths = workload::ParseLengthSpec("uniform:10-30").value();
  const json out = s.Run("sessions", po);
  ASSERT_FALSE(out.contains("error")) << out.dump();
  EXPECT_EQ(out["sessions"], 8);
  EXPECT_EQ(out["finished"], 8);
  EXPECT_EQ(out["failed"], 0);
  EXPECT_EQ(out["system_prompt_tokens"], 40);
  const auto by = BySession(f.samples);
  ASSERT_EQ(by.size(), 8U);
  for (const auto& [session, recs] : by) {
    ASSERT_EQ(recs.size(), 4U) << "session " << session;
    for (std::size_t k = 0; k < recs.size(); ++k) {
      const json& r = recs[k];
      ASSERT_EQ(r["status"], "ok");
      ASSERT_EQ(r["turn"], static_cast<int>(k) + 1);
      EXPECT_EQ(r["tool_round"], 0);
      const int user = r["user_tokens"];
      EXPECT_GE(user, 20);
      EXPECT_LE(user, 40);
      const int prompt = r["prompt_tokens"];
      if (k == 0) {
        // BOS + assistant header, the system message, the first user message.
        EXPECT_EQ(prompt, kPerChat + kPerMessage + 40 + kPerMessage + user) << session;
        continue;
      }
      const json& prev = recs[k - 1];
      const int prev_prompt = prev["prompt_tokens"];
      const int answer = prev["completion_tokens"];
      // The previous prompt, its answer as an assistant message, the new user message.
      EXPECT_EQ(prompt, prev_prompt + kPerMessage + answer + kPerMessage + user)
          << "session " << session << " turn " << k + 1;
      // The simulator's truth: the previous prompt's full blocks are cached, except that its
      // last token (the assistant header) is not part of the next prompt.
      EXPECT_EQ(r["cached_tokens"], (prev_prompt - 1) / kBlock * kBlock)
          << "session " << session << " turn " << k + 1;
    }
  }
  // The summary per turn index and per session.
  ASSERT_EQ(out["turns"].size(), 4U);
  for (int t = 0; t < 4; ++t) {
    const json& row = out["turns"][t];
    EXPECT_EQ(row["turn"], t + 1);
    EXPECT_EQ(row["requests"], 8);
    EXPECT_EQ(row["ttft_ms"]["n"], 8);
    EXPECT_EQ(row["cached_tokens"]["reported"], true);
    if (t > 0) {
      EXPECT_GT(row["cached_tokens"]["p50"].get<double>(), 0);
      EXPECT_GT(row["prompt_tokens"]["p50"].get<double>(),
                out["turns"][t - 1]["prompt_tokens"]["p50"].get<double>());
    }
  }
  // Tails at the session-concurrency level and its frontier point (issue 23 for sessions).
  ASSERT_EQ(out["levels"].size(), 1U);
  EXPECT_EQ(out["levels"][0]["session_concurrency"], 4);
  EXPECT_EQ(out["levels"][0]["requests"], 32);
  for (const char* key : {"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"}) {
    EXPECT_GT(out["levels"][0][key]["p99"].get<double>(), 0) << key;
    EXPECT_GT(out["turns"][0][key]["p90"].get<double>(), 0) << key;
  }
  ASSERT_EQ(out["frontier"].size(), 1U);
  EXPECT_GT(out["frontier"][0]["total_tok_s"].get<double>(), 0);
  EXPECT_GT(out["frontier"][0]["tok_s_per_user"].get<double>(), 0);
  ASSERT_EQ(out["per_session"].size(), 8U);
  for (const json& ps : out["per_session"]) {
    EXPECT_EQ(ps["status"], "finished");
    EXPECT_EQ(ps["turns"], 4);
    EXPECT_EQ(ps["requests"], 4);
    EXPECT_EQ(ps["tool_rounds"], 0);
    EXPECT_GT(ps["total_ms"].get<double>(), 0);
  }
}

TEST(SessionsTest, ThinkTimeSeparatesAnAnswerFromTheNextTurn) {
  Fixture f(Caching());
  Session s = f.MakeSession();
  ProfileOptions po = Options(f);
  po.sessions.turns = 3;
  po.sessions.max_sessions = 2;
  po.sessions.concurrency = 2;
  po.sessions.think_ms = workload::ParseLengthSpec("40").value();
  po.output_lengths = workload::ParseLengthSpec("8").value();
  const json out = s.Run("sessions", po);
  EXPECT_EQ(out["finished"], 2);
  for (const auto& [session, recs] : BySession(f.samples)) {
    ASSERT_EQ(recs.size(), 3U);
    for (std::size_t k = 1; k < recs.size(); ++k) {
      const double answered =
          recs[k - 1]["sent_at_ms"].get<double>() + recs[k - 1]["e2e_ms"].get<double>();
      EXPECT_EQ(recs[k]["think_ms"], 40.0);
      EXPECT_GE(recs[k]["sent_at_ms"].get<double>() - answered, 40.0) << session;
    }
  }
}

struct ToolRun {
  json out;
  std::vector<json> samples;
  std::vector<std::string> log;  // the request log's texts, in order
};

ToolRun RunTools(double probability, int max_rounds, const std::string& file, int concurrency) {
  sim::SimOptions o = Caching();
  o.tool_call_probability = probability;
  o.seed = 3;
  const auto log = std::filesystem::temp_directory_path() /
                   ("sb_sessions_log_" + std::to_string(::getpid()) + ".txt");
  std::filesystem::remove(log);
  o.request_log = log.string();
  ToolRun run;
  {
    Fixture f(o);
    Session s = f.MakeSession();
    ProfileOptions po = Options(f);
    po.sessions.file = file;
    po.sessions.max_tool_rounds = max_rounds;
    po.sessions.concurrency = concurrency;
    run.out = s.Run("sessions", po);
    run.samples = f.samples;
  }
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    run.log.push_back(line.substr(line.find('\t') + 1));
  }
  std::filesystem::remove(log);
  return run;
}

const std::string kExample = std::string(SB_FIXTURES_DIR) + "/sessions/example.jsonl";

TEST(SessionsTest, ScriptedToolResultsGoBackAsToolMessagesUntilTheModelAnswers) {
  const ToolRun run = RunTools(0.5, 4, kExample, 1);  // one at a time: the log is in order
  ASSERT_FALSE(run.out.contains("error")) << run.out.dump();
  EXPECT_EQ(run.out["finished"], 3);
  ASSERT_EQ(run.log.size(), run.samples.size());
  int rounds = 0;
  std::vector<std::string> search_results = {
      "Lyon: about 520,000 inhabitants (city proper, 2021)",
      "Marseille: about 870,000 inhabitants (city proper, 2021)"};
  std::size_t next_search = 0;
  for (std::size_t i = 0; i < run.samples.size(); ++i) {
    const json& r = run.samples[i];
    ASSERT_EQ(r["status"], "ok") << i;
    if (r["tool_round"] == 0) {
      continue;
    }
    ++rounds;
    // The request after a tool call ends with that call's scripted result.
    const json& prev = run.samples[i - 1];
    ASSERT_EQ(prev["tool_calls"].size(), 1U);
    const std::string name = prev["tool_calls"][0];
    if (name == "get_weather") {
      EXPECT_EQ(run.log[i], "Paris: 18 C, light rain, wind 12 km/h") << i;
    } else {
      ASSERT_EQ(name, "search");
      ASSERT_LT(next_search, search_results.size());
      EXPECT_EQ(run.log[i], search_results[next_search++]) << i;
    }
  }
  EXPECT_GT(rounds, 0);  // the seed does make the simulator call tools
  // Sessions end on answers without tool calls: the last request of each has none.
  std::map<int, json> last;
  for (const json& r : run.samples) {
    last[r["session"].get<int>()] = r;
  }
  for (const auto& [session, r] : last) {
    EXPECT_TRUE(r["tool_calls"].empty()) << session;
  }
  long long counted = 0;
  for (const json& ps : run.out["per_session"]) {
    counted += ps["tool_rounds"].get<long long>();
    EXPECT_EQ(ps["capped_turns"], 0);
  }
  EXPECT_EQ(counted, rounds);
}

TEST(SessionsTest, MaxToolRoundsStopsAModelThatAlwaysCallsATool) {
  const ToolRun run = RunTools(1.0, 2, kExample, 3);
  EXPECT_EQ(run.out["finished"], 3);
  // Sessions with tools: 3 requests per turn (the turn, 2 tool rounds); the chat: 1 per turn.
  const std::map<int, int> turns = {{1, 3}, {2, 4}, {3, 1}};
  const std::map<int, bool> tools = {{1, true}, {2, false}, {3, true}};
  for (const json& ps : run.out["per_session"]) {
    const int id = ps["session"];
    EXPECT_EQ(ps["status"], "finished");
    EXPECT_EQ(ps["turns"], turns.at(id));
    EXPECT_EQ(ps["requests"], turns.at(id) * (tools.at(id) ? 3 : 1));
    EXPECT_EQ(ps["tool_rounds"], tools.at(id) ? 2 * turns.at(id) : 0);
    EXPECT_EQ(ps["capped_turns"], tools.at(id) ? turns.at(id) : 0);
  }
  for (const json& r : run.samples) {
    EXPECT_LE(r["tool_round"].get<int>(), 2);
  }
}

TEST(SessionsTest, SessionRateStartsSessionsOnTheOpenLoopSchedule) {
  Fixture f(Caching());
  Session s = f.MakeSession();
  ProfileOptions po = Options(f);
  po.sessions.turns = 1;
  po.sessions.max_sessions = 5;
  po.sessions.concurrency = 5;
  po.sessions.rate = 20;  // constant: one session every 50 ms
  po.rate.arrival = Arrival::kConstant;
  po.output_lengths = workload::ParseLengthSpec("4").value();
  const json out = s.Run("sessions", po);
  EXPECT_EQ(out["finished"], 5);
  EXPECT_EQ(out["session_rate"], 20.0);
  // Each session's send less how late its slot started it (start_lag_ms, measured against the
  // schedule): on a loaded machine a session may start late, and the lag says by how much.
  std::map<int, double> lag;
  for (const json& ps : out["per_session"]) {
    lag[ps["session"].get<int>()] = ps["start_lag_ms"].get<double>();
  }
  std::vector<double> sent;
  for (const json& r : f.samples) {
    sent.push_back(r["sent_at_ms"].get<double>() - lag[r["session"].get<int>()]);
  }
  ASSERT_EQ(sent.size(), 5U);
  std::sort(sent.begin(), sent.end());
  for (std::size_t k = 1; k < sent.size(); ++k) {
    // Each starts on its schedule (50 ms apart), not when a slot frees up (all 5 are free).
    EXPECT_GE(sent[k] - sent[0], 50.0 * static_cast<double>(k) - 3.0) << k;
    EXPECT_LT(sent[k] - sent[0], 50.0 * static_cast<double>(k) + 25.0) << k;
  }
  for (const json& ps : out["per_session"]) {
    EXPECT_GE(ps["start_lag_ms"].get<double>(), 0);
  }
}

TEST(SessionsTest, ConversationDropsReasoningUnlessKeptAndAnswersEveryToolCall) {
  SessionScript sc;
  sc.turns = {"hi", "again"};
  sc.tool_results = {"R1"};
  client::ChatResponse r;
  r.answer = "A";
  r.reasoning = "thinking";
  r.tool_calls = {{"c1", "f", "{}"}, {"c2", "g", "{}"}};
  Conversation dropped(sc, false, 1, "GEN");
  dropped.BeginTurn();
  EXPECT_EQ(dropped.Answer(r), Conversation::Step::kToolRound);
  const json m = json::parse(dropped.MessagesJson());
  ASSERT_EQ(m.size(), 4U);
  EXPECT_FALSE(m[1].contains("reasoning_content"));
  EXPECT_EQ(m[1]["tool_calls"][1]["function"]["name"], "g");
  EXPECT_EQ(m[2], json({{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "R1"}}));
  EXPECT_EQ(m[3]["content"], "GEN");  // past the scripted results: the generated one
  // Round 2 is past --max-tool-rounds 1: the turn ends, its calls still answered.
  EXPECT_EQ(dropped.Answer(r), Conversation::Step::kTurnDone);
  EXPECT_EQ(dropped.capped_turns(), 1);
  EXPECT_EQ(json::parse(dropped.MessagesJson()).size(), 7U);

  Conversation kept(sc, true, 0, "GEN");
  kept.BeginTurn();
  r.tool_calls.clear();
  EXPECT_EQ(kept.Answer(r), Conversation::Step::kTurnDone);
  kept.BeginTurn();
  EXPECT_EQ(kept.Answer(r), Conversation::Step::kFinished);
  const json k = json::parse(kept.MessagesJson());
  EXPECT_EQ(k[1]["reasoning_content"], "thinking");
  EXPECT_EQ(k[2]["content"], "again");
  client::ChatResponse failed;
  failed.outcome = client::Outcome::kHttpError;
  Conversation c(sc, false, 4, "");
  c.BeginTurn();
  EXPECT_EQ(c.Answer(failed), Conversation::Step::kFailed);
}

}  // namespace
}  // namespace sb::perf
