// OpenAI dialects: request bodies per server, and decoding of real captured llama.cpp traffic
// plus vLLM/SGLang stream shapes (tests/client/data/, written from the servers' protocol code).
#include "client/chat.h"

#include <filesystem>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/sse_parser.h"
#include "support/fixture.h"

namespace sb::client {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string ReadFile(const fs::path& p) {
  return sb::testing::ReadTestFile(p);  // a missing file fails the test with its path
}

std::string Fixture(const std::string& rel) {
  std::string raw = ReadFile(fs::path(SB_FIXTURES_DIR) / "llama.cpp" / rel);
  if (raw.rfind("HTTP/", 0) == 0) {  // some b4748 captures keep the response head
    raw.erase(0, raw.find("\r\n\r\n") + 4);
  }
  return raw;
}

std::string Data(const std::string& name) {
  return ReadFile(fs::path(SB_SOURCE_DIR) / "tests/client/data" / name);
}

int FixtureStatus(const std::string& rel) {
  std::istringstream in(ReadFile(fs::path(SB_FIXTURES_DIR) / "llama.cpp" / rel));
  int code = 0;
  in >> code;
  return code;
}

// Decodes a whole SSE body the way the client does; event i gets t_ns = 1000 * (i + 1).
ChatResponse DecodeStream(const std::string& body, bool* all_ok = nullptr) {
  SseParser parser;
  std::vector<SseEvent> events;
  parser.Feed(body, events);
  parser.Finish(events);
  ChatResponse r;
  bool ok = true;
  std::int64_t t = 0;
  for (const SseEvent& ev : events) {
    t += 1000;
    if (!ApplyStreamEvent(ev.data, t, r)) {
      ok = false;
      break;
    }
  }
  if (all_ok != nullptr) {
    *all_ok = ok;
  }
  return r;
}

json Body(const ChatParams& p, ServerKind kind) {
  return json::parse(BuildChatBody(p, kind));
}

ChatParams Params() {
  ChatParams p;
  p.model = "m";
  p.messages = {{"system", "be brief", ""}, {"user", "hi", ""}};
  p.max_tokens = 100;
  return p;
}

// ---- names ----------------------------------------------------------------------------------

TEST(ChatNames, ResultsJsonSpellings) {
  EXPECT_EQ(ServerKindName(ServerKind::kVllm), "vllm");
  EXPECT_EQ(ServerKindName(ServerKind::kSglang), "sglang");
  EXPECT_EQ(ServerKindName(ServerKind::kLlamaCpp), "llama.cpp");
  EXPECT_EQ(ServerKindName(ServerKind::kOllama), "ollama");
  EXPECT_EQ(ServerKindName(ServerKind::kSim), "sim");
  EXPECT_EQ(ServerKindName(ServerKind::kUnknown), "unknown");
  EXPECT_EQ(OutcomeName(Outcome::kOk), "ok");
  EXPECT_EQ(OutcomeName(Outcome::kHttpError), "http_error");
  EXPECT_EQ(OutcomeName(Outcome::kTransport), "transport");
  EXPECT_EQ(OutcomeName(Outcome::kTimeout), "timeout");
  EXPECT_EQ(OutcomeName(Outcome::kProtocol), "malformed");
  EXPECT_EQ(OutcomeName(Outcome::kCancelled), "cancelled");
}

// ---- request bodies -------------------------------------------------------------------------

TEST(BuildChatBody, StreamingBodyAlwaysAsksForUsage) {
  const json b = Body(Params(), ServerKind::kVllm);
  EXPECT_EQ(b["model"], "m");
  ASSERT_EQ(b["messages"].size(), 2u);
  EXPECT_EQ(b["messages"][0]["role"], "system");
  EXPECT_EQ(b["messages"][1]["content"], "hi");
  EXPECT_EQ(b["stream"], true);
  EXPECT_EQ(b["stream_options"]["include_usage"], true);
  EXPECT_FALSE(b["stream_options"].contains("continuous_usage_stats"));
  EXPECT_EQ(b["max_tokens"], 100);
  EXPECT_EQ(b["max_completion_tokens"], 100);
  EXPECT_FALSE(b.contains("temperature"));
  EXPECT_FALSE(b.contains("ignore_eos"));
  EXPECT_FALSE(b.contains("chat_template_kwargs"));
  EXPECT_EQ(BuildChatBody(Params(), ServerKind::kVllm).rfind("{\"model\":", 0), 0u);
}

TEST(BuildChatBody, NonStreamingAndOptionalFields) {
  ChatParams p = Params();
  p.stream = false;
  p.temperature = 0.0;
  p.enable_thinking = false;
  const json b = Body(p, ServerKind::kSglang);
  EXPECT_EQ(b["stream"], false);
  EXPECT_FALSE(b.contains("stream_options"));
  ASSERT_TRUE(b.contains("temperature"));
  EXPECT_EQ(b["temperature"], 0.0);
  EXPECT_EQ(b["chat_template_kwargs"]["enable_thinking"], false);
  p.stream = true;
  p.continuous_usage = true;
  EXPECT_EQ(Body(p, ServerKind::kVllm)["stream_options"]["continuous_usage_stats"], true);
}

TEST(BuildChatBody, OllamaGetsThinkInsteadOfChatTemplateKwargs) {
  ChatParams p = Params();
  p.enable_thinking = false;
  const json b = Body(p, ServerKind::kOllama);
  EXPECT_EQ(b["think"], false);
  EXPECT_FALSE(b.contains("chat_template_kwargs"));
  EXPECT_EQ(Body(p, ServerKind::kVllm)["chat_template_kwargs"]["enable_thinking"], false);
}

TEST(BuildChatBody, ToolsAndToolChoiceAreSentAsJson) {
  ChatParams p = Params();
  EXPECT_FALSE(Body(p, ServerKind::kVllm).contains("tools"));
  p.tools_json = R"([{"type":"function","function":{"name":"get_weather","parameters":{}}}])";
  p.tool_choice_json = R"("auto")";
  json b = Body(p, ServerKind::kVllm);
  ASSERT_TRUE(b["tools"].is_array());
  EXPECT_EQ(b["tools"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(b["tool_choice"], "auto");
  p.tools_json = "[not json";
  p.tool_choice_json = "";
  b = Body(p, ServerKind::kVllm);
  EXPECT_FALSE(b.contains("tools"));
  EXPECT_FALSE(b.contains("tool_choice"));
}

TEST(BuildChatBody, MaxTokensNamesPerServer) {
  // llama.cpp b4748 ignores max_completion_tokens (fixture err_max_completion_tokens.txt ran
  // past the limit), so max_tokens is always sent; only OpenAI-style servers get both.
  for (ServerKind k : {ServerKind::kLlamaCpp, ServerKind::kOllama}) {
    const json b = Body(Params(), k);
    EXPECT_EQ(b["max_tokens"], 100);
    EXPECT_FALSE(b.contains("max_completion_tokens")) << ServerKindName(k);
  }
  for (ServerKind k :
       {ServerKind::kVllm, ServerKind::kSglang, ServerKind::kSim, ServerKind::kUnknown}) {
    const json b = Body(Params(), k);
    EXPECT_EQ(b["max_tokens"], 100);
    EXPECT_EQ(b["max_completion_tokens"], 100) << ServerKindName(k);
  }
}

TEST(BuildChatBody, ForceLengthDialects) {
  ChatParams p = Params();
  p.force_length = true;
  for (ServerKind k : {ServerKind::kVllm, ServerKind::kSim, ServerKind::kUnknown}) {
    const json b = Body(p, k);
    EXPECT_EQ(b["ignore_eos"], true) << ServerKindName(k);
    EXPECT_EQ(b["min_tokens"], 100);
    EXPECT_FALSE(b.contains("min_new_tokens"));
    EXPECT_FALSE(b.contains("n_predict"));
  }
  const json sglang = Body(p, ServerKind::kSglang);
  EXPECT_EQ(sglang["ignore_eos"], true);
  EXPECT_EQ(sglang["min_new_tokens"], 100);
  EXPECT_EQ(sglang["min_tokens"], 100);
  const json llama = Body(p, ServerKind::kLlamaCpp);
  EXPECT_EQ(llama["ignore_eos"], true);
  EXPECT_EQ(llama["n_predict"], 100);
  EXPECT_FALSE(llama.contains("min_tokens"));
  const json ollama = Body(p, ServerKind::kOllama);
  EXPECT_FALSE(ollama.contains("ignore_eos"));
  EXPECT_FALSE(ollama.contains("min_tokens"));
  EXPECT_FALSE(CanForceLength(ServerKind::kOllama));
  EXPECT_FALSE(CanForceLength(ServerKind::kUnknown));
  EXPECT_TRUE(CanForceLength(ServerKind::kVllm));
  EXPECT_TRUE(CanForceLength(ServerKind::kSglang));
  EXPECT_TRUE(CanForceLength(ServerKind::kLlamaCpp));
  EXPECT_TRUE(CanForceLength(ServerKind::kSim));
}

TEST(BuildChatBody, ContentPartsAndFallback) {
  ChatParams p = Params();
  p.messages = {
      {"user", "ignored",
       R"([{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}])"},
      {"user", "plain text", "[not json"}};
  const json b = Body(p, ServerKind::kVllm);
  ASSERT_TRUE(b["messages"][0]["content"].is_array());
  EXPECT_EQ(b["messages"][0]["content"][1]["image_url"]["url"], "data:image/png;base64,AAAA");
  EXPECT_EQ(b["messages"][1]["content"], "plain text");
}

TEST(BuildChatBody, ExtraBodyIsMergedLast) {
  ChatParams p = Params();
  p.force_length = true;
  p.temperature = 0.7;
  p.extra_body_json =
      R"({"temperature":0.1,"ignore_eos":null,"stream_options":{"continuous_usage_stats":true},"seed":7})";
  const json b = Body(p, ServerKind::kVllm);
  EXPECT_EQ(b["temperature"], 0.1);
  EXPECT_FALSE(b.contains("ignore_eos"));  // null deletes
  EXPECT_EQ(b["stream_options"]["include_usage"], true);
  EXPECT_EQ(b["stream_options"]["continuous_usage_stats"], true);
  EXPECT_EQ(b["seed"], 7);
  EXPECT_EQ(b["min_tokens"], 100);
}

TEST(BuildChatBody, ValidateExtraBody) {
  EXPECT_TRUE(ValidateExtraBody(""));
  EXPECT_TRUE(ValidateExtraBody(" {\"a\":1} "));
  const Result<void> array = ValidateExtraBody("[1]");
  ASSERT_FALSE(array);
  EXPECT_EQ(array.error().code, ErrorCode::kUsage);
  EXPECT_NE(array.error().message.find("JSON object"), std::string::npos);
  EXPECT_FALSE(ValidateExtraBody("{\"a\":"));
}

// ---- error reasons --------------------------------------------------------------------------

TEST(HttpErrorReason, MessageFromEveryErrorShape) {
  EXPECT_EQ(HttpErrorReason(400, Data("vllm_error_audio_400.json")),
            "HTTP 400: At most 0 audio(s) may be provided in one prompt. Set "
            "`--limit-mm-per-prompt` to increase this limit.");
  EXPECT_EQ(HttpErrorReason(FixtureStatus("b9821-main/code_image_stream.txt"),
                            Fixture("b9821-main/resp_image_stream.txt")),
            "HTTP 500: image input is not supported - hint: if this is unexpected, you may need "
            "to provide the mmproj");
  EXPECT_EQ(HttpErrorReason(FixtureStatus("b9821-main/code_ctx_overflow.txt"),
                            Fixture("b9821-main/resp_ctx_overflow.txt")),
            "HTTP 400: request (5002 tokens) exceeds the available context size (4096 tokens), "
            "try increasing it");
  EXPECT_EQ(HttpErrorReason(500, Fixture("b4748/resp_tools_enum_stream_b4748.txt")),
            "HTTP 500: Cannot use tools with stream");
  // SGLang / older vLLM: a top-level error object; FastAPI: detail.
  EXPECT_EQ(HttpErrorReason(400, R"({"object":"error","message":"bad","type":"x","code":400})"),
            "HTTP 400: bad");
  EXPECT_EQ(HttpErrorReason(404, R"({"detail":"Not Found"})"), "HTTP 404: Not Found");
  EXPECT_EQ(HttpErrorReason(502, "<html>\nBad gateway</html>"),
            "HTTP 502: <html> Bad gateway</html>");
  EXPECT_EQ(HttpErrorReason(503, ""), "HTTP 503");
  // Non-JSON bodies are cut to 200 bytes without splitting a UTF-8 character.
  std::string long_body(199, 'x');
  long_body += "\xC3\xA9tail";
  const std::string reason = HttpErrorReason(500, long_body);
  EXPECT_EQ(reason, "HTTP 500: " + std::string(199, 'x'));
}

TEST(HttpErrorReason, MultilineMessageBecomesOneLine) {
  // b4748 echoes the whole message array with newlines. (The err_*.txt captures end with an
  // "HTTP 500" line after the body.)
  std::string body = Fixture("b4748/err_audio.txt");
  body.resize(body.rfind("\nHTTP 500"));
  const std::string reason = HttpErrorReason(500, body);
  EXPECT_EQ(reason.rfind("HTTP 500: Failed to parse messages: Unsupported content part type: "
                         "\"input_audio\"",
                         0),
            0u);
  EXPECT_EQ(reason.find('\n'), std::string::npos);
}

// ---- llama.cpp captures ---------------------------------------------------------------------

TEST(LlamaCppStream, UsageTimingsAndRoleOnlyFirstDelta) {
  bool ok = false;
  const ChatResponse r = DecodeStream(Fixture("b9821-real/resp_chat_stream_usage.txt"), &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(r.outcome, Outcome::kOk);
  EXPECT_EQ(r.answer, "\n(Weighted su");
  EXPECT_EQ(r.reasoning, "");
  // 11 data events: a role-only delta (content null), 8 tokens, finish, usage; then [DONE].
  ASSERT_EQ(r.events.size(), 8u);
  EXPECT_EQ(r.events.front().t_ns, 2000);  // the role-only event (t=1000) is not a token
  for (const TokenEvent& ev : r.events) {
    EXPECT_EQ(ev.kinds, TokenEvent::kAnswer);
    EXPECT_EQ(ev.tokens, -1);  // usage arrives once, at the end
  }
  EXPECT_EQ(r.usage.prompt_tokens, 123);
  EXPECT_EQ(r.usage.completion_tokens, 8);
  EXPECT_EQ(r.usage.cached_tokens, 24);
  EXPECT_EQ(r.usage.reasoning_tokens, -1);
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_TRUE(r.stream_done);
  EXPECT_EQ(r.server_model, "aidreams260K");
  const json timings = json::parse(r.timings_json);
  EXPECT_EQ(timings["predicted_n"], 8);
  EXPECT_EQ(timings["cache_n"], 24);
  EXPECT_TRUE(r.sim_json.empty());
}

TEST(LlamaCppStream, PlainStreamWithoutUsageKeepsTimings) {
  const ChatResponse r = DecodeStream(Fixture("b9821-main/resp_chat_stream_plain.txt"));
  EXPECT_EQ(r.answer, "iffs longer removed Burg vertical Hello\u0bc8 hear");
  EXPECT_EQ(r.events.size(), 8u);
  EXPECT_EQ(r.usage.completion_tokens, -1);
  EXPECT_EQ(r.usage.prompt_tokens, -1);
  EXPECT_EQ(json::parse(r.timings_json)["predicted_n"], 8);
  EXPECT_EQ(r.finish_reason, "length");
}

TEST(LlamaCppStream, OneEventPerTokenInEveryBuild) {
  // llama.cpp streams one token per chunk, speculative decoding included: the number of
  // token-bearing events equals timings.predicted_n (and usage.completion_tokens when sent).
  for (const char* dir : {"b9821-main", "b9821-spec", "b9821-real", "b9821-moe"}) {
    for (const char* name : {"resp_gen256_chat_stream.txt", "resp_tools_required_stream.txt",
                             "resp_chat_stream_usage.txt"}) {
      SCOPED_TRACE(std::string(dir) + "/" + name);
      bool ok = false;
      const ChatResponse r = DecodeStream(Fixture(std::string(dir) + "/" + name), &ok);
      ASSERT_TRUE(ok);
      ASSERT_FALSE(r.timings_json.empty());
      const int predicted = json::parse(r.timings_json)["predicted_n"].get<int>();
      EXPECT_EQ(static_cast<int>(r.events.size()), predicted);
      if (r.usage.completion_tokens >= 0) {
        EXPECT_EQ(r.usage.completion_tokens, predicted);
      }
      EXPECT_EQ(r.finish_reason, "length");
      EXPECT_TRUE(r.stream_done);
    }
  }
  const ChatResponse gen = DecodeStream(Fixture("b9821-main/resp_gen256_chat_stream.txt"));
  EXPECT_EQ(gen.usage.completion_tokens, 256);
  EXPECT_EQ(gen.usage.prompt_tokens, 40);
  EXPECT_EQ(gen.usage.cached_tokens, 27);
  EXPECT_EQ(gen.answer.size(), 1389u);
  const ChatResponse spec = DecodeStream(Fixture("b9821-spec/resp_gen256_chat_stream.txt"));
  const json t = json::parse(spec.timings_json);
  EXPECT_EQ(t["draft_n"], 307);
  EXPECT_EQ(t["draft_n_accepted"], 216);
  EXPECT_EQ(spec.server_model, "rand-llama-spm32k-4L-spec");
}

TEST(LlamaCppStream, OldReleaseUsageOnFinishChunk) {
  // b4748: no role-only first delta; usage and timings ride on the finish chunk.
  const ChatResponse r = DecodeStream(Fixture("b4748/resp_stream.txt"));
  EXPECT_EQ(r.answer, "Object until Th \u0411\u0430thanEsu\u00df sett");
  EXPECT_EQ(r.events.size(), 8u);
  EXPECT_EQ(r.events.front().t_ns, 1000);
  EXPECT_EQ(r.usage.completion_tokens, 8);
  EXPECT_EQ(r.usage.prompt_tokens, 38);
  EXPECT_EQ(r.usage.cached_tokens, -1);
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_TRUE(r.stream_done);
  EXPECT_EQ(json::parse(r.timings_json)["prompt_n"], 38);
}

TEST(LlamaCppStream, LegacyCompletionsTextChunks) {
  const ChatResponse r = DecodeStream(Fixture("b9821-main/resp_completions_stream.txt"));
  EXPECT_EQ(r.answer, " auth\u0386\u05e1");
  EXPECT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.usage.completion_tokens, 3);
}

TEST(LlamaCppBody, NonStreamingChat) {
  ChatResponse r;
  ASSERT_TRUE(ApplyCompletionBody(Fixture("b9821-main/resp_chat.txt"), 5000, r));
  EXPECT_EQ(r.answer.rfind("invoke further defect Blo", 0), 0u);
  EXPECT_EQ(r.usage.completion_tokens, 32);
  EXPECT_EQ(r.usage.prompt_tokens, 29);
  EXPECT_EQ(r.usage.cached_tokens, 0);
  EXPECT_EQ(r.finish_reason, "length");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].t_ns, 5000);
  EXPECT_EQ(r.events[0].tokens, 32);
  EXPECT_EQ(json::parse(r.timings_json)["predicted_n"], 32);

  ChatResponse old;  // b4748 capture with the HTTP head
  ASSERT_TRUE(ApplyCompletionBody(Fixture("b4748/resp_chat.txt"), 1, old));
  EXPECT_EQ(old.usage.completion_tokens, 32);
  EXPECT_EQ(old.usage.prompt_tokens, 30);
}

TEST(LlamaCppBody, ToolCallNonStreaming) {
  ChatResponse r;
  ASSERT_TRUE(ApplyCompletionBody(Fixture("b4748/resp_tools_enum_b4748_seed1.json"), 7, r));
  EXPECT_EQ(r.answer, "");  // content: null
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "set_lights");
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"room":"living_room","state":"off"})");
  EXPECT_EQ(r.tool_calls[0].id, "");
  EXPECT_EQ(r.finish_reason, "tool_calls");
  EXPECT_EQ(r.usage.completion_tokens, 99);
  EXPECT_EQ(r.usage.prompt_tokens, 244);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].kinds, TokenEvent::kTool);
}

