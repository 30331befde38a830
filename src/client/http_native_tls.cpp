// TLS for the native transport (http_impl.h, http_native.cpp): OpenSSL over the same
// non-blocking sockets. One SSL_CTX per loop (the system's CAs, or ClientOptions::ca_cert;
// no verification with `insecure`), one SSL per connection with SNI and the host name (or IP
// address) checked against the certificate, the handshake driven by the event loop. Errors
// carry libcurl's codes, so Complete words them as for libcurl ("TLS certificate not
// trusted: ...", "cannot use CA certificate file ...").
#include <cerrno>
#include <cstring>
#include <string>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "client/http_impl.h"

namespace sb::client {

using namespace detail;  // NOLINT(build/namespaces): this module's private helpers

namespace {

// OpenSSL's last error as text ("" when its queue is empty); the queue is cleared.
std::string TakeSslError() {
  const unsigned long e = ERR_get_error();  // NOLINT(runtime/int)
  ERR_clear_error();
  if (e == 0) {
    return "";
  }
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

bool IsIpLiteral(const std::string& host) {
  in6_addr a6{};
  in_addr a4{};
  return inet_pton(AF_INET, host.c_str(), &a4) == 1 || inet_pton(AF_INET6, host.c_str(), &a6) == 1;
}

}  // namespace

void SslCtxFree::operator()(SSL_CTX* ctx) const {
  SSL_CTX_free(ctx);
}

bool CurlLoop::TlsContext(Transfer& t) {
  if (ssl_ctx) {
    return true;
  }
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) {
    NativeFail(t, CURLE_SSL_CONNECT_ERROR, "cannot set up TLS: " + TakeSslError());
    return false;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // A server that closes without close_notify ends the body like a plain close.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (!options.insecure) {
    const bool loaded = options.ca_cert.empty() ? SSL_CTX_set_default_verify_paths(ctx) == 1
                                                : SSL_CTX_load_verify_locations(
                                                      ctx, options.ca_cert.c_str(), nullptr) == 1;
    if (!loaded) {
      const std::string why = TakeSslError();
      SSL_CTX_free(ctx);
      if (options.ca_cert.empty()) {
        NativeFail(t, CURLE_SSL_CONNECT_ERROR, "cannot load the system's CA certificates: " + why);
      } else {
        NativeFail(t, CURLE_SSL_CACERT_BADFILE, why.empty() ? "no certificate in it" : why);
      }
      return false;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  ssl_ctx.reset(ctx);
  return true;
}

void CurlLoop::StartTls(Transfer& t) {
  if (!TlsContext(t)) {
    return;
  }
  SSL* ssl = SSL_new(ssl_ctx.get());
  if (ssl == nullptr || SSL_set_fd(ssl, t.fd) != 1) {
    SSL_free(ssl);
    NativeFail(t, CURLE_SSL_CONNECT_ERROR, "cannot set up TLS: " + TakeSslError());
    return;
  }
  ssl_by_fd[static_cast<std::size_t>(t.fd)] = ssl;  // freed with the connection (CloseConn)
  const bool ip = IsIpLiteral(host_name);
  if (!ip) {
    SSL_set_tlsext_host_name(ssl, host_name.c_str());
  }
  if (!options.insecure) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    if (ip) {
      X509_VERIFY_PARAM_set1_ip_asc(param, host_name.c_str());
    } else {
      SSL_set1_host(ssl, host_name.c_str());
    }
  }
  t.handshaking = true;
  ContinueTls(t);
}

void CurlLoop::ContinueTls(Transfer& t) {
  SSL* ssl = ssl_by_fd[static_cast<std::size_t>(t.fd)];
  ERR_clear_error();
  const int rc = SSL_connect(ssl);
  if (rc == 1) {
    t.handshaking = false;
    SendNative(t);
    return;
  }
  const int err = SSL_get_error(ssl, rc);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    const bool out = err == SSL_ERROR_WANT_WRITE;
    if (out != t.watching_out) {
      t.watching_out = out;
      WatchNative(t.fd, out ? EPOLLIN | EPOLLOUT : EPOLLIN, false);
    }
    return;
  }
  t.handshaking = false;
  const long verify = SSL_get_verify_result(ssl);  // NOLINT(runtime/int)
  if (verify != X509_V_OK) {
    NativeFail(t, CURLE_PEER_FAILED_VERIFICATION,
               std::string("SSL certificate problem: ") + X509_verify_cert_error_string(verify));
    return;
  }
  const std::string why = TakeSslError();
  NativeFail(t, CURLE_SSL_CONNECT_ERROR,
             "TLS handshake with " + host_name + " failed: " +
                 (why.empty() ? std::string(err == SSL_ERROR_SYSCALL ? std::strerror(errno)
                                                                     : "connection closed")
                              : why));
}

void CurlLoop::SendTls(Transfer& t) {
  SSL* ssl = ssl_by_fd[static_cast<std::size_t>(t.fd)];
  const std::size_t total = t.RequestBytes();
  while (t.sent < total) {
    // The first part not yet written: head, tail or body (a record each at most).
    std::size_t skip = t.sent;
    std::string_view part;
    for (std::string_view p : t.RequestParts()) {
      if (skip < p.size()) {
        part = p.substr(skip);
        break;
      }
      skip -= p.size();
    }
    ERR_clear_error();
    const int n =
        SSL_write(ssl, part.data(), static_cast<int>(std::min<std::size_t>(part.size(), 1u << 30)));
    if (n > 0) {
      t.sent += static_cast<std::size_t>(n);
      continue;
    }
    const int err = SSL_get_error(ssl, n);
    if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
      if (!t.watching_out) {
        t.watching_out = true;
        WatchNative(t.fd, EPOLLIN | EPOLLOUT, false);
      }
      return;
    }
    const std::string why = TakeSslError();
    NativeLost(t, CURLE_SEND_ERROR,
               "Send failure: " + (why.empty() ? std::string(std::strerror(errno)) : why));
    return;
  }
  if (t.watching_out) {
    t.watching_out = false;
    WatchNative(t.fd, EPOLLIN, false);
  }
}

