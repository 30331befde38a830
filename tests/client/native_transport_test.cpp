// The native transport (ClientOptions::Transport::kNative, src/client/http_native.cpp) against
// scripted servers: its HTTP/1.1 framing split at awkward places, bodies delimited every way,
// kept connections the server closed, interim responses and malformed replies. Where libcurl
// accepts the same bytes, both transports run and their records must agree.
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "client/http_client.h"
#include "client/http_impl.h"
#include "client/test_streams.h"
#include "support/script_server.h"

namespace sb::client {
namespace {

using sb::testing::Chunk;
using sb::testing::FullResponse;
using sb::testing::HttpHead;
using sb::testing::LastChunk;
using sb::testing::Script;
using sb::testing::ScriptRequest;
using sb::testing::ScriptServer;
using sb::testing::SseHead;
using Transport = ClientOptions::Transport;

ClientOptions With(const ScriptServer& server, Transport t) {
  ClientOptions o = Options(server);
  o.transport = t;
  o.idle_timeout = std::chrono::seconds(5);
  o.total_timeout = std::chrono::seconds(10);
  return o;
}

ChatResponse RunOne(const ScriptServer& server, Transport t, bool stream = true) {
  Client client(With(server, t));
  return RunCalls(client, {Call(1, stream)}).at(0);
}

// The same call over both transports: the records agree on everything the wire does not decide.
void ExpectSameRecords(const ChatResponse& native, const ChatResponse& curl) {
  EXPECT_EQ(native.outcome, curl.outcome) << native.reason << " | " << curl.reason;
  EXPECT_EQ(native.reason, curl.reason);
  EXPECT_EQ(native.http_status, curl.http_status);
  EXPECT_EQ(native.answer, curl.answer);
  EXPECT_EQ(native.finish_reason, curl.finish_reason);
  EXPECT_EQ(native.events.size(), curl.events.size());
  EXPECT_EQ(native.streamed, curl.streamed);
  EXPECT_EQ(native.usage.completion_tokens, curl.usage.completion_tokens);
}

// A response cut into pieces at the places a framing parser gets wrong: inside the status line,
// between '\r' and '\n', inside a chunk-size line with an extension, inside a chunk's CRLF and
// inside the trailer.
Script CutScript(const std::string& bytes, std::vector<std::size_t> cuts) {
  Script s;
  std::size_t at = 0;
  for (std::size_t cut : cuts) {
    s.Send(bytes.substr(at, cut - at)).Pause(2);
    at = cut;
  }
  s.Send(bytes.substr(at));
  return s;
}

TEST(NativeTransport, ChunkedStreamSplitAtAwkwardPlaces) {
  const std::string body = GoodStream({"Hello", " wor", "ld"});
  std::string wire = SseHead();
  const std::size_t half = body.size() / 2;
  // One chunk with an extension, one plain, then a trailer.
  char ext[64];
  std::snprintf(ext, sizeof ext, "%zx;name=value\r\n", half);
  wire +=
      ext + body.substr(0, half) + "\r\n" + Chunk(body.substr(half)) + "0\r\nX-Trailer: 1\r\n\r\n";
  const std::vector<std::size_t> cuts = {
      5,                          // "HTTP/"
      wire.find("\r\n") + 1,      // between \r and \n of the status line
      wire.find("\r\n\r\n") + 3,  // inside the head's end
      wire.find(";name") + 2,     // inside the chunk extension
      wire.find("\r\n", wire.find(";name")) + 1,
      wire.find("data:", wire.find(";name")) + 3,
      wire.find("X-Trailer") + 4,  // inside the trailer
  };
  ScriptServer server([&](const ScriptRequest&) { return CutScript(wire, cuts); });
  const ChatResponse native = RunOne(server, Transport::kNative);
  EXPECT_EQ(native.outcome, Outcome::kOk) << native.reason;
  EXPECT_EQ(native.answer, "Hello world");
  EXPECT_EQ(native.events.size(), 3u);
  ExpectSameRecords(native, RunOne(server, Transport::kCurl));
}

TEST(NativeTransport, ContentLengthBodyAndAnInterimResponse) {
  const std::string json =
      R"({"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},)"
      R"("finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}})";
  ScriptServer server([&](const ScriptRequest&) {
    return Script()
        .Send("HTTP/1.1 100 Continue\r\n\r\n")
        .Pause(2)
        .Send(FullResponse(200, "application/json", json));
  });
  const ChatResponse native = RunOne(server, Transport::kNative, false);
  EXPECT_EQ(native.outcome, Outcome::kOk) << native.reason;
  EXPECT_EQ(native.answer, "hi");
  EXPECT_EQ(native.http_status, 200);
  ExpectSameRecords(native, RunOne(server, Transport::kCurl, false));
}

