// The run journal (run/journal.h): what a process records is replayed exactly by the next one,
// nothing of a finished unit is sent again, an unfinished unit is cut and its samples marked
// superseded, and a run that no longer matches its journal stops instead of guessing. Against
// the simulator, with real HTTP.
#include "run/journal.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/chat.h"
#include "client/http_client.h"
#include "client/journal.h"
#include "core/clock.h"
#include "sim/sim_server.h"
#include "support/temp_dir.h"

namespace sb::run {
namespace {

namespace fs = std::filesystem;
using client::ChatCall;
using client::ChatResponse;
using nlohmann::json;
using testing::ReadFile;
using testing::TempDir;

std::unique_ptr<sim::SimServer> StartSim() {
  sim::SimOptions o;
  o.ttft_ms = 2;
  o.itl_ms = 0.3;
  o.spec_tokens = 2;
  o.spec_accept = {0.8, 0.5};
  auto s = sim::SimServer::Start(o);
  EXPECT_TRUE(s.has_value());
  return std::move(s.value());
}

ChatCall Call(std::uint64_t id, const std::string& prompt, int max_tokens = 24) {
  client::ChatParams p;
  p.model = "sim-model";
  p.messages.push_back({"user", prompt, ""});
  p.max_tokens = max_tokens;
  p.force_length = true;
  ChatCall c;
  c.id = id;
  c.body = client::BuildChatBody(p, client::ServerKind::kSim);
  return c;
}

// What the hooks of one call saw: the answer length at each event, and the final answer.
struct Seen {
  std::vector<std::size_t> answer_sizes;
  std::vector<std::string> done;
};

client::RunHooks Hooks(Seen& seen) {
  client::RunHooks h;
  h.on_event = [&seen](const ChatResponse& r) {
    seen.answer_sizes.push_back(r.answer.size());
    return true;
  };
  h.on_done = [&seen](const ChatResponse& r) { seen.done.push_back(r.answer); };
  return h;
}

// One process's work: two units (a batch of two with a /metrics scrape before and after, then a
// single call), run through a client with the journal attached.
struct Work {
  std::vector<ChatResponse> first, second;
  std::string metrics_before;
};

Work DoWork(client::Client& c, const client::RunHooks& hooks, bool finish_second = true) {
  Work w;
  {
    client::UnitScope unit(c, "batch one");
    auto m = c.Get("/metrics");
    w.metrics_before = m ? m->body : "";
    std::vector<ChatCall> calls = {Call(1, "alpha"), Call(2, "beta")};
    w.first = c.RunChats(calls, hooks, std::stop_token());
    (void)c.Get("/metrics");
  }
  c.BeginUnit("single");
  std::vector<ChatCall> calls = {Call(3, "gamma", 40)};
  w.second = c.RunChats(calls, hooks, std::stop_token());
  if (finish_second) {
    c.EndUnit();
  }
  return w;
}

Work DoWork(client::Client& c, Seen& seen) {
  return DoWork(c, Hooks(seen));
}

void ExpectSameResponse(const ChatResponse& a, const ChatResponse& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.outcome, b.outcome);
  EXPECT_EQ(a.answer, b.answer);
  EXPECT_EQ(a.finish_reason, b.finish_reason);
  EXPECT_EQ(a.usage.completion_tokens, b.usage.completion_tokens);
  EXPECT_EQ(a.sim_json, b.sim_json);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].tokens, b.events[i].tokens);
    EXPECT_EQ(a.events[i].answer_end, b.events[i].answer_end);
  }
  // Intervals survive the move to the next process's clock exactly.
  EXPECT_EQ(a.events.back().t_ns - a.send_ns, b.events.back().t_ns - b.send_ns);
  EXPECT_EQ(a.first_byte_ns - a.send_ns, b.first_byte_ns - b.send_ns);
}

