// Record and replay of a run's requests, so an interrupted run can be resumed (docs/resume.md).
// A Journal attached to a Client (Client::SetJournal) sees every chat batch and auxiliary
// request (GET /metrics, POST /tokenize ...). Work is grouped in units (Client::BeginUnit /
// EndUnit): a measured batch, a rate point, a quality test. A unit the journal holds complete
// from an earlier process is replayed: its responses come back from the journal, the hooks are
// called as if they had streamed (client code cannot tell), and nothing is sent. Every other unit
// runs live and is recorded. The implementation that writes journal.jsonl lives in run/.
// Thread safety: an implementation must accept calls from several threads (the rate profile's
// per-worker clients share one journal).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stop_token>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "client/chat.h"
#include "client/http_client.h"
#include "core/result.h"

namespace sb::client {

class Journal {
 public:
  using LiveChats = std::function<std::vector<ChatResponse>(std::span<const ChatCall>,
                                                            const RunHooks&, std::stop_token)>;
  using LivePlain = std::function<Result<HttpResponse>()>;

  virtual ~Journal() = default;

  virtual void BeginUnit(std::string_view name) = 0;
  virtual void EndUnit() = 0;
  // One batch: replayed (responses with `replayed` set, hooks called through ReplayHooks) or
  // sent with `live` and recorded.
  virtual std::vector<ChatResponse> RunChats(std::span<const ChatCall> calls, const RunHooks& hooks,
                                             std::stop_token stop, const LiveChats& live) = 0;

  // A part of the current unit is finished (a session of the sessions profile): the answers to
  // the calls `ids` are written now, so a run killed before the unit's end replays them on
  // --resume (a call the unit's partial record holds is answered from it, not sent) and sends
  // the rest. Default: nothing (parts are recorded with their unit).
  virtual void CommitPart(std::string_view name, std::span<const std::uint64_t> ids) {
    (void)name;
    (void)ids;
  }

  // One auxiliary request ("GET" or "POST" to `path`): replayed or run with `live` and recorded.
  virtual Result<HttpResponse> Plain(std::string_view method, std::string_view path,
                                     const LivePlain& live) = 0;
};

// Calls `hooks` for a finished batch as the live loop did: on_event once per token event, in
// arrival order across the batch, with that response as it stood just after the event (answer,
// reasoning and events cut to that point), until on_event returns false for it; on_done for each
// response at its end, in completion order.
void ReplayHooks(std::span<const ChatResponse> batch, const RunHooks& hooks);

// Every field of a ChatResponse as JSON, steady times relative to t0_ns (so a later process can
// place them on its own clock); ResponseFromJson(ResponseToJson(r, t0), t0) == r.
nlohmann::json ResponseToJson(const ChatResponse& r, std::int64_t t0_ns);
// The inverse; kSetup error naming the problem when `j` is not such an object.
Result<ChatResponse> ResponseFromJson(const nlohmann::json& j, std::int64_t t0_ns);

// An HttpResponse as JSON and back.
nlohmann::json HttpResponseToJson(const HttpResponse& r);
Result<HttpResponse> HttpResponseFromJson(const nlohmann::json& j);

}  // namespace sb::client