TEST(LlamaCppBody, MalformedBodyKeepsOutcomeAndSnippet) {
  ChatResponse r;
  EXPECT_FALSE(ApplyCompletionBody("<html>oops</html>", 1, r));
  EXPECT_EQ(r.outcome, Outcome::kProtocol);
  EXPECT_EQ(r.reason, "malformed response body: <html>oops</html>");
}

// ---- vLLM and SGLang shapes -----------------------------------------------------------------

TEST(VllmStream, ReasoningFieldAndTrailingUsageChunk) {
  bool ok = false;
  const ChatResponse r = DecodeStream(Data("vllm_reasoning_stream.txt"), &ok);
  ASSERT_TRUE(ok);
  // The transitional chunk carries the same text as "reasoning" and "reasoning_content":
  // counted once.
  EXPECT_EQ(r.reasoning, "Okay, the user wants 2+2. Easy.");
  EXPECT_EQ(r.answer, "\n\n2 + 2 = **4**");
  ASSERT_EQ(r.events.size(), 7u);  // 4 reasoning + 3 answer; role-only and finish chunks are not
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(r.events[i].kinds, TokenEvent::kReasoning);
  }
  for (int i = 4; i < 7; ++i) {
    EXPECT_EQ(r.events[i].kinds, TokenEvent::kAnswer);
  }
  EXPECT_EQ(r.usage.prompt_tokens, 14);
  EXPECT_EQ(r.usage.completion_tokens, 26);
  EXPECT_EQ(r.usage.reasoning_tokens, 19);
  EXPECT_EQ(r.usage.cached_tokens, 0);
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_TRUE(r.stream_done);
  EXPECT_EQ(r.server_model, "Qwen/Qwen3-8B");
}

