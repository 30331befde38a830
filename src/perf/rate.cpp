// The rate profile: open-loop load on an absolute arrival schedule (perf/schedule.h), latency
// from the scheduled send (no coordinated omission) with the from-send figure beside it,
// percentiles from log-linear histograms (perf/histogram.h), goodput under SLOs, a sweep over
// rates and a bisection search for the highest rate that meets the SLOs. docs/load.md is the
// manual; docs/results-schema.md (perf.rate) the output.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <span>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <time.h>

#include "core/clock.h"
#include "core/number_format.h"
#include "perf/frontier.h"
#include "perf/histogram.h"
#include "perf/metrics.h"
#include "perf/profiles.h"
#include "perf/request_classes.h"
#include "perf/schedule.h"
#include "perf/self_check.h"

namespace sb::perf {

using nlohmann::json;

namespace {

// A short prompt: rate runs measure serving under load, not prefill.
constexpr const char* kRatePrompt = "Tell me a story about a lighthouse keeper and the sea.";
// The first send is scheduled this long after the schedule is ready, so RunChats is waiting for
// it rather than already late.
constexpr std::int64_t kLeadNs = 20'000'000;

std::int64_t NowNs() {
  return ToNanos(std::chrono::steady_clock::now());
}

double Ms(std::int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

bool WasSent(const client::ChatResponse& r) {
  return !(r.outcome == client::Outcome::kCancelled && r.send_ns == 0);
}

// What one request of an open-loop run contributes.
struct RateFacts {
  std::optional<std::int64_t> ttft_sched_ns, ttft_send_ns, e2e_sched_ns, e2e_send_ns, tpot_ns;
  std::int64_t lag_ns = 0;    // send − max(scheduled, picked up by a free slot)
  std::int64_t queue_ns = 0;  // picked up − scheduled, when it waited for a slot
  bool good = false;
};

// picked_ns: when a max-concurrency slot took the request (0 without a cap).
RateFacts Facts(const client::ChatResponse& r, const RequestMetrics& m, std::int64_t picked_ns,
                const Slo& slo) {
  RateFacts f;
  const std::int64_t ready = std::max(r.scheduled_ns, picked_ns);
  f.lag_ns = r.send_ns - ready;
  f.queue_ns = std::max<std::int64_t>(0, picked_ns - r.scheduled_ns);
  if (!r.events.empty()) {
    const std::int64_t first = r.events.front().t_ns;
    const std::int64_t last = r.events.back().t_ns;
    f.ttft_sched_ns = first - r.scheduled_ns;
    f.ttft_send_ns = first - r.send_ns;
    f.e2e_sched_ns = last - r.scheduled_ns;
    f.e2e_send_ns = last - r.send_ns;
    if (m.completion_tokens > 1) {
      f.tpot_ns = std::llround(static_cast<double>(last - first) / (m.completion_tokens - 1));
    }
  }
  if (r.outcome != client::Outcome::kOk) {
    return f;
  }
  // DistServe/vLLM: a request of one token has no TPOT and cannot miss a TPOT objective.
  const double tpot_ms = f.tpot_ns ? Ms(*f.tpot_ns) : 0.0;
  f.good = (!slo.ttft_ms || (f.ttft_sched_ns && Ms(*f.ttft_sched_ns) <= *slo.ttft_ms)) &&
           (!slo.e2e_ms || (f.e2e_sched_ns && Ms(*f.e2e_sched_ns) <= *slo.e2e_ms)) &&
           (!slo.tpot_ms || tpot_ms <= *slo.tpot_ms);
  return f;
}

}  // namespace

// Everything measured at one rate.
struct PointStats {
  Histogram ttft_sched, ttft_send, e2e_sched, e2e_send, itl, tpot, lag, queue, event_delay;
  Histogram sim_behind;  // servebench's simulator: how far it was itself behind (self_check.h)
  long long sent = 0, ok = 0, failed = 0, late = 0, good = 0, waited = 0;
  long long tokens = 0;       // completion tokens of successful requests
  long long unreachable = 0;  // failed before any byte came back (connection refused ...)
  bool estimated = false;
  std::int64_t first_send = std::numeric_limits<std::int64_t>::max();
  std::int64_t last_send = 0, last_done = 0;
  // Successful requests only (a failed request contributes no tokens and no time).
  std::int64_t ok_first_send = std::numeric_limits<std::int64_t>::max(), ok_last_token = 0;
  std::int64_t sample_ns = 0;  // time spent building records and handing them to the sink

