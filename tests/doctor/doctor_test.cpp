// servebench doctor: each check against known inputs, the endpoint checks against the simulator,
// an unreachable endpoint, and the sandbox lines of the binary run under a seccomp filter that
// refuses namespaces.
#include "doctor/doctor.h"

#include <cerrno>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sched.h>
#include <seccomp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sim/sim_server.h"
#include "support/script_server.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "support/tls_server.h"

namespace {

using json = nlohmann::json;
using sb::doctor::Check;
using sb::doctor::Status;

// When SB_DOCTOR_TEST_DENY_NS is set, this executable is only a launcher: before main (so with
// one thread), it installs a seccomp filter that refuses every namespace (unshare, clone with a
// CLONE_NEW* flag; clone3 is ENOSYS so that glibc falls back to clone) and execs
// `servebench doctor --json`. The doctor's sandbox probe then runs where namespaces are denied.
[[maybe_unused]] const int kLauncher = [] {
  if (std::getenv("SB_DOCTOR_TEST_DENY_NS") == nullptr) {
    return 0;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) {
    _exit(126);
  }
  int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0);
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  for (unsigned long flag :
       {CLONE_NEWUSER, CLONE_NEWNET, CLONE_NEWPID, CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUTS}) {
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                           SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
  }
  if (rc != 0 || seccomp_load(ctx) != 0) {
    _exit(126);
  }
  execl(SB_BINARY, SB_BINARY, "doctor", "--json", "--concurrency", "4", nullptr);
  _exit(127);
}();

const Check* Find(const std::vector<Check>& checks, const std::string& name) {
  for (const Check& c : checks) {
    if (c.name == name) {
      return &c;
    }
  }
  return nullptr;
}

const json* FindJson(const json& report, const std::string& name) {
  for (const json& c : report["checks"]) {
    if (c["name"] == name) {
      return &c;
    }
  }
  return nullptr;
}

// A loopback port that refuses connections (bound, then closed).
int ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

std::unique_ptr<sb::sim::SimServer> StartSim(sb::sim::SimOptions o) {
  o.ttft_ms = 1;
  o.itl_ms = 0.2;
  auto sim = sb::sim::SimServer::Start(o);
  EXPECT_TRUE(sim) << (sim ? "" : sim.error().message);
  return sim ? std::move(*sim) : nullptr;
}

// ---- limits and clock ------------------------------------------------------------------------

TEST(DoctorTest, OpenFilesEnoughForSmallConcurrency) {
  Check c = sb::doctor::CheckOpenFiles(4, 1024, 4096);
  EXPECT_EQ(c.name, "limits.open_files");
  EXPECT_EQ(c.status, Status::kOk) << c.detail;
  EXPECT_NE(c.detail.find("soft 1024, hard 4096"), std::string::npos) << c.detail;
}

