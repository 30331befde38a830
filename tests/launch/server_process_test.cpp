// ServerProcess against real processes on loopback: the servebench simulator (SB_BINARY), sh and
// sleep, and a scripted HTTP server standing in for a server's readiness routes.
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include "client/http_client.h"
#include "launch/launch.h"
#include "support/script_server.h"
#include "support/temp_dir.h"

namespace sb::launch {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

double SecondsSince(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

using sb::testing::ReadFile;

// What the server wrote to its log: every line but servebench's own "# servebench: " lines
// (which quote the command, and so the test's markers).
std::string Output(const std::filesystem::path& path) {
  std::string out;
  std::istringstream in(ReadFile(path));
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("# servebench: ")) {
      out += line + "\n";
    }
  }
  return out;
}

// Waits up to `limit` for `needle` to appear in the server's output.
bool WaitForText(const std::filesystem::path& path, const std::string& needle,
                 std::chrono::milliseconds limit = 3s) {
  const auto deadline = SteadyClock::now() + limit;
  while (Output(path).find(needle) == std::string::npos) {
    if (SteadyClock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// The number after "<label> " in the log (written by the test's shell commands), or -1.
pid_t NumberAfter(const std::string& text, const std::string& label) {
  const std::size_t at = text.find(label + " ");
  if (at == std::string::npos) {
    return -1;
  }
  return static_cast<pid_t>(std::atol(text.c_str() + at + label.size() + 1));
}

// True once pid no longer runs (gone, or a zombie waiting for init). Orphans are reaped by init
// on its own schedule, so this waits a little.
bool ProcessGone(pid_t pid, std::chrono::milliseconds limit = 2s) {
  const auto deadline = SteadyClock::now() + limit;
  while (true) {
    if (kill(pid, 0) != 0 && errno == ESRCH) {
      return true;
    }
    const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
    const std::size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z') {
      return true;
    }
    if (SteadyClock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(10ms);
  }
}

bool PortFree(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

std::string Json(int status, const std::string& body) {
  return testing::FullResponse(status, "application/json", body);
}

constexpr const char* kOneModel = R"({"object":"list","data":[{"id":"m","object":"model"}]})";

// A stand-in server whose readiness routes always pass.
testing::ScriptServer ReadyServer() {
  return testing::ScriptServer([](const testing::ScriptRequest& req) {
    testing::Script s;
    s.Send(req.path == "/v1/models" ? Json(200, kOneModel) : Json(200, "{}"));
    return s;
  });
}

class ServerProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           fmt_dir(std::string("sb_launch_") + info->name() + "_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
  }

  void TearDown() override { std::filesystem::remove_all(dir_); }

  static std::string fmt_dir(std::string s) {
    for (char& c : s) {
      if (c == '/') {
        c = '_';
      }
    }
    return s;
  }

  // A recipe that polls often, so the tests stay short.
  static Recipe Quick(std::string name) {
    Recipe r;
    r.name = std::move(name);
    r.poll_interval_s = 0.05;
    r.ready_timeout_s = 20;
    r.stop_timeout_s = 10;
    return r;
  }

  std::filesystem::path Log(const std::string& run = "run") const {
    return dir_ / run / "server.log";
  }

  std::filesystem::path dir_;
};

TEST_F(ServerProcessTest, SimulatorStartsAnswersAndStopsOnSigterm) {
  Recipe r = Quick("sim");
  r.argv = {SB_BINARY, "sim", "--port", "{port}", "--model", "launch-model"};
  const auto t0 = SteadyClock::now();
  auto started = ServerProcess::Start(r, Log());
  ASSERT_TRUE(started.has_value()) << started.error().message;
  ServerProcess& s = *started.value();
  EXPECT_LT(SecondsSince(t0), 10);
  EXPECT_GT(s.port(), 0);
  EXPECT_EQ(s.endpoint(), "http://127.0.0.1:" + std::to_string(s.port()) + "/v1");
  EXPECT_GT(s.time_to_ready_s(), 0);
  EXPECT_LT(s.time_to_ready_s(), 10);
  EXPECT_TRUE(s.Running());
  EXPECT_EQ(s.recipe().argv[3], std::to_string(s.port()));

  client::ClientOptions o;
  o.endpoint = s.endpoint();
  client::Client c(o);
  auto models = c.Get("/v1/models");
  ASSERT_TRUE(models.has_value()) << models.error().message;
  EXPECT_EQ(models->status, 200);
  EXPECT_NE(models->body.find("launch-model"), std::string::npos);

  const std::string listening = "listening on " + s.endpoint();
  ASSERT_TRUE(WaitForText(Log(), listening)) << ReadFile(Log());
  const std::string log = ReadFile(Log());
  EXPECT_EQ(log.rfind("# servebench: started ", 0), 0u) << log;
  EXPECT_NE(log.find(std::string(": ") + SB_BINARY + " sim --port " + std::to_string(s.port())),
            std::string::npos)
      << log;
  EXPECT_NE(s.LogTail(5).find(listening), std::string::npos);

  const auto stop_t0 = SteadyClock::now();
  const StopReport report = s.Stop();
  EXPECT_LT(SecondsSince(stop_t0), 5);
  EXPECT_FALSE(report.killed);
  EXPECT_FALSE(report.exited_before_stop);
  ASSERT_TRUE(report.exit_code.has_value()) << DescribeEnd(report);  // the sim exits on SIGTERM
  EXPECT_EQ(*report.exit_code, 0);
  EXPECT_FALSE(report.signal.has_value());
  EXPECT_FALSE(s.Running());
  EXPECT_TRUE(PortFree(s.port()));
  EXPECT_TRUE(ProcessGone(s.pid()));
  EXPECT_NE(ReadFile(Log()).find("# servebench: stopped "), std::string::npos);

  const StopReport again = s.Stop();  // idempotent
  EXPECT_EQ(again.exit_code, report.exit_code);
  EXPECT_DOUBLE_EQ(again.stop_s, report.stop_s);

  const json d = s.Describe(dir_ / "run");
  EXPECT_EQ(d["name"], "sim");
  EXPECT_EQ(d["port"], s.port());
  EXPECT_EQ(d["endpoint"], s.endpoint());
  EXPECT_EQ(d["log_file"], "server.log");
  EXPECT_EQ(d["ready_check"], "GET /health, GET /v1/models");
  EXPECT_DOUBLE_EQ(d["time_to_ready_s"].get<double>(), s.time_to_ready_s());
  EXPECT_EQ(d["stop"]["exit_code"], 0);
  EXPECT_EQ(d["stop"]["signal"], nullptr);
  EXPECT_EQ(d["stop"]["killed"], false);
}

TEST_F(ServerProcessTest, ShellChildrenAndEnvironment) {
  Recipe r = Quick("shell");
  r.env = {{"SB_LAUNCH_PORT", "{port}"}, {"SB_LAUNCH_TOKEN", "hunter2"}};
  r.command =
      std::string("echo \"env port $SB_LAUNCH_PORT\"; sleep 30 & echo \"child $!\"; exec '") +
      SB_BINARY + "' sim --port {port}";
  auto started = ServerProcess::Start(r, Log());
  ASSERT_TRUE(started.has_value()) << started.error().message;
  ServerProcess& s = *started.value();
  const std::string log = Output(Log());
  EXPECT_NE(log.find("env port " + std::to_string(s.port())), std::string::npos) << log;
  const pid_t child = NumberAfter(log, "child");
  ASSERT_GT(child, 0) << log;
  EXPECT_FALSE(ProcessGone(child, 0ms));
  EXPECT_EQ(s.command().find("sim --port " + std::to_string(s.port())) != std::string::npos, true);

  const StopReport report = s.Stop();
  EXPECT_FALSE(report.killed) << DescribeEnd(report);
  EXPECT_TRUE(ProcessGone(child)) << "the shell's background child outlived Stop()";
  EXPECT_TRUE(PortFree(s.port()));
  const json d = s.Describe();
  EXPECT_EQ(d["env"]["SB_LAUNCH_PORT"], std::to_string(s.port()));
  EXPECT_EQ(d["env"]["SB_LAUNCH_TOKEN"], "<redacted>");
  EXPECT_EQ(d["log_file"], Log().string());
}

TEST_F(ServerProcessTest, ExitBeforeReadyIsAnErrorWithTheLogTail) {
  Recipe r = Quick("boom");
  r.command = "echo starting on {port}; echo boom >&2; exit 3";
  const auto t0 = SteadyClock::now();
  auto started = ServerProcess::Start(r, Log());
  ASSERT_FALSE(started.has_value());
  EXPECT_LT(SecondsSince(t0), 3);
  const Error& e = started.error();
  EXPECT_EQ(e.code, ErrorCode::kSetup);
  EXPECT_NE(e.message.find("server 'boom' exited with code 3 before it was ready (after "),
            std::string::npos)
      << e.message;
  EXPECT_NE(e.message.find("last 2 lines of " + Log().string() + ":\n  starting on "),
            std::string::npos)
      << e.message;
  EXPECT_NE(e.message.find("\n  boom"), std::string::npos) << e.message;
  EXPECT_EQ(e.message.find("# servebench"), std::string::npos) << e.message;
}

TEST_F(ServerProcessTest, TheLogIsAppendedAndTheTailIsThisStartsOnly) {
  Recipe r = Quick("twice");
  r.command = "echo first-run-output {port}; exit 1";
  ASSERT_FALSE(ServerProcess::Start(r, Log()).has_value());
  r.command = "echo second-run-output {port}; exit 2";
  auto second = ServerProcess::Start(r, Log());
  ASSERT_FALSE(second.has_value());
  EXPECT_NE(second.error().message.find("second-run-output"), std::string::npos);
  EXPECT_EQ(second.error().message.find("first-run-output"), std::string::npos)
      << second.error().message;
  const std::string log = ReadFile(Log());
  EXPECT_NE(log.find("first-run-output"), std::string::npos);
  std::size_t headers = 0;
  for (std::size_t at = log.find("# servebench: started"); at != std::string::npos;
       at = log.find("# servebench: started", at + 1)) {
    ++headers;
  }
  EXPECT_EQ(headers, 2u) << log;
}

TEST_F(ServerProcessTest, CommandNotFound) {
  Recipe r = Quick("missing");
  r.argv = {"sb-launch-no-such-program", "--port", "{port}"};
  auto by_argv = ServerProcess::Start(r, Log());
  ASSERT_FALSE(by_argv.has_value());
  EXPECT_EQ(by_argv.error().code, ErrorCode::kSetup);
  EXPECT_NE(by_argv.error().message.find("sb-launch-no-such-program was not found on PATH"),
            std::string::npos)
      << by_argv.error().message;

  r.argv.clear();
  r.command = "sb-launch-no-such-program --port {port}";
  auto by_shell = ServerProcess::Start(r, Log());
  ASSERT_FALSE(by_shell.has_value());
  EXPECT_NE(by_shell.error().message.find("exited with code 127 (127: command not found?)"),
            std::string::npos)
      << by_shell.error().message;
  EXPECT_NE(by_shell.error().message.find("sb-launch-no-such-program"), std::string::npos);
}

TEST_F(ServerProcessTest, NeverReadyTimesOutAndIsStopped) {
  Recipe r = Quick("sleepy");
  r.env = {{"PORT", "{port}"}};
  r.command = "echo \"pid $$\"; exec sleep 60";
  r.ready_timeout_s = 1;
  r.poll_interval_s = 0.1;
  std::vector<std::string> polls;
  StartHooks hooks;
  hooks.on_poll = [&](double elapsed_s, const std::string& seen) {
    EXPECT_GE(elapsed_s, 0);
    polls.push_back(seen);
  };
  const auto t0 = SteadyClock::now();
  auto started = ServerProcess::Start(r, Log(), {}, hooks);
  const double took = SecondsSince(t0);
  ASSERT_FALSE(started.has_value());
  EXPECT_GE(took, 0.95);
  EXPECT_LT(took, 4);
  const Error& e = started.error();
  EXPECT_EQ(e.code, ErrorCode::kSetup);
  EXPECT_NE(e.message.find("server 'sleepy' was not ready after 1 s (GET /health: connection "
                           "refused); it was stopped; last 1 line of "),
            std::string::npos)
      << e.message;
  EXPECT_GE(polls.size(), 5u);
  ASSERT_FALSE(polls.empty());
  EXPECT_EQ(polls.back(), "GET /health: connection refused");
  const pid_t pid = NumberAfter(Output(Log()), "pid");
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(ProcessGone(pid));
}

TEST_F(ServerProcessTest, IgnoringSigtermEndsInSigkillAfterTheGracePeriod) {
  auto ready = ReadyServer();
  Recipe r = Quick("stubborn");
  r.endpoint = ready.url() + "/v1";
  r.command = "trap '' TERM; echo \"pid $$\"; exec sleep 60";
  r.stop_timeout_s = 1;
  auto started = ServerProcess::Start(r, Log());
  ASSERT_TRUE(started.has_value()) << started.error().message;
  ServerProcess& s = *started.value();
  ASSERT_TRUE(WaitForText(Log(), "pid "));
  const StopReport report = s.Stop();
  EXPECT_TRUE(report.killed);
  ASSERT_TRUE(report.signal.has_value()) << DescribeEnd(report);
  EXPECT_EQ(*report.signal, SIGKILL);
  EXPECT_EQ(DescribeEnd(report), "ended by SIGKILL");
  EXPECT_GE(report.stop_s, 0.95);
  EXPECT_LT(report.stop_s, 3);
  EXPECT_TRUE(ProcessGone(NumberAfter(Output(Log()), "pid")));
  EXPECT_NE(ReadFile(Log()).find("SIGKILL was needed"), std::string::npos);
  EXPECT_EQ(s.Describe()["stop"]["signal"], "SIGKILL");
  EXPECT_EQ(s.Describe()["stop"]["killed"], true);
}

// Stopping sends SIGTERM once to each process: llama-server takes a second one for "quit now"
// ("Received second interrupt, terminating immediately.") and exits 1 instead of shutting down
// cleanly. The stand-in server counts the SIGTERMs it receives and behaves the same way.
TEST_F(ServerProcessTest, StopSendsSigtermOnceSoTheServerShutsDownCleanly) {
  auto ready = ReadyServer();
  std::filesystem::create_directories(dir_);
  const std::filesystem::path script = dir_ / "server.py";
  {
    std::ofstream out(script);
    out << R"(import os, signal, sys, time
n = 0
def on_term(sig, frame):
    global n
    n += 1
    print("SIGTERM %d" % n, flush=True)
    if n >= 2:
        print("Received second interrupt, terminating immediately.", flush=True)
        os._exit(1)
signal.signal(signal.SIGTERM, on_term)
print("pid %d" % os.getpid(), flush=True)
while n == 0:
    time.sleep(0.01)
end = time.monotonic() + 0.5  # a clean shutdown takes a moment
while time.monotonic() < end:
    time.sleep(0.01)
print("clean shutdown", flush=True)
sys.exit(0)
)";
  }
  Recipe r = Quick("counting");
  r.endpoint = ready.url() + "/v1";
  r.command = "exec python3 " + script.string();
  auto started = ServerProcess::Start(r, Log());
  ASSERT_TRUE(started.has_value()) << started.error().message;
  ServerProcess& s = *started.value();
  ASSERT_TRUE(WaitForText(Log(), "pid ")) << ReadFile(Log());
  const StopReport report = s.Stop();
  const std::string out = Output(Log());
  EXPECT_NE(out.find("SIGTERM 1"), std::string::npos) << out;
  EXPECT_EQ(out.find("SIGTERM 2"), std::string::npos) << out;
  EXPECT_NE(out.find("clean shutdown"), std::string::npos) << out;
  ASSERT_TRUE(report.exit_code.has_value()) << DescribeEnd(report);
  EXPECT_EQ(*report.exit_code, 0) << out;
  EXPECT_FALSE(report.killed);
}

TEST_F(ServerProcessTest, PollsUntilAModelIsListed) {
  std::atomic<int> model_polls{0};
  testing::ScriptServer server([&](const testing::ScriptRequest& req) {
    testing::Script s;
    if (req.path == "/health") {
      s.Send(Json(404, R"({"detail":"Not Found"})"));  // tolerated: no such route
    } else if (req.path == "/v1/models") {
      s.Send(++model_polls <= 2 ? Json(200, R"({"object":"list","data":[]})")
                                : Json(200, kOneModel));
    } else {
      s.Send(Json(500, "{}"));
    }
    return s;
  });
  Recipe r = Quick("loading");
  r.endpoint = server.url() + "/v1";
  r.command = "exec sleep 60";
  std::vector<std::string> polls;
  StartHooks hooks;
  hooks.on_poll = [&](double, const std::string& seen) { polls.push_back(seen); };
  auto started = ServerProcess::Start(r, Log(), {}, hooks);
  ASSERT_TRUE(started.has_value()) << started.error().message;
  EXPECT_EQ(started.value()->endpoint(), server.url() + "/v1");
  EXPECT_EQ(polls, (std::vector<std::string>{"GET /v1/models: no model listed yet",
                                             "GET /v1/models: no model listed yet"}));
  // Three polls, 10 ms then 20 ms apart (NextPollPause); ready between the second and the third.
  EXPECT_GE(started.value()->time_to_ready_s(), 0.029);
  EXPECT_GE(started.value()->time_to_ready_resolution_s(), 0.019);
  EXPECT_LE(started.value()->time_to_ready_resolution_s(), started.value()->time_to_ready_s());
  int health = 0;
  for (const auto& req : server.requests()) {
    health += req.path == "/health";
  }
  EXPECT_EQ(health, 1);  // a 404 is asked once
  EXPECT_EQ(model_polls.load(), 3);
  const StopReport report = started.value()->Stop();
  EXPECT_FALSE(report.killed);
  ASSERT_TRUE(report.signal.has_value()) << DescribeEnd(report);  // sleep dies of SIGTERM
  EXPECT_EQ(*report.signal, SIGTERM);
}

// Issue 24 item 2: with the default poll_interval_s (0.5 s), a server ready after 0.1 s used to be
// measured at 0.5 s. Polls now start 10 ms apart and back off, and the resolution is recorded.
TEST_F(ServerProcessTest, AFastServerIsSeenSoonAndTheResolutionIsRecorded) {
  const auto born = SteadyClock::now();
  testing::ScriptServer server([&](const testing::ScriptRequest& req) {
    testing::Script s;
    const bool up = SecondsSince(born) >= 0.1;
    if (req.path == "/health") {
      s.Send(up ? Json(200, "{}") : Json(503, R"({"error":"loading"})"));
    } else if (req.path == "/v1/models") {
      s.Send(Json(200, kOneModel));
    } else {
      s.Send(Json(500, "{}"));
    }
    return s;
  });
  Recipe r;
  r.name = "fast";
  r.endpoint = server.url() + "/v1";
  r.command = "exec sleep 60";
  ASSERT_DOUBLE_EQ(r.poll_interval_s, 0.5);  // the default
  auto started = ServerProcess::Start(r, Log());
  ASSERT_TRUE(started.has_value()) << started.error().message;
  const ServerProcess& p = *started.value();
  EXPECT_GE(SecondsSince(born), 0.1);
  EXPECT_LT(p.time_to_ready_s(), 0.45);  // was 0.5 s: one poll at 0, the next at 0.5 s
  EXPECT_GT(p.time_to_ready_resolution_s(), 0);
  EXPECT_LT(p.time_to_ready_resolution_s(), 0.3);
  EXPECT_LE(p.time_to_ready_resolution_s(), p.time_to_ready_s());
  EXPECT_DOUBLE_EQ(p.Describe()["time_to_ready_resolution_s"].get<double>(),
                   p.time_to_ready_resolution_s());
}

TEST(PollPauseTest, StartsAtTenMillisecondsAndDoublesUpToTheInterval) {
  std::vector<double> pauses;
  double pause = 0;
  for (int i = 0; i < 8; ++i) {
    pause = NextPollPause(pause, 0.5);
    pauses.push_back(pause);
  }
  EXPECT_EQ(pauses, (std::vector<double>{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.5, 0.5}));
  EXPECT_DOUBLE_EQ(NextPollPause(0, 0.005), 0.005);  // an interval below 10 ms is kept
  EXPECT_DOUBLE_EQ(NextPollPause(0, 0), 0.001);      // never a busy loop
}

TEST_F(ServerProcessTest, ReadyPathReplacesTheDefaultChecks) {
  std::atomic<int> pings{0};
  testing::ScriptServer server([&](const testing::ScriptRequest& req) {
    testing::Script s;
    if (req.path == "/ping") {
      s.Send(++pings <= 1 ? Json(503, "{}") : Json(204, ""));
    } else {
      s.Send(Json(500, "{}"));
    }
    return s;
  });
  Recipe r = Quick("ping");
  r.endpoint = server.url() + "/v1";
  r.ready_path = "/ping";
  r.command = "exec sleep 60";
  std::vector<std::string> polls;
  StartHooks hooks;
  hooks.on_poll = [&](double, const std::string& seen) { polls.push_back(seen); };
  auto started = ServerProcess::Start(r, Log(), {}, hooks);
  ASSERT_TRUE(started.has_value()) << started.error().message;
  EXPECT_EQ(polls, (std::vector<std::string>{"GET /ping: HTTP 503"}));
  for (const auto& req : server.requests()) {
    EXPECT_EQ(req.path, "/ping");
  }
  EXPECT_EQ(started.value()->Describe()["ready_check"], "GET /ping");
}

TEST_F(ServerProcessTest, StopRequestDuringTheWaitCancels) {
  Recipe r = Quick("cancelled");
  r.env = {{"PORT", "{port}"}};
  r.command = "echo \"pid $$\"; exec sleep 60";
  std::stop_source source;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(300ms);
    source.request_stop();
  });
  const auto t0 = SteadyClock::now();
  auto started = ServerProcess::Start(r, Log(), source.get_token());
  const double took = SecondsSince(t0);
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code, ErrorCode::kCancelled) << started.error().message;
  EXPECT_NE(started.error().message.find("server 'cancelled': start cancelled after"),
            std::string::npos)
      << started.error().message;
  EXPECT_GE(took, 0.25);
  EXPECT_LT(took, 3);
  const pid_t pid = NumberAfter(Output(Log()), "pid");
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(ProcessGone(pid));
}