  void Add(const client::ChatResponse& r, const RequestMetrics& m, const RateFacts& f,
           std::int64_t late_ns) {
    ++sent;
    first_send = std::min(first_send, r.send_ns);
    last_send = std::max(last_send, r.send_ns);
    last_done = std::max(last_done, r.done_ns);
    lag.Record(f.lag_ns);
    if (f.lag_ns > late_ns) {
      ++late;
    }
    if (f.queue_ns > 0) {
      ++waited;
    }
    queue.Record(f.queue_ns);
    if (r.outcome == client::Outcome::kOk) {
      if (const auto behind = SimBehindNs(r.sim_json)) {
        sim_behind.Record(*behind);
      }
    }
    if (r.outcome != client::Outcome::kOk) {
      ++failed;
      if (r.outcome == client::Outcome::kTransport && r.first_byte_ns == 0) {
        ++unreachable;
      }
      return;
    }
    ++ok;
    tokens += m.completion_tokens;
    estimated = estimated || m.tokens_estimated;
    ok_first_send = std::min(ok_first_send, r.send_ns);
    if (!r.events.empty()) {
      ok_last_token = std::max(ok_last_token, r.events.back().t_ns);
    }
    if (f.good) {
      ++good;
    }
    if (f.ttft_sched_ns) {
      ttft_sched.Record(*f.ttft_sched_ns);
      ttft_send.Record(*f.ttft_send_ns);
      e2e_sched.Record(*f.e2e_sched_ns);
      e2e_send.Record(*f.e2e_send_ns);
    }
    if (f.tpot_ns) {
      tpot.Record(*f.tpot_ns);
    }
    // Per-token ITL: each chunk gap spread over the tokens the chunk carried (exact when the
    // server reports per-chunk counts, else one token per chunk), one value per token.
    for (std::size_t k = 1; k < r.events.size(); ++k) {
      const std::int64_t gap = r.events[k].t_ns - r.events[k - 1].t_ns;
      const std::int64_t n = r.events[k].tokens > 0 ? r.events[k].tokens : 1;
      itl.Record(gap / n, n);
    }
  }
};

namespace {

SteadyTime FromNanos(std::int64_t ns) {
  return SteadyTime(std::chrono::duration_cast<SteadyTime::duration>(Nanos(ns)));
}

std::string RateLabel(double rate) {
  return fmt::format("{:g} req/s", rate);
}

json SloJson(const Slo& slo) {
  if (slo.empty()) {
    return nullptr;
  }
  json j = json::object();
  if (slo.ttft_ms) {
    j["ttft_ms"] = *slo.ttft_ms;
  }
  if (slo.tpot_ms) {
    j["tpot_ms"] = *slo.tpot_ms;
  }
  if (slo.e2e_ms) {
    j["e2e_ms"] = *slo.e2e_ms;
  }
  return j;
}

// Whether a point met the SLO target (good fraction >= slo_fraction); false without a verdict.
bool MeetsSlo(const json& point) {
  const json& g = point["goodput"];
  return g.is_object() && g["meets_slo"].is_boolean() && g["meets_slo"].get<bool>();
}

}  // namespace

namespace {

// What sending one point cost the client's threads.
struct SendCost {
  std::int64_t cpu_ns = 0, busiest_cpu_ns = 0;
  int threads = 1;
};

using FinishFn = std::function<void(const client::ChatResponse&, std::int64_t picked_ns)>;

// --max-concurrency: ro.max_concurrency slots, one thread and one Client each. A slot takes the
// next request in schedule order when it is free and sends it at its scheduled time, or at once
// if that has passed. `finish` is called on this thread as requests finish; each slot's event
// delays go to `event_delay`. `no_client` says a slot could not make its client.
std::vector<client::ChatResponse> SendCapped(const std::vector<client::ChatCall>& calls,
                                             const std::vector<std::int64_t>& scheduled_ns,
                                             const RateOptions& ro, const std::string& root,
                                             std::stop_token stop, const FinishFn& finish,
                                             Histogram& event_delay, SendCost& cost,
                                             bool& no_client_out) {
  const std::size_t n = calls.size();
  const std::size_t workers = std::min(static_cast<std::size_t>(ro.max_concurrency), n);
  cost.threads = static_cast<int>(workers) + 1;
  std::vector<client::ChatResponse> results(n);
  for (std::size_t i = 0; i < n; ++i) {
    results[i].id = calls[i].id;
    results[i].scheduled_ns = scheduled_ns[i];
    results[i].outcome = client::Outcome::kCancelled;
    results[i].reason = "cancelled before send";
  }
  std::vector<std::int64_t> picked(n, 0);
  std::vector<Histogram> delays(workers);
  std::vector<std::int64_t> worker_cpu(workers, 0);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> no_client{false};
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::size_t> finished;  // guarded by mu
  std::size_t running = workers;     // guarded by mu
  const std::int64_t cpu0 = ThreadCpuNs();
  {
    std::vector<std::jthread> pool;
    pool.reserve(workers);
    for (std::size_t w = 0; w < workers; ++w) {
      pool.emplace_back([&, w] {
        const std::int64_t c0 = ThreadCpuNs();
        std::unique_ptr<client::Client> cl = ro.new_client(root);
        if (cl == nullptr) {
          no_client = true;  // this slot sends nothing; its requests go to the others
        }
        client::RunHooks hooks;
        hooks.on_event = [&](const client::ChatResponse& r) {
          if (!r.replayed) {
            delays[w].Record(NowNs() - r.events.back().t_ns);
          }
          return true;
        };
        while (cl != nullptr && !stop.stop_requested()) {
          const std::size_t i = next.fetch_add(1);
          if (i >= n) {
            break;
          }
          picked[i] = NowNs();
          auto rs = cl->RunChats(std::span<const client::ChatCall>(&calls[i], 1), hooks, stop);
          results[i] = std::move(rs.front());
          {
            std::lock_guard<std::mutex> lock(mu);
            finished.push_back(i);
          }
          cv.notify_one();
        }
        worker_cpu[w] = ThreadCpuNs() - c0;
        {
          std::lock_guard<std::mutex> lock(mu);
          --running;
        }
        cv.notify_one();
      });
    }
    for (;;) {
      std::deque<std::size_t> batch;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return !finished.empty() || running == 0; });
        if (finished.empty() && running == 0) {
          break;
        }
        batch.swap(finished);
      }
      for (std::size_t i : batch) {
        finish(results[i], picked[i]);
      }
    }
  }  // joins the pool
  no_client_out = no_client;
  const std::int64_t main_cpu = ThreadCpuNs() - cpu0;
  cost.cpu_ns = main_cpu;
  cost.busiest_cpu_ns = main_cpu;
  for (std::size_t w = 0; w < workers; ++w) {
    event_delay.Merge(delays[w]);
    cost.cpu_ns += worker_cpu[w];
    cost.busiest_cpu_ns = std::max(cost.busiest_cpu_ns, worker_cpu[w]);
  }
  return results;
}

