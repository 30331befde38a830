// The suite runner against a scripted HTTP server, for answers the simulator cannot give: a
// refusal in an HTTP 500 (llama.cpp without mmproj), a server that ignores max_tokens, a near
// loop, a stream that never starts.
#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "perf/profiles.h"
#include "suite/runner.h"
#include "suite/suite.h"
#include "support/script_server.h"

namespace sb::suite {
namespace {

using nlohmann::json;
using testing::Chunk;
using testing::FullResponse;
using testing::LastChunk;
using testing::Script;
using testing::ScriptRequest;
using testing::ScriptServer;
using testing::SseHead;

std::string Event(std::string_view content, const char* finish = nullptr) {
  json choice = {{"index", 0}, {"delta", {{"content", content}}}};
  choice["finish_reason"] = finish == nullptr ? json(nullptr) : json(finish);
  return "data: " + json{{"object", "chat.completion.chunk"}, {"choices", {choice}}}.dump() +
         "\n\n";
}

// A complete stream of `pieces`, finish "stop", usage, [DONE].
std::string Stream(const std::vector<std::string>& pieces) {
  std::string body;
  for (const std::string& p : pieces) {
    body += Event(p);
  }
  body += Event("", "stop");
  body += "data: " +
          json{{"choices", json::array()},
               {"usage", {{"prompt_tokens", 5}, {"completion_tokens", pieces.size()}}}}
              .dump() +
          "\n\n";
  return body + "data: [DONE]\n\n";
}

Script Answer(const std::vector<std::string>& pieces) {
  return Script().Send(SseHead()).Send(Chunk(Stream(pieces))).Send(LastChunk());
}

Script Error(int status, const std::string& message) {
  return Script().Send(FullResponse(
      status, "application/json",
      json{{"error", {{"code", status}, {"message", message}, {"type", "server_error"}}}}.dump()));
}

Suite ParseOrDie(const std::string& yaml) {
  auto s = ParseSuite(yaml, "wire.yaml", ".");
  EXPECT_TRUE(s) << s.error().message;
  return s ? s.value() : Suite{};
}

struct Wire {
  ScriptServer server;
  client::Client client;
  std::stop_source stop;
  perf::Session session;
  std::vector<std::string> progress;
  SuiteRunner runner;

  Wire(ScriptServer::Handler handler, RunOptions ro, client::ClientOptions co = {})
      : server([handler = std::move(handler)](const ScriptRequest& req) {
          // No Prometheus metrics here: the runner stops scraping after the first 404.
          if (req.method == "GET") {
            return Script().Send(FullResponse(404, "text/plain", "not found"));
          }
          return handler(req);
        }),
        client(WithEndpoint(co, server)),
        session(client, perf::SessionTarget{"m", client::ServerKind::kVllm, 32768}, nullptr,
                nullptr, stop.get_token(), 0),
        runner(
            client, SuiteTarget{"m", client::ServerKind::kVllm, 32768}, std::move(ro), session,
            nullptr, [this](const std::string& line) { progress.push_back(line); },
            stop.get_token(), 0) {}

  static client::ClientOptions WithEndpoint(client::ClientOptions co, const ScriptServer& s) {
    co.endpoint = s.url() + "/v1";
    return co;
  }

