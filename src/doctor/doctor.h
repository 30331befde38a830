// `servebench doctor`: one screen that says what will work on this machine (and, with an
// endpoint, against that server) and what will not. Every check gives one line with a status
// (OK / WARN / FAIL), the reason and the fix. FAIL is kept for what a default run needs (media
// generation, enough file descriptors for the concurrency asked for, and, when an endpoint is
// given, reaching it and finding the model); everything else that is missing or weaker is WARN
// with what it costs (e.g. "python code tests will FAIL"). The rule and every check:
// docs/doctor.md. Thread safety: the checks use process-wide caches (sandbox::Host, the media
// cache); call them from one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sb::doctor {

enum class Status { kOk, kWarn, kFail };

// "OK", "WARN", "FAIL".
std::string_view StatusName(Status status);

struct Check {
  std::string name;  // dotted, stable: "sandbox.network_namespace", "endpoint.image" ...
  Status status = Status::kOk;
  std::string detail;  // what was found, and what it means for a run
  std::string fix;     // what to do about a WARN or FAIL ("" when there is nothing to do)
};

struct Options {
  std::string endpoint;   // "" = no server checks
  std::string model;      // "" = the only/first served model
  std::string api_key;    // sent as a Bearer token; never printed
  std::string ca_cert;    // HTTPS: a PEM file of CA certificates to trust (as `run --ca-cert`)
  bool insecure = false;  // HTTPS: do not verify the certificate (as `run --insecure`)
  int concurrency = 8;    // streams a run will hold open at once
  std::string python;     // as --python of `suite`: "" = /usr/bin/python3, else python3 on PATH
  std::string cxx;        // as --cxx: "" = /usr/bin/g++, else g++ on PATH
  double timeout_s = 30;  // each request to the endpoint
};

// Sandbox protections from sandbox::Host() (namespaces, Landlock ABI, seccomp, the uid), one
// check each plus "sandbox.isolation" (what code tests run with).
std::vector<Check> CheckSandbox();

// "code.python", "code.cpp": the interpreter and compiler the code checker would use, found the
// way sandbox::RunCode finds them, and a tiny program run through the sandbox with each.
std::vector<Check> CheckCodeTools(const Options& options);

// "media.image", "media.video", "media.audio": one catalogue asset of each kind generated (the
// in-process cache is bypassed only on first use: call once per process for honest timings).
std::vector<Check> CheckMedia();

// Descriptors a run at `concurrency` streams needs: one connection each plus a margin.
std::uint64_t FdsNeeded(int concurrency);

// "limits.open_files" for the given RLIMIT_NOFILE soft/hard values (RLIM_INFINITY allowed).
// servebench raises its soft limit to the hard one at start, so the hard limit decides.
Check CheckOpenFiles(int concurrency, std::uint64_t soft, std::uint64_t hard);
// The same, with this process's limits.
Check CheckOpenFiles(int concurrency);

// "clock.source" for a clocksource name ("" = could not be read).
Check CheckClockSource(std::string_view source);
// The same, reading /sys/devices/system/clocksource/clocksource0/current_clocksource.
Check CheckClockSource();

// "endpoint.*": server kind and version, model, force-length fields, image/video/audio (one
// small request each), /tokenize, /metrics, speculative-decoding counters. An unreachable
// endpoint gives one FAIL ("endpoint.server") and nothing else.
std::vector<Check> CheckEndpoint(const Options& options);

// Every check above, in that order (the endpoint's only when options.endpoint is set).
std::vector<Check> RunAll(const Options& options);

// 1 when any check is FAIL, else 0.
int ExitCode(const std::vector<Check>& checks);

// The screen: one line per check ("OK    name  detail"), a "fix:" line under each WARN/FAIL
// that has one, and a summary line.
std::string RenderText(const std::vector<Check>& checks);

// {"schema": "servebench.doctor/1", "exit_code", "counts": {ok, warn, fail},
//  "checks": [{name, status, detail, fix}]}.
nlohmann::json ToJson(const std::vector<Check>& checks);

}  // namespace sb::doctor
