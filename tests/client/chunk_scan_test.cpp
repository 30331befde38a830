// The chunk fast path (client/chunk_scan.h) against the full JSON parser: what it accepts it
// must decode exactly as ApplyStreamEvent's nlohmann path does, and what it cannot be sure of
// it must decline. Every check compares both paths on the same input.
#include "client/chunk_scan.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "client/chat.h"
#include "client/sse_parser.h"
#include "support/chat_response_diff.h"
#include "support/fixture.h"

namespace sb::client {
namespace {

namespace fs = std::filesystem;
using detail::ApplyStreamEventImpl;
using detail::ChunkFields;
using detail::ScanChunk;

struct Both {
  ChatResponse fast, full;
  bool fast_ok = true, full_ok = true;
};

// Applies payload to both responses (fast path allowed / full parser only).
void ApplyBoth(std::string_view payload, std::int64_t t_ns, Both& b) {
  b.fast_ok = ApplyStreamEventImpl(payload, t_ns, b.fast, true);
  b.full_ok = ApplyStreamEventImpl(payload, t_ns, b.full, false);
}

// The payload through both paths from a fresh response: same result, and whether the fast
// path took it.
::testing::AssertionResult Same(std::string_view payload, bool* took_fast = nullptr) {
  Both b;
  ApplyBoth(payload, 1000, b);
  if (took_fast != nullptr) {
    ChunkFields f;
    *took_fast = ScanChunk(payload, f);
  }
  const std::string diff = testing::ChatResponseDiff(b.fast, b.full);
  if (b.fast_ok != b.full_ok || !diff.empty()) {
    return ::testing::AssertionFailure() << "fast path differs from the full parser ("
                                         << (diff.empty() ? "return" : diff) << ") on: " << payload;
  }
  return ::testing::AssertionSuccess();
}

ChatResponse Fast(std::string_view payload) {
  ChatResponse r;
  ApplyStreamEventImpl(payload, 1000, r, true);
  return r;
}

bool Accepts(std::string_view payload) {
  ChunkFields f;
  return ScanChunk(payload, f);
}

TEST(ChunkScan, TakesTheHotShapesOfEveryServer) {
  const char* hot[] = {
      // servebench sim (src/sim/chunks.cpp)
      R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"sim-model","choices":[{"index":0,"delta":{"content":" sheep"},"logprobs":null,"finish_reason":null}]})",
      // vLLM reasoning
      R"({"id":"c","object":"chat.completion.chunk","created":1764662400,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"reasoning_content":"Okay"},"logprobs":null,"finish_reason":null}]})",
      // llama.cpp b9821 field order
      R"({"choices":[{"finish_reason":null,"index":0,"delta":{"content":"iffs"}}],"created":1796199722,"id":"chatcmpl-F","model":"rand","system_fingerprint":"b9821-050ee92d0","object":"chat.completion.chunk"})",
      // continuous usage (vLLM), with nested details
      R"({"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"usage":{"prompt_tokens":12,"total_tokens":14,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":1},"prompt_tokens_details":{"cached_tokens":8}}})",
      // the final usage chunk with no choices
      R"({"id":"c","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":40}})",
      // a finish chunk
      R"({"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"model":"m"})",
  };
  for (const char* p : hot) {
    bool fast = false;
    EXPECT_TRUE(Same(p, &fast));
    EXPECT_TRUE(fast) << p;
  }
  const ChatResponse r = Fast(hot[3]);
  EXPECT_EQ(r.answer, "a");
  EXPECT_EQ(r.usage.prompt_tokens, 12);
  EXPECT_EQ(r.usage.completion_tokens, 2);
  EXPECT_EQ(r.usage.reasoning_tokens, 1);
  EXPECT_EQ(r.usage.cached_tokens, 8);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].tokens, 2);
  EXPECT_EQ(Fast(hot[5]).finish_reason, "length");
  EXPECT_EQ(Fast(hot[1]).reasoning, "Okay");
}

TEST(ChunkScan, DecodesEscapesLikeTheFullParser) {
  const std::string payload =
      R"({"choices":[{"index":0,"delta":{"content":"a\n\"b\\c\/d\t\r\b\f \u00e9\u4e2d\ud83d\ude00\u0000z"}}]})";
  bool fast = false;
  EXPECT_TRUE(Same(payload, &fast));
  EXPECT_TRUE(fast);
  EXPECT_EQ(Fast(payload).answer,
            std::string("a\n\"b\\c/d\t\r\b\f \xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80", 22) +
                std::string(1, '\0') + "z");
  // Raw UTF-8 passes through untouched.
  EXPECT_EQ(Fast(R"({"choices":[{"delta":{"content":"ü→😀"}}]})").answer, "ü→😀");
}

