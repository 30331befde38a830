#include "run/run.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "client/server_info.h"
#include "core/clock.h"
#include "core/printable.h"
#include "core/profile_table.h"
#include "core/redact.h"
#include "export/export.h"
#include "launch/launch.h"
#include "perf/profiles.h"
#include "perf/sample_writer.h"
#include "report/compare.h"
#include "report/format.h"
#include "report/html.h"
#include "report/markdown.h"
#include "report/run_dir.h"
#include "report/run_dir_lock.h"
#include "resources/report.h"
#include "roofline/inputs.h"
#include "roofline/roofline.h"
#include "run/journal.h"
#include "run/progress.h"
#include "run/run_files.h"
#include "run/run_json.h"
#include "run/sampling.h"
#include "scaleout/shard.h"
#include "sim/sim_server.h"
#include "store/record.h"
#include "store/store.h"
#include "suite/runner.h"
#include "suite/suite.h"

namespace sb::run {

namespace {

using namespace detail;  // NOLINT(build/namespaces): this module's private helpers
using nlohmann::json;

// One run, made step by step (ExecuteRun calls the public steps in order; each error ends it).
// Members are destroyed in reverse order: the runner and the session before the deadline watch,
// those before the run directory, the target's client and simulator, and last the launched
// server.
class RunState {
 public:
  RunState(Plan& plan, const std::string& command_line, std::stop_source& stop)
      : plan_(plan), command_line_(command_line), stop_(stop) {}

  // Checks and completes the plan, loads the suites, checks the roofline inputs.
  Result<void> Prepare();
  // A server to launch (plan.recipe): its run directory is chosen first, since its log goes
  // there; the plan's endpoint and out become the server's.
  Result<void> StartServer();
  // The target (the embedded simulator when there is no endpoint), the run directory and the
  // results.json skeleton.
  Result<void> Open();
  // The stop reasons, the --deadline watch, the session and the suite runner; the first write.
  Result<void> Start();
  // A shard: its clock offset to the server; with --start-at, the wait until just before it.
  Result<void> PrepareStart();
  // The suites, then the speed profiles; results.json is rewritten after each.
  Result<void> RunSuitesAndProfiles();
  // Stops the server, adds the roofline, decides the status, the stop reason and the exit code,
  // writes results.json, report.md and the console summary; then the gates.
  Result<int> Finish();

 private:
  void OnSample(perf::Sample sample);
  // A file of the run directory could not be written (disk full): the run stops and ends
  // `failed`, the first such error being its reason; each different error is printed once.
  void NoteIoError(const std::string& why, const char* doing);
  void WatchDeadline();
  Result<void> WriteResults(const char* status);
  // After results.json failed to be written whole (`whole`): the last one written gets the final
  // status, so it never stays `running`; if even that fails, stderr says so.
  void WriteFinalResults(const char* status, const Error& whole);
  void StopServer();
  void AddRoofline();
  // The run's end: the first cause that applies names the status, the reason and the exit code.
  std::pair<const char*, int> Outcome();
  Result<void> WriteReport();
  void PrintSummary();

  // The run directory's lock (report/run_dir_lock.h), taken before anything is written there.
  Result<void> Lock(const std::filesystem::path& out);

  // The run directory, its journal and plan.json: a new run, or the one --resume continues.
  Result<void> OpenRunDir(const std::filesystem::path& out);
  Result<void> OpenResumed(const std::filesystem::path& out);

