// Small builders shared by the client's HTTP tests: OpenAI stream chunks and chat calls.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "support/script_server.h"

namespace sb::client {

inline constexpr std::int64_t kMs = 1'000'000;

inline std::string Ev(const nlohmann::json& j, std::string_view eol = "\n") {
  return "data: " + j.dump() + std::string(eol) + std::string(eol);
}

inline nlohmann::json Delta(std::string_view content, const char* finish = nullptr) {
  nlohmann::json choice = {{"index", 0}, {"delta", {{"content", content}}}};
  choice["finish_reason"] = finish == nullptr ? nlohmann::json(nullptr) : nlohmann::json(finish);
  return {{"object", "chat.completion.chunk"}, {"model", "m"}, {"choices", {choice}}};
}

inline std::string Done() {
  return "data: [DONE]\n\n";
}

inline std::uint64_t IdOf(const sb::testing::ScriptRequest& req) {
  const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
  return body.is_object() && body.contains("id") ? body["id"].get<std::uint64_t>() : 0;
}

inline ClientOptions Options(const sb::testing::ScriptServer& server) {
  ClientOptions o;
  o.endpoint = server.url() + "/v1/";
  return o;
}

inline ChatCall Call(std::uint64_t id, bool stream = true) {
  ChatCall c;
  c.id = id;
  c.body = R"({"id":)" + std::to_string(id) + "}";
  c.stream = stream;
  return c;
}

inline std::vector<ChatResponse> RunCalls(Client& client, const std::vector<ChatCall>& calls,
                                          const RunHooks& hooks = {}, std::stop_token stop = {}) {
  return client.RunChats(calls, hooks, stop);
}

// A complete, well-formed stream: the given pieces of text, finish "stop", usage, [DONE].
inline std::string GoodStream(const std::vector<std::string>& pieces) {
  std::string body;
  for (const std::string& p : pieces) {
    body += Ev(Delta(p));
  }
  nlohmann::json fin = Delta("", "stop");
  body += Ev(fin);
  body += Ev({{"choices", nlohmann::json::array()},
              {"usage", {{"prompt_tokens", 5}, {"completion_tokens", pieces.size()}}}});
  body += Done();
  return body;
}

}  // namespace sb::client
