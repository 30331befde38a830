// One batch over several I/O threads (ClientOptions::io_threads; label "concurrency": also run
// under TSan): results in call order, hooks never concurrent, max_in_flight split, stop ends every
// thread, preconnect finishes on every thread before any call leaves, io_threads = 1 stays on the
// calling thread.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "client/chat.h"
#include "client/http_client.h"
#include "client/io_workers.h"
#include "client/test_streams.h"
#include "sim/sim_server.h"
#include "support/script_server.h"

namespace sb::client {
namespace {

using sb::testing::Chunk;
using sb::testing::FullResponse;
using sb::testing::Script;
using sb::testing::ScriptRequest;
using sb::testing::ScriptServer;
using sb::testing::SseHead;

// Raises the soft RLIMIT_NOFILE to `want` (this test process only); false when the hard limit
// does not allow it.
bool RaiseOpenFiles(rlim_t want) {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < want && lim.rlim_max >= want) {
    lim.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &lim);
    getrlimit(RLIMIT_NOFILE, &lim);
  }
  return lim.rlim_cur >= want;
}

std::unique_ptr<sim::SimServer> StartSim(const sim::SimOptions& options) {
  auto r = sim::SimServer::Start(options);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? std::move(r).value() : nullptr;
}

sim::SimOptions FastSim() {
  sim::SimOptions o;
  o.ttft_ms = 5;
  o.prefill_us_per_token = 0;
  o.itl_ms = 2;
  o.concurrency_slowdown = 0;
  o.max_batch = 4096;
  return o;
}

ClientOptions SimClientOptions(const sim::SimServer& sim, int io_threads) {
  ClientOptions o;
  o.endpoint = sim.base_url();
  o.io_threads = io_threads;
  return o;
}

// A streamed chat call whose answer is `tokens` tokens long.
ChatCall SimCall(std::uint64_t id, int tokens) {
  ChatParams p;
  p.model = "sim-model";
  p.messages = {{"user", "[[sim:tokens=" + std::to_string(tokens) + "]] hello", ""}};
  p.max_tokens = 64;
  p.stream = true;
  ChatCall c;
  c.id = id;
  c.body = BuildChatBody(p, ServerKind::kSim);
  return c;
}

// ---- the partition rules (io_workers.h) --------------------------------------------------------