  Plan& plan_;
  const std::string& command_line_;
  std::stop_source& stop_;
  std::vector<suite::Suite> suites_;
  suite::RunOptions run_options_;
  std::string started_at_;
  std::string compact_;
  std::optional<report::RunDirLock> lock_;  // released last, when the process ends
  std::unique_ptr<launch::ServerProcess> server_;
  Target target_;
  std::optional<report::RunDir> dir_;
  std::unique_ptr<FileJournal> journal_;
  json resumed_ = json::array();  // results.json "resumed": one entry per --resume
  json results_;
  // Why the run stops early, set once by whoever stops it: the journal's disk, the deadline.
  // A stop with neither set came from a signal.
  std::mutex stop_mu_;
  std::string io_error_;          // guarded by stop_mu_
  std::string journal_error_;     // guarded by stop_mu_
  std::string io_error_printed_;  // guarded by stop_mu_: the last I/O error printed
  bool deadline_hit_ = false;     // guarded by stop_mu_
  std::jthread deadline_watch_;
  std::unique_ptr<client::Client> probe_client_;  // the server watch's health probe
  std::unique_ptr<perf::Session> session_;
  std::unique_ptr<suite::SuiteRunner> runner_;
  json extra_warnings_ = json::array();
  std::string stop_reason_;
  // Memory, power and energy beside every measurement window; stopped before the server.
  SteadyClock clock_;
  std::int64_t t0_ns_ = 0;
  std::unique_ptr<resources::Sampler> sampler_;
  std::unique_ptr<RunProgress> progress_;  // the live status line on stderr (--progress)
  // samples.jsonl's writer: after dir_ and stop_mu_, so it is drained and gone before them.
  std::unique_ptr<perf::SampleWriter> samples_;
};

Result<void> RunState::Prepare() {
  Plan& c = plan_;
  if (auto ok = CheckPlan(c); !ok) {
    return ok.error();
  }
  // `run`: the standard suite and the default profiles; with --suite, only what is asked.
  if (c.is_run) {
    if (c.suite.suites.empty() && !c.profiles_given) {
      c.suite.suites = {"standard"};
    } else if (!c.suite.suites.empty() && !c.profiles_given) {
      c.profiles.clear();
    }
  }
  for (const std::string& w : UnreadFlagWarnings(c)) {
    std::fprintf(stderr, "warning: %s\n", w.c_str());
    extra_warnings_.push_back(w);
  }
  auto loaded = LoadSuites(c.suite.suites);
  if (!loaded) {
    return loaded.error();
  }
  suites_ = std::move(loaded.value());
  auto run_options = MakeRunOptions(c.suite, c.profile);
  if (!run_options) {
    return run_options.error();
  }
  run_options_ = std::move(run_options.value());
  if (suites_.empty() && c.profiles.empty()) {
    return MakeError(ErrorCode::kUsage, "nothing to run: no suite and no profile");
  }
  if (!c.roofline.model_config.empty()) {
    if (auto roof = roofline::RooflineResultsJson(c.roofline, std::nullopt); !roof) {
      return roof.error();  // bad config or hardware: say so before measuring anything
    }
  }
  started_at_ = UtcTimestamp();
  compact_ = UtcTimestampCompact();
  if (!c.resume_dir.empty()) {
    if (c.overwrite) {
      return MakeError(ErrorCode::kUsage, "--resume continues a run: do not give --overwrite");
    }
    c.out = c.resume_dir;
  }
  return {};
}

Result<void> RunState::StartServer() {
  Plan& c = plan_;
  if (!c.recipe) {
    return {};
  }
  const std::filesystem::path server_out =
      c.out.empty()
          ? std::filesystem::path("runs") / report::DefaultRunDirName(compact_, c.recipe->name)
          : std::filesystem::path(c.out);
  if (auto ok = Lock(server_out); !ok) {
    return ok;  // before server.log is written
  }
  std::fprintf(stderr, "starting server '%s': %s\n", c.recipe->name.c_str(),
               c.recipe->command.empty() ? fmt::format("{}", fmt::join(c.recipe->argv, " ")).c_str()
                                         : c.recipe->command.c_str());
  launch::StartHooks hooks;
  double last_note = 0;
  hooks.on_poll = [&last_note](double elapsed, const std::string& last) {
    if (elapsed - last_note >= 10) {
      last_note = elapsed;
      std::fprintf(stderr, "  waiting for the server: %.0f s (%s)\n", elapsed, last.c_str());
    }
  };
  auto started =
      launch::ServerProcess::Start(*c.recipe, server_out / "server.log", stop_.get_token(), hooks);
  if (!started) {
    return started.error();
  }
  server_ = std::move(started.value());
  std::fprintf(stderr, "server ready after %.2f s (±%.2f s) at %s (%s)\n",
               server_->time_to_ready_s(), server_->time_to_ready_resolution_s(),
               server_->endpoint().c_str(), server_->command().c_str());
  c.target.endpoint = server_->endpoint();
  c.out = server_out.string();
  return {};
}

Result<void> RunState::Open() {
  Plan& c = plan_;
  sim::SimOptions embedded = EmbeddedSimOptions();
  std::string embedded_what;
  if (!suites_.empty()) {
    embedded = DemoSimOptions(suites_, run_options_.timeout_by_test);
    embedded_what = "; it plays a demo scenario that shows every test status";
  }
  auto target = OpenTarget(c.target, embedded, embedded_what);
  if (!target) {
    return target.error();
  }
  target_ = std::move(target.value());
  const Target& t = target_;
  if (!t.sim) {
    run_options_.timeout_by_test.clear();
  }
  // "server:", not "target:": the summary's one "target:" line describes the target in full.
  std::fprintf(stderr, "server: %s %s, model %s\n",
               std::string(client::ServerKindName(t.info.kind)).c_str(),
               t.info.version.empty() ? "(version unknown)" : t.info.version.c_str(),
               PrintableLine(t.model, 200).c_str());

  std::filesystem::path out =
      c.out.empty() ? std::filesystem::path("runs") / report::DefaultRunDirName(compact_, t.model)
                    : std::filesystem::path(c.out);
  if (auto ok = Lock(out); !ok) {
    return ok;
  }
  if (auto ok = c.resume_dir.empty() ? OpenRunDir(out) : OpenResumed(out); !ok) {
    return ok;
  }
  results_ = InitialResults(c, t, run_options_, started_at_, command_line_);
  // Every request and auxiliary answer of the run goes through the journal.
  target_.client->SetJournal(journal_.get());
  // samples.jsonl is written by its own thread; a unit's end counts its lines once they are in.
  samples_ = std::make_unique<perf::SampleWriter>(
      [this](const perf::Sample& s) { return dir_->AppendSample(s.ToJson()); },
      // Measuring on without a journal would lose what follows: stop now.
      [this](const std::string& why) { NoteIoError(why, "stopping the run"); });
  journal_->SetSamplesSize([this] {
    samples_->Drain();
    return dir_->samples_bytes();
  });
  journal_->SetOnFatal([this](const std::string& why) {
    std::lock_guard<std::mutex> lock(stop_mu_);
    if (journal_error_.empty()) {
      journal_error_ = why;
      std::fprintf(stderr, "servebench: error: %s: stopping the run\n", why.c_str());
      stop_.request_stop();
    }
  });
  if (c.profile.rate.new_client) {
    c.profile.rate.new_client = [make = c.profile.rate.new_client,
                                 j = journal_.get()](const std::string& root) {
      auto client = make(root);
      client->SetJournal(j);
      return client;
    };
  }
  return {};
}

Result<void> RunState::Lock(const std::filesystem::path& out) {
  if (lock_) {
    return {};  // a launched server's run directory, locked before the server started
  }
  auto lock = report::RunDirLock::Acquire(out);
  if (!lock) {
    return lock.error();
  }
  lock_.emplace(std::move(lock.value()));
  return {};
}

Result<void> RunState::OpenRunDir(const std::filesystem::path& out) {
  auto dir = report::RunDir::Create(
      out, plan_.overwrite ? report::RunDirMode::kOverwrite : report::RunDirMode::kNew);
  if (!dir) {
    return dir.error();
  }
  dir_.emplace(std::move(dir.value()));
  auto journal = FileJournal::Open(out, /*resume=*/false);
  if (!journal) {
    return journal.error();
  }
  journal_ = std::move(journal.value());
  return dir_->WriteText(kPlanFile, PlanJson(plan_, target_, started_at_).dump(2) + "\n");
}

Result<void> RunState::OpenResumed(const std::filesystem::path& out) {
  auto recorded = ReadJsonFile(out / kPlanFile);
  if (!recorded) {
    return MakeError(ErrorCode::kSetup, fmt::format("{} holds no run to resume ({})", out.string(),
                                                    recorded.error().message));
  }
  const std::string model = recorded->value("model", std::string());
  if (model != target_.model) {
    return MakeError(
        ErrorCode::kSetup,
        fmt::format("the run in {} measured model '{}', but the server now serves "
                    "'{}': resume it against the same model",
                    out.string(), PrintableLine(model, 200), PrintableLine(target_.model, 200)));
  }
  if (auto prior = ReadJsonFile(out / std::string(report::kResultsFile))) {
    if (prior->value("status", "") == "complete") {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("{} holds a complete run: nothing to resume", out.string()));
    }
    started_at_ = prior->value("started_at", started_at_);
    if (prior->contains("resumed") && (*prior)["resumed"].is_array()) {
      resumed_ = (*prior)["resumed"];
    }
  }
  // The journal first: it marks the unfinished unit's samples before they are appended to.
  auto journal = FileJournal::Open(out, /*resume=*/true);
  if (!journal) {
    return journal.error();
  }
  journal_ = std::move(journal.value());
  auto dir = report::RunDir::Create(out, report::RunDirMode::kResume);
  if (!dir) {
    return dir.error();
  }
  dir_.emplace(std::move(dir.value()));
  const FileJournal::Resumed& r = journal_->resumed();
  resumed_.push_back(
      {{"at", UtcTimestamp()},
       {"units_replayed", r.units},
       {"superseded_samples", r.superseded_samples},
       {"unfinished_unit", r.unfinished.empty() ? json(nullptr) : json(r.unfinished)},
       {"parts_replayed", r.parts}});
  std::fprintf(
      stderr, "resuming %s: %d finished unit%s replayed from the journal, not sent again%s\n",
      out.c_str(), r.units, r.units == 1 ? "" : "s",
      r.unfinished.empty()
          ? ""
          : fmt::format(
                "; '{}' was cut off and {}{}", r.unfinished,
                r.parts == 0
                    ? std::string("is measured again from its start")
                    : fmt::format("its {} finished part{} (sessions) {} replayed, the "
                                  "rest measured again",
                                  r.parts, r.parts == 1 ? "" : "s", r.parts == 1 ? "is" : "are"),
                r.superseded_samples == 0
                    ? std::string()
                    : fmt::format(" ({} earlier sample{} marked superseded)", r.superseded_samples,
                                  r.superseded_samples == 1 ? "" : "s"))
                .c_str());
  return {};
}

void RunState::OnSample(perf::Sample sample) {
  const perf::RequestRecord& rec = sample.record;
  if (rec.replayed && (journal_ == nullptr || !journal_->replaying_parts())) {
    return;  // replayed from the journal: its line is in samples.jsonl already
  }
  if (!rec.warmup) {
    progress_->OnFinished(rec.ok(), rec.completion_tokens.value_or(0));
  }
  samples_->Post(std::move(sample));
}

void RunState::NoteIoError(const std::string& why, const char* doing) {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (io_error_.empty() && journal_error_.empty()) {
    io_error_ = why;
    stop_.request_stop();
  }
  if (why != io_error_printed_) {
    io_error_printed_ = why;
    std::fprintf(stderr, "servebench: error: %s: %s\n", why.c_str(), doing);
  }
}

// --deadline: the whole run's time limit, shared by every recipe of a matrix.
void RunState::WatchDeadline() {
  deadline_watch_ = std::jthread([this, at = *plan_.deadline_at](std::stop_token done) {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_until(lock, done, at, [] { return false; }) && !done.stop_requested()) {
      std::lock_guard<std::mutex> guard(stop_mu_);
      deadline_hit_ = true;
      std::fprintf(stderr,
                   "servebench: the run's deadline (--deadline %s) passed: stopping, "
                   "writing what was measured\n",
                   plan_.deadline.c_str());
      stop_.request_stop();
    }
  });
}

