// ServerProcess: spawn (posix_spawn, new session, log as stdout/stderr), readiness polling and
// stopping the whole process group.
// The caller may be multithreaded and have SIGINT/SIGTERM blocked (cli/signals.h), so the child
// is made with posix_spawn (no code of ours runs between fork and exec) and starts with an empty
// signal mask and every signal at its default action.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <system_error>
#include <thread>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/http_client.h"
#include "launch/launch.h"
#include "launch/spawn.h"

extern char** environ;

namespace sb::launch {

namespace {

using namespace detail;  // NOLINT(build/namespaces): this module's private helpers
using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

constexpr std::size_t kTailLines = 20;
constexpr std::size_t kTailLineChars = 400;
constexpr std::string_view kLogMark = "# servebench: ";
// Slice of every wait: how soon an exit or a stop request is noticed.
constexpr auto kSlice = std::chrono::milliseconds(20);

double SecondsSince(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

std::string ShellQuote(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("@%+=:,./_-{}", c);
  });
  if (plain) {
    return word;
  }
  std::string out = "'";
  for (char c : word) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

// ---- Readiness -------------------------------------------------------------------------------

struct Endpoint {
  std::string root;       // "http://127.0.0.1:8000"
  std::string base_path;  // "/v1" ("" when the endpoint is the root)
};

Endpoint SplitEndpoint(const std::string& url) {
  const std::size_t scheme = url.find("://");
  const std::size_t slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  Endpoint e;
  e.root = url.substr(0, slash);
  if (slash != std::string::npos) {
    e.base_path = url.substr(slash);
    while (!e.base_path.empty() && e.base_path.back() == '/') {
      e.base_path.pop_back();
    }
  }
  return e;
}

// A transport error as one short phrase ("connection refused", "no answer within 2 s").
std::string ShortReason(const Error& error) {
  std::string m = error.message;
  if (const std::size_t p = m.find(": "); m.starts_with("GET ") && p != std::string::npos) {
    m = m.substr(p + 2);  // drop "GET http://...: "
  }
  if (m.find("Couldn't connect") != std::string::npos ||
      m.find("Connection refused") != std::string::npos) {
    return "connection refused";
  }
  if (error.code == ErrorCode::kTimeout) {
    return "no answer within 2 s (" + m + ")";
  }
  return m;
}

class ReadyCheck {
 public:
  ReadyCheck(std::string ready_path, const std::string& endpoint)
      : ready_path_(std::move(ready_path)),
        endpoint_(SplitEndpoint(endpoint)),
        client_(Options(endpoint_.root)) {}

  // nullopt when ready; else what the poll saw ("GET /health: connection refused").
  std::optional<std::string> Poll() {
    if (!ready_path_.empty()) {
      auto r = Get(ready_path_);
      if (!r) {
        return r.error().message;
      }
      if (r->status / 100 != 2) {
        return fmt::format("GET {}: HTTP {}", ready_path_, r->status);
      }
      return std::nullopt;
    }
    if (!health_passed_) {
      auto r = Get("/health");
      if (!r) {
        return r.error().message;
      }
      // 404/405: the server has no /health (Ollama); go on to the model list.
      if (r->status != 200 && r->status != 404 && r->status != 405) {
        return fmt::format("GET /health: HTTP {}", r->status);
      }
      health_passed_ = true;
    }
    const std::string models = endpoint_.base_path + "/models";
    auto r = Get(models);
    if (!r) {
      return r.error().message;
    }
    if (r->status != 200) {
      return fmt::format("GET {}: HTTP {}", models, r->status);
    }
    const json doc = json::parse(r->body, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
      return fmt::format("GET {}: not a JSON object", models);
    }
    const auto data = doc.find("data");
    if (data == doc.end() || !data->is_array() || data->empty()) {
      return fmt::format("GET {}: no model listed yet", models);
    }
    return std::nullopt;
  }

 private:
  static client::ClientOptions Options(const std::string& root) {
    client::ClientOptions o;
    o.endpoint = root;
    o.connect_timeout = std::chrono::milliseconds(1000);
    o.first_byte_timeout = std::chrono::milliseconds(2000);
    o.idle_timeout = std::chrono::milliseconds(2000);
    o.total_timeout = std::chrono::milliseconds(2000);
    return o;
  }

