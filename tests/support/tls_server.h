// A local HTTPS server for tests (test-only): a self-signed certificate (EC P-256, for localhost
// and 127.0.0.1) made at run time with OpenSSL, and a one-thread TLS HTTP/1.1 server on
// 127.0.0.1:0 that answers each request with what a responder returns and then closes the
// connection. Nothing is downloaded and the system trust store is never changed.
// Thread safety: the responder runs on the server's thread; accessors are safe from any thread.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace sb::testing {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

struct CertFree {
  void operator()(X509* x) const { X509_free(x); }
};

// A self-signed CA certificate for CN=localhost with subjectAltName DNS:localhost,
// IP:127.0.0.1. `cert` is null (and a test failure recorded) when OpenSSL fails.
struct Identity {
  std::unique_ptr<EVP_PKEY, KeyFree> key;
  std::unique_ptr<X509, CertFree> cert;
};

Identity MakeIdentity();

// The certificate as PEM, to pass as a CA file.
void WritePem(const Identity& id, const std::filesystem::path& path);

class TlsServer {
 public:
  // The request (request line, headers and body, as received) -> the whole HTTP response. The
  // response should carry "Connection: close": the server closes after writing it.
  using Responder = std::function<std::string(const std::string& request)>;

  TlsServer(const Identity& id, Responder responder);
  ~TlsServer();

  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;

  std::string url(const std::string& host = "127.0.0.1") const {
    return "https://" + host + ":" + std::to_string(port_);
  }

  int served() const { return served_.load(); }

  // Handshakes the client aborted (e.g. it did not trust the certificate).
  int failed_handshakes() const { return failed_handshakes_.load(); }

 private:
  void Run();
  void Serve(SSL* ssl);

  Responder responder_;
  SSL_CTX* ctx_ = nullptr;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> served_{0};
  std::atomic<int> failed_handshakes_{0};
  std::thread thread_;
};

}  // namespace sb::testing