TEST(IoWorkers, AutomaticCountFollowsTheStreams) {
  EXPECT_EQ(io::WorkerCount(0, 0, 0, false), 1);
  EXPECT_EQ(io::WorkerCount(0, 511, 0, false), 1);
  EXPECT_EQ(io::WorkerCount(0, 512, 0, false), 2);  // from 512 on: ceil(streams / 256)
  EXPECT_EQ(io::WorkerCount(0, 513, 0, false), 3);
  EXPECT_EQ(io::WorkerCount(0, 1000, 0, false), 4);
  EXPECT_EQ(io::WorkerCount(0, 4096, 0, false), 16);
  EXPECT_EQ(io::WorkerCount(0, 10'000, 0, false), 16);   // at most 16
  EXPECT_EQ(io::WorkerCount(0, 100'000, 0, false), 16);  // whatever the cores
  // max_in_flight, when set, is the number of streams.
  EXPECT_EQ(io::WorkerCount(0, 10'000, 100, false), 1);
  EXPECT_EQ(io::WorkerCount(0, 10'000, 1'000, false), 4);
  EXPECT_EQ(io::WorkerCount(0, 600, 100'000, false), 3);  // a cap above the calls: the calls
  // An open-loop schedule (send times, no cap): its concurrency is not its call count.
  EXPECT_EQ(io::WorkerCount(0, 25'000, 0, true), 1);
  EXPECT_EQ(io::WorkerCount(0, 25'000, 1'000, true), 4);  // capped: the cap is the streams
  EXPECT_EQ(io::WorkerCount(4, 25'000, 0, true), 4);      // asked for: as asked
}

TEST(IoWorkers, RequestedCountIsKeptWithinTheStreams) {
  EXPECT_EQ(io::WorkerCount(1, 10'000, 0, false), 1);
  EXPECT_EQ(io::WorkerCount(40, 10'000, 0, false), 40);  // as asked, even above the automatic cap
  EXPECT_EQ(io::WorkerCount(4, 3, 0, false), 3);         // never a worker without a call
  EXPECT_EQ(io::WorkerCount(4, 100, 2, false), 2);       // nor without a slot of the cap
  EXPECT_EQ(io::WorkerCount(4, 0, 0, false), 1);
}

TEST(IoWorkers, SharesOfCallsAndOfTheCap) {
  // max_in_flight 6 over 4: 2, 2, 1, 1.
  EXPECT_EQ(io::InFlightShare(6, 4, 0), 2u);
  EXPECT_EQ(io::InFlightShare(6, 4, 1), 2u);
  EXPECT_EQ(io::InFlightShare(6, 4, 2), 1u);
  EXPECT_EQ(io::InFlightShare(6, 4, 3), 1u);
  EXPECT_EQ(io::InFlightShare(0, 4, 0), 0u);  // no cap stays no cap
  // 10 calls over 4: 0 4 8 | 1 5 9 | 2 6 | 3 7.
  EXPECT_EQ(io::CallShare(10, 4, 0), 3u);
  EXPECT_EQ(io::CallShare(10, 4, 1), 3u);
  EXPECT_EQ(io::CallShare(10, 4, 2), 2u);
  EXPECT_EQ(io::CallShare(10, 4, 3), 2u);
  EXPECT_EQ(io::CallShare(2, 4, 3), 0u);
}

TEST(IoWorkers, ValidateOptionsBoundsIoThreads) {
  ClientOptions o;
  o.io_threads = -1;
  ASSERT_FALSE(ValidateOptions(o));
  EXPECT_NE(ValidateOptions(o).error().message.find("io_threads"), std::string::npos);
  o.io_threads = 65;
  EXPECT_FALSE(ValidateOptions(o));
  o.io_threads = 64;
  EXPECT_TRUE(ValidateOptions(o));
}

// ---- batches ---------------------------------------------------------------------------------

TEST(IoThreads, TwoThousandStreamsOverFourThreads) {
  // 2,000 client + 2,000 simulator sockets in this process.
  if (!RaiseOpenFiles(4400)) {
    GTEST_SKIP() << "RLIMIT_NOFILE is too low for 2,000 streams";
  }
  sim::SimOptions so = FastSim();
  // Every request is in before the first answer starts (as OneThousandStreamsFromOneThread's
  // 1.5 s pause; 300 ms was too short under TSan beside other tests).
  so.ttft_ms = 1500;
  so.itl_ms = 20;
  auto sim = StartSim(so);
  ASSERT_TRUE(sim);
  Client client(SimClientOptions(*sim, 4));
  constexpr std::size_t kCalls = 2000;
  std::vector<ChatCall> calls;
  for (std::size_t i = 0; i < kCalls; ++i) {
    calls.push_back(SimCall(1000 + i, 1 + static_cast<int>(i % 5)));
  }
  // Plain (non-atomic) state: the hooks are serialized, so TSan sees no race here either.
  std::vector<int> done(kCalls, 0);
  std::set<std::thread::id> threads;
  RunHooks hooks;
  hooks.on_done = [&](const ChatResponse& r) {
    ++done[r.id - 1000];
    threads.insert(std::this_thread::get_id());
  };
  const auto out = client.RunChats(calls, hooks, {});
  ASSERT_EQ(out.size(), kCalls);
  int ok = 0;
  for (std::size_t i = 0; i < kCalls; ++i) {
    const int tokens = 1 + static_cast<int>(i % 5);
    // In call order: each slot holds its own call's answer (its own length).
    const bool good = out[i].outcome == Outcome::kOk && out[i].id == 1000 + i &&
                      out[i].usage.completion_tokens == tokens &&
                      out[i].events.size() == static_cast<std::size_t>(tokens);
    EXPECT_TRUE(good) << i << ": " << out[i].reason << " tokens " << out[i].usage.completion_tokens;
    ok += good ? 1 : 0;
    EXPECT_EQ(done[i], 1) << i;
  }
  EXPECT_EQ(ok, static_cast<int>(kCalls));
  EXPECT_EQ(threads.size(), 4u);  // the calling thread and three more
  EXPECT_EQ(client.io_thread_cpu_ns().size(), 3u);
  EXPECT_EQ(sim->stats().chat_requests, kCalls);
  EXPECT_GE(sim->stats().max_concurrent, static_cast<int>(kCalls) * 9 / 10);
}

TEST(IoThreads, HooksNeverRunAtTheSameTime) {
  auto sim = StartSim(FastSim());
  ASSERT_TRUE(sim);
  Client client(SimClientOptions(*sim, 4));
  std::vector<ChatCall> calls;
  for (std::uint64_t i = 0; i < 200; ++i) {
    calls.push_back(SimCall(i, 10));
  }
  std::atomic<bool> inside{false};
  std::atomic<int> overlaps{0};
  std::atomic<int> calls_seen{0};
  // Each hook holds the "inside" flag for a few microseconds of work, so two threads' hooks
  // would overlap often if nothing kept them apart.
  const auto enter_and_leave = [&] {
    if (inside.exchange(true)) {
      overlaps.fetch_add(1);
    }
    calls_seen.fetch_add(1);
    volatile std::uint64_t sink = 0;
    for (int k = 0; k < 20'000; ++k) {
      sink = sink + static_cast<std::uint64_t>(k);
    }
    inside.store(false);
  };
  std::set<std::thread::id> threads;  // plain: only touched inside hooks
  RunHooks hooks;
  hooks.on_event = [&](const ChatResponse&) {
    enter_and_leave();
    threads.insert(std::this_thread::get_id());
    return true;
  };
  hooks.on_done = [&](const ChatResponse&) { enter_and_leave(); };
  const auto out = client.RunChats(calls, hooks, {});
  for (const ChatResponse& r : out) {
    EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
  }
  EXPECT_EQ(calls_seen.load(), 200 * 10 + 200);
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(threads.size(), 4u);
}

TEST(IoThreads, MaxInFlightIsSplitOverTheThreads) {
  sim::SimOptions so = FastSim();
  so.ttft_ms = 20;
  so.itl_ms = 10;
  auto sim = StartSim(so);
  ASSERT_TRUE(sim);
  Client client(SimClientOptions(*sim, 4));
  std::vector<ChatCall> calls;
  for (std::uint64_t i = 0; i < 48; ++i) {
    calls.push_back(SimCall(i, 4));
  }
  RunHooks hooks;
  hooks.max_in_flight = 6;
  const auto out = client.RunChats(calls, hooks, {});
  // In flight from send_ns to done_ns, all on one clock: sweep the edges (an end before a start
  // at the same instant: a thread stamps done before it sends the next call).
  const auto peak = [&](int worker) {  // -1: all
    std::vector<std::pair<std::int64_t, int>> edges;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (worker >= 0 && static_cast<int>(i % 4) != worker) {
        continue;
      }
      EXPECT_EQ(out[i].outcome, Outcome::kOk) << out[i].reason;
      edges.emplace_back(out[i].send_ns, +1);
      edges.emplace_back(out[i].done_ns, -1);
    }
    std::sort(edges.begin(), edges.end());
    int now = 0, most = 0;
    for (const auto& [t, d] : edges) {
      now += d;
      most = std::max(most, now);
    }
    return most;
  };
  EXPECT_LE(peak(-1), 6);
  // 6 over 4 threads: 2, 2, 1, 1, each thread filling its share from the start.
  EXPECT_EQ(peak(0), 2);
  EXPECT_EQ(peak(1), 2);
  EXPECT_EQ(peak(2), 1);
  EXPECT_EQ(peak(3), 1);
}

TEST(IoThreads, StopEndsEveryThreadAndCancelsUnsentCalls) {
  ScriptServer server([](const ScriptRequest&) {
    return Script().Send(SseHead()).Send(Chunk(Ev(Delta("a")))).Pause(10'000);
  });
  ClientOptions o = Options(server);
  o.io_threads = 4;
  Client client(o);
  std::vector<ChatCall> calls;
  for (std::uint64_t i = 0; i < 400; ++i) {
    calls.push_back(Call(i));
  }
  std::stop_source source;
  std::latch streaming(8);
  int done = 0;  // plain: the hooks are serialized
  RunHooks hooks;
  hooks.max_in_flight = 8;  // 2 per thread: 8 streams run, 392 wait
  hooks.on_event = [&](const ChatResponse&) {
    streaming.count_down();
    return true;
  };
  hooks.on_done = [&](const ChatResponse&) { ++done; };
  std::jthread stopper([&] {
    streaming.wait();  // every thread is in epoll_wait on its paused streams
    source.request_stop();
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto out = client.RunChats(calls, hooks, source.get_token());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  int running = 0, unsent = 0;
  for (const ChatResponse& r : out) {
    ASSERT_EQ(r.outcome, Outcome::kCancelled);
    if (r.reason == "cancelled") {
      ++running;
      EXPECT_EQ(r.answer, "a");
    } else {
      ++unsent;
      EXPECT_EQ(r.reason, "cancelled before send");
      EXPECT_EQ(r.send_ns, 0);
    }
  }
  EXPECT_EQ(running, 8);
  EXPECT_EQ(unsent, 392);
  EXPECT_EQ(done, 400);
  EXPECT_EQ(server.requests().size(), 8u);
}

TEST(IoThreads, PreconnectFinishesOnEveryThreadBeforeAnyCallLeaves) {
  const auto now_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  // The first connection's GET is answered 100 ms late: its thread's preconnect ends last, and
  // the other thread must wait for it before sending.
  std::atomic<std::int64_t> last_answer_ns{0};
  ScriptServer server([&](const ScriptRequest& req) {
    if (req.method == "GET") {
      Script s;
      if (req.connection == 0) {
        s.Pause(100);
      }
      return s
          .Call([&] {  // before the answer is written: any call it lets leave comes later
            const std::int64_t t = now_ns();
            std::int64_t seen = last_answer_ns.load();
            while (seen < t && !last_answer_ns.compare_exchange_weak(seen, t)) {
            }
          })
          .Send(FullResponse(200, "application/json", R"({"data":[]})"));
    }
    return Script().Send(SseHead()).Send(Chunk(GoodStream({"x"}))).Send(sb::testing::LastChunk());
  });
  ClientOptions o = Options(server);
  o.io_threads = 2;
  Client client(o);
  std::vector<ChatCall> calls;
  for (std::uint64_t i = 0; i < 40; ++i) {
    calls.push_back(Call(i));
  }
  RunHooks hooks;
  hooks.preconnect = true;
  const auto out = client.RunChats(calls, hooks, {});
  for (const ChatResponse& r : out) {
    EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
  }
  std::int64_t first_post = INT64_MAX;
  int gets = 0;
  for (const ScriptRequest& req : server.requests()) {
    if (req.method == "GET") {
      ++gets;
    } else {
      first_post = std::min(first_post, req.received_ns);
    }
  }
  EXPECT_EQ(gets, 40);  // 20 per thread
  EXPECT_GT(first_post, last_answer_ns.load());
  // Each thread's calls found the connections it had opened itself.
  EXPECT_EQ(server.connections(), 40);
}

TEST(IoThreads, OneThreadRunsEverythingOnTheCallingThread) {
  if (!RaiseOpenFiles(2000)) {
    GTEST_SKIP() << "RLIMIT_NOFILE is too low for 600 streams";
  }
  auto sim = StartSim(FastSim());
  ASSERT_TRUE(sim);
  for (const int io_threads : {1, 0}) {
    // 600 calls would get two threads by the automatic rule on a multi-core machine; 1 keeps
    // one. 0 with 100 calls: one (below 512 streams).
    const std::size_t n = io_threads == 1 ? 600 : 100;
    Client client(SimClientOptions(*sim, io_threads));
    std::vector<ChatCall> calls;
    for (std::uint64_t i = 0; i < n; ++i) {
      calls.push_back(SimCall(i, 2));
    }
    const std::thread::id me = std::this_thread::get_id();
    std::atomic<int> elsewhere{0};
    RunHooks hooks;
    hooks.on_event = [&](const ChatResponse&) {
      elsewhere.fetch_add(std::this_thread::get_id() != me ? 1 : 0);
      return true;
    };
    hooks.on_done = [&](const ChatResponse&) {
      elsewhere.fetch_add(std::this_thread::get_id() != me ? 1 : 0);
    };
    const auto out = client.RunChats(calls, hooks, {});
    for (const ChatResponse& r : out) {
      EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
    }
    EXPECT_EQ(elsewhere.load(), 0) << "io_threads " << io_threads;
    EXPECT_TRUE(client.io_thread_cpu_ns().empty());
  }
}

}  // namespace
}  // namespace sb::client
