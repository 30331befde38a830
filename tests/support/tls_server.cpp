// tls_server.h.
#include "support/tls_server.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sb::testing {

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

TlsServer::TlsServer(const Identity& id, Responder responder) : responder_(std::move(responder)) {
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

TlsServer::~TlsServer() {
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  thread_.join();
  close(listen_fd_);
  SSL_CTX_free(ctx_);
}

void TlsServer::Run() {
  // OpenSSL writes with write(2): a client that hung up (an aborted handshake) must give EPIPE
  // here, not a SIGPIPE that ends the test binary. Blocked on this thread only.
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

void TlsServer::Serve(SSL* ssl) {
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
  const std::string response = responder_(in);
  // Counted before the write: a client that has read the response must already see it counted.
  served_.fetch_add(1);
  SSL_write(ssl, response.data(), static_cast<int>(response.size()));
}

}  // namespace sb::testing
