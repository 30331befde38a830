// One transfer's life in the libcurl loop (http_impl.h): curl's callbacks, the SSE stream,
// time limits ending a transfer, its classification when curl finishes it, and retries.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include <curl/curl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "client/http_impl.h"
#include "client/io_workers.h"
#include "client/sse_parser.h"
#include "client/stream_guard.h"
#include "core/redact.h"

namespace sb::client {

using namespace detail;  // NOLINT(build/namespaces): this module's private helpers

int CurlLoop::OnSocket(CURL* /*easy*/, curl_socket_t s, int what, void* userp, void* /*socketp*/) {
  auto* self = static_cast<CurlLoop*>(userp);
  if (what == CURL_POLL_REMOVE) {
    epoll_ctl(self->epoll_fd, EPOLL_CTL_DEL, s, nullptr);  // may already be gone: fine
    return 0;
  }
  epoll_event ev{};
  ev.events =
      ((what & CURL_POLL_IN) != 0 ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) != 0 ? EPOLLOUT : 0u);
  ev.data.fd = s;
  if (epoll_ctl(self->epoll_fd, EPOLL_CTL_MOD, s, &ev) != 0 && errno == ENOENT) {
    epoll_ctl(self->epoll_fd, EPOLL_CTL_ADD, s, &ev);
  }
  return 0;
}

int CurlLoop::OnTimer(CURLM* /*multi*/, long timeout_ms, void* userp) {  // NOLINT(runtime/int)
  auto* self = static_cast<CurlLoop*>(userp);
  self->curl_deadline_ns = timeout_ms < 0 ? kNever : NowNs() + timeout_ms * kNanosPerMs;
  return 0;
}

int CurlLoop::OnPrereq(void* userdata, char* /*conn_primary_ip*/, char* /*conn_local_ip*/,
                       int /*conn_primary_port*/, int /*conn_local_port*/) {
  auto* t = static_cast<Transfer*>(userdata);
  t->resp->written_ns = NowNs();
  return CURL_PREREQFUNC_OK;
}

size_t CurlLoop::OnHeader(char* buffer, size_t size, size_t nitems, void* userdata) {
  const std::int64_t t_ns = NowNs();
  auto* t = static_cast<Transfer*>(userdata);
  const size_t n = size * nitems;
  t->last_rx_ns = t_ns;
  if (t->first_byte_ns == 0) {
    t->impl->NoteFirstByte(*t, t_ns);
  }
  t->header_bytes += n;
  if (t->header_bytes > kHeaderCap) {
    t->aborted = true;
    t->resp->outcome = Outcome::kProtocol;
    t->resp->reason = HeaderOverLimit(t->header_bytes);
    return 0;
  }
  const std::string_view line(buffer, n);
  if (StartsWithNoCase(line, "http/")) {  // a new response (after a 1xx): forget the last
    t->content_type.clear();
    t->server_header.clear();
    t->date_header.clear();
    t->retry_after.clear();
  } else if (StartsWithNoCase(line, "retry-after:")) {
    t->retry_after.assign(TrimView(line.substr(12)));
  } else if (StartsWithNoCase(line, "content-type:")) {
    t->content_type.assign(TrimView(line.substr(13)));
  } else if (StartsWithNoCase(line, "server:")) {
    t->server_header.assign(TrimView(line.substr(7)));
  } else if (StartsWithNoCase(line, "date:")) {
    t->date_header.assign(TrimView(line.substr(5)));
  }
  return n;
}

