// Server detection against scripted servers answering with real (llama.cpp fixtures) or
// protocol-shaped (vLLM, SGLang, Ollama, the simulator) bodies.
#include "client/server_info.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "client/http_client.h"
#include "support/fixture.h"
#include "support/script_server.h"

namespace sb::client {
namespace {

using sb::testing::FullResponse;
using sb::testing::Script;
using sb::testing::ScriptRequest;
using sb::testing::ScriptServer;

std::string Fixture(const std::string& rel) {
  return sb::testing::ReadTestFile(sb::testing::FixturePath("llama.cpp/" + rel));
}

struct Route {
  Route(std::string b, std::string extra = "", int s = 200)  // NOLINT(google-explicit-constructor)
      : body(std::move(b)), extra_headers(std::move(extra)), status(s) {}

  std::string body;
  std::string extra_headers;
  int status = 200;
};

// A server answering GET path -> route, 404 otherwise. Records the paths asked.
class FakeServer {
 public:
  FakeServer(std::initializer_list<std::pair<const std::string, Route>> routes)
      : routes_(routes), server_([this](const ScriptRequest& req) {
          const auto it = routes_.find(req.path);
          if (it == routes_.end()) {
            return Script().Send(
                FullResponse(404, "application/json", R"({"detail":"Not Found"})"));
          }
          return Script().Send(FullResponse(it->second.status, "application/json", it->second.body,
                                            it->second.extra_headers));
        }) {}

  Result<ServerInfo> Detect() {
    ClientOptions o;
    o.endpoint = server_.url() + "/v1";
    Client client(o);
    return DetectServer(client);
  }

  std::vector<std::string> paths() const {
    std::vector<std::string> out;
    for (const ScriptRequest& r : server_.requests()) {
      out.push_back(r.path);
    }
    return out;
  }

 private:
  std::map<std::string, Route> routes_;
  ScriptServer server_;
};

TEST(DetectServer, LlamaCppFromRealB9821Bodies) {
  FakeServer server(
      {{"/v1/models", {Fixture("b9821-main/resp_models.txt"), "Server: llama.cpp\r\n"}},
       {"/props", {Fixture("b9821-main/resp_props.txt"), "Server: llama.cpp\r\n"}}});
  const auto info = server.Detect();
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->kind, ServerKind::kLlamaCpp);
  EXPECT_EQ(info->version, "b9821-050ee92d0");
  EXPECT_EQ(info->models, std::vector<std::string>{"rand-llama-spm32k-4L"});
  EXPECT_EQ(info->max_model_len, 4096);
  // owned_by "llamacpp" sends detection straight to /props.
  EXPECT_EQ(server.paths(), (std::vector<std::string>{"/v1/models", "/props"}));
}

TEST(DetectServer, LlamaCppOldReleaseWithoutHints) {
  // b4748 props (n_ctx 4096, build_info "b0-unknown") behind a model list without owned_by.
  FakeServer server(
      {{"/v1/models", {R"({"object":"list","data":[{"id":"rand-llama-spm32k-4L"}]})"}},
       {"/props", {Fixture("b4748/props.json")}}});
  const auto info = server.Detect();
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->kind, ServerKind::kLlamaCpp);
  EXPECT_EQ(info->version, "b0-unknown");
  EXPECT_EQ(info->max_model_len, 4096);
}

TEST(DetectServer, Vllm) {
  FakeServer server(
      {{"/v1/models",
        {R"({"object":"list","data":[{"id":"Qwen/Qwen3-8B","object":"model","owned_by":"vllm","root":"Qwen/Qwen3-8B","max_model_len":40960}]})"}},
       {"/version", {R"({"version":"0.11.2"})"}}});
  const auto info = server.Detect();
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->kind, ServerKind::kVllm);
  EXPECT_EQ(info->version, "0.11.2");
  EXPECT_EQ(info->max_model_len, 40960);
  EXPECT_EQ(info->models, std::vector<std::string>{"Qwen/Qwen3-8B"});
}