TEST(VllmStream, ContinuousUsageGivesTokensPerEvent) {
  const ChatResponse r = DecodeStream(Data("vllm_continuous_usage_stream.txt"));
  ASSERT_EQ(r.events.size(), 5u);
  const int expected[] = {1, 3, 1, 4, 1};  // speculative bursts
  int sum = 0;
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.events[i].tokens, expected[i]) << i;
    sum += r.events[i].tokens;
  }
  EXPECT_EQ(sum, r.usage.completion_tokens);
  EXPECT_EQ(r.answer, "The quick brown fox jumps over the lazy");
  EXPECT_EQ(r.finish_reason, "length");
}

TEST(LlamaCppStream, TimingsPerTokenGiveTokensPerEvent) {
  // llama.cpp with "timings_per_token": true adds a timings object to every chunk; predicted_n
  // is the running count of generated tokens (a chunk can carry several with a draft model).
  const std::string body =
      R"(data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk"})"
      "\n\n"
      R"(data: {"choices":[{"index":0,"delta":{"content":"Once"}}],"timings":{"prompt_n":9,"predicted_n":1,"predicted_ms":1.2}})"
      "\n\n"
      R"(data: {"choices":[{"index":0,"delta":{"content":" upon a"}}],"timings":{"prompt_n":9,"predicted_n":3,"predicted_ms":2.0}})"
      "\n\n"
      R"(data: {"choices":[{"index":0,"delta":{"content":" time"}}],"timings":{"prompt_n":9,"predicted_n":4,"predicted_ms":2.9}})"
      "\n\n"
      R"(data: {"choices":[{"finish_reason":"length","index":0,"delta":{}}],"usage":{"completion_tokens":4,"prompt_tokens":9},"timings":{"prompt_n":9,"predicted_n":4}})"
      "\n\ndata: [DONE]\n\n";
  const ChatResponse r = DecodeStream(body);
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0].tokens, 1);
  EXPECT_EQ(r.events[1].tokens, 2);
  EXPECT_EQ(r.events[2].tokens, 1);
  EXPECT_EQ(r.timings_predicted_n, 4);
  EXPECT_EQ(r.usage.completion_tokens, 4);
}