  const json& Test(const std::string& id) const {
    for (const json& t : runner.tests()) {
      if (t["id"] == id) {
        return t;
      }
    }
    static const json kNone;
    ADD_FAILURE() << "no test " << id;
    return kNone;
  }
};

constexpr const char* kLlamaNoMmproj =
    "image input is not supported - hint: if this is unexpected, you may need to provide the "
    "mmproj";
constexpr const char* kNoToolParser =
    "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set";

TEST(SuiteRunnerWire, OnlyARefusalOfAFeatureTheTestUsesIsUnsupported) {
  Suite s = ParseOrDie(R"(
suite: refusals
tests:
  - {id: img, category: image, prompt: "Count the shapes.", image: shapes_a, check: {number: 2}}
  - {id: text500, category: reasoning, prompt: "Say hi.", check: {contains: hi}}
  - id: tool
    category: tool_calling
    prompt: "Weather in Tokyo?"
    tools: [{name: get_weather, parameters: {type: object, properties: {city: {type: string}}}}]
    check: {tool_call: {calls: [{name: get_weather}]}}
  - {id: text400, category: reasoning, prompt: "Say bye.", check: {contains: bye}}
)");
  Wire w(
      [](const ScriptRequest& req) {
        if (req.body.find("Reply with the word OK.") != std::string::npos) {
          return Answer({"OK"});  // the image probe passes: the test's own answer decides
        }
        if (req.body.find("Count the shapes.") != std::string::npos ||
            req.body.find("Say hi.") != std::string::npos) {
          return Error(500, kLlamaNoMmproj);
        }
        return Error(400, kNoToolParser);
      },
      RunOptions{});
  w.runner.Run(s);
  EXPECT_EQ(w.Test("img")["status"], "UNSUPPORTED") << w.Test("img").dump();
  EXPECT_NE(w.Test("img")["reason"].get<std::string>().find("HTTP 500"), std::string::npos);
  EXPECT_EQ(w.Test("text500")["status"], "ERROR") << "a text-only test refuses no modality";
  EXPECT_NE(w.Test("text500")["reason"].get<std::string>().find("HTTP 500"), std::string::npos);
  EXPECT_EQ(w.Test("tool")["status"], "UNSUPPORTED");
  EXPECT_EQ(w.Test("text400")["status"], "ERROR") << "the test sends no tools";
}

TEST(SuiteRunnerWire, RefusedFeatureNamesWhatIsRefused) {
  EXPECT_EQ(RefusedFeature(500, kLlamaNoMmproj), "image");
  EXPECT_EQ(RefusedFeature(400, "At most 0 audio(s) may be provided in one prompt."), "audio");
  EXPECT_EQ(RefusedFeature(400, kNoToolParser), "tools");
  EXPECT_EQ(RefusedFeature(400, "tools param requires --jinja flag"), "tools");
  EXPECT_EQ(RefusedFeature(400, "unsupported content[].type"), "media");
  EXPECT_EQ(RefusedFeature(500, "simulated internal error"), "");
  EXPECT_EQ(RefusedFeature(503, kLlamaNoMmproj), "");
  EXPECT_TRUE(RefusalApplies("image", {"image"}));
  EXPECT_TRUE(RefusalApplies("media", {"video"}));
  EXPECT_TRUE(RefusalApplies("tools", {"tools"}));
  EXPECT_FALSE(RefusalApplies("image", {}));
  EXPECT_FALSE(RefusalApplies("media", {"tools"}));
  EXPECT_FALSE(RefusalApplies("audio", {"image"}));
  EXPECT_FALSE(RefusalApplies("", {"image"}));
}

// Distinct words, so that no loop detector fires: "w0 w1 w2 ...".
std::vector<std::string> Words(int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) {
    out.push_back("w" + std::to_string(i) + " ");
  }
  return out;
}

TEST(SuiteRunnerWire, AnAnswerOverFourTimesItsBudgetIsCancelled) {
  Suite s = ParseOrDie(R"(
suite: cap
tests:
  - {id: long, category: writing, prompt: "Write.", max_tokens: 16, check: {contains: w}}
)");
  // 16 tokens allow 256 bytes; the server sends 400 words (~2,300 bytes), then would go on.
  Wire w(
      [](const ScriptRequest&) {
        std::string first;
        for (const std::string& p : Words(0, 400)) {
          first += Event(p);
        }
        return Script()
            .Send(SseHead())
            .Send(Chunk(first))
            .Pause(5000)
            .Send(Chunk(Stream(Words(400, 410))))
            .Send(LastChunk());
      },
      RunOptions{});
  w.runner.Run(s);
  const json& t = w.Test("long");
  EXPECT_EQ(t["status"], "ERROR");
  EXPECT_EQ(t["reason"],
            "answer over 256 bytes (4× max_tokens 16 at 4 bytes a token: the server does not stop "
            "at max_tokens); cancelled");
  EXPECT_LT(t["time_ms"].get<double>(), 4000.0) << "cancelled, not waited out";
  EXPECT_TRUE(t["completion_tokens"].is_null());
  EXPECT_EQ(w.runner.completion_tokens(), 0);
  EXPECT_EQ(w.runner.failed_requests(), 1);
}

TEST(SuiteRunnerWire, ANearLoopIsCancelledAsLoop) {
  Suite s = ParseOrDie(R"(
suite: near
tests:
  - {id: steps, category: reasoning, prompt: "Add.", max_tokens: 100000, check: {number: 1}}
)");
  Wire w(
      [](const ScriptRequest&) {
        std::string first;
        int total = 1;
        for (int i = 1; i <= 400; ++i) {
          total += 3;
          first +=
              Event("Step " + std::to_string(i) + ": add 3 to get " + std::to_string(total) + ". ");
        }
        return Script()
            .Send(SseHead())
            .Send(Chunk(first))
            .Pause(5000)
            .Send(Chunk(Stream({"1"})))
            .Send(LastChunk());
      },
      RunOptions{});
  w.runner.Run(s);
  const json& t = w.Test("steps");
  EXPECT_EQ(t["status"], "LOOP") << t.dump();
  EXPECT_NE(t["reason"].get<std::string>().find(
                "the answer repeats a 20-token span 50 times with only its numbers changing"),
            std::string::npos)
      << t["reason"];
  EXPECT_LT(t["time_ms"].get<double>(), 4000.0);
}

TEST(SuiteRunnerWire, AClientTimeoutNamesItsLimitAndFlag) {
  Suite s = ParseOrDie(R"(
suite: slow
tests:
  - {id: slow, category: reasoning, prompt: "Wait.", check: {contains: x}}
)");
  client::ClientOptions co;
  co.first_byte_timeout = std::chrono::milliseconds(200);
  Wire w([](const ScriptRequest&) { return Script().Pause(5000).Send(SseHead()); }, RunOptions{},
         co);
  w.runner.Run(s);
  const json& t = w.Test("slow");
  EXPECT_EQ(t["status"], "TIMEOUT");
  EXPECT_EQ(t["reason"],
            "no first byte within 200 ms (the client's first-byte limit; raise with "
            "--first-byte-timeout-s)");
  EXPECT_GE(t["time_ms"].get<double>(), 200.0);
  ASSERT_EQ(w.progress.size(), 1u);
  EXPECT_EQ(w.progress[0].rfind("slow: TIMEOUT (0.2", 0), 0u) << w.progress[0];
}

TEST(SuiteRunnerWire, RetriedRequestsAreCountedInTheTest) {
  Suite s = ParseOrDie(R"(
suite: r
tests:
  - {id: ok, category: reasoning, prompt: "Hi.", check: {contains: hello}}
  - {id: plain, category: reasoning, prompt: "Hello?", check: {contains: hello}}
)");
  std::atomic<int> chats{0};
  client::ClientOptions co;
  co.retries = 2;
  co.retry_backoff = std::chrono::milliseconds(1);
  Wire w(
      [&chats](const ScriptRequest&) {
        if (chats++ == 0) {
          return Script().Send(FullResponse(429, "application/json",
                                            R"({"error":{"message":"slow down"}})",
                                            "Retry-After: 0\r\n"));
        }
        return Answer({"hello"});
      },
      RunOptions{}, co);
  w.runner.Run(s);
  const json& t = w.Test("ok");
  EXPECT_EQ(t["status"], "PASS");
  EXPECT_EQ(t["retries"], 1) << t.dump();
  // A test answered at once says nothing of retries.
  EXPECT_EQ(w.Test("plain")["status"], "PASS");
  EXPECT_FALSE(w.Test("plain").contains("retries")) << w.Test("plain").dump();
  EXPECT_EQ(chats.load(), 3);
}

}  // namespace
}  // namespace sb::suite