// HTTP/1.0 without a length: the body ends with the connection, which is then not kept.
TEST(NativeTransport, BodyUntilCloseIsCompleteAndTheConnectionIsNotKept) {
  ScriptServer server([](const ScriptRequest&) {
    return Script()
        .Send("HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
        .Send(GoodStream({"a", "b"}))
        .Close();
  });
  Client client(With(server, Transport::kNative));
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kOk) << out[0].reason;
  EXPECT_EQ(out[0].answer, "ab");
  const auto again = RunCalls(client, {Call(2)});
  EXPECT_EQ(again[0].outcome, Outcome::kOk) << again[0].reason;
  EXPECT_TRUE(again[0].new_connection);
  EXPECT_EQ(server.connections(), 2);
}

TEST(NativeTransport, KeepAliveReusesTheConnection) {
  ScriptServer server([](const ScriptRequest&) {
    return Script().Send(SseHead()).Send(Chunk(GoodStream({"x"}))).Send(LastChunk());
  });
  Client client(With(server, Transport::kNative));
  for (std::uint64_t i = 1; i <= 5; ++i) {
    const auto out = RunCalls(client, {Call(i)});
    EXPECT_EQ(out[0].outcome, Outcome::kOk) << out[0].reason;
    EXPECT_EQ(out[0].new_connection, i == 1);
  }
  EXPECT_EQ(server.connections(), 1);
  EXPECT_TRUE(client.Get("/v1/models"));
  EXPECT_EQ(server.connections(), 1);
}

// The server closes a kept connection just as the next request arrives (uvicorn's keep-alive
// timeout): the request never reached it, so it goes again on a new connection, as libcurl
// does, without a retry being configured.
TEST(NativeTransport, AKeptConnectionThatDiesUnusedIsSentAgainOnANewOne) {
  for (Transport t : {Transport::kNative, Transport::kCurl}) {
    ScriptServer server([](const ScriptRequest& req) {
      if (req.connection == 0 && IdOf(req) == 2) {
        return Script().Close();  // no answer at all
      }
      return Script().Send(SseHead()).Send(Chunk(GoodStream({"y"}))).Send(LastChunk());
    });
    Client client(With(server, t));
    ASSERT_EQ(RunCalls(client, {Call(1)})[0].outcome, Outcome::kOk);
    const auto out = RunCalls(client, {Call(2)});
    EXPECT_EQ(out[0].outcome, Outcome::kOk) << out[0].reason;
    EXPECT_EQ(out[0].retries, 0);
    EXPECT_TRUE(out[0].new_connection);
    EXPECT_EQ(server.connections(), 2);
    EXPECT_EQ(server.requests().size(), 3u);
  }
}