TEST_F(ServerProcessTest, StopAlreadyRequestedStartsNothing) {
  Recipe r = Quick("late");
  r.command = "exec sleep 60 --port {port}";
  std::stop_source source;
  source.request_stop();
  auto started = ServerProcess::Start(r, Log(), source.get_token());
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code, ErrorCode::kCancelled);
  EXPECT_FALSE(std::filesystem::exists(Log()));
}

TEST_F(ServerProcessTest, LeaderExitingStopsWhatItLeftBehind) {
  Recipe r = Quick("daemonizer");
  r.env = {{"PORT", "{port}"}};
  r.command = "sleep 30 & echo \"child $!\"; exit 0";
  auto started = ServerProcess::Start(r, Log());
  ASSERT_FALSE(started.has_value());
  EXPECT_NE(started.error().message.find("exited with code 0 before it was ready"),
            std::string::npos)
      << started.error().message;
  EXPECT_NE(started.error().message.find("It must stay in the foreground"), std::string::npos);
  const pid_t child = NumberAfter(Output(Log()), "child");
  ASSERT_GT(child, 0);
  EXPECT_TRUE(ProcessGone(child));
}

TEST_F(ServerProcessTest, FixedPortInUseIsRefused) {
  auto other = ReadyServer();
  Recipe r = Quick("clash");
  r.port = other.port();
  r.command = "exec sleep 60";
  auto started = ServerProcess::Start(r, Log());
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code, ErrorCode::kSetup);
  EXPECT_NE(started.error().message.find("port " + std::to_string(other.port()) +
                                         " on 127.0.0.1 is already in use"),
            std::string::npos)
      << started.error().message;
  EXPECT_FALSE(std::filesystem::exists(Log()));  // refused before anything ran
}