TEST(ChunkScan, OrderExtraFieldsAndNulls) {
  const char* cases[] = {
      // finish_reason and index after delta, choices last, unknown nested values everywhere
      R"({"x":{"a":[1,2,{"b":null}],"c":true},"model":"m","choices":[{"delta":{"role":"assistant","content":"hi","extra":[{"k":-0.5}]},"finish_reason":"stop","index":0}]})",
      R"( {"choices" : [ { "delta" : { "content" : "spaced" } , "index" : 0 } ] } )",
      // nulls: ignored like the full parser ignores non-strings
      R"({"model":null,"choices":[{"index":0,"delta":{"content":null,"reasoning":null,"tool_calls":null},"finish_reason":null}],"usage":null})",
      // both reasoning names: reasoning_content wins, never both
      R"({"choices":[{"delta":{"reasoning":"r","reasoning_content":"rc"}}]})",
      R"({"choices":[{"delta":{"reasoning":"r","reasoning_content":""}}]})",
      // usage counts that are not integers are ignored; huge ones clamp
      R"({"choices":[],"usage":{"prompt_tokens":"7","completion_tokens":99999999999999,"reasoning_tokens":3}})",
      R"({"choices":[],"usage":{"completion_tokens":-99999999999999,"completion_tokens_details":null,"reasoning_tokens":3}})",
      R"({"choices":[],"usage":{"completion_tokens_details":{"reasoning_tokens":2},"reasoning_tokens":3}})",
      // more than one choice: the first (index 0) is read, the rest skipped
      R"({"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]})",
      R"({"choices":[{"delta":{"content":""}}]})",
      R"({"object":"chat.completion.chunk","choices":[{"delta":{}}]})",
  };
  for (const char* p : cases) {
    bool fast = false;
    EXPECT_TRUE(Same(p, &fast));
    EXPECT_TRUE(fast) << p;
  }
  EXPECT_EQ(Fast(cases[0]).finish_reason, "stop");
  EXPECT_EQ(Fast(cases[1]).answer, "spaced");
  EXPECT_EQ(Fast(cases[3]).reasoning, "rc");
  EXPECT_EQ(Fast(cases[4]).reasoning, "r");
  EXPECT_EQ(Fast(cases[5]).usage.completion_tokens, 2147483647);
  EXPECT_EQ(Fast(cases[5]).usage.prompt_tokens, -1);
  EXPECT_EQ(Fast(cases[6]).usage.reasoning_tokens, 3);
  EXPECT_EQ(Fast(cases[7]).usage.reasoning_tokens, 2);
  EXPECT_EQ(Fast(cases[8]).answer, "a");
}

TEST(ChunkScan, DeclinesWhatOnlyTheFullParserKnows) {
  const char* rare[] = {
      R"({"error":{"message":"boom"}})",
      R"({"object":"error","message":"boom"})",
      R"({"object":"\u0065rror","message":"boom"})",
      R"({"choices":[{"delta":{"content":"a"}}],"timings":{"predicted_n":3}})",
      R"({"choices":[],"sim":{"ttft_ms":1}})",
      R"({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f"}}]}}]})",
      R"({"choices":[{"index":0,"text":"completion"}]})",
      R"({"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"}}]})",
      R"({"choices":[{"index":0.0,"delta":{"content":"a"}}]})",
      R"({"choices":[5,{"delta":{"content":"a"}}]})",
      R"({"choices":{"delta":{"content":"a"}}})",
      R"({"choices":[{"delta":"x","text":"t"}]})",
      // repeated fields: which one wins is the full parser's business
      R"({"choices":[{"delta":{"content":"a","content":"b"}}]})",
      R"({"model":"a","model":"b","choices":[]})",
      R"({"choices":[],"choices":[{"delta":{"content":"a"}}]})",
      // a key spelled with an escape
      R"({"choices":[{"delta":{"cont\u0065nt":"a"}}]})",
      // numbers the scanner leaves alone
      R"({"choices":[],"usage":{"completion_tokens":3.7}})",
      R"({"choices":[],"x":1e400})",
      R"({"choices":[],"x":1e5})",
      // invalid JSON of many kinds
      R"({"choices":[{"delta":{"content":"a\ud800"}}]})",
      R"({"choices":[{"delta":{"content":"a\udc00"}}]})",
      R"({"choices":[{"delta":{"content":"a\x"}}]})",
      "{\"choices\":[{\"delta\":{\"content\":\"a\x01\"}}]}",
      R"({"choices":[{"delta":{"content":"a"}}]} trailing)",
      R"({"choices":[{"delta":{"content":"a"}},]})",
      R"({"choices":[{"delta":{"content":"a"}}])",
      R"({"choices":[01]})",
      R"({"choices":[-]})",
      R"({"choices":[1.]})",
      R"({"choices":[tru]})",
      R"({"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"choices":[]})",
      R"(["not an object"])",
      R"("string")",
  };
  for (const char* p : rare) {
    EXPECT_FALSE(Accepts(p)) << p;
    EXPECT_TRUE(Same(p));
  }
}