// A connection closed before any byte of the answer on a new connection is the server's doing:
// an error (retryable), not a silent resend.
TEST(NativeTransport, EmptyReplyOnANewConnectionIsAnError) {
  ScriptServer server([](const ScriptRequest&) { return Script().Close(); });
  const ChatResponse r = RunOne(server, Transport::kNative);
  EXPECT_EQ(r.outcome, Outcome::kTransport);
  EXPECT_EQ(r.reason, "Empty reply from server");
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(NativeTransport, ShortContentLengthBodyIsAnError) {
  ScriptServer server([](const ScriptRequest&) {
    return Script()
        .Send(HttpHead(200, "application/json", "Content-Length: 100\r\n") + "{\"choices\":")
        .Close();
  });
  const ChatResponse r = RunOne(server, Transport::kNative, false);
  EXPECT_EQ(r.outcome, Outcome::kTransport);
  EXPECT_EQ(r.reason, "transfer closed with 89 bytes remaining to read");
}

TEST(NativeTransport, MalformedRepliesAreNamed) {
  const std::pair<std::string, std::string> cases[] = {
      {"HTTP/1.1 2x0 OK\r\n\r\n", "malformed HTTP status line"},
      {"SSH-2.0-OpenSSH_9.2\r\n\r\n", "malformed HTTP status line"},
      {SseHead() + "zz\r\n", "malformed chunk in a chunked response body"},
      {SseHead() + "3\r\nabcXY\r\n", "malformed chunk in a chunked response body"},
      {HttpHead(200, "application/json", "Content-Length: -5\r\n"), "malformed Content-Length"},
  };
  for (const auto& [reply, reason] : cases) {
    ScriptServer server([&](const ScriptRequest&) { return Script().Send(reply).Pause(50); });
    const ChatResponse r = RunOne(server, Transport::kNative);
    EXPECT_EQ(r.outcome, Outcome::kTransport) << reply;
    EXPECT_EQ(r.reason, reason) << reply;
  }
}

// "localhost" may resolve to ::1 first; a server on 127.0.0.1 only is still reached.
TEST(NativeTransport, TriesTheNextAddressOfAName) {
  ScriptServer server([](const ScriptRequest&) {
    return Script().Send(SseHead()).Send(Chunk(GoodStream({"z"}))).Send(LastChunk());
  });
  ClientOptions o = With(server, Transport::kNative);
  o.endpoint = "http://localhost:" + std::to_string(server.port());
  Client client(o);
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kOk) << out[0].reason;
}

TEST(NativeTransport, ConnectionRefusedNamesTheAddress) {
  ClientOptions o;
  o.endpoint = "http://127.0.0.1:" + std::to_string(sb::testing::ClosedPort());
  o.transport = Transport::kNative;
  Client client(o);
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kTransport);
  EXPECT_EQ(out[0].reason.rfind("Failed to connect to 127.0.0.1 port ", 0), 0u) << out[0].reason;
  EXPECT_NE(out[0].reason.find("Connection refused"), std::string::npos) << out[0].reason;
}

// A server that accepts and then says nothing (no TLS handshake): the connect limit ends the
// request, as libcurl's does, with the same reason.
TEST(NativeTransport, AStalledTlsHandshakeEndsAtTheConnectLimit) {
  ScriptServer server([](const ScriptRequest&) { return Script(); });  // never sees a request
  for (Transport t : {Transport::kNative, Transport::kCurl}) {
    ClientOptions o;
    o.endpoint = "https://127.0.0.1:" + std::to_string(server.port());
    o.transport = t;
    o.connect_timeout = std::chrono::milliseconds(200);
    o.insecure = true;
    Client client(o);
    const auto out = RunCalls(client, {Call(1)});
    EXPECT_EQ(out[0].outcome, Outcome::kTimeout) << out[0].reason;
    EXPECT_EQ(out[0].reason.rfind("no connection within 200 ms: ", 0), 0u) << out[0].reason;
  }
}

TEST(NativeTransport, WhichEndpointsItServes) {
  ClientOptions o;
  o.transport = Transport::kNative;
  EXPECT_TRUE(detail::NativeTransportFor(o, "http://127.0.0.1:8000"));
  EXPECT_TRUE(detail::NativeTransportFor(o, "http://[::1]:8000/prefix"));
  EXPECT_TRUE(detail::NativeTransportFor(o, "https://127.0.0.1:8000"));  // TLS through OpenSSL
  EXPECT_FALSE(detail::NativeTransportFor(o, "http://user:pw@127.0.0.1:8000"));
  EXPECT_FALSE(detail::NativeTransportFor(o, "https://user:pw@h:8000"));
  // A proxy for the scheme: libcurl, which honours it.
  ::setenv("https_proxy", "http://proxy:3128", 1);
  EXPECT_FALSE(detail::NativeTransportFor(o, "https://127.0.0.1:8000"));
  EXPECT_TRUE(detail::NativeTransportFor(o, "http://127.0.0.1:8000"));
  ::unsetenv("https_proxy");
  o.transport = Transport::kCurl;
  EXPECT_FALSE(detail::NativeTransportFor(o, "http://127.0.0.1:8000"));
}

}  // namespace
}  // namespace sb::client