TEST(DoctorTest, OpenFilesTooFewForHugeConcurrencyFails) {
  Check c = sb::doctor::CheckOpenFiles(100'000, 1024, 4096);
  EXPECT_EQ(c.status, Status::kFail) << c.detail;
  // The count and the doctor flag that gave it; run and perf have no --concurrency flag.
  EXPECT_NE(c.detail.find("100000 concurrent streams (doctor --concurrency)"), std::string::npos)
      << c.detail;
  EXPECT_NE(c.fix.find("ulimit -Hn"), std::string::npos) << c.fix;
  EXPECT_EQ(sb::doctor::ExitCode({c}), 1);
}

TEST(DoctorTest, OpenFilesSoftBelowButHardEnoughIsOk) {
  // servebench raises its soft limit to the hard one at start.
  Check c = sb::doctor::CheckOpenFiles(2000, 1024, RLIM_INFINITY);
  EXPECT_EQ(c.status, Status::kOk) << c.detail;
  EXPECT_NE(c.detail.find("hard unlimited"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("raises the soft limit"), std::string::npos) << c.detail;
}

TEST(DoctorTest, ClockSource) {
  EXPECT_EQ(sb::doctor::CheckClockSource("tsc\n").status, Status::kOk);
  Check kvm = sb::doctor::CheckClockSource("kvm-clock");
  EXPECT_EQ(kvm.status, Status::kWarn);
  EXPECT_NE(kvm.detail.find("paravirtual"), std::string::npos) << kvm.detail;
  EXPECT_FALSE(kvm.fix.empty());
  Check hpet = sb::doctor::CheckClockSource("hpet");
  EXPECT_EQ(hpet.status, Status::kWarn);
  EXPECT_NE(hpet.detail.find("system call"), std::string::npos) << hpet.detail;
  EXPECT_EQ(sb::doctor::CheckClockSource("").status, Status::kWarn);
  // A WARN never changes the exit code.
  EXPECT_EQ(sb::doctor::ExitCode({hpet, kvm}), 0);
}

// ---- media, code tools -----------------------------------------------------------------------

TEST(DoctorTest, MediaGeneratesOneOfEachKind) {
  std::vector<Check> checks = sb::doctor::CheckMedia();
  ASSERT_EQ(checks.size(), 3u);
  for (const char* name : {"media.image", "media.video", "media.audio"}) {
    const Check* c = Find(checks, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(c->status, Status::kOk) << c->detail;
    EXPECT_NE(c->detail.find(" ms"), std::string::npos) << c->detail;
  }
}

TEST(DoctorTest, MissingInterpreterWarnsThatPythonTestsFail) {
  sb::doctor::Options o;
  o.python = "/nonexistent/python3";
  o.cxx = "/nonexistent/g++";
  std::vector<Check> checks = sb::doctor::CheckCodeTools(o);
  const Check* py = Find(checks, "code.python");
  ASSERT_NE(py, nullptr);
  EXPECT_EQ(py->status, Status::kWarn);
  EXPECT_NE(py->detail.find("/nonexistent/python3"), std::string::npos) << py->detail;
  EXPECT_NE(py->detail.find("will FAIL"), std::string::npos) << py->detail;
  EXPECT_NE(py->fix.find("--python"), std::string::npos);
  const Check* cpp = Find(checks, "code.cpp");
  ASSERT_NE(cpp, nullptr);
  EXPECT_EQ(cpp->status, Status::kWarn);
  EXPECT_EQ(sb::doctor::ExitCode(checks), 0);
}

TEST(DoctorTest, PythonRunsInTheSandbox) {
  if (access("/usr/bin/python3", X_OK) != 0) {
    GTEST_SKIP() << "no /usr/bin/python3";
  }
  sb::doctor::Options o;
  o.cxx = "/nonexistent/g++";  // keep the test fast: no compile
  const Check* py = Find(sb::doctor::CheckCodeTools(o), "code.python");
  ASSERT_NE(py, nullptr);
  EXPECT_EQ(py->status, Status::kOk) << py->detail;
}

// ---- endpoint --------------------------------------------------------------------------------

TEST(DoctorTest, SimulatorRefusingImageAndAudio) {
  sb::sim::SimOptions so;
  so.reject = {"image", "audio"};
  so.spec_tokens = 2;
  so.spec_accept = {0.8, 0.5};
  auto sim = StartSim(so);
  ASSERT_TRUE(sim);
  sb::doctor::Options o;
  o.endpoint = sim->base_url();
  std::vector<Check> checks = sb::doctor::CheckEndpoint(o);
  auto status = [&](const std::string& name) {
    const Check* c = Find(checks, name);
    EXPECT_NE(c, nullptr) << name;
    return c != nullptr ? c->status : Status::kFail;
  };
  const Check* server = Find(checks, "endpoint.server");
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->status, Status::kOk);
  EXPECT_NE(server->detail.find("sim"), std::string::npos) << server->detail;
  EXPECT_NE(server->detail.find("sim-model"), std::string::npos) << server->detail;
  const Check* force = Find(checks, "endpoint.force_length");
  ASSERT_NE(force, nullptr);
  EXPECT_EQ(force->status, Status::kOk);
  EXPECT_NE(force->detail.find("min_tokens"), std::string::npos) << force->detail;
  EXPECT_NE(force->detail.find("ignore_eos"), std::string::npos) << force->detail;

  const Check* image = Find(checks, "endpoint.image");
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(image->status, Status::kWarn);
  EXPECT_NE(image->detail.find("refused"), std::string::npos) << image->detail;
  EXPECT_NE(image->detail.find("UNSUPPORTED"), std::string::npos) << image->detail;
  const Check* audio = Find(checks, "endpoint.audio");
  ASSERT_NE(audio, nullptr);
  EXPECT_EQ(audio->status, Status::kWarn);
  EXPECT_NE(audio->detail.find("refused"), std::string::npos) << audio->detail;
  const Check* video = Find(checks, "endpoint.video");
  ASSERT_NE(video, nullptr);
  EXPECT_EQ(video->status, Status::kOk) << video->detail;
  EXPECT_NE(video->detail.find("accepted"), std::string::npos) << video->detail;

  EXPECT_EQ(status("endpoint.tokenize"), Status::kOk);
  EXPECT_EQ(status("endpoint.metrics"), Status::kOk);
  const Check* spec = Find(checks, "endpoint.spec_decoding");
  ASSERT_NE(spec, nullptr);
  EXPECT_NE(spec->detail.find("counters found"), std::string::npos) << spec->detail;
  EXPECT_EQ(sb::doctor::ExitCode(checks), 0);
}

TEST(DoctorTest, SimulatorWithoutSpeculativeDecodingHasNoCounters) {
  auto sim = StartSim({});
  ASSERT_TRUE(sim);
  sb::doctor::Options o;
  o.endpoint = sim->base_url();
  std::vector<Check> checks = sb::doctor::CheckEndpoint(o);
  for (const char* name : {"endpoint.image", "endpoint.video", "endpoint.audio"}) {
    const Check* c = Find(checks, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(c->status, Status::kOk) << c->detail;
  }
  const Check* spec = Find(checks, "endpoint.spec_decoding");
  ASSERT_NE(spec, nullptr);
  EXPECT_NE(spec->detail.find("no speculative-decoding counters"), std::string::npos)
      << spec->detail;
}

// A drafting llama.cpp server (b9821 with a draft model, its captured answers replayed): its
// /metrics has no speculative-decoding counters, but every response carries timings.draft_n.
// doctor said "the server does not draft".
TEST(DoctorTest, LlamaCppDraftingIsSeenInItsResponsesTimings) {
  const std::string dir = std::string(SB_FIXTURES_DIR) + "/llama.cpp/b9821-spec/";
  auto body = [&](const std::string& name) {
    return sb::testing::ReadFile(dir + "resp_" + name + ".txt");
  };
  const std::string models = body("models");
  const std::string props = body("props");
  const std::string metrics = body("metrics_before");
  const std::string stream = body("chat_stream_usage");
  const std::string tokenize_body = body("tokenize");
  ASSERT_NE(stream.find("\"draft_n\":8"), std::string::npos);
  ASSERT_EQ(metrics.find("draft"), std::string::npos);  // no counters to find
  sb::testing::ScriptServer server([&](const sb::testing::ScriptRequest& r) {
    sb::testing::Script s;
    auto json_body = [&](const std::string& b) {
      s.Send(sb::testing::FullResponse(200, "application/json; charset=utf-8", b));
    };
    if (r.path == "/v1/models") {
      json_body(models);
    } else if (r.path == "/props") {
      json_body(props);
    } else if (r.path == "/tokenize" && r.body.find("\"content\"") != std::string::npos) {
      json_body(tokenize_body);
    } else if (r.path == "/metrics") {
      s.Send(sb::testing::FullResponse(200, "text/plain; version=0.0.4", metrics));
    } else if (r.path == "/v1/chat/completions" &&
               r.body.find("\"image_url\"") == std::string::npos &&
               r.body.find("\"video_url\"") == std::string::npos &&
               r.body.find("\"input_audio\"") == std::string::npos) {
      s.Send(sb::testing::SseHead())
          .Send(sb::testing::Chunk(stream))
          .Send(sb::testing::LastChunk());
    } else {
      s.Send(sb::testing::FullResponse(404, "application/json",
                                       R"({"error":{"code":404,"message":"File Not Found"}})"));
    }
    return s;
  });
  sb::doctor::Options o;
  o.endpoint = server.url() + "/v1";
  std::vector<Check> checks = sb::doctor::CheckEndpoint(o);
  const Check* spec = Find(checks, "endpoint.spec_decoding");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->status, Status::kOk);
  EXPECT_NE(spec->detail.find("the server drafts: its responses report timings.draft_n (8 "
                              "drafted, 5 accepted in a probe)"),
            std::string::npos)
      << spec->detail;
  const Check* tokenize = Find(checks, "endpoint.tokenize");
  ASSERT_NE(tokenize, nullptr);
  // Sizes are fitted to the word, and the template's overhead is an estimate: not "exact".
  EXPECT_EQ(tokenize->status, Status::kOk) << tokenize->detail;
  EXPECT_NE(tokenize->detail.find("fitted to its count plus the chat template's overhead"),
            std::string::npos)
      << tokenize->detail;
}

TEST(DoctorTest, VideoRefusedWithImagesRefusedTooIsUnsupported) {
  sb::sim::SimOptions so;
  so.reject = {"image", "video"};
  auto sim = StartSim(so);
  ASSERT_TRUE(sim);
  sb::doctor::Options o;
  o.endpoint = sim->base_url();
  std::vector<Check> checks = sb::doctor::CheckEndpoint(o);
  const Check* video = Find(checks, "endpoint.video");
  ASSERT_NE(video, nullptr);
  EXPECT_EQ(video->status, Status::kWarn);
  EXPECT_NE(video->detail.find("UNSUPPORTED"), std::string::npos) << video->detail;
  const Check* audio = Find(checks, "endpoint.audio");
  ASSERT_NE(audio, nullptr);
  EXPECT_EQ(audio->status, Status::kOk) << audio->detail;
}

TEST(DoctorTest, UnknownModelFails) {
  auto sim = StartSim({});
  ASSERT_TRUE(sim);
  sb::doctor::Options o;
  o.endpoint = sim->base_url();
  o.model = "no-such-model";
  std::vector<Check> checks = sb::doctor::CheckEndpoint(o);
  const Check* model = Find(checks, "endpoint.model");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->status, Status::kFail);
  EXPECT_EQ(sb::doctor::ExitCode(checks), 1);
}

TEST(DoctorTest, UnreachableEndpointFails) {
  sb::doctor::Options o;
  o.endpoint = "http://127.0.0.1:" + std::to_string(ClosedPort());
  std::vector<Check> checks = sb::doctor::CheckEndpoint(o);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].name, "endpoint.server");
  EXPECT_EQ(checks[0].status, Status::kFail);
  EXPECT_NE(checks[0].detail.find("cannot be reached"), std::string::npos) << checks[0].detail;
  EXPECT_FALSE(checks[0].fix.empty());
  EXPECT_EQ(sb::doctor::ExitCode(checks), 1);
}

