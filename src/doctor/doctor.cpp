// The checks of `servebench doctor` (doctor.h, docs/doctor.md).
#include "doctor/doctor.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <span>
#include <stop_token>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>

#include "client/chat.h"
#include "client/http_client.h"
#include "client/server_info.h"
#include "core/printable.h"
#include "media/media.h"
#include "perf/profiles.h"
#include "perf/prometheus.h"
#include "sandbox/host.h"
#include "sandbox/sandbox.h"
#include "suite/runner.h"
#include "suite/text.h"

namespace sb::doctor {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using suite::Trim;

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Check Make(std::string name, Status status, std::string detail, std::string fix = {}) {
  return Check{std::move(name), status, std::move(detail), std::move(fix)};
}

// What code tests lose without a protection, and the fix for it.
constexpr const char* kUserNsFix =
    "allow unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1, "
    "user.max_user_namespaces > 0, kernel.apparmor_restrict_unprivileged_userns=0; in a "
    "container: --security-opt seccomp=unconfined (or run as root)";
constexpr const char* kNsFix =
    "run where namespaces are allowed: as root, or with unprivileged user namespaces; in a "
    "container: --security-opt seccomp=unconfined or --cap-add SYS_ADMIN";

}  // namespace

std::string_view StatusName(Status status) {
  switch (status) {
    case Status::kOk:
      return "OK";
    case Status::kWarn:
      return "WARN";
    case Status::kFail:
      return "FAIL";
  }
  return "?";
}

// ---- sandbox ---------------------------------------------------------------------------------

std::vector<Check> CheckSandbox() {
  const sandbox::HostCaps& host = sandbox::Host();
  const sandbox::Isolation& iso = host.isolation;
  std::vector<Check> out;
  if (host.root) {
    out.push_back(Make("sandbox.user_namespace", Status::kOk,
                       "not needed: running as root, namespaces are created directly"));
  } else if (host.user_namespace) {
    out.push_back(Make("sandbox.user_namespace", Status::kOk,
                       "unprivileged user namespaces work: the other namespaces come from it"));
  } else {
    out.push_back(Make("sandbox.user_namespace", Status::kWarn,
                       "no user namespace (not root, and unprivileged ones are refused): code "
                       "tests run with no namespace at all, only Landlock, seccomp and rlimits",
                       kUserNsFix));
  }
  out.push_back(
      iso.network_namespace
          ? Make("sandbox.network_namespace", Status::kOk, "code runs with no network interface")
          : Make("sandbox.network_namespace", Status::kWarn,
                 fmt::format("no network namespace: code tests still run; the network is "
                             "blocked only by {}",
                             iso.seccomp && iso.landlock_net ? "seccomp and Landlock"
                             : iso.seccomp                   ? "seccomp (UDP/TCP sockets)"
                             : iso.landlock_net              ? "Landlock (TCP only)"
                                                : "nothing: code can reach the network"),
                 kNsFix));
  out.push_back(
      iso.pid_namespace
          ? Make("sandbox.pid_namespace", Status::kOk,
                 "every process a program starts dies with its run")
          : Make("sandbox.pid_namespace", Status::kWarn,
                 "no pid namespace: code tests still run; leftover processes are killed by "
                 "process group, uid and child sweeps (a well-hidden one may survive)",
                 kNsFix));
  if (iso.landlock) {
    out.push_back(
        Make("sandbox.landlock", iso.landlock_net ? Status::kOk : Status::kWarn,
             fmt::format(
                 "Landlock ABI {}: writes confined to the run's directory{}", host.landlock_abi,
                 iso.landlock_net ? ", TCP connect/bind denied" : "; TCP not filtered (ABI < 4)"),
             iso.landlock_net ? "" : "a kernel >= 6.7 adds Landlock network rules"));
  } else {
    out.push_back(Make("sandbox.landlock", Status::kWarn,
                       "Landlock unavailable: code tests still run; writes outside their "
                       "directory are stopped only by the uid",
                       "a kernel >= 5.13 with CONFIG_SECURITY_LANDLOCK and lsm=...,landlock"));
  }
  out.push_back(iso.seccomp ? Make("sandbox.seccomp", Status::kOk,
                                   "seccomp filter: no sockets but AF_UNIX, no namespaces, "
                                   "ptrace, mounts, bpf, io_uring")
                            : Make("sandbox.seccomp", Status::kWarn,
                                   "seccomp unavailable: code tests still run without the "
                                   "system-call filter",
                                   "a kernel with CONFIG_SECCOMP_FILTER; in a container, a "
                                   "seccomp profile that allows seccomp() itself"));
  if (host.root) {
    out.push_back(
        iso.uid_drop
            ? Make("sandbox.uid", Status::kOk,
                   fmt::format("running as root: programs run as uid {} + the thread id, no "
                               "groups",
                               sandbox::kSandboxUidBase))
            : Make("sandbox.uid", Status::kWarn,
                   "running as root, and the uid drop failed: programs stay root inside their "
                   "namespaces (RLIMIT_NPROC does not bind root)",
                   fmt::format("allow uids from {} (a container's uid map must include them), "
                               "or run as an ordinary user",
                               sandbox::kSandboxUidBase)));
  } else {
    out.push_back(
        Make("sandbox.uid", Status::kOk,
             fmt::format("programs run as your uid {}{}", host.uid,
                         host.user_namespace ? " (mapped into their user namespace)" : "")));
  }
  const std::string applied = iso.Describe();
  const bool weak = !iso.network_namespace && !iso.seccomp && !iso.landlock_net;
  out.push_back(Make("sandbox.isolation", weak ? Status::kWarn : Status::kOk,
                     fmt::format("code tests run (never refused) with: {} + rlimits", applied),
                     weak ? "nothing keeps model-written code off the network: see the fixes "
                            "above, or skip code tests (--only)"
                          : ""));
  return out;
}