size_t CurlLoop::OnWrite(char* ptr, size_t size, size_t nmemb, void* userdata) {
  // The bytes were read from the socket just now: stamp them before any parsing.
  const std::int64_t t_ns = NowNs();
  auto* t = static_cast<Transfer*>(userdata);
  const size_t n = size * nmemb;
  t->last_rx_ns = t_ns;
  if (t->first_byte_ns == 0) {
    t->impl->NoteFirstByte(*t, t_ns);
  }
  if (t->hold && t->impl->holding) {  // keep the connection in use (Preconnect)
    t->hold = false;
    t->held = true;
    ++t->impl->held;
    return CURL_WRITEFUNC_PAUSE;  // curl keeps these bytes and hands them over again
  }
  if (!t->mode_known) {
    const int status = t->impl->ResponseCode(*t);
    t->status = status;
    const bool ok = status >= 200 && status < 300;
    // A server that ignores stream=true answers with one JSON body: by its Content-Type, or,
    // when that says neither JSON nor event stream, by a body that starts with '{'.
    bool json_body = StartsWithNoCase(t->content_type, "application/json");
    if (!json_body && !StartsWithNoCase(t->content_type, "text/event-stream")) {
      const std::string_view head(ptr, n);
      const std::size_t first = head.find_first_not_of(" \t\r\n");
      json_body = first != std::string_view::npos && head[first] == '{';
    }
    t->sse = t->chat && t->stream && ok && !json_body;
    t->resp->streamed = t->sse;
    t->mode_known = true;
  }
  if (t->sse) {
    return t->impl->OnSseBytes(*t, std::string_view(ptr, n), t_ns) ? n : 0;
  }
  const bool error_status = t->chat && (t->status < 200 || t->status >= 300);
  const std::size_t cap = error_status ? kErrorBodyCap : kBodyCap;
  if (t->body.size() + n > cap) {
    if (error_status) {  // keep the first 64 KiB, keep reading so the connection survives
      t->body.append(ptr, cap - t->body.size());
      return n;
    }
    t->aborted = true;
    t->resp->outcome = Outcome::kProtocol;
    t->resp->reason = "response body over " + std::to_string(kBodyCap >> 20) + " MiB";
    return 0;
  }
  t->body.append(ptr, n);
  return n;
}

void CurlLoop::NoteFirstByte(Transfer& t, std::int64_t t_ns) {
  t.first_byte_ns = t_ns;
  t.resp->first_byte_ns = t_ns;
  next_check_ns = std::min(next_check_ns, t.NextDeadline());
}

bool CurlLoop::HandleEvent(Transfer& t, std::string_view data, std::int64_t t_ns) {
  ChatResponse& r = *t.resp;
  if (r.stream_done) {
    return true;  // [DONE] ended the answer: nothing after it is part of it
  }
  const std::size_t before = r.events.size();
  if (!ApplyStreamEvent(data, t_ns, r)) {
    return false;
  }
  if (r.stream_done) {  // the answer is complete: the body's end gets kDoneGrace at most
    t.done_at_ns = t_ns;
    next_check_ns = std::min(next_check_ns, t.NextDeadline());
    return true;
  }
  if (!t.guard.AfterEvent(r, data, before)) {
    return false;
  }
  if (!WithinAnswerCap(t)) {
    return false;
  }
  if (r.events.size() != before && hooks != nullptr && hooks->on_event && !hooks->on_event(r)) {
    r.outcome = Outcome::kCancelled;
    r.reason = "cancelled by caller";
    return false;
  }
  return true;
}

bool CurlLoop::WithinAnswerCap(Transfer& t) {
  if (t.max_answer_bytes == 0) {
    return true;
  }
  ChatResponse& r = *t.resp;
  std::size_t bytes = r.answer.size() + r.reasoning.size();
  for (const ToolCall& call : r.tool_calls) {
    bytes += call.name.size() + call.arguments.size();
  }
  if (bytes <= t.max_answer_bytes) {
    return true;
  }
  r.outcome = Outcome::kProtocol;
  r.reason = "answer over " + std::to_string(t.max_answer_bytes) +
             " bytes (max_answer_bytes); got " + std::to_string(bytes);
  return false;
}

bool CurlLoop::OnSseBytes(Transfer& t, std::string_view bytes, std::int64_t t_ns) {
  // Each event is handled as the parser completes it, from the parser's own reused buffer: no
  // allocation per token.
  bool handled = true;
  const bool fed = t.parser.FeedEach(bytes, [&](const SseEvent& ev) {
    handled = HandleEvent(t, ev.data, t_ns);
    return handled;
  });
  if (!handled) {
    t.aborted = true;
    return false;
  }
  if (!fed) {  // a line or event over the cap: stop before buffering any more of it
    t.resp->outcome = Outcome::kProtocol;
    t.resp->reason = t.parser.error();
    t.aborted = true;
    return false;
  }
  return true;
}

CURL* CurlLoop::AcquireEasy() {
  if (!idle_easies.empty()) {
    CURL* e = idle_easies.back();
    idle_easies.pop_back();
    curl_easy_reset(e);
    return e;
  }
  return curl_easy_init();
}

void CurlLoop::ReleaseEasy(CURL* e) {
  if (e != nullptr) {
    idle_easies.push_back(e);
  }
}