// The point's self-check: is the client keeping to the schedule? `reasons` is empty when it is.
struct PointSelfCheck {
  json check;
  std::vector<std::string> reasons;
  std::vector<std::string> sim_reasons;  // the simulator itself was behind (not client-bound)
};

PointSelfCheck SelfCheckOf(const PointStats& st, const SendCost& cost, double window_s,
                           std::int64_t late_ns, double late_ms) {
  const double cpu_pct =
      window_s > 0 ? 100.0 * static_cast<double>(cost.cpu_ns) / 1e9 / window_s : 0;
  const double busiest_pct =
      window_s > 0 ? 100.0 * static_cast<double>(cost.busiest_cpu_ns) / 1e9 / window_s : 0;
  // The verdict rests on symptoms, not on CPU use: the client busy-waits up to 0.3 ms before
  // each scheduled send (for precision), so above ~1,000 req/s its thread is near 100% of a
  // core by design even when every send leaves on time.
  PointSelfCheck out;
  if (!st.lag.empty() && st.lag.ValueAtPercentile(99) > late_ns) {
    out.reasons.push_back(fmt::format("schedule lag p99 {:.3f} ms is above {:g} ms",
                                      st.lag.ValueAtPercentile(99) / 1e6, late_ms));
  }
  if (!st.event_delay.empty() && st.event_delay.ValueAtPercentile(99) > late_ns) {
    out.reasons.push_back(
        fmt::format("events waited {:.3f} ms (p99) between arriving and being "
                    "processed",
                    st.event_delay.ValueAtPercentile(99) / 1e6));
  }
  out.check = {{"schedule_lag_us", PercentilesJson(st.lag, 1e3)},
               {"event_delay_us", PercentilesJson(st.event_delay, 1e3)},
               {"sample_cost_us", st.sent > 0 ? json(static_cast<double>(st.sample_ns) / 1e3 /
                                                     static_cast<double>(st.sent))
                                              : json(nullptr)},
               {"client_cpu_s", static_cast<double>(cost.cpu_ns) / 1e9},
               {"client_cpu_pct", window_s > 0 ? json(cpu_pct) : json(nullptr)},
               {"busiest_thread_cpu_pct", window_s > 0 ? json(busiest_pct) : json(nullptr)},
               {"threads", cost.threads},
               {"client_bound", !out.reasons.empty()},
               {"reasons", out.reasons}};
  AddSimBehind(st.sim_behind,
               st.ttft_send.empty() ? 0.0 : static_cast<double>(st.ttft_send.ValueAtPercentile(50)),
               late_ms, out.check, out.sim_reasons);
  return out;
}