// ---- interpreters and compilers --------------------------------------------------------------

std::vector<Check> CheckCodeTools(const Options& options) {
  sandbox::CodeOptions code;
  code.python = options.python;
  code.cxx = options.cxx;
  std::vector<Check> out;

  struct Tool {
    const char* name;
    sandbox::Language language;
    const char* source;
    const char* tests;  // which tests depend on it
    const char* fix;
  };

  const Tool tools[] = {
      {"code.python", sandbox::Language::kPython, "print(6 * 7)\n", "python and sql code tests",
       "apt-get install python3, or give the interpreter with --python PATH"},
      {"code.cpp", sandbox::Language::kCpp,
       "#include <cstdio>\nint main() { std::printf(\"%d\\n\", 6 * 7); }\n", "C++ code tests",
       "apt-get install g++, or give the compiler with --cxx PATH"},
  };
  for (const Tool& t : tools) {
    const auto t0 = Clock::now();
    auto run = sandbox::RunCode(t.language, t.source, "", code);
    const double s = SecondsSince(t0);
    if (!run) {
      out.push_back(Make(t.name, Status::kWarn,
                         fmt::format("{}: {} will FAIL (\"could not run the code\")",
                                     run.error().message, t.tests),
                         t.fix));
      continue;
    }
    if (run->verdict != sandbox::Verdict::kExited || run->exit_code != 0 ||
        Trim(run->stdout_data) != "42") {
      out.push_back(Make(t.name, Status::kWarn,
                         fmt::format("a test program did not run in the sandbox ({}{}{}): {} "
                                     "will FAIL",
                                     run->reason, run->stderr_data.empty() ? "" : "; ",
                                     std::string(Trim(run->stderr_data)).substr(0, 200), t.tests),
                         t.fix));
      continue;
    }
    out.push_back(Make(
        t.name, Status::kOk,
        fmt::format("a test program ran in the sandbox in {:.2f} s: {} will run", s, t.tests)));
  }
  return out;
}

// ---- media -----------------------------------------------------------------------------------