TEST(DetectServer, SimulatorByServerHeaderOrVersion) {
  FakeServer by_header(
      {{"/v1/models", {R"({"data":[{"id":"sim-model"}]})", "Server: servebench-sim/0.1.0\r\n"}},
       {"/version", {R"({"version":"servebench-sim/0.1.0"})"}}});
  auto info = by_header.Detect();
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->kind, ServerKind::kSim);
  EXPECT_EQ(info->version, "0.1.0");
  FakeServer by_version({{"/v1/models", {R"({"data":[{"id":"sim-model"}]})"}},
                         {"/version", {R"({"version":"servebench-sim/0.2.0"})"}}});
  info = by_version.Detect();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->kind, ServerKind::kSim);
  EXPECT_EQ(info->version, "0.2.0");
}

TEST(DetectServer, SglangFromServerInfo) {
  FakeServer server(
      {{"/v1/models",
        {R"({"object":"list","data":[{"id":"qwen3-8b","owned_by":"sglang","max_model_len":32768}]})"}},
       {"/get_server_info", {R"({"version":"0.5.4","context_length":null})"}}});
  const auto info = server.Detect();
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->kind, ServerKind::kSglang);
  EXPECT_EQ(info->version, "0.5.4");
  EXPECT_EQ(info->max_model_len, 32768);
}

TEST(DetectServer, SglangWithoutOwnerHint) {
  FakeServer server({{"/v1/models", {R"({"data":[{"id":"x"}]})"}},
                     {"/server_info", {R"({"version":"0.4.9","context_length":8192})"}}});
  const auto info = server.Detect();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->kind, ServerKind::kSglang);
  EXPECT_EQ(info->version, "0.4.9");
  EXPECT_EQ(info->max_model_len, 8192);
}

TEST(DetectServer, OllamaAndUnknown) {
  FakeServer ollama(
      {{"/v1/models",
        {R"({"object":"list","data":[{"id":"llama3.2:latest","object":"model","owned_by":"library"}]})"}},
       {"/api/version", {R"({"version":"0.12.3"})"}}});
  auto info = ollama.Detect();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->kind, ServerKind::kOllama);
  EXPECT_EQ(info->version, "0.12.3");
  EXPECT_EQ(info->max_model_len, 0);

  FakeServer unknown({{"/v1/models", {R"({"data":[{"id":"a"},{"id":"b"}]})"}}});
  info = unknown.Detect();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->kind, ServerKind::kUnknown);
  EXPECT_EQ(info->version, "");
  EXPECT_EQ(info->models, (std::vector<std::string>{"a", "b"}));
}

TEST(DetectServer, SetupErrors) {
  ClientOptions o;
  o.endpoint = "http://127.0.0.1:" + std::to_string(sb::testing::ClosedPort()) + "/v1";
  Client refused(o);
  auto info = DetectServer(refused);
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code, ErrorCode::kSetup);
  EXPECT_EQ(info.error().message.rfind("cannot reach " + refused.root() + ": ", 0), 0u)
      << info.error().message;
  EXPECT_EQ(info.error().message.find('\n'), std::string::npos);

  FakeServer unauthorized({{"/v1/models", {R"({"error":{"message":"Unauthorized"}})", "", 401}}});
  info = unauthorized.Detect();
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code, ErrorCode::kSetup);
  EXPECT_NE(info.error().message.find("HTTP 401: Unauthorized"), std::string::npos);
  EXPECT_NE(info.error().message.find("API key"), std::string::npos);

  FakeServer not_a_list({{"/v1/models", {R"({"models":[]})"}}});
  info = not_a_list.Detect();
  ASSERT_FALSE(info);
  EXPECT_NE(info.error().message.find("did not return a model list"), std::string::npos);
}

TEST(ChooseModel, RequestedServedOrFirst) {
  ServerInfo info;
  info.models = {"a", "b"};
  EXPECT_EQ(*ChooseModel(info, ""), "a");
  EXPECT_EQ(*ChooseModel(info, "b"), "b");
  const auto missing = ChooseModel(info, "c");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kSetup);
  EXPECT_EQ(missing.error().message, "model 'c' is not served; served: a, b");
  EXPECT_FALSE(ChooseModel(ServerInfo{}, ""));
}

}  // namespace
}  // namespace sb::client