// The point's exact histograms (RateOptions::histograms: a shard's, for an exact merge).
json HistogramsJson(const PointStats& st, bool capped) {
  json hist = {{"unit", "ns"},
               {"ttft_from_scheduled", st.ttft_sched.ToJson()},
               {"ttft_from_send", st.ttft_send.ToJson()},
               {"e2e_from_scheduled", st.e2e_sched.ToJson()},
               {"e2e_from_send", st.e2e_send.ToJson()},
               {"itl", st.itl.ToJson()},
               {"tpot", st.tpot.ToJson()},
               {"schedule_lag", st.lag.ToJson()},
               {"event_delay", st.event_delay.ToJson()}};
  if (capped) {
    hist["client_queue"] = st.queue.ToJson();
  }
  return hist;
}

// A rate request record's own fields: from the schedule, the slot queue, the SLO verdict.
void AddRateFields(RequestRecord& rec, const RateFacts& f, double rate_rps, bool capped,
                   bool with_slo) {
  RequestRecord::Schedule& s = rec.schedule.emplace();
  s.rate_rps = rate_rps;
  s.lag_ms = Ms(f.lag_ns);
  if (f.ttft_sched_ns) {
    s.ttft_ms = Ms(*f.ttft_sched_ns);
  }
  if (f.e2e_sched_ns) {
    s.e2e_ms = Ms(*f.e2e_sched_ns);
  }
  if (capped) {
    s.client_queue_ms = Ms(f.queue_ns);
  }
  if (with_slo) {
    s.good = f.good;
  }
}

