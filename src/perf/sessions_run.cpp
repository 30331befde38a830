// Session::Sessions (sessions.h): session slots, each a thread with its own client, run the
// conversations; every finished request comes back to the calling thread through a mailbox, where
// its record is written and the summaries are gathered. The whole profile is one unit of the
// run's journal and each session that ended one part of it (Journal::CommitPart); request ids
// are fixed by (session, request within the session), so a resumed run replays the finished
// sessions exactly and sends the others from their first turn.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "client/journal.h"
#include "perf/metrics.h"
#include "perf/profiles.h"
#include "perf/sessions.h"
#include "perf/sessions_summary.h"

namespace sb::perf {

using nlohmann::json;

// A finished request of a session, or the session's end, on its way to the calling thread.
struct Finished {
  std::size_t session = 0;
  int turn = 0, tool_round = 0, user_tokens = -1;
  int images = 0;             // images in the request's messages (the whole history's)
  long long image_bytes = 0;  // their bytes (decoded from the data: URLs)
  double think_ms = 0;        // waited before this request
  client::ChatResponse r;
  std::optional<SessionFact> end;
};

namespace {

// The first session starts this long after every script is ready.
constexpr std::int64_t kLeadNs = 20'000'000;

std::int64_t NowNs() {
  return ToNanos(std::chrono::steady_clock::now());
}

SteadyTime FromNanos(std::int64_t ns) {
  return SteadyTime(std::chrono::duration_cast<SteadyTime::duration>(Nanos(ns)));
}

double Ms(std::int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

struct Mailbox {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Finished> items;  // guarded by mu
  std::size_t running = 0;     // guarded by mu

  void Post(Finished f) {
    {
      std::lock_guard<std::mutex> lock(mu);
      items.push_back(std::move(f));
    }
    cv.notify_one();
  }
};

// What every slot shares.
struct SlotContext {
  const std::vector<SessionScript>* scripts = nullptr;
  const SessionsOptions* so = nullptr;
  client::ChatParams tmpl;  // model, sampling, streaming; messages and lengths per request
  client::ServerKind kind = client::ServerKind::kUnknown;
  int default_tokens = 256;
  std::chrono::milliseconds timeout{0};
  std::uint64_t first_id = 0;
  std::uint64_t stride = 1;  // request ids per session
  std::string tool_result;   // a generated tool result
  const ImageLoad* images = nullptr;
  Clock* clock = nullptr;
  std::stop_token stop;
  std::atomic<bool>* halt = nullptr;
  Mailbox* box = nullptr;
};

// Runs session `idx` to its end on `cl`.
void RunSession(const SlotContext& ctx, std::size_t idx, client::Client& cl, std::int64_t lag_ns) {
  const SessionScript& sc = (*ctx.scripts)[idx];
  Conversation conv(sc, ctx.so->keep_reasoning, ctx.so->max_tool_rounds, ctx.tool_result);
  SessionFact fact;
  fact.session = idx;
  fact.label = sc.label;
  fact.turns_planned = static_cast<int>(sc.turns.size());
  fact.start_lag_ms = Ms(lag_ns);
  fact.status = "stopped";
  std::int64_t first_send = 0, last_done = 0;
  std::uint64_t k = 0;
  std::vector<std::uint64_t> ids;  // the session's requests, one part of the journal's unit
  double think = 0;
  int images = 0;  // in the history so far
  long long image_bytes = 0;
  auto begin_turn = [&] {
    const auto turn = static_cast<std::size_t>(conv.turn());
    const std::string& text = sc.turns[turn];
    // The session file's images for this turn, then --images-per-request's.
    std::vector<std::string> uris =
        turn < sc.images.size() ? sc.images[turn] : std::vector<std::string>{};
    if (ctx.images->per_request > 0) {
      uris.insert(uris.end(), ctx.images->data_uris.begin(), ctx.images->data_uris.end());
    }
    images += static_cast<int>(uris.size());
    for (const std::string& uri : uris) {
      image_bytes += DataUrlBytes(uri);
    }
    conv.BeginTurn(uris.empty() ? "" : ImageContentJson(uris, text));
  };
  begin_turn();
  while (!ctx.stop.stop_requested() && !ctx.halt->load() && k < ctx.stride) {
    const auto turn = static_cast<std::size_t>(conv.turn());
    client::ChatParams p = ctx.tmpl;
    p.messages_json = conv.MessagesJson();
    p.max_tokens = sc.output_tokens.empty() ? ctx.default_tokens : sc.output_tokens[turn];
    p.force_length = sc.force_length && sc.tools_json.empty();
    p.tools_json = sc.tools_json;
    client::ChatCall call;
    call.id = ctx.first_id + idx * ctx.stride + k++;
    ids.push_back(call.id);
    call.body = client::BuildChatBody(p, ctx.kind);
    call.total_timeout = ctx.timeout;
    BoundStream(call, p.max_tokens);
    call.keep_text_bytes = 0;  // the answer goes back in the history: all of it is kept
    client::RunHooks hooks;
    auto rs = cl.RunChats(std::span<const client::ChatCall>(&call, 1), hooks, ctx.stop);
    client::ChatResponse& r = rs.front();
    const int round = conv.tool_round();
    const Conversation::Step step = conv.Answer(r);
    if (r.send_ns != 0) {
      first_send = first_send == 0 ? r.send_ns : first_send;
      last_done = std::max(last_done, r.events.empty() ? r.done_ns : r.events.back().t_ns);
      ++fact.requests;
      fact.prompt_tokens += std::max(0, r.usage.prompt_tokens);
      fact.completion_tokens += std::max(0, r.usage.completion_tokens);
    }
    Finished f;
    f.session = idx;
    f.turn = static_cast<int>(turn) + 1;
    f.tool_round = round;
    f.user_tokens = round == 0 ? sc.user_tokens[turn] : -1;
    f.images = images;
    f.image_bytes = image_bytes;
    f.think_ms = round == 0 ? think : 0;
    f.r = std::move(r);
    ctx.box->Post(std::move(f));
    if (step == Conversation::Step::kFailed) {
      fact.status = "failed";
      break;
    }
    if (step == Conversation::Step::kFinished) {
      fact.status = "finished";
      break;
    }
    think = 0;
    if (step == Conversation::Step::kTurnDone) {
      think = sc.think_ms.empty() ? 0 : sc.think_ms[turn];
      const auto until = ctx.clock->Now() + std::chrono::microseconds(std::llround(think * 1e3));
      if (think > 0 && !ctx.clock->SleepUntil(until, ctx.stop)) {
        break;
      }
      begin_turn();
    }
  }
  fact.turns = conv.turns_done();
  fact.tool_rounds = conv.tool_rounds();
  fact.capped_turns = conv.capped_turns();
  fact.total_ms = last_done > first_send ? Ms(last_done - first_send) : 0;
  if (fact.status != "stopped" && !ctx.stop.stop_requested()) {
    if (client::Journal* j = cl.journal(); j != nullptr) {
      j->CommitPart(sc.label, ids);  // a resumed run replays this session instead of sending it
    }
  }
  Finished end;
  end.session = idx;
  end.end = std::move(fact);
  ctx.box->Post(std::move(end));
}

// One session slot: takes the next session when the last one ended (and, open loop, its start
// time came), until none is left or the load window closed.
void RunSlot(const SlotContext& ctx, std::unique_ptr<client::Client> cl,
             const std::vector<std::int64_t>& offsets, std::int64_t start_ns, std::int64_t until_ns,
             std::atomic<std::size_t>& next) {
  SteadyClock steady;
  const std::size_t n = ctx.scripts->size();
  while (cl != nullptr && !ctx.stop.stop_requested() && !ctx.halt->load()) {
    const std::size_t idx = next.fetch_add(1);
    if (idx >= n) {
      break;
    }
    const std::int64_t due = start_ns + offsets[idx];
    if (!steady.SleepUntil(FromNanos(due), ctx.stop)) {
      break;
    }
    const std::int64_t now = NowNs();
    if (until_ns > 0 && now >= until_ns) {
      break;  // the load window closed: no session starts any more
    }
    RunSession(ctx, idx, *cl, ctx.so->rate > 0 ? now - due : 0);
  }
  std::lock_guard<std::mutex> lock(ctx.box->mu);
  --ctx.box->running;
  ctx.box->cv.notify_one();
}

}  // namespace

RequestRecord Session::SessionsRecord(const client::ChatResponse& r, const std::string& label,
                                      int turn, int tool_round, int user_tokens, double think_ms,
                                      std::size_t session, TurnFact& fact) const {
  const RequestMetrics m = ComputeMetrics(r);
  fact.session = session;
  fact.turn = turn;
  fact.tool_round = tool_round;
  fact.ok = r.outcome == client::Outcome::kOk;
  fact.prompt_tokens = r.usage.prompt_tokens;
  fact.cached_tokens = CachedPromptTokens(r);
  fact.completion_tokens = fact.ok ? m.completion_tokens : -1;
  if (fact.ok && !r.events.empty()) {
    fact.ttft_ms = m.ttft_ms;
    fact.e2e_ms = m.e2e_ms;
    fact.tpot_ms = m.tpot_ms;
    fact.decode_tok_s = m.decode_tok_s;
    for (std::size_t k = 1; k < r.events.size(); ++k) {
      const std::int64_t per = r.events[k].tokens > 0 ? r.events[k].tokens : 1;
      fact.itl_ms.push_back(Ms(r.events[k].t_ns - r.events[k - 1].t_ns) / static_cast<double>(per));
    }
  }
  RequestRecord rec =
      Record(r, "sessions",
             tool_round == 0 ? fmt::format("{} turn {}", label, turn)
                             : fmt::format("{} turn {} tool round {}", label, turn, tool_round),
             false);
  RequestRecord::Turn& t = rec.turn.emplace();
  t.session = session;
  t.turn = turn;
  t.tool_round = tool_round;
  t.cached_tokens = fact.cached_tokens;
  t.user_tokens = user_tokens;
  t.think_ms = think_ms;
  for (const client::ToolCall& c : r.tool_calls) {
    t.tool_calls.push_back(c.name);
  }
  const json itl = StatsJson(fact.itl_ms);  // the percentiles every other row shows
  if (itl.contains("p50") && itl["p50"].is_number()) {
    t.itl_p50_ms = itl["p50"].get<double>();
  }
  if (itl.contains("p99") && itl["p99"].is_number()) {
    t.itl_p99_ms = itl["p99"].get<double>();
  }
  return rec;
}

bool Session::TakeSessionsTurn(const Finished& f, const std::vector<SessionScript>& scripts,
                               SessionsTally& t, std::vector<RequestRecord>& records) {
  const client::ChatResponse& r = f.r;
  if (r.send_ns == 0 && r.outcome == client::Outcome::kCancelled) {
    return false;  // never sent
  }
  ObserveResponse(r);
  TurnFact fact;
  RequestRecord rec = SessionsRecord(r, scripts[f.session].label, f.turn, f.tool_round,
                                     f.user_tokens, f.think_ms, f.session, fact);
  if (f.images > 0) {  // what this request carried: every image of its history
    rec.images = f.images;
    rec.image_bytes = static_cast<std::size_t>(f.image_bytes);
  }
  ++t.sent;
  t.replayed = t.replayed || r.replayed;
  if (fact.ok) {
    ++t.ok;
    t.tokens += std::max(0, fact.completion_tokens);
    t.ok_first = std::min(t.ok_first, r.send_ns);
    t.ok_last = std::max(t.ok_last, r.events.empty() ? r.done_ns : r.events.back().t_ns);
  } else {
    ++t.failed;
  }
  if (on_sample_) {
    on_sample_(Sample{rec, nullptr});  // its JSON is built by the sink (the run's writer)
  }
  t.turns.push_back(std::move(fact));
  records.push_back(std::move(rec));
  return Halted();
}

json Session::Sessions(const ProfileOptions& options) {
  ProfileOptions po = options;
  SessionsOptions& so = po.sessions;
  if (auto ok = PrepareSessions(so); !ok) {  // reads the file when the plan did not
    Warn("sessions: " + ok.error().message);
    return {{"error", ok.error().message}};
  }
  const std::vector<SessionScript> scripts = SessionScripts(po);
  const std::size_t n = scripts.size();
  std::size_t most_turns = 1;
  for (const SessionScript& sc : scripts) {
    most_turns = std::max(most_turns, sc.turns.size());
  }
  SteadyClock steady;
  SlotContext ctx;
  ctx.scripts = &scripts;
  ctx.so = &so;
  ctx.tmpl = Params(options, "", 1, false);
  ctx.tmpl.messages.clear();
  ctx.kind = target_.kind;
  ctx.default_tokens = options.tokens;
  ctx.timeout = options.request_timeout;
  ctx.first_id = next_id_;
  ctx.stride = most_turns * static_cast<std::uint64_t>(so.max_tool_rounds + 1);
  next_id_ += n * ctx.stride;
  ctx.tool_result = FillerText(so.tool_result_tokens, 11);
  ctx.images = &options.images;
  ctx.clock = so.clock != nullptr ? so.clock : &steady;
  ctx.stop = stop_;
  std::atomic<bool> halt{false};
  Mailbox box;
  ctx.halt = &halt;
  ctx.box = &box;

  std::vector<std::int64_t> offsets(n, 0);
  if (so.rate > 0) {
    ArrivalProcess ap{options.rate.arrival, so.rate, options.rate.burstiness, options.rate.seed};
    offsets = ArrivalOffsets(ap, n);
  }
  std::function<std::unique_ptr<client::Client>(const std::string&)> make = options.rate.new_client;
  if (!make) {
    Warn("sessions: no client factory was given; the session slots use plain clients");
    make = [](const std::string& root) {
      client::ClientOptions co;
      co.endpoint = root;
      return std::make_unique<client::Client>(co);
    };
  }
  const std::string root = client_.root() + client_.query();
  client::UnitScope unit(client_, "sessions");
  last_self_check_.reset();
  const std::int64_t start_ns = NowNs() + kLeadNs;
  const std::int64_t until_ns =
      so.duration_s > 0 ? start_ns + std::llround(so.duration_s * 1e9) : 0;
  std::atomic<std::size_t> next{0};
  const std::size_t slots = std::min<std::size_t>(static_cast<std::size_t>(so.concurrency), n);
  box.running = slots;
  SessionsTally t;
  std::vector<RequestRecord> records;
  {
    std::vector<std::jthread> pool;
    for (std::size_t w = 0; w < slots; ++w) {
      pool.emplace_back([&] { RunSlot(ctx, make(root), offsets, start_ns, until_ns, next); });
    }
    for (;;) {
      std::deque<Finished> batch;
      {
        std::unique_lock<std::mutex> lock(box.mu);
        box.cv.wait(lock, [&] { return !box.items.empty() || box.running == 0; });
        if (box.items.empty() && box.running == 0) {
          break;
        }
        batch.swap(box.items);
      }
      for (Finished& f : batch) {
        if (f.end) {
          t.ended.push_back(std::move(*f.end));
          continue;
        }
        if (TakeSessionsTurn(f, scripts, t, records)) {
          halt = true;
        }
      }
    }
  }  // joins the slots
  AddToTotals(t.sent, t.failed, t.ok, t.tokens, t.ok_first, t.ok_last, t.replayed);
  json written = json::array();  // after the run, off the measuring path
  for (const RequestRecord& rec : records) {
    written.push_back(rec.ToJson());
  }
  json out = SessionsJson(so, n, scripts.empty() ? -1 : scripts.front().system_tokens, t,
                          std::move(written), options.gpus);
  AttachResources(out);
  if (on_progress_) {
    on_progress_(fmt::format("sessions: {} of {} finished, {} requests, {} failed",
                             out["finished"].get<long long>(), n, t.sent, t.failed));
  }
  return out;
}

}  // namespace sb::perf