TEST(LlamaCppStream, CapturedB9821TimingsPerTokenStream) {
  // Captured from llama-server b9821 (aidreams260K-chat.gguf) with "timings_per_token": true;
  // the "model" field (the server's model path) is shortened to the file name.
  const ChatResponse r = DecodeStream(Data("llamacpp_b9821_timings_per_token_stream.txt"));
  ASSERT_EQ(r.events.size(), 8u);
  int sum = 0;
  for (const TokenEvent& ev : r.events) {
    EXPECT_EQ(ev.tokens, 1);
    sum += ev.tokens;
  }
  EXPECT_EQ(sum, r.usage.completion_tokens);
  EXPECT_EQ(r.timings_predicted_n, 8);
  EXPECT_EQ(r.finish_reason, "length");
}

TEST(BuildChatBody, LlamaCppGetsTimingsPerTokenInsteadOfContinuousUsage) {
  ChatParams p = Params();
  p.continuous_usage = true;
  const json b = Body(p, ServerKind::kLlamaCpp);
  EXPECT_EQ(b["timings_per_token"], true);
  EXPECT_FALSE(b["stream_options"].contains("continuous_usage_stats"));
  EXPECT_FALSE(Body(p, ServerKind::kVllm).contains("timings_per_token"));
}

TEST(VllmStream, ToolCallDeltasAccumulateByIndex) {
  const ChatResponse r = DecodeStream(Data("vllm_tool_stream.txt"));
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].id, "chatcmpl-tool-a1");
  EXPECT_EQ(r.tool_calls[0].name, "get_weather");
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"city": "Paris", "unit": "c"})");
  EXPECT_EQ(r.tool_calls[1].id, "chatcmpl-tool-b2");
  EXPECT_EQ(r.tool_calls[1].name, "get_time");
  EXPECT_EQ(r.tool_calls[1].arguments, R"({"tz": "CET"})");
  EXPECT_EQ(r.answer, "");
  ASSERT_EQ(r.events.size(), 6u);
  for (const TokenEvent& ev : r.events) {
    EXPECT_EQ(ev.kinds, TokenEvent::kTool);
  }
  EXPECT_EQ(r.finish_reason, "tool_calls");
  EXPECT_EQ(r.usage.completion_tokens, 32);
}