std::vector<Check> CheckMedia() {
  struct One {
    const char* check;
    const char* asset;
    const char* what;
    const char* fix;
  };

  // A text-bearing chart (cairo + pango + fonts), the small probe video (libavcodec H.264) and
  // speech (espeak-ng): the libraries every media test needs.
  const One ones[] = {
      {"media.image", "bar_chart", "PNG (cairo, pango)",
       "apt-get install libcairo2 libpango-1.0-0 fonts-dejavu-core"},
      {"media.video", "probe_video", "H.264 MP4 (libavcodec)",
       "apt-get install libavcodec59 (with libx264) libavformat59"},
      {"media.audio", "speech", "WAV speech (espeak-ng)",
       "apt-get install libespeak-ng1 espeak-ng-data"},
  };
  std::vector<Check> out;
  for (const One& o : ones) {
    const auto t0 = Clock::now();
    auto asset = media::Generate(o.asset);
    const double ms = SecondsSince(t0) * 1000;
    if (!asset) {
      out.push_back(Make(
          o.check, Status::kFail,
          fmt::format("{} '{}' could not be generated: {}", o.what, o.asset, asset.error().message),
          o.fix));
      continue;
    }
    out.push_back(Make(
        o.check, Status::kOk,
        fmt::format("{} '{}': {} bytes in {:.0f} ms", o.what, o.asset, asset->bytes.size(), ms)));
  }
  return out;
}

// ---- limits and clock ------------------------------------------------------------------------

std::uint64_t FdsNeeded(int concurrency) {
  // One connection per stream, plus stdio, the journal and results files, curl's own
  // descriptors, the sandbox's pipes and the simulator's sockets when it runs in-process.
  return static_cast<std::uint64_t>(std::max(concurrency, 1)) + 64;
}

Check CheckOpenFiles(int concurrency, std::uint64_t soft, std::uint64_t hard) {
  const std::uint64_t needed = FdsNeeded(concurrency);
  auto show = [](std::uint64_t v) {
    return v == static_cast<std::uint64_t>(RLIM_INFINITY) ? std::string("unlimited")
                                                          : std::to_string(v);
  };
  const std::string limits = fmt::format("RLIMIT_NOFILE soft {}, hard {}", show(soft), show(hard));
  if (hard < needed) {
    return Make("limits.open_files", Status::kFail,
                fmt::format("{}: {} concurrent streams (doctor --concurrency) need about {} "
                            "descriptors (one connection per stream + 64); streams beyond the "
                            "limit fail to connect",
                            limits, concurrency, needed),
                fmt::format("raise the hard limit: ulimit -Hn {0} (as root), LimitNOFILE={0} "
                            "(systemd), docker run --ulimit nofile={0}:{0}; or lower the "
                            "concurrency",
                            needed));
  }
  return Make(
      "limits.open_files", Status::kOk,
      fmt::format("{}: enough for {} concurrent streams (about {} needed{})", limits, concurrency,
                  needed,
                  soft < needed ? "; servebench raises the soft limit to the hard one" : ""));
}

Check CheckOpenFiles(int concurrency) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    return Make("limits.open_files", Status::kWarn, "RLIMIT_NOFILE could not be read");
  }
  return CheckOpenFiles(concurrency, lim.rlim_cur, lim.rlim_max);
}

Check CheckClockSource(std::string_view source) {
  const std::string name(Trim(source));
  if (name.empty()) {
    return Make("clock.source", Status::kWarn,
                "the clock source could not be read (no /sys?): timestamps are as good as the "
                "kernel's clock, which could not be checked");
  }
  if (name == "tsc" || name == "arch_sys_counter") {
    return Make(
        "clock.source", Status::kOk,
        fmt::format("{}: clock_gettime is a vDSO read of the CPU counter (tens of ns)", name));
  }
  std::string why;
  if (name == "kvm-clock" || name == "hyperv_clocksource_tsc_page" || name == "xen") {
    why =
        "a paravirtual clock: reads go through the hypervisor's page (or, on some Xen "
        "guests, a system call) and can jitter under host load";
  } else if (name == "hpet" || name == "acpi_pm" || name == "jiffies") {
    why =
        "no vDSO fast path: every timestamp is a system call of a microsecond or more, which "
        "blurs per-token times at high token rates";
  } else {
    why = "not the CPU's time-stamp counter: timestamps may be slower or coarser to read";
  }
  return Make("clock.source", Status::kWarn, fmt::format("{}: {}", name, why),
              "if the CPU has an invariant TSC: echo tsc > "
              "/sys/devices/system/clocksource/clocksource0/current_clocksource (or boot with "
              "clocksource=tsc tsc=reliable)");
}

