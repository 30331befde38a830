// Many streams at once from one thread (labelled "concurrency": also run under TSan); several
// I/O threads: io_threads_test.cpp.
#include <vector>

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "client/http_client.h"
#include "client/test_streams.h"
#include "support/script_server.h"

namespace sb::client {
namespace {

using json = nlohmann::json;
using sb::testing::Chunk;
using sb::testing::LastChunk;
using sb::testing::Script;
using sb::testing::ScriptRequest;
using sb::testing::ScriptServer;
using sb::testing::SseHead;

TEST(HttpClientConcurrency, TwoHundredConcurrentStreams) {
  ScriptServer server([](const ScriptRequest& req) {
    const std::string id = std::to_string(IdOf(req));
    return Script()
        .Send(SseHead())
        .Send(Chunk(Ev(Delta("r" + id + "-"))))
        .Pause(400)
        .Send(Chunk(GoodStream({"end"})))
        .Send(LastChunk());
  });
  Client client(Options(server));
  std::vector<ChatCall> calls;
  for (std::uint64_t i = 0; i < 200; ++i) {
    calls.push_back(Call(i));
  }
  int done = 0;
  RunHooks hooks;
  hooks.on_done = [&](const ChatResponse&) { ++done; };
  const auto out = RunCalls(client, calls, hooks);
  ASSERT_EQ(out.size(), 200u);
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].outcome, Outcome::kOk) << i << ": " << out[i].reason;
    EXPECT_EQ(out[i].id, i);
    EXPECT_EQ(out[i].answer, "r" + std::to_string(i) + "-end");
    EXPECT_EQ(out[i].events.size(), 2u);
  }
  EXPECT_EQ(done, 200);
  EXPECT_EQ(server.connections(), 200);
  EXPECT_GE(server.max_concurrent(), 100);  // they overlapped, not one after another
}

TEST(HttpClientConcurrency, OneThousandStreamsFromOneThread) {
  // 1000 client sockets + 1000 server sockets live in this process: raise the soft fd limit
  // (test process only) or skip where the hard limit is too low.
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < 2200 && lim.rlim_max >= 2200) {
    lim.rlim_cur = 2200;
    setrlimit(RLIMIT_NOFILE, &lim);
    getrlimit(RLIMIT_NOFILE, &lim);
  }
  if (lim.rlim_cur < 2200) {
    GTEST_SKIP() << "RLIMIT_NOFILE " << lim.rlim_cur << " is too low for 1000 streams";
  }
  ScriptServer server([](const ScriptRequest& req) {
    const std::string id = std::to_string(IdOf(req));
    return Script()
        .Send(SseHead())
        .Send(Chunk(Ev(Delta(id))))
        .Pause(1500)
        .Send(Chunk(GoodStream({"."})))
        .Send(LastChunk());
  });
  ClientOptions o = Options(server);
  o.io_threads = 1;  // what the name says (the automatic rule would give 1,000 streams two)
  Client client(o);
  std::vector<ChatCall> calls;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    calls.push_back(Call(i));
  }
  const auto out = RunCalls(client, calls);
  int ok = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    ok += out[i].outcome == Outcome::kOk && out[i].answer == std::to_string(i) + ".";
  }
  EXPECT_EQ(ok, 1000);
  EXPECT_EQ(server.connections(), 1000);
  EXPECT_GE(server.max_concurrent(), 900);
}

}  // namespace
}  // namespace sb::client