void CurlLoop::ConfigureEasy(Transfer& t, const std::string& url) {
  CURL* e = t.easy;
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &CurlLoop::OnWrite);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &CurlLoop::OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, &CurlLoop::OnPrereq);
  curl_easy_setopt(e, CURLOPT_PREREQDATA, &t);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.errbuf);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(e, CURLOPT_USERAGENT, "servebench/0.1");
  if (options.connect_timeout.count() > 0) {
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options.connect_timeout.count()));  // NOLINT
  }
  // "": every encoding this libcurl decodes (gzip, deflate, ...), decoded as bytes arrive.
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
  if (!options.ca_cert.empty()) {
    curl_easy_setopt(e, CURLOPT_CAINFO, options.ca_cert.c_str());
  }
  if (options.insecure) {
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
  }
}

bool CurlLoop::Launch(Transfer& t) {
  t.send_ns = launch_ns != 0 ? launch_ns : NowNs();
  t.last_rx_ns = t.send_ns;
  t.resp->send_ns = t.send_ns;
  t.resp->written_ns = 0;
  if (t.resp->first_send_ns == 0) {
    t.resp->first_send_ns = t.send_ns;
  }
  if (t.native) {
    return LaunchNative(t);
  }
  const CURLMcode mc = curl_multi_add_handle(multi, t.easy);
  if (mc != CURLM_OK) {
    t.resp->outcome = Outcome::kTransport;
    t.resp->reason = std::string("cannot start request: ") + curl_multi_strerror(mc);
    t.resp->done_ns = NowNs();
    return false;
  }
  t.active_pos = active.size();
  active.push_back(&t);
  return true;
}

void CurlLoop::Deactivate(Transfer& t) {
  if (t.held) {
    t.held = false;
    --held;
  }
  if (t.native) {
    DetachNative(t);
  } else {
    curl_multi_remove_handle(multi, t.easy);
  }
  Transfer* last = active.back();
  active[t.active_pos] = last;
  last->active_pos = t.active_pos;
  active.pop_back();
}

void CurlLoop::Abort(Transfer& t, Outcome outcome, std::string reason, std::int64_t now) {
  Deactivate(t);
  ChatResponse& r = *t.resp;
  r.outcome = outcome;
  r.reason = std::move(reason);
  r.done_ns = now;
  if (t.chat) {
    const int status = ResponseCode(t);
    r.http_status = status;
    if (!t.sse && (status < 200 || status >= 300)) {
      r.error_body = std::move(t.body);
    }
  }
}