Check CheckClockSource() {
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  std::getline(in, name);
  return CheckClockSource(name);
}

// ---- endpoint --------------------------------------------------------------------------------

namespace {

// One chat request with a small asset of `modality`, as the suite runner's probe sends it.
// image_accepted: the image probe succeeded (a refused video_url is then sent as frames).
Check ProbeModality(client::Client& c, const std::string& model, client::ServerKind kind,
                    const std::string& modality, std::chrono::milliseconds timeout,
                    bool image_accepted) {
  const std::string name = "endpoint." + modality;
  const char* asset_name = modality == "image"   ? "probe_image"
                           : modality == "video" ? "probe_video"
                                                 : "probe_audio";
  auto asset = media::Generate(asset_name);
  if (!asset) {
    return Make(name, Status::kWarn, "not probed: " + asset.error().message);
  }
  json parts = json::array();
  if (modality == "image") {
    parts.push_back(json{{"type", "image_url"}, {"image_url", {{"url", media::DataUri(*asset)}}}});
  } else if (modality == "video") {
    parts.push_back(json{{"type", "video_url"}, {"video_url", {{"url", media::DataUri(*asset)}}}});
  } else {
    parts.push_back(
        json{{"type", "input_audio"},
             {"input_audio", {{"data", media::Base64(asset->bytes)}, {"format", "wav"}}}});
  }
  const std::string prompt = "Describe this in one word.";
  parts.push_back(json{{"type", "text"}, {"text", prompt}});
  client::ChatParams params;
  params.model = model;
  params.messages.push_back({"user", prompt, parts.dump()});
  params.max_tokens = 8;
  client::ChatCall call;
  call.id = 1;
  call.body = client::BuildChatBody(params, kind);
  call.total_timeout = timeout;
  auto rs = c.RunChats(std::span(&call, 1), {}, std::stop_token());
  const client::ChatResponse& r = rs.front();
  if (r.outcome == client::Outcome::kOk) {
    return Make(name, Status::kOk, modality + " input accepted: " + modality + " tests will run");
  }
  const bool bad_request =
      r.http_status == 400 || r.http_status == 415 || r.http_status == 422 || r.http_status == 501;
  if (r.outcome == client::Outcome::kHttpError &&
      (bad_request ||
       suite::IsUnsupportedError(r.http_status, r.error_body.empty() ? r.reason : r.error_body))) {
    std::string consequence = modality + " tests will be UNSUPPORTED";
    std::string fix = "serve a model (or start the server with options) that accepts " + modality;
    if (modality == "video") {
      consequence = image_accepted ? "video tests send their videos as frames (images) instead, "
                                     "with --video-transport auto (the default)"
                                   : "video tests will be UNSUPPORTED (images are not accepted "
                                     "either, so frames cannot replace video_url)";
    }
    if (kind == client::ServerKind::kLlamaCpp && modality != "audio") {
      fix = "start llama-server with the model's --mmproj file";
    }
    return Make(name, Status::kWarn,
                fmt::format("{} input refused ({}): {}", modality, r.reason, consequence), fix);
  }
  return Make(name, Status::kWarn,
              fmt::format("{} probe failed ({}): unknown whether {} input works", modality,
                          r.reason, modality),
              "check the server's log for this request");
}

// The body fields force_length adds for this server, from the one place that knows them.
std::vector<std::string> ForceLengthFields(client::ServerKind kind) {
  client::ChatParams p;
  p.model = "m";
  p.messages.push_back({"user", "x", ""});
  const json plain = json::parse(client::BuildChatBody(p, kind), nullptr, false);
  p.force_length = true;
  const json forced = json::parse(client::BuildChatBody(p, kind), nullptr, false);
  std::vector<std::string> fields;
  if (plain.is_object() && forced.is_object()) {
    for (auto it = forced.begin(); it != forced.end(); ++it) {
      if (!plain.contains(it.key()) || plain[it.key()] != it.value()) {
        fields.push_back(it.key());
      }
    }
  }
  return fields;
}

Check CheckTokenize(client::Client& c, const std::string& model) {
  json chat = {{"model", model}, {"messages", {{{"role", "user"}, {"content", "Hello there"}}}}};
  auto r = c.Post("/tokenize", chat.dump());
  if (r && r->status == 200) {
    json j = json::parse(r->body, nullptr, false);
    if (j.is_object() && j.contains("count") && j["count"].is_number_integer()) {
      return Make("endpoint.tokenize", Status::kOk,
                  "/tokenize counts chat messages (template included): prompt sizes are fitted "
                  "to the server's count, to the nearest filler word (a size no word count "
                  "hits is named in a warning)");
    }
  }
  json content = {{"content", "Hello there"}, {"add_special", false}};
  r = c.Post("/tokenize", content.dump());
  if (r && r->status == 200) {
    json j = json::parse(r->body, nullptr, false);
    if (j.is_object() && j.contains("tokens") && j["tokens"].is_array()) {
      return Make("endpoint.tokenize", Status::kOk,
                  "/tokenize counts plain text: prompt sizes are fitted to its count plus the "
                  "chat template's overhead (measured once), to the nearest filler word; the "
                  "overhead can be off by a token or two, and each record keeps the count the "
                  "server billed");
    }
  }
  return Make("endpoint.tokenize", Status::kWarn,
              fmt::format("no usable /tokenize ({}): prompt sizes are calibrated from "
                          "usage.prompt_tokens, a few tokens off",
                          !r ? r.error().message : fmt::format("HTTP {}", r->status)),
              "vLLM, SGLang, llama.cpp and the simulator have one; behind a proxy, let "
              "/tokenize through");
}

// llama.cpp reports drafting per response (timings.draft_n), not in /metrics: one short chat.
// The drafted and accepted counts of that response; nullopt when it has none.
std::optional<perf::SpecWindow> ProbeTimingsDrafts(client::Client& c, const std::string& model,
                                                   client::ServerKind kind,
                                                   std::chrono::milliseconds timeout) {
  client::ChatParams params;
  params.model = model;
  params.messages.push_back({"user", "Count to five.", ""});
  params.max_tokens = 8;
  client::ChatCall call;
  call.id = 1;
  call.body = client::BuildChatBody(params, kind);
  call.total_timeout = timeout;
  auto rs = c.RunChats(std::span(&call, 1), {}, std::stop_token());
  perf::SpecWindow window;
  if (rs.front().outcome != client::Outcome::kOk ||
      !perf::AddTimingsDrafts(rs.front().timings_json, window)) {
    return std::nullopt;
  }
  return window;
}

Check SpecFromTimings(const std::optional<perf::SpecWindow>& drafts, const std::string& without) {
  if (!drafts) {
    return Make("endpoint.spec_decoding", Status::kOk, without);
  }
  return Make("endpoint.spec_decoding", Status::kOk,
              fmt::format("the server drafts: its responses report timings.draft_n ({:.0f} "
                          "drafted, {:.0f} accepted in a probe); acceptance is measured per run",
                          drafts->draft_tokens, drafts->accepted_tokens));
}

std::vector<Check> CheckMetrics(client::Client& c, const std::string& model,
                                client::ServerKind kind, std::chrono::milliseconds timeout) {
  std::vector<Check> out;
  auto r = c.Get("/metrics");
  if (!r || r->status != 200) {
    const std::string why = !r ? r.error().message : fmt::format("HTTP {}", r->status);
    out.push_back(Make("endpoint.metrics", Status::kWarn,
                       fmt::format("no /metrics ({}): no server-side counters, other traffic "
                                   "on the server goes unnoticed",
                                   why),
                       "vLLM/SGLang: enabled by default (SGLang: --enable-metrics); llama.cpp: "
                       "--metrics"));
    if (auto drafts = ProbeTimingsDrafts(c, model, kind, timeout)) {
      out.push_back(SpecFromTimings(drafts, ""));
    } else {
      out.push_back(Make("endpoint.spec_decoding", Status::kWarn,
                         "unknown: no /metrics counters and no per-response draft counts",
                         "enable /metrics (above)"));
    }
    return out;
  }
  auto samples = perf::ParsePrometheus(r->body);
  if (!samples) {
    out.push_back(Make("endpoint.metrics", Status::kWarn,
                       "/metrics answers but does not parse: " + samples.error().message,
                       "check what serves /metrics (a proxy?)"));
    return out;
  }
  out.push_back(
      Make("endpoint.metrics", Status::kOk, fmt::format("/metrics: {} samples", samples->size())));
  auto spec = perf::ReadSpecCounters(*samples);
  const bool has_spec = spec && (spec->draft_tokens || spec->accepted_tokens ||
                                 spec->gauge_accept_length || spec->gauge_accept_rate);
  if (has_spec) {
    out.push_back(Make("endpoint.spec_decoding", Status::kOk,
                       fmt::format("speculative-decoding counters found ({}): acceptance is "
                                   "measured per run",
                                   spec->source)));
  } else {
    out.push_back(SpecFromTimings(ProbeTimingsDrafts(c, model, kind, timeout),
                                  "no speculative-decoding counters in /metrics and no draft "
                                  "counts in its responses: the server does not draft (or does "
                                  "not report it)"));
  }
  return out;
}

}  // namespace