TEST_F(ServerProcessTest, InvalidRecipeIsAUsageError) {
  Recipe r = Quick("bad name");
  r.command = "exec sleep 60 {port}";
  auto started = ServerProcess::Start(r, Log());
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code, ErrorCode::kUsage);
}

// The caller (cli/signals.h) blocks SIGINT and SIGTERM in every thread: the server must not
// inherit that, or SIGTERM would never reach it.
TEST_F(ServerProcessTest, TheServerDoesNotInheritBlockedSignals) {
  sigset_t stop_signals, old;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &stop_signals, &old), 0);
  auto ready = ReadyServer();
  Recipe r = Quick("masked");
  r.endpoint = ready.url() + "/v1";
  r.command = "exec sleep 60";
  auto started = ServerProcess::Start(r, Log());
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(started.has_value()) << started.error().message;
  const StopReport report = started.value()->Stop();
  EXPECT_FALSE(report.killed);
  EXPECT_EQ(report.signal, std::optional<int>(SIGTERM)) << DescribeEnd(report);
}

// Descriptors the caller holds (a listening socket, a pipe) are not inherited.
TEST_F(ServerProcessTest, OnlyStdioIsInherited) {
  int leak[2];
  ASSERT_EQ(pipe(leak), 0);  // deliberately without O_CLOEXEC
  Recipe r = Quick("fds");
  r.env = {{"PORT", "{port}"}};
  r.command = fmt::format(
      "for fd in 0 1 2 {} {}; do [ -e /proc/$$/fd/$fd ] && echo \"open $fd\"; done; exit 0",
      leak[0], leak[1]);
  auto started = ServerProcess::Start(r, Log());
  close(leak[0]);
  close(leak[1]);
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(Output(Log()), "open 0\nopen 1\nopen 2\n");
}

TEST_F(ServerProcessTest, DestructorStops) {
  auto ready = ReadyServer();
  Recipe r = Quick("scoped");
  r.endpoint = ready.url() + "/v1";
  r.command = "echo \"pid $$\"; exec sleep 60";
  pid_t pid = -1;
  {
    auto started = ServerProcess::Start(r, Log());
    ASSERT_TRUE(started.has_value()) << started.error().message;
    ASSERT_TRUE(WaitForText(Log(), "pid "));
    pid = NumberAfter(Output(Log()), "pid");
    EXPECT_EQ(pid, started.value()->pid());  // exec: the shell became sleep
  }
  EXPECT_TRUE(ProcessGone(pid, 0ms));
}

}  // namespace
}  // namespace sb::launch