Result<void> RunState::Start() {
  auto on_sample = [this](perf::Sample s) { OnSample(std::move(s)); };
  std::size_t tests = 0;
  for (const suite::Suite& s : suites_) {
    tests += s.tests.size();
  }
  progress_ = std::make_unique<RunProgress>(plan_, tests, clock_);
  journal_->SetOnBeginUnit([p = progress_.get()](std::string_view unit) { p->SetCurrent(unit); });
  auto on_progress = [p = progress_.get()](const std::string& line) {
    p->Print("  " + Redact(line));
  };
  if (plan_.deadline_at) {
    WatchDeadline();
  }
  const Target& t = target_;
  // A resumed run's clock goes on where the journal's last unit ended.
  const std::int64_t now_ns = ToNanos(std::chrono::steady_clock::now());
  const std::int64_t t0_ns = plan_.resume_dir.empty() ? now_ns : journal_->ResumeT0(now_ns);
  journal_->SetClock(t0_ns);
  session_ = std::make_unique<perf::Session>(
      *t.client, perf::SessionTarget{t.model, t.info.kind, t.info.max_model_len}, on_sample,
      on_progress, stop_.get_token(), t0_ns);
  runner_ = std::make_unique<suite::SuiteRunner>(
      *t.client, suite::SuiteTarget{t.model, t.info.kind, t.info.max_model_len}, run_options_,
      *session_, on_sample, on_progress, stop_.get_token(), t0_ns);
  // The server watch's health probe (perf::ServerWatch): a client of its own, outside the
  // journal: a probe is no part of the run's work, and a resumed run must not replay one.
  auto key = ResolveApiKey(plan_.target);
  probe_client_ = std::make_unique<client::Client>(
      MakeClientOptions(plan_.target, t.client->root(), key ? key.value() : std::string()));
  session_->SetHealthProbe(
      [c = probe_client_.get(), limit = perf::ServerWatch::ProbeLimit(
                                    Millis(plan_.target.first_byte_timeout_s))]() -> Result<void> {
        return perf::ProbeModels(*c, limit);
      });
  if (t.sim && !suites_.empty()) {
    results_["demo"] = DemoDescription(suites_, run_options_.timeout_by_test);
  }
  t0_ns_ = t0_ns;
  std::vector<std::string> notes;
  sampler_ = StartSampler(plan_.resources, plan_.target, t, server_.get(), clock_, notes);
  for (const auto& n : notes) {
    extra_warnings_.push_back(n);
  }
  session_->SetWindowObserver([s = sampler_.get()](std::int64_t b, std::int64_t e, long long n) {
    return s->Window(b, e, n);
  });
  return WriteResults("running");
}