// An HTTPS endpoint with a self-signed certificate: without --ca-cert the one FAIL says the
// certificate is not trusted and the fix names --ca-cert/--insecure; with the certificate as the
// CA (or --insecure) the server is found and its model chosen.
TEST(DoctorTest, HttpsEndpointNeedsItsCaOrInsecure) {
  sb::testing::TempDir dir;
  const sb::testing::Identity id = sb::testing::MakeIdentity();
  ASSERT_TRUE(id.cert);
  const auto ca = dir.path() / "server.pem";
  sb::testing::WritePem(id, ca);
  sb::testing::TlsServer server(id, [](const std::string& request) {
    const bool models = request.rfind("GET /v1/models ", 0) == 0;
    const std::string body =
        models ? R"({"object":"list","data":[{"id":"tls-model","object":"model"}]})" : "{}";
    return std::string("HTTP/1.1 ") + (models ? "200 OK" : "404 Not Found") +
           "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  });
  sb::doctor::Options o;
  o.endpoint = server.url();
  o.timeout_s = 5;
  std::vector<Check> checks = sb::doctor::CheckEndpoint(o);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].status, Status::kFail);
  EXPECT_NE(checks[0].detail.find("TLS certificate not trusted"), std::string::npos)
      << checks[0].detail;
  EXPECT_NE(checks[0].fix.find("--ca-cert"), std::string::npos) << checks[0].fix;
  EXPECT_NE(checks[0].fix.find("--insecure"), std::string::npos) << checks[0].fix;
  // (The server counts the refused handshake on its own thread, maybe after this point: not
  // asserted here.)

  for (bool insecure : {false, true}) {
    sb::doctor::Options trusted = o;
    trusted.ca_cert = insecure ? "" : ca.string();
    trusted.insecure = insecure;
    checks = sb::doctor::CheckEndpoint(trusted);
    const Check* srv = Find(checks, "endpoint.server");
    ASSERT_NE(srv, nullptr);
    EXPECT_EQ(srv->status, Status::kOk) << srv->detail;
    const Check* model = Find(checks, "endpoint.model");
    ASSERT_NE(model, nullptr) << "insecure=" << insecure;
    EXPECT_EQ(model->status, Status::kOk);
    EXPECT_NE(model->detail.find("tls-model"), std::string::npos) << model->detail;
  }
}

