// The simulator's requests and streams (sim_impl.h): dispatching a parsed request, admitting a
// chat stream into the batch, its decode steps on the timer, and its end.
#include "sim/sim_impl.h"

namespace sb::sim {

using namespace detail;  // NOLINT(build/namespaces): the loop's private helpers

// ---------------------------------------------------------------------------------------------
// The batch (shared by the loops)

bool Batch::Arrive(Loop* loop, std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_.load(std::memory_order_relaxed) < max_batch_ && queued_.empty()) {
    running_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  queue_.push_back(Waiter{loop, id});
  queued_.insert({loop, id});
  waiting_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void Batch::Leave(std::vector<Waiter>& admitted) {
  std::lock_guard<std::mutex> lock(mu_);
  running_.fetch_sub(1, std::memory_order_relaxed);
  while (running_.load(std::memory_order_relaxed) < max_batch_ && !queue_.empty()) {
    const Waiter w = queue_.front();
    queue_.pop_front();
    if (queued_.erase({w.loop, w.id}) == 0) {
      continue;  // withdrawn
    }
    waiting_.fetch_sub(1, std::memory_order_relaxed);
    running_.fetch_add(1, std::memory_order_relaxed);
    admitted.push_back(w);
  }
}

bool Batch::Withdraw(Loop* loop, std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (queued_.erase({loop, id}) == 0) {
    return false;
  }
  waiting_.fetch_sub(1, std::memory_order_relaxed);
  // Its queue_ entry is skipped when reached; drop the stale entries at the front now.
  while (!queue_.empty() && queued_.count({queue_.front().loop, queue_.front().id}) == 0) {
    queue_.pop_front();
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Requests

void Loop::TryProcess(std::uint64_t conn_id) {
  Conn* c = FindConn(conn_id);
  if (c == nullptr || c->in_try_process) {
    return;
  }
  c->in_try_process = true;
  while (c != nullptr && !c->busy && !c->close_after_flush && !c->draining) {
    ParseResult r = c->parser.Parse(c->in);
    if (r.kind == ParseResult::Kind::kIncomplete) {
      break;
    }
    if (r.kind == ParseResult::Kind::kContinue) {
      if (!Send(*c, "HTTP/1.1 100 Continue\r\n\r\n")) {
        return;
      }
      break;
    }
    if (r.kind == ParseResult::Kind::kError) {
      metrics.Update([](Counters& k) { ++k.requests; });
      const Reply reply = ErrorReply(r.error_status, r.error_message);
      c->close_after_flush = true;
      if (!Send(*c, Response(reply.status, reply.content_type, reply.body, false))) {
        return;
      }
      if (!c->OutputPending()) {
        StartDrain(*c);
      }
      c = FindConn(conn_id);
      break;
    }
    metrics.Update([](Counters& k) { ++k.requests; });
    if (c->in.empty() && c->in.capacity() > (std::size_t{1} << 20)) {
      std::string().swap(c->in);  // give back the memory of a large body
    }
    c->busy = true;
    c->keep_alive = r.request.keep_alive;
    c->http10 = r.request.http10;
    c->accepts_gzip = r.request.accepts_gzip;
    c->recv_ns = NowNs();
    c->read_lag_ns = c->last_rx_ns > 0 ? std::max<std::int64_t>(0, c->recv_ns - c->last_rx_ns) : -1;
    Dispatch(*c, r.request);
    c = FindConn(conn_id);
  }
  if (c != nullptr) {
    c->in_try_process = false;
    if (c->read_paused && c->in.size() <= kMaxBufferedInput) {
      c->read_paused = false;
      UpdateInterest(*c);
    }
  }
}

void Loop::Dispatch(Conn& c, HttpRequest& req) {
  std::string_view path = req.path;
  if (path == "/v1") {
    path = "/";
  } else if (path.starts_with("/v1/")) {
    path.remove_prefix(3);
  }
  const bool get = req.method == "GET";
  const bool post = req.method == "POST";
  Reply reply;
  if (path == "/health") {
    if (get) {
      reply.content_type.clear();
    } else {
      reply = JsonReply(405, R"({"detail":"Method Not Allowed"})");
    }
  } else if (path == "/models") {
    reply = get ? JsonReply(200, ModelsBody(options, shared.created_at))
                : JsonReply(405, R"({"detail":"Method Not Allowed"})");
  } else if (path == "/version") {
    reply = get ? JsonReply(200, std::string(R"({"version":")") + std::string(kServerName) + "\"}")
                : JsonReply(405, R"({"detail":"Method Not Allowed"})");
  } else if (path == "/metrics") {
    if (get) {
      reply.body = RenderPrometheus(metrics.Snapshot(), options);
      reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
    } else {
      reply = JsonReply(405, R"({"detail":"Method Not Allowed"})");
    }
  } else if (path == "/apply-template" && options.apply_template) {
    reply = post ? ApplyTemplate(req.body) : JsonReply(405, R"({"detail":"Method Not Allowed"})");
  } else if (path == "/chat/completions" || path == "/tokenize" || path == "/detokenize") {
    if (!post) {
      reply = JsonReply(405, R"({"detail":"Method Not Allowed"})");
    } else if (c.peer_closed && path == "/chat/completions") {
      CloseConn(c.id, false, true);  // nobody left to stream to
      return;
    } else {
      const PostKind kind = path == "/chat/completions" ? PostKind::kChat
                            : path == "/tokenize"       ? PostKind::kTokenize
                                                        : PostKind::kDetokenize;
      worker->Submit(ParseWorker::Job{c.id, kind, std::move(req.body)});
      return;  // answered in OnWorkerDone
    }
  } else {
    reply = JsonReply(404, R"({"detail":"Not Found"})");
  }
  WriteReply(c, reply);
}

std::string Loop::BodyResponse(const Conn& c, int status, std::string_view content_type,
                               std::string_view body, std::string extra_headers) {
  if (!options.gzip || !c.accepts_gzip || body.empty()) {
    return Response(status, content_type, body, c.keep_alive, extra_headers);
  }
  metrics.Update([](Counters& k) { ++k.compressed_responses; });
  extra_headers += "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n";
  return Response(status, content_type, Gzip(body), c.keep_alive, extra_headers);
}

std::string Loop::RetryAfterHeader() const {
  // Whole seconds as RFC 9110 says; a fraction (for fast tests) as a short decimal.
  const double s = options.retry_after_s;
  std::string value;
  if (s == std::floor(s)) {
    value = std::to_string(static_cast<long long>(s));
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", s);
    value = buf;
    while (value.back() == '0') {
      value.pop_back();
    }
  }
  return "Retry-After: " + value + "\r\n";
}

void Loop::WriteReply(Conn& c, const Reply& reply) {
  const std::uint64_t id = c.id;
  if (!Send(c,
            BodyResponse(c, reply.status, reply.content_type, reply.body, reply.extra_headers))) {
    return;
  }
  if (Conn* still = FindConn(id)) {
    FinishResponse(*still);
  }
}

void Loop::FinishResponse(Conn& c) {
  if (c.held_open) {
    c.stream_id = 0;
    return;  // busy until the client closes
  }
  c.busy = false;
  c.stream_id = 0;
  if (!c.keep_alive) {
    c.close_after_flush = true;
    if (!c.OutputPending()) {
      StartDrain(c);
    }
    return;
  }
  if (!c.in_try_process) {
    TryProcess(c.id);
  }
}

void Loop::OnWorkerDone() {
  for (auto& done : worker->TakeDone()) {
    Conn* c = FindConn(done.conn_id);
    if (c == nullptr) {
      continue;  // the client left while its body was parsed
    }
    if (auto* reply = std::get_if<Reply>(&done.result)) {
      WriteReply(*c, *reply);
    } else {
      StartChat(*c, std::get<ChatRequest>(done.result));
    }
  }
}

void Loop::StartChat(Conn& c, const ChatRequest& req) {
  const std::uint64_t number = shared.chat_count.fetch_add(1) + 1;
  if (shared.request_log_fd >= 0) {
    char hash[24];
    std::snprintf(hash, sizeof hash, "%016llx\t", static_cast<unsigned long long>(req.text_hash));
    const std::string line = hash + req.log_text + "\n";
    [[maybe_unused]] ssize_t n = ::write(shared.request_log_fd, line.data(), line.size());
  }
  Rng rng(Mix64(options.seed ^ Mix64(number)));
  const Plan plan = PlanChat(req, options, rng);
  metrics.Update([&plan](Counters& k) {
    ++k.chat_requests;
    if (plan.fault != Fault::kNone) {
      ++k.faults[static_cast<int>(plan.fault)];
    }
  });
  if (plan.fault == Fault::kHttp500) {
    WriteReply(c, ErrorReply(500, "simulated internal error"));
    return;
  }
  if (plan.fault == Fault::kHttp429 || plan.fault == Fault::kHttp503) {
    Reply r = plan.fault == Fault::kHttp429
                  ? ErrorReply(429, "simulated rate limit: too many requests")
                  : ErrorReply(503, "simulated overload: service unavailable");
    r.extra_headers = RetryAfterHeader();
    WriteReply(c, r);
    return;
  }
  if (plan.fault == Fault::kDoneOnly || plan.fault == Fault::kHugeHeader) {
    WriteReply(c, HostileReply(plan.fault));
    return;
  }
  auto s = std::make_unique<Stream>();
  s->id = next_stream_id++;
  s->conn_id = c.id;
  s->request = req;
  s->plan = plan;
  if (plan.fault == Fault::kEndless) {  // ignores max_tokens (and the context window)
    s->plan.completion_tokens =
        req.stream ? kEndlessTokens : 16 * std::min(plan.completion_tokens, 1 << 16);
    s->plan.finish_reason = "length";
  }
  s->rng = rng;
  s->chat_id = RequestId(options.seed, number);
  s->created = static_cast<std::int64_t>(std::time(nullptr));
  s->chunked = !c.http10;
  s->truth.recv_ns = c.recv_ns;
  s->truth.read_lag_ns = c.read_lag_ns;
  s->truth.prompt_tokens = req.prompt_tokens;
  const bool stream = req.stream;
  std::string stream_headers = "Cache-Control: no-cache\r\n";
  if (stream) {
    s->chunks.emplace(s->chat_id, s->created, options.model, options.reasoning_field,
                      req.continuous_usage, req.prompt_tokens);
    if (options.gzip && c.accepts_gzip) {
      s->gzip = std::make_unique<GzipStream>();
      stream_headers += "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n";
      metrics.Update([](Counters& k) { ++k.compressed_responses; });
    }
    if (c.http10) {
      c.keep_alive = false;
    }
  }
  const bool chunked = s->chunked;
  c.stream_id = s->id;
  Stream& ref = *s;
  streams.emplace(s->id, std::move(s));
  if (shared.batch.Arrive(this, ref.id)) {
    Admit(ref, ref.truth.recv_ns);
  }
  PublishGauges();
  if (stream) {
    // Headers go out at once (as vLLM's do), before the first token; if the client is gone
    // already, Send closes the connection and drops the stream.
    Send(c, ResponseHead(200, "text/event-stream; charset=utf-8",
                         chunked ? kChunkedBody : kUntilCloseBody, c.keep_alive, stream_headers));
  }
}

// ---------------------------------------------------------------------------------------------
// Streams

void Loop::Admit(Stream& s, std::int64_t start_ns) {
  s.running = true;  // counted by shared.batch already
  s.truth.start_ns = start_ns;
  int cached = 0;
  if (options.prefix_cache_tokens > 0) {
    std::size_t blocks = 0;
    {
      std::lock_guard<std::mutex> lock(shared.prefix_mu);
      blocks = shared.prefix_cache.LookupAndInsert(s.request.block_keys);
    }
    cached = static_cast<int>(blocks) * options.block_tokens;
    s.truth.cached_tokens = cached;
    if (s.chunks) {
      s.chunks->set_cached_tokens(cached);
    }
    metrics.Update([&](Counters& k) {
      k.prefix_cache_queries += static_cast<std::uint64_t>(s.request.prompt_tokens);
      k.prefix_cache_hits += static_cast<std::uint64_t>(cached);
    });
  }
  s.deadline = start_ns + FirstTokenDelayNs(options, s.request.prompt_tokens - cached);
  if (s.plan.fault == Fault::kStall && s.plan.fault_after_tokens == 0) {
    s.deadline += static_cast<std::int64_t>(options.stall_ms * 1e6);
    s.fault_done = true;
  }
  Push(s.deadline, s.id, false);
}

void Loop::LeaveBatch() {
  const std::int64_t now = NowNs();
  admitted.clear();
  shared.batch.Leave(admitted);
  // Grows when a slot comes back (a stream admitted here was gone: it cannot be, but a slot
  // must never be lost).
  for (std::size_t i = 0; i < admitted.size(); ++i) {
    const Batch::Waiter w = admitted[i];
    if (w.loop != this) {
      w.loop->Post(w.id, now);
      continue;
    }
    const auto it = streams.find(w.id);
    if (it == streams.end() || it->second->running) {
      shared.batch.Leave(admitted);
      continue;
    }
    Admit(*it->second, now);
  }
  PublishGauges();
}

void Loop::OnInbox() {
  std::vector<std::pair<std::uint64_t, std::int64_t>> items;
  {
    std::lock_guard<std::mutex> lock(inbox_mu);
    items.swap(inbox);
  }
  for (const auto& [id, start_ns] : items) {
    const auto it = streams.find(id);
    if (it == streams.end() || it->second->running) {
      continue;  // dropped since: DropStream gave its slot back (Withdraw said it had one)
    }
    Admit(*it->second, start_ns);
  }
  if (!items.empty()) {
    PublishGauges();
  }
}

void Loop::ArmTimer() {
  while (!timers.empty()) {
    const TimerEntry& top = timers.top();
    // Drop stale entries so the timer is not armed for nothing.
    if (top.drain) {
      if (top.id == kListenTag ? listen_paused : FindConn(top.id) != nullptr) {
        break;
      }
    } else {
      const auto it = streams.find(top.id);
      if (it != streams.end() && it->second->running && it->second->deadline == top.deadline) {
        break;
      }
    }
    timers.pop();
  }
  const std::int64_t want = timers.empty() ? 0 : timers.top().deadline;
  if (want == armed_deadline || (want == 0 && armed_deadline < 0)) {
    return;
  }
  // Wake spin_ns early; RunDueTimers busy-waits the rest (timer wake-ups run late by tens of
  // microseconds on virtual machines).
  const std::int64_t wake = want == 0 ? 0 : std::max<std::int64_t>(1, want - spin_ns);
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(wake / 1'000'000'000);
  spec.it_value.tv_nsec = static_cast<long>(wake % 1'000'000'000);
  ::timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &spec, nullptr);  // 0 disarms
  armed_deadline = want == 0 ? -1 : want;
}

void Loop::RunDueTimers() {
  // A bounded batch, so streams with itl_ms 0 cannot starve the sockets: what is left is due
  // already and fires again right after the next epoll_wait.
  int budget = 4096;
  std::int64_t now = NowNs();
  while (!timers.empty() && budget-- > 0) {
    const std::int64_t due = timers.top().deadline;
    if (due > now) {
      if (due - now > spin_ns) {
        break;
      }
      while ((now = NowNs()) < due) {
        CpuRelax();
      }
    }
    const TimerEntry e = timers.top();
    timers.pop();
    if (e.drain && e.id == kListenTag) {
      ResumeListening();
      continue;
    }
    if (e.drain) {
      if (Conn* c = FindConn(e.id); c != nullptr && c->draining) {
        CloseConn(e.id, false, false);
      }
      continue;
    }
    const auto it = streams.find(e.id);
    if (it == streams.end() || !it->second->running || it->second->deadline != e.deadline) {
      continue;
    }
    OnStep(*it->second);
    now = NowNs();
  }
}

void Loop::OnStep(Stream& s) {
  Conn* c = FindConn(s.conn_id);
  if (c == nullptr) {
    DropStream(s.id, true);
    return;
  }
  const int total = s.plan.completion_tokens;
  int tokens = 1;
  int accepted = -1;
  if (s.truth.steps > 0 && options.spec_tokens > 0) {
    accepted = DraftAccepted(options, s.rng);
    tokens = 1 + accepted;
    ++s.truth.drafts;
    s.truth.draft_tokens += options.spec_tokens;
    s.truth.accepted_tokens += accepted;
  }
  tokens = std::min(tokens, total - s.emitted);
  StepShape step;
  step.begin = s.emitted;
  step.reasoning_end = s.plan.reasoning_tokens;
  const int end = step.begin + tokens;
  ++s.truth.steps;
  BuildStepText(s, step.begin, end);
  s.emitted = end;
  s.truth.completion_tokens = end;
  s.truth.reasoning_tokens = std::min(end, step.reasoning_end);

  step.fault_now =
      s.plan.fault != Fault::kNone && !s.fault_done && s.emitted >= s.plan.fault_after_tokens;
  // giant / badutf8: one extra content event before this step's own.
  if (step.fault_now && s.plan.fault == Fault::kGiant) {
    step.fault_text.assign(options.giant_event_bytes, 'x');
  } else if (step.fault_now && s.plan.fault == Fault::kBadUtf8) {
    step.fault_text.assign(kBadUtf8Text);
  }
  // Reset and malformed cut the stream before it could finish normally.
  step.cut = step.fault_now && (s.plan.fault == Fault::kReset || s.plan.fault == Fault::kMalformed);
  step.last = s.emitted >= total && !step.cut;

  // The write time is read just before the bytes are built and handed to the kernel; the sim
  // object of the final chunk carries it.
  const std::int64_t write_ns = NowNs();
  CountStep(s, tokens, accepted, write_ns);

  const std::uint64_t stream_id = s.id;
  if (!(s.chunks ? SendStreamedStep(s, *c, step) : SendWholeStep(s, *c, step))) {
    return;  // the client went away (the stream was dropped), or the stream is held open
  }
  if (step.fault_now && !ApplyFault(s, step.last)) {
    return;
  }
  if (step.last) {
    EndStream(s, s.plan.finish_reason);
    return;
  }
  // Next decode step: its duration uses the batch size now (absolute schedule, no drift). The
  // schedule is anchored at the first token's actual write: a late first token (a busy machine)
  // must not make the following steps catch up, which would inflate decode speed excl. TTFT.
  if (s.truth.steps == 1) {
    s.deadline = std::max(s.deadline, write_ns);
  }
  s.deadline += StepNs(options, shared.batch.running(), s.rng);
  Push(s.deadline, stream_id, false);
}

// The text of tokens [begin, end), split at the reasoning/answer boundary into
// reasoning_scratch and content_scratch; scripted tool calls (after the answer words) as
// tool-call deltas into tool_scratch.
void Loop::BuildStepText(Stream& s, int begin, int end) {
  reasoning_scratch.clear();
  content_scratch.clear();
  tool_scratch.clear();
  const int reasoning_end = s.plan.reasoning_tokens;
  const std::vector<std::string>& words = s.request.answer_words;
  const auto& tools = s.request.tool_tokens;
  for (int i = begin; i < end; ++i) {
    if (i < reasoning_end) {
      reasoning_scratch += TokenText(s.plan.text_seed, i, s.request.loop);
      continue;
    }
    const std::size_t answer_index = static_cast<std::size_t>(i - reasoning_end);
    if (answer_index < words.size()) {
      content_scratch += words[answer_index];
    } else if (answer_index - words.size() < tools.size()) {
      const ChatRequest::ToolToken& t = tools[answer_index - words.size()];
      if (!tool_scratch.empty()) {
        tool_scratch += ',';
      }
      tool_scratch += "{\"index\":" + std::to_string(t.call);
      if (!t.name.empty()) {
        tool_scratch += ",\"id\":";
        AppendJsonString(tool_scratch, t.id);
        tool_scratch += ",\"type\":\"function\",\"function\":{\"name\":";
        AppendJsonString(tool_scratch, t.name);
        tool_scratch += ",\"arguments\":\"\"}}";
        if (!s.chunks) {
          s.tool_calls.push_back({t.name, ""});
          s.tool_ids.push_back(t.id);
        }
      } else {
        tool_scratch += ",\"function\":{\"arguments\":";
        AppendJsonString(tool_scratch, t.arguments);
        tool_scratch += "}}";
        if (!s.chunks && !s.tool_calls.empty()) {
          s.tool_calls.back().arguments += t.arguments;
        }
      }
    } else {
      content_scratch += TokenText(s.plan.text_seed, i, s.request.loop);
    }
  }
}

// The step's truth (first/last token time, lateness) and the /metrics counters.
void Loop::CountStep(Stream& s, int tokens, int accepted, std::int64_t write_ns) {
  const std::int64_t lag = std::max<std::int64_t>(0, write_ns - s.deadline);
  if (s.truth.steps == 1) {
    s.truth.first_token_ns = write_ns;
    s.truth.first_emit_lag_ns = lag;
  }
  s.truth.last_token_ns = write_ns;
  s.truth.max_emit_lag_ns = std::max(s.truth.max_emit_lag_ns, lag);
  const int prompt = s.request.prompt_tokens;
  const int spec_k = options.spec_tokens;
  const bool first = s.truth.steps == 1;
  metrics.Update([&](Counters& k) {
    if (first) {
      k.prompt_tokens += static_cast<std::uint64_t>(prompt);
    }
    k.generation_tokens += static_cast<std::uint64_t>(tokens);
    ++k.emits;
    k.emit_lag_sum_ns += lag;
    k.emit_lag_max_ns = std::max(k.emit_lag_max_ns, lag);
    if (accepted >= 0) {
      ++k.drafts;
      k.draft_tokens += static_cast<std::uint64_t>(spec_k);
      k.accepted_tokens += static_cast<std::uint64_t>(accepted);
      for (int i = 0; i < accepted; ++i) {
        ++k.accepted_per_pos[static_cast<std::size_t>(i)];
      }
    }
  });
}

// A streamed step: its SSE events (role first, a fault's extra event, the delta, usage,
// [DONE]), gzipped and chunked as the stream is. False when the stream must not go on.
bool Loop::SendStreamedStep(Stream& s, Conn& c, StepShape& step) {
  events.clear();
  if (s.truth.steps == 1) {
    s.chunks->AppendRole(events);
  }
  if (!step.fault_text.empty()) {  // counts no tokens: usage (if continuous) as before this step
    s.chunks->AppendDelta(events, {}, step.fault_text, {}, step.begin,
                          std::min(step.begin, step.reasoning_end), {});
    std::string().swap(step.fault_text);
  }
  const bool last = step.last;
  const bool malformed_cut = step.cut && s.plan.fault == Fault::kMalformed;
  const bool usage_chunk = last && s.request.include_usage;
  const std::string sim_json = last && !usage_chunk ? TruthJson(s.truth) : std::string();
  const long long usage_tokens =
      last && s.plan.fault == Fault::kHugeUsage ? kHugeUsageTokens : s.truth.completion_tokens;
  std::string_view content = content_scratch;
  if (s.request.scripted) {
    escaped_scratch.clear();
    AppendJsonString(escaped_scratch, content_scratch);
    content = std::string_view(escaped_scratch).substr(1, escaped_scratch.size() - 2);
  }
  s.chunks->AppendDelta(events, reasoning_scratch, content,
                        last ? s.plan.finish_reason : std::string_view(), usage_tokens,
                        s.truth.reasoning_tokens, sim_json, tool_scratch);
  if (usage_chunk) {
    s.chunks->AppendUsageChunk(events, usage_tokens, s.truth.reasoning_tokens, TruthJson(s.truth));
  }
  if (last) {
    ChunkBuilder::AppendDone(events);
  }
  if (malformed_cut) {
    ChunkBuilder::AppendMalformed(events);
  }
  if (s.gzip) {
    gzip_scratch.clear();
    s.gzip->Write(events, last || malformed_cut, gzip_scratch);
    events.swap(gzip_scratch);
  }
  // done_open: [DONE] is sent, but the body never ends (no last chunk, no close).
  const bool hold_open = last && s.plan.fault == Fault::kDoneOpen;
  frame.clear();
  if (s.chunked) {
    AppendChunk(frame, events);
    if ((last && !hold_open) || malformed_cut) {
      frame += kLastChunk;
    }
  } else {
    frame.swap(events);
  }
  if (!Send(c, frame)) {
    return false;  // the client went away; the stream was dropped
  }
  if (hold_open) {
    HoldOpen(s);
    return false;
  }
  return true;
}

// A non-streamed request: the text accumulates; the whole body goes out at the end (or cut
// short by a malformed fault). False when the client went away.
bool Loop::SendWholeStep(Stream& s, Conn& c, StepShape& step) {
  s.reasoning_text += reasoning_scratch;
  // The JSON serialiser would repair invalid UTF-8: badutf8 goes in as a placeholder that is
  // swapped for the raw bytes afterwards.
  constexpr std::string_view kBadUtf8Placeholder = "@@sim-badutf8@@";
  s.content_text += step.fault_now && s.plan.fault == Fault::kBadUtf8
                        ? std::string(kBadUtf8Placeholder)
                        : step.fault_text;
  s.content_text += content_scratch;
  if (!step.last && !(step.cut && s.plan.fault == Fault::kMalformed)) {
    return true;
  }
  std::string body =
      step.cut ? std::string("{\"choices\": [")
               : CompletionBody(s.chat_id, s.created, options, s.reasoning_text, s.content_text,
                                s.plan.finish_reason, s.truth, s.tool_calls, s.tool_ids);
  if (const std::size_t at = body.find(kBadUtf8Placeholder); at != std::string::npos) {
    body.replace(at, kBadUtf8Placeholder.size(), kBadUtf8Text);
  }
  if (s.plan.fault == Fault::kHugeUsage) {
    ReplaceCompletionTokens(body, kHugeUsageTokens);
  }
  return Send(c, BodyResponse(c, 200, "application/json", body));
}

// The fault of this step, once: a reset or a malformed stream ends it (false); a stall delays
// the next step.
bool Loop::ApplyFault(Stream& s, bool last) {
  s.fault_done = true;
  switch (s.plan.fault) {
    case Fault::kReset:
      CloseConn(s.conn_id, true, false);  // RST; drops the stream
      metrics.Update([](Counters& k) { ++k.success_abort; });
      return false;
    case Fault::kMalformed:
      EndStream(s, "abort");
      return false;
    case Fault::kStall:
      if (!last) {
        s.deadline += static_cast<std::int64_t>(options.stall_ms * 1e6);
      }
      return true;
    default:
      return true;
  }
}

void Loop::EndStream(Stream& s, std::string_view finish_reason) {
  metrics.Update([finish_reason](Counters& k) {
    if (finish_reason == "stop") {
      ++k.success_stop;
    } else if (finish_reason == "length") {
      ++k.success_length;
    } else {
      ++k.success_abort;
    }
  });
  const std::uint64_t conn_id = s.conn_id;
  const std::uint64_t stream_id = s.id;
  s.running = false;
  streams.erase(stream_id);  // s is gone from here on
  LeaveBatch();
  if (Conn* c = FindConn(conn_id)) {
    FinishResponse(*c);
  }
}

void Loop::HoldOpen(Stream& s) {
  if (Conn* c = FindConn(s.conn_id)) {
    c->held_open = true;
  }
  EndStream(s, s.plan.finish_reason);
}

void Loop::DropStream(std::uint64_t stream_id, bool client_gone) {
  const auto it = streams.find(stream_id);
  if (it == streams.end()) {
    return;
  }
  const bool was_running = it->second->running;
  streams.erase(it);
  metrics.Update([client_gone](Counters& k) {
    if (client_gone) {
      ++k.disconnects;
      ++k.success_abort;
    }
  });
  // A waiting stream that a Leave had already given a slot (posted, not yet started) gives it
  // back; one still waiting is forgotten.
  if (was_running || !shared.batch.Withdraw(this, stream_id)) {
    LeaveBatch();
  } else {
    PublishGauges();
  }
}

}  // namespace sb::sim