Result<void> RunState::WriteResults(const char* status) {
  const perf::Session& session = *session_;
  const suite::SuiteRunner& runner = *runner_;
  results_["status"] = status;
  results_["stop_reason"] = stop_reason_.empty() ? json(nullptr) : json(stop_reason_);
  if (!resumed_.empty()) {
    results_["resumed"] = resumed_;
  }
  if (server_) {
    results_["server_process"] = server_->Describe(dir_->path());
  }
  results_["summary"] = MergedSummary(session, runner);
  if (!suites_.empty()) {
    results_["tests"] = runner.tests();
    results_["suite"] = runner.SuiteJson();
    for (const auto& [key, value] : runner.perf_results()) {
      results_["perf"][key] = value;
    }
  }
  json warnings = session.warnings();
  for (const auto& w : runner.warnings()) {
    warnings.push_back(w);
  }
  for (const auto& w : extra_warnings_) {
    warnings.push_back(w);
  }
  // Failed requests of the speed profiles (a suite's failures are in its test tables).
  const json perf_sum = session.Summary();
  if (perf_sum.value("interrupted_requests", 0) > 0) {
    warnings.push_back(fmt::format(
        "{} measured speed-profile request(s) in flight when the run was stopped were cut short "
        "(interrupted, not failed; their figures are left out).",
        perf_sum.value("interrupted_requests", 0)));
  }
  if (perf_sum.value("failed_requests", 0) > 0) {
    warnings.push_back(
        fmt::format("{} of {} measured speed-profile requests failed: see the Errors section "
                    "(their figures are left out, never counted as zero).",
                    perf_sum.value("failed_requests", 0), perf_sum.value("requests", 0)));
  }
  results_["warnings"] = warnings;
  results_["spec_decode"] = session.SpecDecode();
  if (sampler_) {
    results_["resources"] =
        sampler_->RunJson(t0_ns_, results_["summary"].value("completion_tokens", 0LL));
  }
  if (std::string(status) != "running") {
    results_["finished_at"] = UtcTimestamp();
  }
  return dir_->WriteResults(results_);
}