void CurlLoop::ReadTls(Transfer& t) {
  SSL* ssl = ssl_by_fd[static_cast<std::size_t>(t.fd)];
  if (t.watching_out && t.sent >= t.RequestBytes()) {  // the write a read waited for is done
    t.watching_out = false;
    WatchNative(t.fd, EPOLLIN, false);
  }
  while (true) {
    ERR_clear_error();
    const int n = SSL_read(ssl, rx.data(), static_cast<int>(rx.size()));
    if (n > 0) {
      t.any_rx = true;
      if (!FeedNative(t, rx.data(), static_cast<std::size_t>(n))) {
        return;
      }
      continue;  // until OpenSSL has nothing buffered and the socket nothing ready
    }
    const int err = SSL_get_error(ssl, n);
    if (err == SSL_ERROR_WANT_READ) {
      return;
    }
    if (err == SSL_ERROR_WANT_WRITE) {  // a renegotiation: wait until it can write
      if (!t.watching_out) {
        t.watching_out = true;
        WatchNative(t.fd, EPOLLIN | EPOLLOUT, false);
      }
      return;
    }
    if (err == SSL_ERROR_ZERO_RETURN) {
      NativeEof(t);
      return;
    }
    const std::string why = TakeSslError();
    NativeLost(t, CURLE_RECV_ERROR,
               "Recv failure: " + (why.empty() ? std::string(std::strerror(errno)) : why));
    return;
  }
}

void CurlLoop::CloseConn(int fd) {
  const std::size_t slot = static_cast<std::size_t>(fd);
  if (slot < ssl_by_fd.size() && ssl_by_fd[slot] != nullptr) {
    SSL_free(ssl_by_fd[slot]);
    ssl_by_fd[slot] = nullptr;
  }
  if (slot < fd_serial.size()) {
    fd_serial[slot] = 0;
  }
  close(fd);
}

}  // namespace sb::client
