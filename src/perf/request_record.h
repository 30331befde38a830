// One finished request as perf keeps it (docs/results-schema.md, "Request record"): the typed
// record every profile builds, from which it takes its per-class and cache rows, and which
// becomes a samples.jsonl line and an entry of a row's "requests" only when written (ToJson).
// Each profile's own fields sit in one optional part: the workload fields of concurrency, rate
// and replay, the schedule of rate and replay, the trace line of replay, a sessions turn.
// Thread safety: plain data.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "client/chat.h"
#include "perf/request_classes.h"

namespace sb::perf {

struct RequestRecord {
  // Every record.
  std::uint64_t id = 0;
  std::string profile, label;
  client::Outcome outcome = client::Outcome::kOk;
  std::string reason;  // "" is none
  int http_status = 0;
  std::optional<double> sent_at_ms, scheduled_at_ms;  // from the run's start; none when unsent
  // The request's metrics (docs/metrics.md); none for a failed request (a partial stream would
  // make a speed up) and no speed for an answer that came as one body.
  std::optional<double> ttft_ms, ttfa_ms, e2e_ms, decode_tok_s, tpot_ms;
  int prompt_tokens = -1, reasoning_tokens = -1;  // the server's usage; -1 when it sent none
  std::optional<int> completion_tokens;           // none for a failed request's estimate
  bool tokens_estimated = false;
  int chunks = 0;
  std::string finish_reason;
  std::string sim_json, timings_json;  // the server's own truth as it sent it ("" for none)
  bool warmup = false;
  bool replayed = false;  // from the journal of a resumed run: not sent again
  bool unstreamed = false;
  int retries = 0;
  std::vector<std::string> retry_reasons;
  // What the request carried with --images-per-request.
  std::optional<int> images;
  std::optional<std::size_t> image_bytes;

  // The workload fields (concurrency, rate, replay; docs/workloads.md): the request's class,
  // the server's counts (-1: it sent none), and when it was scheduled and sent (a closed loop's
  // request is scheduled when it is sent; replay's times run from the schedule's start).
  struct Workload {
    std::string cls;
    int input_tokens = -1, output_tokens = -1, cached_tokens = -1;
    std::optional<double> sent_ms, scheduled_ms;
  };

  std::optional<Workload> workload;

  // An open loop's schedule (rate, replay): how late the send was, and TTFT and E2E from the
  // scheduled send; rate adds its point, a capped client's queue and the SLO verdict.
  struct Schedule {
    double lag_ms = 0;
    std::optional<double> ttft_ms, e2e_ms;
    std::optional<double> rate_rps, client_queue_ms;
    std::optional<bool> good;
  };

  std::optional<Schedule> schedule;

  // The trace line a replayed request came from, and the input length asked of its prompt.
  struct TraceLine {
    int line = 0, input_tokens = 0, output_tokens = 0, asked_input_tokens = 0;
  };

  std::optional<TraceLine> trace;

  // A sessions turn: which session (0-based here, 1-based in the record), turn and tool round,
  // the new user text's tokens (-1: not counted), the think time before it, the tools the answer
  // called, its token gaps' p50 and p99, and the cached prompt tokens (-1: not reported).
  struct Turn {
    std::size_t session = 0;
    int turn = 0, tool_round = 0, user_tokens = -1, cached_tokens = -1;
    double think_ms = 0;
    std::vector<std::string> tool_calls;
    std::optional<double> itl_p50_ms, itl_p99_ms;
  };

  std::optional<Turn> turn;

  bool ok() const { return outcome == client::Outcome::kOk; }

  // The record as docs/results-schema.md writes it.
  nlohmann::json ToJson() const;

  // What it contributes to the per-class and cache rows (request_classes.h): the same fact
  // FactOfRecord reads back from ToJson().
  RequestFact Fact() const;
};

// The facts of `records`, in order.
std::vector<RequestFact> FactsOf(const std::vector<RequestRecord>& records);

// A samples.jsonl line before it is written: the record, and the fields a caller adds to its
// object (the suite's test, attempt, answer ...; null for none). The run's sample writer turns
// it into JSON on its own thread, off the thread that measures (perf/sample_writer.h).
struct Sample {
  RequestRecord record;
  std::shared_ptr<const nlohmann::json> extra;

  // record.ToJson() with extra's fields.
  nlohmann::json ToJson() const;
  // So a sink that wants the line as JSON can take `const json&`.
  operator nlohmann::json() const;  // NOLINT(google-explicit-constructor)
};

// How a record or a profile row writes a figure that may be missing: the number, or null.
nlohmann::json NumberOrNull(const std::optional<double>& v);

// How it writes a count the server may not have sent (-1, or any negative, is none).
nlohmann::json CountOrNull(int v);

// The record of `r` for `profile` and `label`, times relative to t0_ns.
RequestRecord MakeRecord(const client::ChatResponse& r, const std::string& profile,
                         const std::string& label, std::int64_t t0_ns, bool warmup = false);

}  // namespace sb::perf
