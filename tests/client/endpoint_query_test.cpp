// An endpoint with a query ("http://h/v1?key=x", a gateway that takes its key there): every URL
// the client builds ends with the query, never has it in the middle of its path, and the
// endpoint's errors never show a password or a query value.
#include <string>

#include <gtest/gtest.h>

#include "client/http_client.h"
#include "client/test_streams.h"
#include "support/script_server.h"

namespace sb::client {
namespace {

using sb::testing::Chunk;
using sb::testing::FullResponse;
using sb::testing::LastChunk;
using sb::testing::Script;
using sb::testing::ScriptRequest;
using sb::testing::ScriptServer;
using sb::testing::SseHead;

std::string RequestLine(const ScriptRequest& r) {
  return r.head.substr(0, r.head.find("\r\n"));
}

TEST(EndpointQuery, GoesAtTheEndOfEveryUrl) {
  ScriptServer server([](const ScriptRequest& r) {
    if (r.method == "GET") {
      return Script().Send(FullResponse(200, "application/json", R"({"data":[]})"));
    }
    return Script().Send(SseHead()).Send(Chunk(GoodStream({"ok"}))).Send(LastChunk());
  });
  ClientOptions o;
  o.endpoint = server.url() + "/v1?key=qs-4711&team=a";
  Client client(o);
  ASSERT_TRUE(client.Validate());
  EXPECT_EQ(client.root(), server.url());
  EXPECT_EQ(client.query(), "?key=qs-4711&team=a");
  auto models = client.Get("/v1/models", std::chrono::seconds(5));
  ASSERT_TRUE(models) << models.error().message;
  EXPECT_EQ(models->status, 200);
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kOk) << out[0].reason;
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(RequestLine(reqs[0]), "GET /v1/models?key=qs-4711&team=a HTTP/1.1");
  EXPECT_EQ(RequestLine(reqs[1]), "POST /v1/chat/completions?key=qs-4711&team=a HTTP/1.1");
}

TEST(EndpointQuery, AnEndpointWithoutSchemeDoesNotEchoItsPassword) {
  ClientOptions o;
  o.endpoint = "alice:pw-Noscheme-77@127.0.0.1:8000/v1?key=qs-Hidden-88";
  Client client(o);
  auto valid = client.Validate();
  ASSERT_FALSE(valid);
  EXPECT_EQ(valid.error().message.find("pw-Noscheme-77"), std::string::npos)
      << valid.error().message;
  EXPECT_EQ(valid.error().message.find("qs-Hidden-88"), std::string::npos) << valid.error().message;
  EXPECT_NE(valid.error().message.find("expected http://host:port"), std::string::npos);
}

}  // namespace
}  // namespace sb::client