std::vector<Check> CheckEndpoint(const Options& options) {
  std::vector<Check> out;
  client::ClientOptions co;
  co.endpoint = options.endpoint;
  co.api_key = options.api_key;
  co.ca_cert = options.ca_cert;
  co.insecure = options.insecure;
  co.connect_timeout = std::chrono::milliseconds(5'000);
  const auto timeout =
      std::chrono::milliseconds(static_cast<long long>(std::max(options.timeout_s, 1.0) * 1000));
  co.first_byte_timeout = timeout;
  co.total_timeout = timeout;
  client::Client c(co);
  if (auto ok = c.Validate(); !ok) {
    out.push_back(Make("endpoint.server", Status::kFail, ok.error().message,
                       "give --endpoint as http(s)://host:port (with or without /v1)"));
    return out;
  }
  auto info = client::DetectServer(c);
  if (!info) {
    const std::string& why = info.error().message;
    const bool tls = why.find("TLS certificate") != std::string::npos ||
                     why.find("CA certificate") != std::string::npos;
    out.push_back(
        Make("endpoint.server", Status::kFail,
             fmt::format("{} cannot be reached: {}", options.endpoint, why),
             tls ? std::string("trust the server's CA with --ca-cert FILE (PEM), or skip the "
                               "certificate check with --insecure")
                 : fmt::format("start the server, or check the URL and the API key: "
                               "curl {}/v1/models",
                               c.root())));
    return out;
  }
  std::string models;
  for (std::size_t i = 0; i < info->models.size() && i < 5; ++i) {
    models += (i ? ", " : "") + PrintableLine(info->models[i], 200);
  }
  if (info->models.size() > 5) {
    models += fmt::format(" (+{})", info->models.size() - 5);
  }
  out.push_back(Make(
      "endpoint.server", Status::kOk,
      fmt::format(
          "{} {}, serving {}{}", client::ServerKindName(info->kind),
          info->version.empty() ? "(version unknown)" : info->version, models,
          info->max_model_len > 0 ? fmt::format(", context {} tokens", info->max_model_len) : "")));
  auto model = client::ChooseModel(*info, options.model);
  if (!model) {
    out.push_back(Make("endpoint.model", Status::kFail, model.error().message,
                       "pick one of the served models with --model"));
    return out;
  }
  out.push_back(Make("endpoint.model", Status::kOk, "runs will use " + PrintableLine(*model, 200)));
  std::string fields;
  for (const std::string& f : ForceLengthFields(info->kind)) {
    fields += (fields.empty() ? "" : ", ") + f;
  }
  if (client::CanForceLength(info->kind)) {
    out.push_back(Make("endpoint.force_length", Status::kOk,
                       fmt::format("speed profiles force their output length with {}", fields)));
  } else {
    out.push_back(
        Make("endpoint.force_length", Status::kWarn,
             fields.empty()
                 ? fmt::format("{} cannot force an output length: answers may stop early, so "
                               "tokens per request vary",
                               client::ServerKindName(info->kind))
                 : fmt::format("server kind unknown: {} are sent, but may be ignored (answers may "
                               "stop early)",
                               fields),
             "for exact lengths use vLLM, SGLang or llama.cpp"));
  }
  bool image_accepted = false;
  for (const char* m : {"image", "video", "audio"}) {
    out.push_back(ProbeModality(c, *model, info->kind, m, timeout, image_accepted));
    if (out.back().name == "endpoint.image") {
      image_accepted = out.back().status == Status::kOk;
    }
  }
  out.push_back(CheckTokenize(c, *model));
  for (Check& ch : CheckMetrics(c, *model, info->kind, timeout)) {
    out.push_back(std::move(ch));
  }
  return out;
}

// ---- all, and output -------------------------------------------------------------------------

std::vector<Check> RunAll(const Options& options) {
  std::vector<Check> out = CheckSandbox();
  auto append = [&out](std::vector<Check> more) {
    for (Check& c : more) {
      out.push_back(std::move(c));
    }
  };
  append(CheckCodeTools(options));
  append(CheckMedia());
  out.push_back(CheckOpenFiles(options.concurrency));
  out.push_back(CheckClockSource());
  if (!options.endpoint.empty()) {
    append(CheckEndpoint(options));
  }
  return out;
}

int ExitCode(const std::vector<Check>& checks) {
  return std::any_of(checks.begin(), checks.end(),
                     [](const Check& c) { return c.status == Status::kFail; })
             ? 1
             : 0;
}

std::string RenderText(const std::vector<Check>& checks) {
  std::size_t width = 0;
  int counts[3] = {0, 0, 0};
  for (const Check& c : checks) {
    width = std::max(width, c.name.size());
    ++counts[static_cast<int>(c.status)];
  }
  std::string out;
  for (const Check& c : checks) {
    out += fmt::format("{:<5} {:<{}}  {}\n", StatusName(c.status), c.name, width, c.detail);
    if (c.status != Status::kOk && !c.fix.empty()) {
      out += fmt::format("{:<5} {:<{}}  fix: {}\n", "", "", width, c.fix);
    }
  }
  out += fmt::format("\n{} OK, {} WARN, {} FAIL: {}\n", counts[0], counts[1], counts[2],
                     counts[2] > 0 ? "a default run will not work here (exit 1)"
                     : counts[1] > 0
                         ? "a default run works; the WARN lines say what is weaker or skipped"
                         : "everything works");
  return out;
}

json ToJson(const std::vector<Check>& checks) {
  json list = json::array();
  int counts[3] = {0, 0, 0};
  for (const Check& c : checks) {
    ++counts[static_cast<int>(c.status)];
    list.push_back(
        {{"name", c.name}, {"status", StatusName(c.status)}, {"detail", c.detail}, {"fix", c.fix}});
  }
  return json{{"schema", "servebench.doctor/1"},
              {"exit_code", ExitCode(checks)},
              {"counts", {{"ok", counts[0]}, {"warn", counts[1]}, {"fail", counts[2]}}},
              {"checks", list}};
}

}  // namespace sb::doctor