std::vector<fs::path> StreamFiles() {
  std::vector<fs::path> files;
  const fs::path src(SB_SOURCE_DIR);
  for (const fs::path& dir :
       {src / "tests/client/data", src / "fuzz/corpus/sse_parser", src / "fuzz/corpus/chunk"}) {
    if (fs::exists(dir)) {
      for (const auto& e : fs::directory_iterator(dir)) {
        files.push_back(e.path());
      }
    }
  }
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SB_FIXTURES_DIR) / "llama.cpp")) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.find("resp_") != std::string::npos) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> Payloads(const std::string& body) {
  SseParser parser;
  std::vector<SseEvent> events;
  parser.Feed(body, events);
  parser.Finish(events);
  std::vector<std::string> out;
  for (const SseEvent& ev : events) {
    out.push_back(ev.data);
  }
  return out;
}

// Every captured and corpus stream, event by event, through both paths: the responses agree
// after every event (so usage deltas and per-event token counts agree too).
TEST(ChunkScan, AgreesWithTheFullParserOnEveryCapturedStream) {
  int streams = 0, fast_events = 0, events = 0;
  for (const fs::path& file : StreamFiles()) {
    const std::vector<std::string> payloads = Payloads(sb::testing::ReadTestFile(file));
    if (payloads.empty()) {
      continue;
    }
    ++streams;
    Both b;
    std::int64_t t = 0;
    for (const std::string& p : payloads) {
      ApplyBoth(p, t += 1000, b);
      ASSERT_EQ(b.fast_ok, b.full_ok) << file << ": " << p;
      ASSERT_EQ(testing::ChatResponseDiff(b.fast, b.full), "") << file << ": " << p;
      ++events;
      fast_events += Accepts(p) ? 1 : 0;
      if (!b.full_ok) {
        break;
      }
    }
  }
  EXPECT_GE(streams, 20);
  // Most events of real streams are hot deltas.
  EXPECT_GT(fast_events, events / 2) << fast_events << " of " << events;
}

// Mutated payloads (truncations, single-byte changes at seeded random places): whatever the
// fast path accepts, it decodes as the full parser does, onto a response that already holds
// usage and text (so previous-count logic is exercised too).
TEST(ChunkScan, AgreesWithTheFullParserOnMutatedChunks) {
  std::vector<std::string> seeds;
  for (const fs::path& file : StreamFiles()) {
    for (std::string& p : Payloads(sb::testing::ReadTestFile(file))) {
      if (p.size() < 2000 && std::find(seeds.begin(), seeds.end(), p) == seeds.end()) {
        seeds.push_back(std::move(p));
      }
    }
  }
  ASSERT_GT(seeds.size(), 50u);
  const std::string alphabet = "\"\\{}[],:0123456789-.eEu nultrfa\x01\x7f\xc3\xa9";
  std::mt19937 rng(13);
  const std::string prefix =
      R"({"choices":[{"delta":{"content":"x"}}],"usage":{"completion_tokens":1}})";
  int accepted = 0, total = 0;
  for (const std::string& seed : seeds) {
    for (int k = 0; k < 40; ++k) {
      std::string m = seed;
      const std::size_t pos = rng() % m.size();
      switch (rng() % 4) {
        case 0:
          m.resize(pos);
          break;
        case 1:
          m[pos] = alphabet[rng() % alphabet.size()];
          break;
        case 2:
          m.insert(pos, 1, alphabet[rng() % alphabet.size()]);
          break;
        default:
          m.erase(pos, 1 + rng() % 8);
          break;
      }
      Both b;
      ApplyBoth(prefix, 500, b);
      ApplyBoth(m, 1000, b);
      ASSERT_EQ(b.fast_ok, b.full_ok) << m;
      ASSERT_EQ(testing::ChatResponseDiff(b.fast, b.full), "") << m;
      ++total;
      accepted += Accepts(m) ? 1 : 0;
    }
  }
  // The mutations must reach the fast path, not only its refusals.
  EXPECT_GT(accepted, total / 10) << accepted << " of " << total;
}

}  // namespace
}  // namespace sb::client
