// HTTPS: the client against a local TLS server whose self-signed certificate (EC P-256, for
// localhost and 127.0.0.1) the test makes at run time with OpenSSL. Nothing is downloaded and
// the system trust store is never changed.
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/http_client.h"
#include "client/test_streams.h"
#include "support/temp_dir.h"

namespace sb::client {
namespace {

using std::chrono::milliseconds;

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

struct CertFree {
  void operator()(X509* x) const { X509_free(x); }
};

// A self-signed certificate for CN=localhost with subjectAltName DNS:localhost, IP:127.0.0.1.
struct Identity {
  std::unique_ptr<EVP_PKEY, KeyFree> key;
  std::unique_ptr<X509, CertFree> cert;
};

Identity MakeIdentity() {
  Identity id;
  id.key.reset(EVP_EC_gen("P-256"));
  if (!id.key) {
    ADD_FAILURE() << "EVP_EC_gen failed";
    return id;
  }
  id.cert.reset(X509_new());
  X509* x = id.cert.get();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 24 * 3600);
  X509_set_pubkey(x, id.key.get());
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  for (const auto& [nid, value] : {std::pair{NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1"},
                                   std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    EXPECT_NE(ext, nullptr);
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  EXPECT_GT(X509_sign(x, id.key.get(), EVP_sha256()), 0);
  return id;
}

void WritePem(const Identity& id, const std::filesystem::path& path) {
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  PEM_write_X509(f, id.cert.get());
  std::fclose(f);
}

// A TLS HTTP/1.1 server on 127.0.0.1: one thread, one connection at a time; every request gets
// a complete SSE stream ("secure", then finish_reason, usage and [DONE]) and the connection is
// closed. Handshakes the client aborts (an untrusted certificate) are counted and skipped.
class TlsServer {
 public:
  explicit TlsServer(const Identity& id) {
    ctx_ = SSL_CTX_new(TLS_server_method());
    SSL_CTX_use_certificate(ctx_, id.cert.get());
    SSL_CTX_use_PrivateKey(ctx_, id.key.get());
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(listen_fd_, 16) != 0) {
      ADD_FAILURE() << "bind/listen failed";
    }
    socklen_t len = sizeof addr;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Run(); });
  }

  ~TlsServer() {
    stopping_ = true;
    shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    close(listen_fd_);
    SSL_CTX_free(ctx_);
  }

  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;

  std::string url(const std::string& host = "127.0.0.1") const {
    return "https://" + host + ":" + std::to_string(port_);
  }

  int served() const { return served_.load(); }

  int failed_handshakes() const { return failed_handshakes_.load(); }

 private:
  void Run() {
    // OpenSSL writes with write(2): a client that hung up (an aborted handshake) must give
    // EPIPE here, not a SIGPIPE that ends the test binary. Blocked on this thread only.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    while (!stopping_) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (stopping_) {
          return;
        }
        continue;
      }
      timeval tv{5, 0};  // a stuck client cannot hang the test
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      SSL* ssl = SSL_new(ctx_);
      SSL_set_fd(ssl, fd);
      if (SSL_accept(ssl) <= 0) {
        ERR_clear_error();
        failed_handshakes_.fetch_add(1);
      } else {
        Serve(ssl);
        SSL_shutdown(ssl);
      }
      SSL_free(ssl);
      close(fd);
    }
  }

  void Serve(SSL* ssl) {
    std::string in;
    char buf[4096];
    std::size_t need = std::string::npos;
    while (need == std::string::npos || in.size() < need) {
      const int n = SSL_read(ssl, buf, sizeof buf);
      if (n <= 0) {
        return;
      }
      in.append(buf, static_cast<std::size_t>(n));
      const std::size_t end = in.find("\r\n\r\n");
      if (need == std::string::npos && end != std::string::npos) {
        std::size_t length = 0;
        for (const char* h : {"\r\nContent-Length:", "\r\ncontent-length:"}) {
          if (const std::size_t at = in.find(h); at != std::string::npos && at < end) {
            length = std::strtoul(in.c_str() + at + 17, nullptr, 10);
          }
        }
        need = end + 4 + length;
      }
    }
    const std::string body = GoodStream({"secure"});
    const std::string response =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    SSL_write(ssl, response.data(), static_cast<int>(response.size()));
    served_.fetch_add(1);
  }

  SSL_CTX* ctx_ = nullptr;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> served_{0};
  std::atomic<int> failed_handshakes_{0};
  std::thread thread_;
};

class Https : public ::testing::Test {
 protected:
  void SetUp() override {
    identity_ = MakeIdentity();
    ASSERT_TRUE(identity_.cert);
    ca_path_ = dir_.path() / "server.pem";
    WritePem(identity_, ca_path_);
    server_ = std::make_unique<TlsServer>(identity_);
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