void RunState::WriteFinalResults(const char* status, const Error& whole) {
  results_["status"] = status;  // for the console summary
  results_["stop_reason"] = stop_reason_;
  // The last results.json written (smaller: it holds less) gets the final status and the reason.
  const std::string note = "results.json could not be written whole (" + whole.message +
                           "): it holds what was measured up to its last complete write; "
                           "samples.jsonl holds every measured request.";
  if (auto ok = dir_->RestatusResults(status, stop_reason_, UtcTimestamp(), note); !ok) {
    std::fprintf(stderr,
                 "servebench: error: %s: results.json does not hold the final status (%s); "
                 "samples.jsonl holds every measured request\n",
                 whole.message.c_str(), ok.error().message.c_str());
  }
}

Result<void> RunState::PrepareStart() {
  const Plan& c = plan_;
  if (!c.shard_spec && !c.start_at_time) {
    return {};
  }
  scaleout::ClockOffset offset;
  if (c.shard_spec) {
    // A client of its own: the probes are not part of the run (nor of its journal).
    auto key = ResolveApiKey(c.target);
    client::Client probe(MakeClientOptions(c.target,
                                           target_.client->root() + target_.client->query(),
                                           key ? key.value() : std::string()));
    offset = scaleout::ProbeClockOffset(probe, "/v1/models");
    std::fprintf(stderr, "shard %d/%d (%s): clock offset to the server %s\n", c.shard_spec->index,
                 c.shard_spec->count, c.shard_spec->source.c_str(),
                 offset.offset_s ? fmt::format("{:+.4f} s ± {:.4f} s ({})", *offset.offset_s,
                                               offset.uncertainty_s, offset.method)
                                       .c_str()
                                 : ("unknown: " + offset.note).c_str());
    if (!offset.offset_s) {
      extra_warnings_.push_back("This shard's clock offset to the server is unknown (" +
                                offset.note + "); merge cannot check the shards' clock spread.");
    }
    results_["shard"] = scaleout::ShardJson(*c.shard_spec, HostName(), offset, c.start_at_time);
  }
  if (c.start_at_time && !c.resume_dir.empty()) {
    extra_warnings_.push_back("--start-at was ignored: a resumed run starts at once.");
  } else if (c.start_at_time) {
    auto start = scaleout::StartAtSteady(*c.start_at_time, std::chrono::system_clock::now(),
                                         std::chrono::steady_clock::now());
    if (!start) {
      return start.error();
    }
    std::fprintf(stderr, "waiting for --start-at %s\n",
                 scaleout::Rfc3339(*c.start_at_time).c_str());
    if (scaleout::WaitForStart(clock_, *start, scaleout::kStartLead, stop_.get_token())) {
      plan_.profile.rate.start_at_ns = ToNanos(*start);
    }
  }
  return WriteResults("running");
}