  // Transport failures come back as Error{message: "GET /path: reason"}.
  Result<client::HttpResponse> Get(const std::string& path) {
    auto r = client_.Get(path, std::chrono::milliseconds(2000));
    if (!r) {
      return Error{r.error().code, fmt::format("GET {}: {}", path, ShortReason(r.error()))};
    }
    return r;
  }

  std::string ready_path_;
  Endpoint endpoint_;
  client::Client client_;
  bool health_passed_ = false;
};

std::string ExitHint(int code) {
  switch (code) {
    case 126:
      return " (126: not executable?)";
    case 127:
      return " (127: command not found?)";
    default:
      return "";
  }
}

bool LooksSecret(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const char* word : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"}) {
    if (name.find(word) != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string DescribeEnd(const StopReport& report) {
  if (report.exit_code) {
    return fmt::format("exited with code {}", *report.exit_code);
  }
  if (report.signal) {
    return "ended by " + SignalName(*report.signal);
  }
  return "ended (exit status unknown)";
}

namespace {

// The recipe's port: a free one when it says 0; an error when the one it names is taken. A
// chosen port may be taken by someone else between this probe and the server's own bind (a
// short race); the server then fails to bind and exits, which is reported.
Result<void> ResolvePort(Recipe& r, const std::string& who) {
  if (r.port == 0) {
    const int port = TryBind(r.host, 0);
    if (port <= 0) {
      return MakeError(ErrorCode::kSetup, fmt::format("{}: cannot find a free port on {}: {}", who,
                                                      r.host, std::strerror(-port)));
    }
    r.port = port;
  } else if (const int bound = TryBind(r.host, r.port); bound == -EADDRINUSE) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("{}: port {} on {} is already in use (is another server still "
                                 "running?)",
                                 who, r.port, r.host));
  }
  return {};
}

// {host} and {port} filled in the command, argv, env and endpoint.
void SubstituteHostPort(Recipe& r) {
  const std::string connect_host = ConnectHost(r.host);
  r.command = Substitute(r.command, r.host, r.port);
  for (auto& a : r.argv) {
    a = Substitute(a, r.host, r.port);
  }
  for (auto& [name, value] : r.env) {
    value = Substitute(value, r.host, r.port);
  }
  r.endpoint =
      Substitute(r.endpoint.empty() ? "http://{host}:{port}/v1" : r.endpoint, connect_host, r.port);
}

struct Command {
  std::string program;
  std::vector<std::string> argv;
  std::string shown;  // as the log and Describe show it
};

// What to execute: `sh -c command`, or argv[0] found on the recipe's PATH.
Result<Command> ResolveCommand(const Recipe& r, const std::vector<std::string>& env,
                               const std::string& who) {
  if (!r.command.empty()) {
    return Command{"/bin/sh", {"sh", "-c", r.command}, r.command};
  }
  const std::string path_value = EnvValue(env, "PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  auto found = FindProgram(r.argv[0], path_value);
  if (!found) {
    return MakeError(ErrorCode::kSetup, fmt::format("{}: {} {}", who, r.argv[0],
                                                    r.argv[0].find('/') != std::string::npos
                                                        ? "is not an executable file"
                                                        : "was not found on PATH"));
  }
  std::vector<std::string> quoted;
  for (const auto& a : r.argv) {
    quoted.push_back(ShellQuote(a));
  }
  return Command{*found, r.argv, fmt::format("{}", fmt::join(quoted, " "))};
}

// The log, opened for appending (a rerun keeps the earlier output) with a header line; its fd,
// to share with the child.
Result<int> OpenLog(const std::filesystem::path& log_path, const Recipe& r,
                    const std::string& command, const std::string& who) {
  std::error_code ec;
  if (log_path.has_parent_path()) {
    std::filesystem::create_directories(log_path.parent_path(), ec);
  }
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return MakeError(ErrorCode::kSetup, fmt::format("{}: cannot open log {}: {}", who,
                                                    log_path.string(), std::strerror(errno)));
  }
  std::string header = fmt::format("{}started {}: {}\n", kLogMark, UtcNow(), command);
  if (!r.cwd.empty()) {
    header += fmt::format("{}cwd: {}\n", kLogMark, r.cwd);
  }
  if (!WriteAll(log_fd, header)) {
    const int err = errno;
    close(log_fd);
    return MakeError(ErrorCode::kSetup, fmt::format("{}: cannot write log {}: {}", who,
                                                    log_path.string(), std::strerror(err)));
  }
  return log_fd;
}

// "last 3 lines of PATH:\n  ...", indented, for an error message.
std::string TailForError(const std::string& text, const std::filesystem::path& log_path) {
  if (text.empty()) {
    return fmt::format("{} is empty", log_path.string());
  }
  std::string indented;
  std::size_t n = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t nl = std::min(text.find('\n', i), text.size());
    indented += "\n  " + text.substr(i, nl - i);
    ++n;
    i = nl + 1;
  }
  return fmt::format("last {} line{} of {}:{}", n, n == 1 ? "" : "s", log_path.string(), indented);
}

}  // namespace

Result<std::unique_ptr<ServerProcess>> ServerProcess::Start(const Recipe& recipe,
                                                            const std::filesystem::path& log_path,
                                                            std::stop_token stop,
                                                            const StartHooks& hooks) {
  const std::string who = fmt::format("server '{}'", recipe.name);
  if (auto ok = ValidateRecipe(recipe); !ok) {
    return ok.error().WithContext(who);
  }
  if (stop.stop_requested()) {
    return MakeError(ErrorCode::kCancelled, fmt::format("{}: start cancelled", who));
  }
  std::unique_ptr<ServerProcess> p(new ServerProcess());
  Recipe& r = p->recipe_;
  r = recipe;
  if (auto ok = ResolvePort(r, who); !ok) {
    return ok.error();
  }
  SubstituteHostPort(r);
  p->endpoint_ = r.endpoint;

  if (!r.cwd.empty() && !std::filesystem::is_directory(r.cwd)) {
    return MakeError(ErrorCode::kSetup, fmt::format("{}: cwd {} is not a directory", who, r.cwd));
  }
  const std::vector<std::string> env = BuildEnv(r);
  auto command = ResolveCommand(r, env, who);
  if (!command) {
    return command.error();
  }
  p->command_ = command->shown;
  p->log_path_ = log_path;
  auto log_fd = OpenLog(log_path, r, p->command_, who);
  if (!log_fd) {
    return log_fd.error();
  }
  p->log_offset_ = lseek(*log_fd, 0, SEEK_END);

  const auto t0 = SteadyClock::now();
  auto pid = Spawn(command->program, command->argv, env, r.cwd, *log_fd);
  close(*log_fd);
  if (!pid) {
    return pid.error().WithContext(who);
  }
  p->pid_ = pid.value();
  if (auto ready = p->WaitReady(t0, who, stop, hooks); !ready) {
    return ready.error();
  }
  return p;
}

// Readiness: poll at once, then after pauses of 10 ms, 20 ms, ... up to poll_interval_s
// (NextPollPause); between polls, notice an exit or a stop request within kSlice. The server is
// stopped on every error.
Result<void> ServerProcess::WaitReady(SteadyClock::time_point t0, const std::string& who,
                                      std::stop_token stop, const StartHooks& hooks) {
  const Recipe& r = recipe_;
  const auto deadline = t0 + std::chrono::duration_cast<SteadyClock::duration>(
                                 std::chrono::duration<double>(r.ready_timeout_s));
  double pause_s = 0;
  double last_not_ready_s = 0;  // when the last poll that saw the server not ready began
  ReadyCheck check(r.ready_path, endpoint_);
  std::string last_poll = "no answer yet";
  auto exited = [&]() -> Error {
    const double after = SecondsSince(t0);
    const StopReport end = Stop();  // anything it left running in its group goes too
    const std::string hint = end.exit_code ? ExitHint(*end.exit_code) : "";
    const bool clean = end.exit_code == 0;  // a server that went to the background
    return MakeError(
        ErrorCode::kSetup,
        fmt::format("{} {}{} before it was ready (after {:.1f} s); {}{}", who, DescribeEnd(end),
                    hint, after,
                    clean ? "did the command put the server in the background? It must stay in "
                            "the foreground; "
                          : "",
                    TailForError(LogTail(kTailLines), log_path_)));
  };
  while (true) {
    if (stop.stop_requested()) {
      const double after = SecondsSince(t0);
      Stop();
      return MakeError(ErrorCode::kCancelled,
                       fmt::format("{}: start cancelled after {:.1f} s (not ready yet: {}); it "
                                   "was stopped",
                                   who, after, last_poll));
    }
    if (!Running()) {
      return exited();
    }
    const double poll_start_s = SecondsSince(t0);
    std::optional<std::string> seen = check.Poll();
    if (!seen) {
      // Answered: but if our process has died meanwhile, whatever answered is not it.
      if (!Running()) {
        return exited();
      }
      time_to_ready_s_ = SecondsSince(t0);
      time_to_ready_resolution_s_ = time_to_ready_s_ - last_not_ready_s;
      return {};
    }
    last_not_ready_s = poll_start_s;
    last_poll = std::move(*seen);
    if (hooks.on_poll) {
      hooks.on_poll(SecondsSince(t0), last_poll);
    }
    if (SteadyClock::now() >= deadline) {
      Stop();
      return MakeError(
          ErrorCode::kSetup,
          fmt::format("{} was not ready after {:g} s ({}); it was stopped; {}", who,
                      r.ready_timeout_s, last_poll, TailForError(LogTail(kTailLines), log_path_)));
    }
    pause_s = NextPollPause(pause_s, r.poll_interval_s);
    const auto interval =
        std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(pause_s));
    const auto next = std::min(SteadyClock::now() + interval, deadline);
    while (SteadyClock::now() < next && !stop.stop_requested() && Running()) {
      std::this_thread::sleep_for(
          std::min<SteadyClock::duration>(kSlice, next - SteadyClock::now()));
    }
  }
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0 && !stop_report_) {
    Stop();
  }
}