// A point's request records (those of the requests sent, in schedule order) and the per-class
// and cache rows of their facts (request_classes.h).
void AddRecords(json& point, const std::vector<std::optional<RequestRecord>>& rows) {
  json requests = json::array();
  std::vector<RequestFact> facts;
  for (const auto& row : rows) {
    if (row) {
      requests.push_back(row->ToJson());
      facts.push_back(row->Fact());
    }
  }
  point["requests"] = std::move(requests);
  AddClassRows(point, facts);
}

// Where one point stands, for the progress line.
std::string ProgressLine(const PointStats& st, const std::string& phase, double rate_rps,
                         std::size_t n, bool with_slo) {
  const auto p = [](const Histogram& h, double q) {
    return h.empty() ? std::string("n/a") : MillisecondsText(h.ValueAtPercentile(q) / 1e6);
  };
  std::string good;
  if (with_slo && st.sent > 0) {
    good = fmt::format(", good {:.1f}%",
                       100.0 * static_cast<double>(st.good) / static_cast<double>(st.sent));
  }
  return fmt::format(
      "{}{}: {}/{} ok, TTFT p50/p99 {}/{} ms, E2E p99 {} ms (from "
      "scheduled){}, {} late send(s)",
      phase == "search" ? "search " : "", FixedGrouped(rate_rps, 2) + " req/s", st.ok, n,
      p(st.ttft_sched, 50), p(st.ttft_sched, 99), p(st.e2e_sched, 99), good, st.late);
}

// The point's figures (docs/results-schema.md, perf.rate.rates[]), before its request records,
// classes, windows and resources are added. The window runs from the first scheduled send
// (`start_ns`) to the end of the last response.
json PointJson(const PointStats& st, const RateOptions& ro, const std::string& phase,
               double rate_rps, const std::vector<std::int64_t>& offsets, std::int64_t start_ns,
               long long unsent, bool capped) {
  const std::int64_t window_ns = st.sent > 0 ? st.last_done - start_ns : 0;
  const double window_s = static_cast<double>(window_ns) / 1e9;
  auto per_s = [&](double count) { return window_ns > 0 ? json(count / window_s) : json(nullptr); };
  json goodput = nullptr;
  if (!ro.slo.empty()) {
    const double fraction =
        st.sent > 0 ? static_cast<double>(st.good) / static_cast<double>(st.sent) : 0.0;
    goodput = {{"good", st.good},
               {"fraction", st.sent > 0 ? json(fraction) : json(nullptr)},
               {"goodput_rps", per_s(static_cast<double>(st.good))},
               {"meets_slo",
                st.sent > 0 ? json(fraction >= ro.slo_fraction && unsent == 0) : json(nullptr)}};
  }
  const json achieved = st.sent >= 2 && st.last_send > st.first_send
                            ? json(static_cast<double>(st.sent - 1) /
                                   (static_cast<double>(st.last_send - st.first_send) / 1e9))
                            : json(nullptr);
  return {{"phase", phase},
          {"rate_rps", rate_rps},
          {"scheduled", offsets.size()},
          {"offered_rate_rps", NumberOrNull(OfferedRate(offsets))},
          {"achieved_rate_rps", achieved},
          {"sent", st.sent},
          {"ok", st.ok},
          {"failed", st.failed},
          {"unsent", unsent},
          {"late_sends", st.late},
          {"window_s", window_ns > 0 ? json(window_s) : json(nullptr)},
          {"throughput_rps", per_s(static_cast<double>(st.ok))},
          {"output_tok_s", per_s(static_cast<double>(st.tokens))},
          {"from_scheduled",
           {{"ttft_ms", PercentilesJson(st.ttft_sched, 1e6)},
            {"e2e_ms", PercentilesJson(st.e2e_sched, 1e6)}}},
          {"from_send",
           {{"ttft_ms", PercentilesJson(st.ttft_send, 1e6)},
            {"e2e_ms", PercentilesJson(st.e2e_send, 1e6)}}},
          {"itl_ms", PercentilesJson(st.itl, 1e6)},
          {"tpot_ms", PercentilesJson(st.tpot, 1e6)},
          {"client_queue_ms", capped ? PercentilesJson(st.queue, 1e6) : json(nullptr)},
          {"queued", capped ? json(st.waited) : json(nullptr)},
          {"goodput", goodput}};
}

}  // namespace