Result<void> RunState::RunSuitesAndProfiles() {
  for (const suite::Suite& s : suites_) {
    if (stop_.stop_requested() || session_->Halted()) {
      break;
    }
    std::fprintf(stderr, "suite %s (%zu tests):\n", s.name.c_str(), s.tests.size());
    runner_->Run(s);
    if (auto ok = WriteResults("running"); !ok) {
      NoteIoError(ok.error().message, "stopping the run");
    }
  }
  for (const auto& name : plan_.profiles) {
    if (stop_.stop_requested() || session_->Halted()) {
      break;  // as for the suites: a server judged gone gets no more profiles
    }
    const ProfileSpec* spec = FindProfile(name);  // CheckPlan refused any other name
    if (spec == nullptr) {
      continue;
    }
    std::fprintf(stderr, "%s:\n", name.c_str());
    results_["perf"][std::string(spec->key)] = session_->Run(spec->id, plan_.profile);
    if (auto ok = WriteResults("running"); !ok) {
      NoteIoError(ok.error().message, "stopping the run");
    }
  }
  return {};
}

void RunState::StopServer() {
  if (!server_) {
    return;
  }
  const launch::StopReport end = server_->Stop();
  std::fprintf(stderr, "server '%s' stopped: %s\n", plan_.recipe->name.c_str(),
               launch::DescribeEnd(end).c_str());
  if (end.exited_before_stop) {
    extra_warnings_.push_back(fmt::format("The server {} before the run ended; see server.log.",
                                          launch::DescribeEnd(end)));
  }
}

void RunState::AddRoofline() {
  if (plan_.roofline.model_config.empty()) {
    return;
  }
  std::optional<double> measured;
  const json& d = results_["perf"].value("decode", json::object());
  if (d.contains("decode_tok_s") && d["decode_tok_s"].contains("median")) {
    measured = d["decode_tok_s"]["median"].get<double>();
  }
  if (auto roof = roofline::RooflineResultsJson(plan_.roofline, measured)) {
    results_["roofline"] = roof.value();
  }
}

std::pair<const char*, int> RunState::Outcome() {
  const char* status = "complete";
  int code = kExitOk;
  std::lock_guard<std::mutex> lock(stop_mu_);
  const json summary = MergedSummary(*session_, *runner_);
  const long long requests = summary.value("requests", 0LL);
  const long long failed = summary.value("failed_requests", 0LL);
  if (!io_error_.empty() || !journal_error_.empty()) {
    status = "failed";
    stop_reason_ = !io_error_.empty() ? io_error_ : journal_error_;
    code = kExitSetup;
  } else if (deadline_hit_) {
    status = "interrupted";
    stop_reason_ = fmt::format("the run's deadline (--deadline {}) passed", plan_.deadline);
    code = kExitSetup;
  } else if (stop_.stop_requested()) {
    status = "interrupted";
    stop_reason_ = "stopped by a signal (Ctrl-C or SIGTERM)";
    code = kExitInterrupted;
  } else if (session_->server_gone() || runner_->server_gone()) {
    status = "failed";
    stop_reason_ =
        fmt::format("the server stopped answering ({}); the rest of the run was not sent",
                    session_->gone_reason());
    code = kExitSetup;
  } else if (requests > 0 && failed == requests) {
    status = "failed";
    stop_reason_ = fmt::format("every request failed ({} of {})", failed, requests);
    code = kExitSetup;
  }
  return {status, code};
}

