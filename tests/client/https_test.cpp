// HTTPS: the client against a local TLS server whose self-signed certificate (EC P-256, for
// localhost and 127.0.0.1) the test makes at run time with OpenSSL. Nothing is downloaded and
// the system trust store is never changed.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "client/http_client.h"
#include "client/test_streams.h"
#include "support/temp_dir.h"
#include "support/tls_server.h"

namespace sb::client {
namespace {

using sb::testing::Identity;
using sb::testing::MakeIdentity;
using sb::testing::TlsServer;
using sb::testing::WritePem;
using std::chrono::milliseconds;

// Every request gets a complete SSE stream ("secure", then finish_reason, usage and [DONE]).
std::string SecureStream(const std::string& /*request*/) {
  const std::string body = GoodStream({"secure"});
  return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

class Https : public ::testing::Test {
 protected:
  void SetUp() override {
    identity_ = MakeIdentity();
    ASSERT_TRUE(identity_.cert);
    ca_path_ = dir_.path() / "server.pem";
    WritePem(identity_, ca_path_);
    server_ = std::make_unique<TlsServer>(identity_, SecureStream);
  }

  ClientOptions Opts() const {
    ClientOptions o;
    o.endpoint = server_->url() + "/v1";
    o.connect_timeout = milliseconds(5000);
    o.first_byte_timeout = milliseconds(5000);
    return o;
  }

  sb::testing::TempDir dir_;
  Identity identity_;
  std::filesystem::path ca_path_;
  std::unique_ptr<TlsServer> server_;
};

TEST_F(Https, StreamSucceedsWithTheServersCertificateAsCa) {
  ClientOptions o = Opts();
  o.ca_cert = ca_path_.string();
  Client client(o);
  ASSERT_TRUE(client.Validate());
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kOk) << out[0].reason;
  EXPECT_EQ(out[0].answer, "secure");
  EXPECT_TRUE(out[0].streamed);
  const auto got = client.Get("/v1/models");
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(server_->served(), 2);
}

TEST_F(Https, UntrustedCertificateFailsWithAClearReason) {
  Client client(Opts());  // the system store: the self-signed certificate is not in it
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kTransport);
  EXPECT_EQ(out[0].reason.rfind("TLS certificate not trusted: ", 0), 0u) << out[0].reason;
  EXPECT_NE(out[0].reason.find("self-signed"), std::string::npos) << out[0].reason;
  EXPECT_NE(out[0].reason.find("ca_cert"), std::string::npos);
  EXPECT_EQ(out[0].http_status, 0);
  EXPECT_EQ(server_->served(), 0);
  const auto got = client.Get("/v1/models");
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("TLS certificate not trusted"), std::string::npos);

  // Another certificate as the CA does not help either.
  const Identity other = MakeIdentity();
  const auto other_path = dir_.path() / "other.pem";
  WritePem(other, other_path);
  ClientOptions o = Opts();
  o.ca_cert = other_path.string();
  Client wrong(o);
  const auto w = RunCalls(wrong, {Call(2)});
  EXPECT_EQ(w[0].outcome, Outcome::kTransport);
  EXPECT_EQ(w[0].reason.rfind("TLS certificate not trusted: ", 0), 0u) << w[0].reason;
}

// The same stream over servebench's own TLS and over libcurl's: the same record.
TEST_F(Https, BothTransportsGiveTheSameAnswer) {
  for (const auto transport :
       {ClientOptions::Transport::kNative, ClientOptions::Transport::kCurl}) {
    ClientOptions o = Opts();
    o.ca_cert = ca_path_.string();
    o.transport = transport;
    Client client(o);
    EXPECT_EQ(client.transport(),
              transport == ClientOptions::Transport::kNative ? "native" : "libcurl");
    const auto out = RunCalls(client, {Call(1)});
    EXPECT_EQ(out[0].outcome, Outcome::kOk) << out[0].reason;
    EXPECT_EQ(out[0].answer, "secure");
    EXPECT_EQ(out[0].events.size(), 1u);
    EXPECT_TRUE(out[0].new_connection);
  }
  EXPECT_EQ(server_->served(), 2);
}

TEST_F(Https, InsecureSkipsVerification) {
  ClientOptions o = Opts();
  o.insecure = true;
  Client client(o);
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kOk) << out[0].reason;
  EXPECT_EQ(out[0].answer, "secure");
}

TEST_F(Https, CaFileThatIsNotACertificateIsNamed) {
  const auto junk = dir_.path() / "junk.pem";
  {
    FILE* f = std::fopen(junk.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("not a certificate\n", f);
    std::fclose(f);
  }
  ClientOptions o = Opts();
  o.ca_cert = junk.string();
  Client client(o);
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kTransport);
  EXPECT_EQ(out[0].reason.rfind("cannot use CA certificate file '" + junk.string() + "': ", 0), 0u)
      << out[0].reason;
}

}  // namespace
}  // namespace sb::client
