// journal.jsonl: the record of every unit of work of a run, so `--resume` can continue an
// interrupted run without sending a finished unit again (docs/resume.md).
//
// A unit is what the measuring code brackets with Client::BeginUnit/EndUnit: one measured batch
// of the speed profiles (a decode run, a concurrency level, a context size), one rate point, one
// quality test with all its attempts. Lines, one JSON object each, flushed as written:
//   {"u": K, "begin": "decode run 1"}                       unit K starts
//   {"u": K, "chat": {...}}                                 a finished response (every field)
//   {"u": K, "aux": "GET /metrics", "r": {...}}             an auxiliary request's answer
//   {"u": K, "part": "session 3", "ids": [...], "t": NS}    a finished part of unit K (one
//                                                           session): its chat lines come first
// (the chat and aux lines of a unit are written when it ends, just before its "end" line, but
// those of a part, written when the part is committed).
//   {"u": K, "end": true, "samples_bytes": N, "t": NS}       unit K finished; samples.jsonl
//                                                           held N bytes then
// Times are steady-clock nanoseconds relative to the recording process's t0.
//
// Resuming: the units that have an "end" line are replayed in order -- the code that measured
// them runs again and gets the recorded answers, so every table, statistic and warning comes
// out as in the first process -- and the first unit without one, and everything after it, runs
// live. That unit's lines are cut from the journal, and its samples.jsonl lines (those past the
// last finished unit's samples_bytes) are kept but marked "superseded": true, never mixed in.
// Its committed parts are kept in memory, though: when the resumed run begins that unit again
// (same name), a call whose answer a part holds is replayed instead of sent (and recorded again),
// so a sessions run resumes with its finished sessions replayed and only the others sent.
// If the replayed code asks for something the journal does not hold (the plan or the code
// changed), the run stops: the journal cannot vouch for it.
// Thread safety: every member may be called from several threads.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/journal.h"
#include "core/result.h"

namespace sb::run {

inline constexpr std::string_view kJournalFile = "journal.jsonl";

class FileJournal final : public client::Journal {
 public:
  struct Resumed {
    int units = 0;                         // finished units found (replayed when asked for)
    std::uint64_t superseded_samples = 0;  // samples.jsonl lines of the unfinished unit
    std::string unfinished;                // the unit that was cut off ("" if none)
    int parts = 0;                         // its finished parts, replayed when it runs again
  };

  // Starts dir/journal.jsonl afresh (resume = false), or loads it and prepares dir/samples.jsonl
  // as described above (resume = true; before the run directory opens samples.jsonl).
  // kIo errors name the file and the system's reason.
  static Result<std::unique_ptr<FileJournal>> Open(const std::filesystem::path& dir, bool resume);
  ~FileJournal() override;

  // Times are recorded relative to t0_ns. REQUIRES: called before the first unit.
  void SetClock(std::int64_t t0_ns);
  // A t0 for a resumed process that places `now_ns` just after the last recorded time, so the
  // run's relative times go on where the first process stopped.
  std::int64_t ResumeT0(std::int64_t now_ns) const;
  // Reads samples.jsonl's size at each unit's end.
  void SetSamplesSize(std::function<std::uint64_t()> size);
  // Called once, with the reason, when the journal can no longer vouch for the run (a write
  // failed; a replayed unit asked for something it does not hold). The caller stops the run.
  void SetOnFatal(std::function<void(const std::string&)> on_fatal);
  // Called with the name of each outermost unit as it begins (the live progress line's item).
  void SetOnBeginUnit(std::function<void(std::string_view)> on_begin);

  const Resumed& resumed() const { return resumed_; }

  int replayed_units() const;

  // The current unit is the one an earlier process was cut off in and it replays that process's
  // committed parts: their samples.jsonl lines were marked superseded, so the replayed records
  // must be written again.
  bool replaying_parts() const;

  void BeginUnit(std::string_view name) override;
  void EndUnit() override;
  std::vector<client::ChatResponse> RunChats(std::span<const client::ChatCall> calls,
                                             const client::RunHooks& hooks, std::stop_token stop,
                                             const LiveChats& live) override;
  Result<client::HttpResponse> Plain(std::string_view method, std::string_view path,
                                     const LivePlain& live) override;
  void CommitPart(std::string_view name, std::span<const std::uint64_t> ids) override;

 private:
  struct Unit {
    std::string name;
    std::map<std::uint64_t, nlohmann::json> chats;          // by call id
    std::map<std::string, std::deque<nlohmann::json>> aux;  // "GET /metrics" -> answers
  };

  FileJournal() = default;
  void Write(const nlohmann::json& line);  // REQUIRES: mu_ held
  void Fatal(const std::string& why);      // REQUIRES: mu_ held

  mutable std::mutex mu_;
  std::FILE* file_ = nullptr;
  std::filesystem::path path_;
  std::vector<Unit> finished_;  // loaded from an earlier process, replayed in order
  // The unfinished unit's committed parts (chats only), for finished_.size()'s unit; in use
  // (partial_live_) when that unit begins again with the same name.
  Unit partial_;
  bool partial_live_ = false;
  std::int64_t last_t_ = 0;  // latest recorded relative time
  std::int64_t t0_ = 0;
  int depth_ = 0;
  int unit_ = -1;           // the current outermost unit's index
  int next_unit_ = 0;       // the next outermost unit's index
  bool replaying_ = false;  // the current unit is replayed
  // The current unit was cut short by the run's stop (Ctrl-C, --deadline): it gets no "end", so
  // --resume measures it again instead of replaying a partial unit as finished.
  bool cut_ = false;
  bool failed_ = false;
  int replayed_ = 0;
  Resumed resumed_;
  // The current unit's answers, written when it ends (serialising is kept out of the unit's
  // measurement): a unit killed before its end leaves only its "begin" line.
  std::vector<client::ChatResponse> pending_chats_;
  std::vector<nlohmann::json> pending_aux_;  // {"key": "GET /metrics", "r": ...}
  std::function<std::uint64_t()> samples_size_;
  std::function<void(const std::string&)> on_fatal_;
  std::function<void(std::string_view)> on_begin_unit_;
};

}  // namespace sb::run