bool ServerProcess::Running() {
  if (reaped_ || pid_ <= 0) {
    return false;
  }
  int status = 0;
  const pid_t w = waitpid(pid_, &status, WNOHANG);
  if (w == pid_) {
    reaped_ = true;
    status_known_ = true;
    wait_status_ = status;
    return false;
  }
  if (w < 0 && errno == ECHILD) {  // reaped elsewhere (SIGCHLD ignored): it is gone
    reaped_ = true;
    return false;
  }
  return true;
}

bool ServerProcess::Alive() {
  if (Running()) {
    return true;
  }
  // Once the leader is reaped and its group and session are empty, the pid may be reused by an
  // unrelated process: never look for it again.
  if (!group_gone_ && GroupMembers(pid_).empty()) {
    group_gone_ = true;
  }
  return !group_gone_;
}

void ServerProcess::SignalAll(int sig) {
  // Every process gets the signal once: servers count them (llama-server takes a second SIGTERM
  // for "quit now" and exits 1 without shutting down cleanly). While the leader is unreaped its
  // pid can not be reused, so -pid_ is surely our group, and only the processes that moved to
  // another group of the session are signalled one by one; after that, every one found in /proc.
  const bool group_signalled = !reaped_ && kill(-pid_, sig) == 0;
  if (group_gone_) {
    return;
  }
  for (pid_t member : GroupMembers(pid_, group_signalled)) {
    kill(member, sig);
  }
}