// ---- rendering -------------------------------------------------------------------------------

TEST(DoctorTest, TextAndJson) {
  std::vector<Check> checks = {{"a.one", Status::kOk, "fine", ""},
                               {"b.two", Status::kWarn, "weaker", "do this"},
                               {"c.three", Status::kFail, "broken", "do that"}};
  std::string text = sb::doctor::RenderText(checks);
  EXPECT_NE(text.find("OK    a.one    fine\n"), std::string::npos) << text;
  EXPECT_NE(text.find("WARN  b.two    weaker\n"), std::string::npos) << text;
  EXPECT_NE(text.find("fix: do this"), std::string::npos) << text;
  EXPECT_NE(text.find("1 OK, 1 WARN, 1 FAIL"), std::string::npos) << text;
  json j = sb::doctor::ToJson(checks);
  EXPECT_EQ(j["schema"], "servebench.doctor/1");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["counts"]["warn"], 1);
  EXPECT_EQ(j["checks"][2]["status"], "FAIL");
  EXPECT_EQ(j["checks"][1]["fix"], "do this");
}

// ---- the binary ------------------------------------------------------------------------------

TEST(DoctorCliTest, UnreachableEndpointExitsOne) {
  auto r = sb::testing::RunProcess(
      {SB_BINARY, "doctor", "--json", "--endpoint",
       "http://127.0.0.1:" + std::to_string(ClosedPort()), "--cxx", "/nonexistent/g++"},
      std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  const json* server = FindJson(j, "endpoint.server");
  ASSERT_NE(server, nullptr) << r.out;
  EXPECT_EQ((*server)["status"], "FAIL");
  for (const char* name :
       {"sandbox.isolation", "code.python", "media.video", "limits.open_files", "clock.source"}) {
    EXPECT_NE(FindJson(j, name), nullptr) << name;
  }
}

TEST(DoctorCliTest, SimulatorEndpointTextScreen) {
  sb::sim::SimOptions so;
  so.reject = {"video"};
  auto sim = StartSim(so);
  ASSERT_TRUE(sim);
  auto r = sb::testing::RunProcess({SB_BINARY, "doctor", "--endpoint", sim->base_url(),
                                    "--concurrency", "4", "--cxx", "/nonexistent/g++"},
                                   std::chrono::seconds(60));
  // Nothing a default run needs is missing here (WARNs do not count).
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("endpoint.video"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("video input refused"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("as frames"), std::string::npos) << r.out;  // images are accepted
  EXPECT_NE(r.out.find("fix: apt-get install g++"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" FAIL: "), std::string::npos) << r.out;
}

TEST(DoctorCliTest, UnreadableApiKeyFileIsASetupError) {
  auto r = sb::testing::RunProcess({SB_BINARY, "doctor", "--endpoint", "http://127.0.0.1:1",
                                    "--api-key-file", "/nonexistent/key"},
                                   std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("/nonexistent/key"), std::string::npos) << r.err;
}

TEST(DoctorCliTest, NamespacesDeniedBySeccompAreNotOk) {
  auto r = sb::testing::RunProcess({"/proc/self/exe"}, std::chrono::seconds(60),
                                   {"SB_DOCTOR_TEST_DENY_NS=1"});
  ASSERT_NE(r.exit_code, 126) << "could not install the seccomp filter";
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  for (const char* name : {"sandbox.network_namespace", "sandbox.pid_namespace"}) {
    const json* c = FindJson(j, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_NE((*c)["status"], "OK") << c->dump();
  }
  const json* iso = FindJson(j, "sandbox.isolation");
  ASSERT_NE(iso, nullptr);
  EXPECT_EQ((*iso)["detail"].get<std::string>().find("netns"), std::string::npos) << iso->dump();
  // Code tests still run (seccomp, Landlock, rlimits): no FAIL from the sandbox.
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

}  // namespace