TEST(VllmStream, ErrorEventEndsTheStreamKeepingText) {
  bool ok = true;
  const ChatResponse r = DecodeStream(Data("vllm_error_in_stream.txt"), &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(r.outcome, Outcome::kHttpError);
  EXPECT_EQ(r.reason, "error in stream: The engine is dead");
  EXPECT_EQ(r.answer, "Hel");
  EXPECT_NE(r.error_body.find("InternalServerError"), std::string::npos);
  EXPECT_FALSE(r.stream_done);
}

TEST(SglangStream, ReasoningContentNullsAndTopLevelReasoningTokens) {
  bool ok = false;
  const ChatResponse r = DecodeStream(Data("sglang_reasoning_stream.txt"), &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(r.reasoning, "Let me think.");
  EXPECT_EQ(r.answer, "Paris is the capital.");
  EXPECT_EQ(r.events.size(), 4u);
  EXPECT_EQ(r.usage.prompt_tokens, 21);
  EXPECT_EQ(r.usage.completion_tokens, 11);
  EXPECT_EQ(r.usage.cached_tokens, 16);
  EXPECT_EQ(r.usage.reasoning_tokens, 4);
  EXPECT_EQ(r.finish_reason, "stop");
}

// ---- single events --------------------------------------------------------------------------

TEST(ApplyStreamEvent, MalformedAndSpecialPayloads) {
  ChatResponse r;
  EXPECT_TRUE(ApplyStreamEvent("", 1, r));  // empty keep-alive
  EXPECT_TRUE(ApplyStreamEvent(" \r", 1, r));
  EXPECT_TRUE(ApplyStreamEvent("[DONE]", 2, r));
  EXPECT_TRUE(r.stream_done);
  EXPECT_EQ(r.outcome, Outcome::kOk);
  const std::string junk = "{\"choices\": [" + std::string(200, 'z');
  EXPECT_FALSE(ApplyStreamEvent(junk, 3, r));
  EXPECT_EQ(r.outcome, Outcome::kProtocol);
  EXPECT_EQ(r.reason, "malformed event: " + junk.substr(0, 80));
  ChatResponse s;
  EXPECT_FALSE(ApplyStreamEvent("[1,2]", 3, s));  // valid JSON, not an object
  EXPECT_EQ(s.outcome, Outcome::kProtocol);
}

TEST(ApplyStreamEvent, ReasoningAndAnswerInOneDeltaAndSimObject) {
  ChatResponse r;
  ASSERT_TRUE(ApplyStreamEvent(
      R"({"choices":[{"index":0,"delta":{"reasoning_content":"a","reasoning":"b","content":"c"}}],"sim":{"step":3}})",
      42, r));
  EXPECT_EQ(r.reasoning, "a");  // reasoning_content wins; "reasoning" is not added
  EXPECT_EQ(r.answer, "c");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].kinds, TokenEvent::kAnswer | TokenEvent::kReasoning);
  EXPECT_EQ(r.events[0].t_ns, 42);
  EXPECT_EQ(json::parse(r.sim_json)["step"], 3);
  // A second choice (n > 1) is ignored: only index 0 is read.
  ASSERT_TRUE(ApplyStreamEvent(R"({"choices":[{"index":1,"delta":{"content":"X"}}]})", 43, r));
  EXPECT_EQ(r.answer, "c");
  EXPECT_EQ(r.events.size(), 1u);
}

TEST(ApplyStreamEvent, UsageOnlyOnALateChunkDoesNotFakeAPerEventCount) {
  ChatResponse r;
  ASSERT_TRUE(ApplyStreamEvent(R"({"choices":[{"delta":{"content":"a"}}]})", 1, r));
  ASSERT_TRUE(ApplyStreamEvent(
      R"({"choices":[{"delta":{"content":"b"},"finish_reason":"stop"}],"usage":{"completion_tokens":9}})",
      2, r));
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[1].tokens, -1);
  EXPECT_EQ(r.usage.completion_tokens, 9);
}

}  // namespace
}  // namespace sb::client