std::vector<client::ChatCall> Session::RateCalls(const ProfileOptions& options, std::size_t n) {
  // Every body is built before the clock starts: the send path only hands bytes to the wire.
  dataset_next_ = 0;  // every rate point sends the same dataset requests
  std::vector<client::ChatCall> calls(n);
  std::vector<client::ChatParams> params(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Building a prompt may send requests of its own (the tokenizer's calibration against a
    // server with only a plain /tokenize, as llama.cpp): ids are given after, so the point's
    // calls have consecutive ids and r.id - first_id indexes them.
    params[i] = LoadParams(options, kRatePrompt, options.rate.tokens);
    calls[i].body = client::BuildChatBody(params[i], target_.kind);
    calls[i].stream = true;
    calls[i].total_timeout = options.request_timeout;
    BoundStream(calls[i], params[i].max_tokens);
  }
  for (std::size_t i = 0; i < n; ++i) {
    calls[i].id = next_id_++;
    NotePrefixGroup(calls[i].id, params[i]);
  }
  return calls;
}

std::int64_t Session::PointStart(const RateOptions& ro) {
  std::int64_t start_ns = NowNs() + kLeadNs;
  if (ro.start_at_ns > 0 && !first_point_started_) {
    if (ro.start_at_ns >= start_ns) {
      start_ns = ro.start_at_ns;
    } else {
      Warn(
          fmt::format("--start-at had passed by {:.1f} ms when the first rate point was ready; "
                      "this shard started late by that much",
                      Ms(start_ns - ro.start_at_ns)));
    }
  }
  first_point_started_ = true;
  return start_ns;
}

void Session::TallyPoint(const PointStats& st, const std::vector<client::ChatResponse>& results,
                         bool wrong_length, int tokens) {
  AddToTotals(st.sent, st.failed, st.ok, st.tokens, st.ok_first_send, st.ok_last_token,
              !results.empty() && results.front().replayed);
  // As Execute does: a server that answers nothing (refused, frozen) is gone; stop sending. A
  // point where some requests succeeded shows a live server, whatever the others did.
  if (st.ok == 0) {
    for (const auto& r : results) {
      ObserveResponse(r);
    }
  }
  if (st.estimated) {
    Warn(
        "Some completion token counts are estimated (the server sent no usage); "
        "tok/s figures from those requests count streamed chunks, not tokens.");
  }
  if (wrong_length) {
    Warn(
        fmt::format("rate asked for {} output tokens per request but some requests produced "
                    "another count; TPOT and E2E are not comparable across them.",
                    tokens));
  }
}

json Session::RatePoint(const ProfileOptions& options, double rate_rps, const std::string& phase) {
  // One rate point is one unit of the run's journal (replayed whole on --resume).
  client::UnitScope unit(client_, fmt::format("rate {} {}", phase, rate_rps));
  last_self_check_.reset();  // a point carries its own self_check, never an earlier batch's
  const RateOptions& ro = options.rate;
  const ArrivalProcess process{ro.arrival, rate_rps, ro.burstiness, ro.seed};
  const std::vector<std::int64_t> offsets =
      ro.duration_s > 0 ? ArrivalOffsetsWithin(
                              process, std::chrono::nanoseconds(std::llround(ro.duration_s * 1e9)))
                        : ArrivalOffsets(process, static_cast<std::size_t>(ro.requests));
  const std::size_t n = offsets.size();
  const std::string label_prefix =
      phase == "search" ? "search " + RateLabel(rate_rps) : RateLabel(rate_rps);
  std::vector<client::ChatCall> calls = RateCalls(options, n);
  const std::uint64_t first_id = n > 0 ? calls.front().id : next_id_;
  const ServerCounters counters_before = BeginWindow();  // before the schedule starts
  const std::int64_t start_ns = PointStart(ro);
  std::vector<std::int64_t> scheduled_ns(n);
  for (std::size_t i = 0; i < n; ++i) {
    scheduled_ns[i] = start_ns + offsets[i];
    calls[i].send_at = FromNanos(scheduled_ns[i]);
  }

  PointStats st;
  const std::int64_t late_ns = std::llround(ro.late_ms * 1e6);
  const bool capped = ro.max_concurrency > 0 && ro.new_client != nullptr;
  if (ro.max_concurrency > 0 && !capped) {
    Warn(
        "--max-concurrency was ignored: no way to open the extra connections it needs (a "
        "client factory) was given; the run was uncapped.");
  }
  std::vector<std::optional<RequestRecord>> rows(n);
  bool wrong_length = false;
  // Called once per finished request, on this thread.
  const FinishFn finish = [&](const client::ChatResponse& r, std::int64_t picked_ns) {
    if (!WasSent(r)) {
      return;
    }
    const std::int64_t t0 = NowNs();
    const RequestMetrics m = ComputeMetrics(r);
    const RateFacts f = Facts(r, m, picked_ns, ro.slo);
    st.Add(r, m, f, late_ns);
    wrong_length = wrong_length || (r.outcome == client::Outcome::kOk &&
                                    m.completion_tokens != ro.tokens && !options.output_lengths);
    const std::size_t i = r.id - first_id;
    if (r.id < first_id || i >= n) {
      return;  // not one of this point's calls (never: ids are consecutive above)
    }
    RequestRecord rec = Record(r, "rate", fmt::format("{} #{}", label_prefix, i + 1), false);
    AddRateFields(rec, f, rate_rps, capped, !ro.slo.empty());
    if (on_sample_) {
      on_sample_(Sample{rec, nullptr});  // its JSON is built by the sink (the run's writer)
    }
    rows[i] = std::move(rec);
    st.sample_ns += NowNs() - t0;
  };

  std::vector<client::ChatResponse> results;
  SendCost cost;
  if (!capped) {
    client::RunHooks hooks;
    hooks.on_done = [&](const client::ChatResponse& r) { finish(r, 0); };
    hooks.on_event = [&](const client::ChatResponse& r) {
      if (event_hook_) {
        event_hook_(r);
      }
      if (!r.replayed) {  // a replayed event was read by an earlier process: no delay here
        st.event_delay.Record(NowNs() - r.events.back().t_ns);
      }
      return true;
    };
    const std::int64_t cpu0 = ThreadCpuNs();
    results = client_.RunChats(calls, hooks, stop_);
    cost.cpu_ns = cost.busiest_cpu_ns = ThreadCpuNs() - cpu0;
    for (const std::int64_t io_cpu : client_.io_thread_cpu_ns()) {  // ClientOptions::io_threads
      cost.cpu_ns += io_cpu;
      cost.busiest_cpu_ns = std::max(cost.busiest_cpu_ns, io_cpu);
      ++cost.threads;
    }
  } else {
    bool no_client = false;
    results = SendCapped(calls, scheduled_ns, ro, client_.root() + client_.query(), stop_, finish,
                         st.event_delay, cost, no_client);
    if (no_client) {
      Warn("--max-concurrency: a client for a slot could not be made; fewer slots ran.");
    }
  }
  EndWindow(counters_before, n);

  long long unsent = 0;
  for (const auto& r : results) {
    unsent += WasSent(r) ? 0 : 1;
  }
  TallyPoint(st, results, wrong_length, ro.tokens);
  json point = PointJson(st, ro, phase, rate_rps, offsets, start_ns, unsent, capped);
  const PointSelfCheck check =
      SelfCheckOf(st, cost, point["window_s"].is_number() ? point["window_s"].get<double>() : 0,
                  late_ns, ro.late_ms);
  NoteClientBound(FixedGrouped(rate_rps, 2) + " req/s", check.reasons,
                  check.sim_reasons);  // said once (Run)
  point["self_check"] = check.check;
  AddRecords(point, rows);
  point["output_tokens"] = st.tokens;
  AttachCacheWindow(point);
  if (!last_window_.empty()) {
    point["spec_decode"] = SpecJson(last_window_);
  }
  if (ro.histograms) {
    point["histograms"] = HistogramsJson(st, capped);
  }
  AttachResources(point);
  if (on_progress_) {
    on_progress_(ProgressLine(st, phase, rate_rps, n, !ro.slo.empty()));
  }
  return point;
}

json Session::Rate(const ProfileOptions& options) {
  const RateOptions& ro = options.rate;
  WarmUp(options);
  if (!client::CanForceLength(target_.kind)) {
    Warn("This server cannot be told to ignore end-of-sequence; rate requests may stop early.");
  }
  json points = json::array();
  for (double rate : ro.rates) {
    if (Halted()) {
      break;
    }
    points.push_back(RatePoint(options, rate, "sweep"));
  }

  json search = nullptr;
  if (ro.search && !Halted()) {
    json probes = json::array();
    auto probe = [&](double rate) {
      probes.push_back(RatePoint(options, rate, "search"));
      return MeetsSlo(probes.back());
    };
    double lo = ro.search->first;
    double hi = ro.search->second;
    std::string result = "found";
    std::optional<double> best;
    bool bisected = false;
    const bool lo_ok = probe(lo);
    if (lo_ok) {
      best = lo;
    }
    if (Halted()) {
      result = "interrupted";
    } else if (!lo_ok) {
      result = "below_min";
    } else if (probe(hi)) {
      best = hi;
      result = Halted() ? "interrupted" : "above_max";
    } else if (Halted()) {
      result = "interrupted";
    } else {
      // Geometric bisection: each step halves the bracket's ratio (its width in log space), so
      // the relative resolution is (max/min)^(1/2^steps) whatever the scale.
      bisected = true;
      for (int s = 0; s < ro.search_steps && !Halted(); ++s) {
        const double mid = std::sqrt(lo * hi);
        if (probe(mid)) {
          lo = mid;
        } else {
          hi = mid;
        }
      }
      best = lo;
      if (Halted()) {
        result = "interrupted";
      }
    }
    search = {{"min_rps", ro.search->first},
              {"max_rps", ro.search->second},
              {"steps", ro.search_steps},
              {"result", result},
              {"best_rps", NumberOrNull(best)},
              {"bracket_rps", bisected ? json::array({lo, hi}) : json(nullptr)},
              {"points", probes}};
    if (on_progress_) {
      on_progress_(best ? fmt::format("search: highest rate meeting the SLOs {:.4g} req/s ({})",
                                      *best, result)
                        : fmt::format("search: no rate in [{:g}, {:g}] meets the SLOs ({})",
                                      ro.search->first, ro.search->second, result));
    }
  }

  return json{
      {"arrival", std::string(ArrivalName(ro.arrival))},
      {"burstiness", ro.burstiness},
      {"seed", ro.seed},
      {"requests", ro.duration_s > 0 ? json(nullptr) : json(ro.requests)},
      {"duration_s", ro.duration_s > 0 ? json(ro.duration_s) : json(nullptr)},
      {"tokens", ro.tokens},
      {"input_tokens", options.input_tokens > 0 ? json(options.input_tokens) : json(nullptr)},
      {"input_lengths", options.input_lengths ? json(options.input_lengths->text) : json(nullptr)},
      {"output_lengths",
       options.output_lengths ? json(options.output_lengths->text) : json(nullptr)},
      {"late_ms", ro.late_ms},
      {"max_concurrency", ro.max_concurrency > 0 ? json(ro.max_concurrency) : json(nullptr)},
      {"slo", SloJson(ro.slo)},
      {"slo_fraction", ro.slo_fraction},
      {"rates", points},
      {"search", search},
      {"gpus", options.gpus > 0 ? json(options.gpus) : json(nullptr)},
      {"frontier", RateFrontier(points, options.gpus)}};
}

}  // namespace sb::perf