// report.md and report.html, then the console summary and where the results are.
Result<void> RunState::WriteReport() {
  if (auto ok = dir_->WriteText("report.md", exporter::ReportMarkdown(results_)); !ok) {
    return ok;
  }
  return dir_->WriteText(report::kHtmlReportFile, report::RenderHtml(results_));
}

void RunState::PrintSummary() {
  std::printf("%s", Redact(report::RenderConsoleSummary(results_)).c_str());
  if (results_.contains("roofline")) {
    std::printf("%s", roofline::RenderRooflineConsole(results_).c_str());
  }
  std::printf("%s", resources::RenderResourcesConsole(results_).c_str());
  std::printf("results: %s/ (report.md, report.html, results.json, samples.jsonl)\n",
              dir_->path().c_str());
  // The summary (stdout) before anything later on stderr ("stored run ..."), also when both go to
  // one file (2>&1) and stdout is fully buffered.
  std::fflush(stdout);
}

Result<int> RunState::Finish() {
  deadline_watch_ = std::jthread();  // joined: no stop from it after this point
  if (samples_) {
    samples_->Drain();  // every record in samples.jsonl, and a failed write in the outcome
  }
  if (progress_) {
    progress_->Stop();  // the status line is erased before anything else is printed
  }
  if (sampler_) {
    sampler_->Stop();  // before the server goes: its last samples are of a live server
  }
  StopServer();
  AddRoofline();
  if (plan_.slo_gate.fail_on_slo) {  // judged before anything is written, so every output has it
    results_["gates"]["slo"] = EvaluateSloGate(results_, plan_.profile.rate.slo,
                                               plan_.profile.rate.slo_fraction, plan_.slo_gate.at);
  }
  std::pair<const char*, int> outcome = Outcome();
  Result<void> written = WriteResults(outcome.first);
  if (written) {
    if (auto ok = WriteReport(); !ok) {
      // report.md or report.html did not fit: the run is `failed`, and results.json says why.
      NoteIoError(ok.error().message, "the run ends failed");
      outcome = Outcome();
      written = WriteResults(outcome.first);
    }
  }
  if (!written) {
    NoteIoError(written.error().message, "the run ends failed");
    outcome = Outcome();
    WriteFinalResults(outcome.first, written.error());
  }
  const int code = outcome.second;
  PrintSummary();
  if (written) {
    store::RecordRun(plan_.store, dir_->path());  // the complete directory; never fails the run
  }
  if (code != kExitOk) {
    return code;
  }
  int gates = CheckGates(plan_.suite, results_["summary"]);
  if (results_.contains("gates") && results_["gates"].contains("slo")) {
    if (const std::string failed = SloGateConsole(results_["gates"]["slo"]); !failed.empty()) {
      std::fprintf(stderr, "%s", failed.c_str());
      gates = kExitGate;
    }
  }
  return gates;
}

}  // namespace

int ExecuteRun(Plan& plan, const std::string& command_line, std::stop_source& stop) {
  RunState run(plan, command_line, stop);
  if (auto ok = run.Prepare(); !ok) {
    return Fail(ok.error());
  }
  if (auto ok = ResolveServer(plan); !ok) {
    return Fail(ok.error());
  }
  if (auto ok = run.StartServer(); !ok) {
    return Fail(ok.error());
  }
  if (auto ok = run.Open(); !ok) {
    return Fail(ok.error());
  }
  if (auto ok = run.Start(); !ok) {
    return Fail(ok.error());
  }
  if (auto ok = run.PrepareStart(); !ok) {
    return Fail(ok.error());
  }
  if (auto ok = run.RunSuitesAndProfiles(); !ok) {
    return Fail(ok.error());
  }
  auto code = run.Finish();
  return code ? code.value() : Fail(code.error());
}

}  // namespace sb::run