TEST(FileJournal, ResponseJsonRoundTripsEveryField) {
  ChatResponse r;
  r.id = 42;
  r.outcome = client::Outcome::kProtocol;
  r.reason = "malformed event";
  r.http_status = 200;
  r.error_body = "{}";
  r.scheduled_ns = 1'000;
  r.send_ns = 2'000;
  r.written_ns = 2'200;
  r.first_byte_ns = 3'000;
  r.done_ns = 9'000;
  r.events = {{4'000, 2, client::TokenEvent::kAnswer, 5, 0},
              {5'000, 1, client::TokenEvent::kReasoning, 5, 7}};
  r.answer = "hello";
  r.reasoning = "because";
  r.tool_calls = {{"call_1", "get_weather", R"({"city":"Oslo"})"}};
  r.finish_reason = "length";
  r.usage = {10, 3, 1, 4};
  r.server_model = "m";
  r.timings_json = R"({"cache_n":4})";
  r.timings_predicted_n = 3;
  r.sim_json = R"({"ttft_ms":1})";
  r.stream_done = true;
  r.first_send_ns = 1'500;
  r.streamed = true;
  r.invalid_utf8 = true;
  r.retries = 1;
  r.retry_reasons = {"HTTP 429: slow down"};
  const std::int64_t t0 = 500;
  auto back = client::ResponseFromJson(client::ResponseToJson(r, t0), 100'000);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  const std::int64_t shift = 100'000 - t0;
  EXPECT_EQ(back->id, r.id);
  EXPECT_EQ(back->outcome, r.outcome);
  EXPECT_EQ(back->reason, r.reason);
  EXPECT_EQ(back->http_status, r.http_status);
  EXPECT_EQ(back->error_body, r.error_body);
  EXPECT_EQ(back->scheduled_ns, r.scheduled_ns + shift);
  EXPECT_EQ(back->send_ns, r.send_ns + shift);
  EXPECT_EQ(back->written_ns, r.written_ns + shift);
  EXPECT_EQ(back->first_byte_ns, r.first_byte_ns + shift);
  EXPECT_EQ(back->done_ns, r.done_ns + shift);
  ASSERT_EQ(back->events.size(), 2u);
  EXPECT_EQ(back->events[1].t_ns, 5'000 + shift);
  EXPECT_EQ(back->events[1].tokens, 1);
  EXPECT_EQ(back->events[1].kinds, client::TokenEvent::kReasoning);
  EXPECT_EQ(back->events[1].reasoning_end, 7u);
  EXPECT_EQ(back->answer, r.answer);
  EXPECT_EQ(back->reasoning, r.reasoning);
  ASSERT_EQ(back->tool_calls.size(), 1u);
  EXPECT_EQ(back->tool_calls[0].arguments, r.tool_calls[0].arguments);
  EXPECT_EQ(back->finish_reason, r.finish_reason);
  EXPECT_EQ(back->usage.cached_tokens, 4);
  EXPECT_EQ(back->usage.reasoning_tokens, 1);
  EXPECT_EQ(back->server_model, r.server_model);
  EXPECT_EQ(back->timings_json, r.timings_json);
  EXPECT_EQ(back->timings_predicted_n, 3);
  EXPECT_EQ(back->sim_json, r.sim_json);
  EXPECT_TRUE(back->stream_done);
  EXPECT_EQ(back->first_send_ns, r.first_send_ns + shift);
  EXPECT_TRUE(back->streamed);
  EXPECT_TRUE(back->invalid_utf8);
  EXPECT_EQ(back->retries, 1);
  EXPECT_EQ(back->retry_reasons, r.retry_reasons);
  EXPECT_FALSE(client::ResponseFromJson(json{{"id", 1}}, 0).has_value());
}

TEST(FileJournal, AFinishedRunReplaysExactlyAndSendsNothing) {
  auto sim = StartSim();
  TempDir dir;
  client::ClientOptions co;
  co.endpoint = sim->base_url();
  Work recorded;
  Seen seen_live;
  {
    auto j = FileJournal::Open(dir.path(), false);
    ASSERT_TRUE(j.has_value()) << j.error().message;
    (*j)->SetClock(ToNanos(std::chrono::steady_clock::now()));
    client::Client c(co);
    c.SetJournal(j->get());
    recorded = DoWork(c, seen_live);
  }
  const auto sent = sim->stats().chat_requests;
  ASSERT_EQ(sent, 3u);

  auto j = FileJournal::Open(dir.path(), true);
  ASSERT_TRUE(j.has_value()) << j.error().message;
  EXPECT_EQ((*j)->resumed().units, 2);
  EXPECT_EQ((*j)->resumed().superseded_samples, 0u);
  const std::int64_t t0 = (*j)->ResumeT0(ToNanos(std::chrono::steady_clock::now()));
  (*j)->SetClock(t0);
  client::Client c(co);
  c.SetJournal(j->get());
  Seen seen_replay;
  Work replayed = DoWork(c, seen_replay);
  EXPECT_EQ(sim->stats().chat_requests, sent);  // nothing sent again
  EXPECT_EQ((*j)->replayed_units(), 2);
  ASSERT_EQ(replayed.first.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(replayed.first[i].replayed);
    ExpectSameResponse(recorded.first[i], replayed.first[i]);
  }
  ExpectSameResponse(recorded.second[0], replayed.second[0]);
  EXPECT_EQ(replayed.metrics_before, recorded.metrics_before);  // aux answers replayed too
  // The hooks saw the same stream, event by event.
  EXPECT_EQ(seen_replay.answer_sizes, seen_live.answer_sizes);
  EXPECT_EQ(seen_replay.done, seen_live.done);
  // Replayed times come after the first process's: the run's clock goes on.
  EXPECT_GT(replayed.first[0].send_ns, t0);

  // Work past the journal runs live and is recorded.
  {
    client::UnitScope unit(c, "third");
    std::vector<ChatCall> calls = {Call(4, "delta")};
    auto r = c.RunChats(calls, {}, std::stop_token());
    EXPECT_FALSE(r[0].replayed);
  }
  EXPECT_EQ(sim->stats().chat_requests, sent + 1);
}

TEST(FileJournal, AnUnfinishedUnitIsCutAndItsSamplesSuperseded) {
  auto sim = StartSim();
  TempDir dir;
  client::ClientOptions co;
  co.endpoint = sim->base_url();
  const fs::path samples = dir.path() / "samples.jsonl";
  {
    auto j = FileJournal::Open(dir.path(), false);
    ASSERT_TRUE(j.has_value());
    (*j)->SetClock(ToNanos(std::chrono::steady_clock::now()));
    // The samples file grows by one line per finished call (as the run's sink does).
    std::ofstream out(samples, std::ios::binary);
    (*j)->SetSamplesSize([&samples] { return fs::file_size(samples); });
    client::Client c(co);
    c.SetJournal(j->get());
    Seen seen;
    client::RunHooks h = Hooks(seen);
    h.on_done = [&out](const ChatResponse& r) {
      out << json{{"id", r.id}}.dump() << "\n" << std::flush;
    };
    DoWork(c, h, /*finish_second=*/false);  // killed before the second unit ends
    out << R"({"id": 99, "cut)";            // and a line cut by the kill
  }
  const std::string journal_before = ReadFile(dir.path() / "journal.jsonl");
  auto j = FileJournal::Open(dir.path(), true);
  ASSERT_TRUE(j.has_value()) << j.error().message;
  EXPECT_EQ((*j)->resumed().units, 1);
  EXPECT_EQ((*j)->resumed().unfinished, "single");
  EXPECT_EQ((*j)->resumed().superseded_samples, 1u);
  // samples.jsonl: the finished unit's lines as they were, the unfinished one's marked, the cut
  // line gone.
  std::vector<json> lines = testing::ReadJsonl(samples);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_FALSE(lines[0].contains("superseded"));
  EXPECT_FALSE(lines[1].contains("superseded"));
  EXPECT_EQ(lines[2]["id"], 3);
  EXPECT_EQ(lines[2]["superseded"], true);
  // journal.jsonl: the unfinished unit's lines are gone.
  const std::string journal_after = ReadFile(dir.path() / "journal.jsonl");
  EXPECT_LT(journal_after.size(), journal_before.size());
  EXPECT_EQ(journal_after.find("\"single\""), std::string::npos);
  // Resuming: the first unit replays, the second is sent again from its start.
  const auto sent = sim->stats().chat_requests;
  (*j)->SetClock((*j)->ResumeT0(ToNanos(std::chrono::steady_clock::now())));
  client::Client c(co);
  c.SetJournal(j->get());
  Seen seen;
  Work w = DoWork(c, seen);
  EXPECT_TRUE(w.first[0].replayed);
  EXPECT_FALSE(w.second[0].replayed);
  EXPECT_EQ(sim->stats().chat_requests, sent + 1);
}

// A sessions run's unit: each finished session is a committed part. A process killed mid-unit
// leaves its parts; the resumed run replays their calls and sends only the rest, and records the
// replayed part again, so the unit ends complete.
TEST(FileJournal, CommittedPartsOfAnUnfinishedUnitAreReplayedAndTheRestSent) {
  auto sim = StartSim();
  TempDir dir;
  client::ClientOptions co;
  co.endpoint = sim->base_url();
  std::string first_answer;
  {
    auto j = FileJournal::Open(dir.path(), false);
    ASSERT_TRUE(j.has_value());
    (*j)->SetClock(ToNanos(std::chrono::steady_clock::now()));
    client::Client c(co);
    c.SetJournal(j->get());
    Seen seen;
    c.BeginUnit("sessions");
    std::vector<ChatCall> a = {Call(1, "alpha")}, b = {Call(2, "beta")};
    first_answer = c.RunChats(a, Hooks(seen), std::stop_token()).front().answer;
    const std::uint64_t ids[] = {1};
    (*j)->CommitPart("session 1", ids);
    (void)c.RunChats(b, Hooks(seen), std::stop_token());  // session 2: killed before it ends
  }
  ASSERT_EQ(sim->stats().chat_requests, 2u);
  {
    auto j = FileJournal::Open(dir.path(), true);
    ASSERT_TRUE(j.has_value()) << j.error().message;
    EXPECT_EQ((*j)->resumed().units, 0);
    EXPECT_EQ((*j)->resumed().unfinished, "sessions");
    EXPECT_EQ((*j)->resumed().parts, 1);
    (*j)->SetClock((*j)->ResumeT0(ToNanos(std::chrono::steady_clock::now())));
    client::Client c(co);
    c.SetJournal(j->get());
    Seen seen;
    c.BeginUnit("sessions");
    std::vector<ChatCall> a = {Call(1, "alpha")}, b = {Call(2, "beta")};
    const ChatResponse r1 = c.RunChats(a, Hooks(seen), std::stop_token()).front();
    EXPECT_TRUE(r1.replayed);
    EXPECT_EQ(r1.answer, first_answer);
    EXPECT_EQ(sim->stats().chat_requests, 2u);  // session 1 was not sent again
    const ChatResponse r2 = c.RunChats(b, Hooks(seen), std::stop_token()).front();
    EXPECT_FALSE(r2.replayed);
    EXPECT_EQ(sim->stats().chat_requests, 3u);
    const std::uint64_t ids1[] = {1}, ids2[] = {2};
    (*j)->CommitPart("session 1", ids1);
    (*j)->CommitPart("session 2", ids2);
    c.EndUnit();
  }
  // The unit is complete now: a third process replays all of it and sends nothing.
  auto j = FileJournal::Open(dir.path(), true);
  ASSERT_TRUE(j.has_value()) << j.error().message;
  EXPECT_EQ((*j)->resumed().units, 1);
  EXPECT_EQ((*j)->resumed().unfinished, "");
  client::Client c(co);
  c.SetJournal(j->get());
  Seen seen;
  c.BeginUnit("sessions");
  std::vector<ChatCall> calls = {Call(1, "alpha"), Call(2, "beta")};
  for (const ChatResponse& r : c.RunChats(calls, Hooks(seen), std::stop_token())) {
    EXPECT_TRUE(r.replayed) << r.id;
  }
  c.EndUnit();
  EXPECT_EQ(sim->stats().chat_requests, 3u);
}

// A partial record is only used by the unit it belongs to.
TEST(FileJournal, APartOfAnotherUnitIsNotReplayed) {
  auto sim = StartSim();
  TempDir dir;
  client::ClientOptions co;
  co.endpoint = sim->base_url();
  {
    auto j = FileJournal::Open(dir.path(), false);
    ASSERT_TRUE(j.has_value());
    client::Client c(co);
    c.SetJournal(j->get());
    Seen seen;
    c.BeginUnit("sessions");
    std::vector<ChatCall> a = {Call(1, "alpha")};
    (void)c.RunChats(a, Hooks(seen), std::stop_token());
    const std::uint64_t ids[] = {1};
    (*j)->CommitPart("session 1", ids);
  }
  auto j = FileJournal::Open(dir.path(), true);
  ASSERT_TRUE(j.has_value());
  client::Client c(co);
  c.SetJournal(j->get());
  Seen seen;
  c.BeginUnit("concurrency level 1");
  std::vector<ChatCall> a = {Call(1, "alpha")};
  EXPECT_FALSE(c.RunChats(a, Hooks(seen), std::stop_token()).front().replayed);
  c.EndUnit();
  EXPECT_EQ(sim->stats().chat_requests, 2u);
}

TEST(FileJournal, ARunThatNoLongerMatchesItsJournalStopsAndSendsNothing) {
  auto sim = StartSim();
  TempDir dir;
  client::ClientOptions co;
  co.endpoint = sim->base_url();
  {
    auto j = FileJournal::Open(dir.path(), false);
    ASSERT_TRUE(j.has_value());
    client::Client c(co);
    c.SetJournal(j->get());
    Seen seen;
    DoWork(c, seen);
  }
  const auto sent = sim->stats().chat_requests;
  auto j = FileJournal::Open(dir.path(), true);
  ASSERT_TRUE(j.has_value());
  std::string fatal;
  (*j)->SetOnFatal([&fatal](const std::string& why) { fatal = why; });
  client::Client c(co);
  c.SetJournal(j->get());
  c.BeginUnit("something else");
  std::vector<ChatCall> calls = {Call(1, "alpha")};
  auto r = c.RunChats(calls, {}, std::stop_token());
  c.EndUnit();
  EXPECT_NE(fatal.find("no longer matches its journal at unit 1 ('something else' where the "
                       "journal has 'batch one')"),
            std::string::npos)
      << fatal;
  EXPECT_EQ(r[0].outcome, client::Outcome::kCancelled);
  EXPECT_EQ(r[0].send_ns, 0);
  EXPECT_EQ(sim->stats().chat_requests, sent);
}

}  // namespace
}  // namespace sb::run