StopReport ServerProcess::Stop() {
  if (stop_report_) {
    return *stop_report_;
  }
  StopReport report;
  if (pid_ <= 0) {
    stop_report_ = report;
    return report;
  }
  const auto t0 = SteadyClock::now();
  report.exited_before_stop = !Running();
  const auto grace = std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::duration<double>(recipe_.stop_timeout_s));
  auto wait_until = [&](SteadyClock::time_point until) {
    while (Alive()) {
      if (SteadyClock::now() >= until) {
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  };
  if (Alive()) {
    SignalAll(SIGTERM);
    if (!wait_until(t0 + grace)) {
      SignalAll(SIGKILL);
      report.killed = true;
      // A process in uninterruptible sleep (a GPU driver call) may take a moment even now.
      if (!wait_until(SteadyClock::now() + std::chrono::seconds(10))) {
        SignalAll(SIGKILL);
      }
    }
  }
  if (reaped_ && status_known_) {
    if (WIFEXITED(wait_status_)) {
      report.exit_code = WEXITSTATUS(wait_status_);
    } else if (WIFSIGNALED(wait_status_)) {
      report.signal = WTERMSIG(wait_status_);
    }
  }
  report.stop_s = SecondsSince(t0);
  stop_report_ = report;
  AppendToLog(fmt::format("{}stopped {}: {}{} ({:.1f} s after the stop request)\n", kLogMark,
                          UtcNow(), DescribeEnd(report),
                          report.exited_before_stop ? " before it was stopped"
                          : report.killed           ? ", SIGKILL was needed"
                                                    : "",
                          report.stop_s));
  return report;
}

void ServerProcess::AppendToLog(const std::string& line) const {
  const int fd = open(log_path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd >= 0) {
    WriteAll(fd, line);
    close(fd);
  }
}

std::string ServerProcess::LogTail(std::size_t lines) const {
  constexpr long long kMaxRead = 256 * 1024;
  std::ifstream in(log_path_, std::ios::binary);
  if (!in || lines == 0) {
    return "";
  }
  in.seekg(0, std::ios::end);
  const long long size = in.tellg();
  const long long from = std::max(log_offset_, size - kMaxRead);
  if (from >= size) {
    return "";
  }
  in.seekg(from);
  std::string text(static_cast<std::size_t>(size - from), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  std::vector<std::string_view> kept;
  std::string_view rest = text;
  if (from > log_offset_) {  // started mid-line
    const std::size_t nl = rest.find('\n');
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  }
  while (!rest.empty()) {
    const std::size_t end = std::min(rest.find_first_of("\r\n"), rest.size());
    std::string_view line = rest.substr(0, end);
    rest = end < rest.size() ? rest.substr(end + 1) : std::string_view();
    if (line.find_first_not_of(" \t") != std::string_view::npos && !line.starts_with(kLogMark)) {
      kept.push_back(line);
    }
  }
  const std::size_t first = kept.size() > lines ? kept.size() - lines : 0;
  std::string out;
  for (std::size_t i = first; i < kept.size(); ++i) {
    if (!out.empty()) {
      out += '\n';
    }
    if (kept[i].size() > kTailLineChars) {
      out += kept[i].substr(0, kTailLineChars);
      out += " [...]";
    } else {
      out += kept[i];
    }
  }
  return out;
}

json ServerProcess::Describe(const std::filesystem::path& relative_to) const {
  json env = json::object();
  for (const auto& [name, value] : recipe_.env) {
    env[name] = LooksSecret(name) ? "<redacted>" : value;
  }
  std::string log_file = log_path_.string();
  if (!relative_to.empty()) {
    const std::filesystem::path rel = log_path_.lexically_relative(relative_to);
    if (!rel.empty() && !rel.string().starts_with("..")) {
      log_file = rel.string();
    }
  }
  json stop = nullptr;
  if (stop_report_) {
    const StopReport& s = *stop_report_;
    stop = {{"exit_code", s.exit_code ? json(*s.exit_code) : json(nullptr)},
            {"signal", s.signal ? json(SignalName(*s.signal)) : json(nullptr)},
            {"exited_before_stop", s.exited_before_stop},
            {"killed", s.killed},
            {"stop_s", s.stop_s}};
  }
  const std::string ready =
      recipe_.ready_path.empty()
          ? fmt::format("GET /health, GET {}/models", SplitEndpoint(endpoint_).base_path)
          : "GET " + recipe_.ready_path;
  return {{"name", recipe_.name},
          {"command", command_},
          {"cwd", recipe_.cwd.empty() ? json(nullptr) : json(recipe_.cwd)},
          {"env", env},
          {"endpoint", endpoint_},
          {"port", recipe_.port},
          {"pid", pid_},
          {"ready_check", ready},
          {"time_to_ready_s", time_to_ready_s_},
          {"time_to_ready_resolution_s", time_to_ready_resolution_s_},
          {"log_file", log_file},
          {"stop", stop}};
}

}  // namespace sb::launch