void CurlLoop::Complete(Transfer& t, CURLcode rc) {
  const std::int64_t now = NowNs();
  Deactivate(t);
  ChatResponse& r = *t.resp;
  r.done_ns = now;
  const int status = ResponseCode(t);
  r.http_status = status;
  if (t.native) {
    r.new_connection = t.fresh;
  } else {
    long connects = 0;  // NOLINT(runtime/int)
    curl_easy_getinfo(t.easy, CURLINFO_NUM_CONNECTS, &connects);
    r.new_connection = connects > 0;
  }
  if (t.aborted) {
    return;  // the write callback already decided (malformed, error event, cancelled)
  }
  if (rc != CURLE_OK) {
    const std::string msg = t.errbuf[0] != '\0' ? t.errbuf : curl_easy_strerror(rc);
    if (t.sse && r.stream_done) {
      FinishStream(t);  // the stream was complete; the connection failed afterwards
      return;
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {  // only the connect limit is left to curl
      r.outcome = Outcome::kTimeout;
      r.reason =
          "no connection within " + std::to_string(options.connect_timeout.count()) + " ms: " + msg;
    } else if (rc == CURLE_PEER_FAILED_VERIFICATION) {
      r.outcome = Outcome::kTransport;
      r.reason = "TLS certificate not trusted: " + msg +
                 " (trust its CA with ca_cert, or skip verification with insecure)";
    } else if (rc == CURLE_SSL_CACERT_BADFILE) {
      r.outcome = Outcome::kTransport;
      r.reason = "cannot use CA certificate file '" + options.ca_cert + "': " + msg;
    } else if (rc == CURLE_OUT_OF_MEMORY && !t.mode_known) {
      // Before the body, curl says "Out of memory" for a header line over its own limit
      // (CURL_MAX_HTTP_HEADER): its message would mislead, so it is not repeated.
      r.outcome = Outcome::kProtocol;
      r.reason = "response header over the limit: a header line over libcurl's 100 KiB";
    } else {
      r.outcome = Outcome::kTransport;
      r.reason = msg;
    }
    if (t.chat && !t.sse && (status < 200 || status >= 300) && status != 0) {
      r.error_body = std::move(t.body);
    }
    return;
  }
  if (!t.chat) {
    return;  // Get/Post: any status is a value
  }
  if (status < 200 || status >= 300) {
    r.outcome = Outcome::kHttpError;
    r.reason = HttpErrorReason(status, t.body);
    r.error_body = std::move(t.body);
    return;
  }
  if (t.sse) {
    FinishStream(t);
    return;
  }
  if (!t.mode_known) {  // 2xx without a single body byte
    r.outcome = Outcome::kProtocol;
    r.reason = t.stream ? "stream ended early: empty response" : "empty response body";
    return;
  }
  if (ApplyCompletionBody(t.body, t.last_rx_ns, r) && t.guard.AfterBody(r)) {
    WithinAnswerCap(t);
  }
}

bool CurlLoop::Retryable(const Transfer& t, CURLcode rc) {
  if (!t.chat || t.aborted) {
    return false;
  }
  if (rc == CURLE_OK) {
    return t.resp->http_status == 429 || t.resp->http_status == 503;
  }
  if (t.first_byte_ns != 0) {
    return false;  // the server answered something: sending again could duplicate it
  }
  return rc == CURLE_COULDNT_CONNECT || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
         rc == CURLE_GOT_NOTHING;
}

bool CurlLoop::ScheduleRetry(Transfer& t, CURLcode rc) {
  if (t.retries_left <= 0 || !Retryable(t, rc)) {
    return false;
  }
  ChatResponse& r = *t.resp;
  const int k = options.retries - t.retries_left;  // retries made so far
  std::int64_t wait = -1;
  if (rc == CURLE_OK && !t.retry_after.empty()) {
    wait = ParseRetryAfterNs(t.retry_after);
  }
  if (wait < 0) {
    wait = MsToNs(options.retry_backoff) << std::min(k, 20);
  }
  wait = std::min(wait, MsToNs(options.retry_wait_cap));
  if (t.waited_ns + wait > MsToNs(options.retry_wait_budget)) {
    return false;
  }
  --t.retries_left;
  t.waited_ns += wait;
  r.retry_reasons.push_back(r.reason);
  const std::int64_t when = NowNs() + wait;
  retry_queue.emplace_back(when, &t);
  std::push_heap(retry_queue.begin(), retry_queue.end(), std::greater<>{});
  return true;
}

bool CurlLoop::Relaunch(Transfer& t) {
  ChatResponse& r = *t.resp;
  ChatResponse fresh;
  fresh.id = r.id;
  fresh.scheduled_ns = r.scheduled_ns;
  fresh.first_send_ns = r.first_send_ns;
  fresh.retries = r.retries + 1;
  fresh.retry_reasons = std::move(r.retry_reasons);
  r = std::move(fresh);
  t.mode_known = false;
  t.sse = false;
  t.aborted = false;
  t.status = 0;
  t.first_byte_ns = 0;
  t.body.clear();
  t.content_type.clear();
  t.server_header.clear();
  t.date_header.clear();
  t.retry_after.clear();
  t.parser = SseParser(options.max_line_bytes);
  t.guard = t.fresh_guard;
  t.done_at_ns = 0;
  t.header_bytes = 0;
  t.errbuf[0] = '\0';
  t.resent = false;
  return Launch(t);
}

void CurlLoop::FinishStream(Transfer& t) {
  ChatResponse& r = *t.resp;
  scratch.clear();
  const bool clean = t.parser.Finish(scratch) || r.stream_done;
  for (const SseEvent& ev : scratch) {
    if (!HandleEvent(t, ev.data, t.last_rx_ns)) {
      if (!clean && r.outcome == Outcome::kProtocol) {
        r.reason = "stream ended early: connection closed mid-event (" + r.reason + ")";
      }
      scratch.clear();
      return;
    }
  }
  scratch.clear();
  if (!r.stream_done && r.finish_reason.empty()) {
    r.outcome = Outcome::kProtocol;
    r.reason = clean ? "stream ended early: no finish_reason and no [DONE]"
                     : "stream ended early: connection closed mid-event";
    return;
  }
  t.guard.AtStreamEnd(r);
}

void CurlLoop::EndAfterDone(Transfer& t) {
  Deactivate(t);
  ChatResponse& r = *t.resp;
  r.done_ns = t.done_at_ns;
  r.http_status = ResponseCode(t);
  FinishStream(t);
}

}  // namespace sb::client
