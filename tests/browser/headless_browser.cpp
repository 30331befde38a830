#include "browser/headless_browser.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/temp_dir.h"

namespace sb::testing {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

bool Executable(const std::string& p) {
  return !p.empty() && access(p.c_str(), X_OK) == 0;
}

class Browser {
 public:
  Browser(const std::string& binary, const std::filesystem::path& profile) {
    int to_chrome[2], from_chrome[2];
    if (pipe(to_chrome) != 0 || pipe(from_chrome) != 0) {
      failure_ = std::string("pipe: ") + std::strerror(errno);
      return;
    }
    std::vector<std::string> argv = {
        binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
        "--user-data-dir=" + profile.string(), "--no-first-run", "--no-default-browser-check",
        "--disable-extensions", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-default-apps", "--mute-audio",
        // Networking off: a proxy on a closed port for every scheme, no name resolution.
        "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND", "about:blank"};
    pid_ = fork();
    if (pid_ == 0) {
      // Child: fd 3 reads the commands, fd 4 writes the answers; stdout/stderr to /dev/null
      // (Chromium logs D-Bus noise there; the page's own errors come through the protocol).
      dup2(to_chrome[0], 3);
      dup2(from_chrome[1], 4);
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      dup2(null, 2);
      for (int fd = 5; fd < 1024; ++fd) {
        close(fd);
      }
      std::vector<char*> args;
      for (auto& a : argv) {
        args.push_back(a.data());
      }
      args.push_back(nullptr);
      execv(binary.c_str(), args.data());
      _exit(127);
    }
    close(to_chrome[0]);
    close(from_chrome[1]);
    out_ = to_chrome[1];
    in_ = from_chrome[0];
    if (pid_ < 0) {
      failure_ = std::string("fork: ") + std::strerror(errno);
    }
  }

  ~Browser() {
    if (out_ >= 0) {
      close(out_);
    }
    if (in_ >= 0) {
      close(in_);
    }
    if (pid_ > 0) {
      // Closing the pipe makes Chromium exit; give it a moment, then make sure.
      for (int i = 0; i < 50; ++i) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
          return;
        }
        usleep(20000);
      }
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  const std::string& failure() const { return failure_; }

  // Sends a command and returns its answer; events that arrive meanwhile are kept.
  json Call(const std::string& method, const json& params, const std::string& session,
            Clock::time_point deadline) {
    const int id = ++next_id_;
    json m = {{"id", id}, {"method", method}, {"params", params}};
    if (!session.empty()) {
      m["sessionId"] = session;
    }
    std::string bytes = m.dump();
    bytes.push_back('\0');
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = write(out_, bytes.data() + sent, bytes.size() - sent);
      if (n <= 0) {
        failure_ = "cannot write to chromium: " + std::string(std::strerror(errno));
        return nullptr;
      }
      sent += static_cast<std::size_t>(n);
    }
    for (;;) {
      json msg = Next(deadline);
      if (msg.is_null()) {
        return nullptr;
      }
      if (msg.contains("id") && msg["id"] == id) {
        if (msg.contains("error")) {
          failure_ = method + ": " + msg["error"].dump();
          return nullptr;
        }
        return msg.value("result", json::object());
      }
      events_.push_back(std::move(msg));
    }
  }

  // Waits for an event named `method` (kept events first).
  bool WaitEvent(const std::string& method, Clock::time_point deadline) {
    for (const auto& e : events_) {
      if (e.value("method", "") == method) {
        return true;
      }
    }
    for (;;) {
      json msg = Next(deadline);
      if (msg.is_null()) {
        return false;
      }
      const bool hit = msg.value("method", "") == method;
      events_.push_back(std::move(msg));
      if (hit) {
        return true;
      }
    }
  }

  const std::vector<json>& events() const { return events_; }

 private:
  json Next(Clock::time_point deadline) {
    for (;;) {
      const auto nul = buf_.find('\0');
      if (nul != std::string::npos) {
        std::string one = buf_.substr(0, nul);
        buf_.erase(0, nul + 1);
        return json::parse(one, nullptr, false);
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        failure_ = "chromium did not answer in time";
        return nullptr;
      }
      pollfd p{in_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) {
        continue;
      }
      char tmp[65536];
      const ssize_t n = read(in_, tmp, sizeof tmp);
      if (n <= 0) {
        failure_ = "chromium exited (is it installed and runnable?)";
        return nullptr;
      }
      buf_.append(tmp, static_cast<std::size_t>(n));
    }
  }

  pid_t pid_ = -1;
  int out_ = -1;
  int in_ = -1;
  int next_id_ = 0;
  std::string buf_;
  std::string failure_;
  std::vector<json> events_;
};

std::string ArgsText(const json& args) {
  std::string s;
  for (const auto& a : args) {
    if (!s.empty()) {
      s += " ";
    }
    s += a.contains("value")
             ? (a["value"].is_string() ? a["value"].get<std::string>() : a["value"].dump())
             : a.value("description", "?");
  }
  return s;
}

}  // namespace

std::string FindChromium() {
  if (const char* env = std::getenv("SERVEBENCH_CHROMIUM"); env != nullptr && *env != '\0') {
    return Executable(env) ? env : "";
  }
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/snap/bin"}) {
    for (const char* name : {"chromium", "chromium-browser"}) {
      const std::string p = std::string(dir) + "/" + name;
      if (Executable(p)) {
        return p;
      }
    }
  }
  return "";
}

PageLoad LoadPage(const std::filesystem::path& page, const std::string& expression,
                  std::chrono::seconds limit, const std::string& color_scheme) {
  PageLoad r;
  const std::string binary = FindChromium();
  if (binary.empty()) {
    r.failure = "no chromium found (apt-get install chromium)";
    return r;
  }
  const auto deadline = Clock::now() + limit;
  TempDir profile;
  Browser b(binary, profile.path());
  if (!b.failure().empty()) {
    r.failure = b.failure();
    return r;
  }
  auto fail = [&]() {
    r.failure = b.failure();
    return r;
  };
  json t = b.Call("Target.createTarget", {{"url", "about:blank"}}, "", deadline);
  if (t.is_null()) {
    return fail();
  }
  json a = b.Call("Target.attachToTarget", {{"targetId", t["targetId"]}, {"flatten", true}}, "",
                  deadline);
  if (a.is_null()) {
    return fail();
  }
  const std::string session = a["sessionId"];
  for (const char* domain : {"Runtime.enable", "Log.enable", "Network.enable", "Page.enable"}) {
    if (b.Call(domain, json::object(), session, deadline).is_null()) {
      return fail();
    }
  }
  if (!color_scheme.empty() && b.Call("Emulation.setEmulatedMedia",
                                      {{"features", json::array({{{"name", "prefers-color-scheme"},
                                                                  {"value", color_scheme}}})}},
                                      session, deadline)
                                   .is_null()) {
    return fail();
  }
  const std::string url = "file://" + page.string();
  if (b.Call("Page.navigate", {{"url", url}}, session, deadline).is_null() ||
      !b.WaitEvent("Page.loadEventFired", deadline)) {
    return fail();
  }
  json v = b.Call("Runtime.evaluate",
                  {{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true}},
                  session, deadline);
  if (v.is_null()) {
    return fail();
  }
  if (v.contains("exceptionDetails")) {
    r.failure = "the test's expression threw: " + v["exceptionDetails"].dump();
    return r;
  }
  r.value = v["result"].value("value", json());
  for (const json& e : b.events()) {
    const std::string m = e.value("method", "");
    const json& p = e.contains("params") ? e["params"] : json::object();
    if (m == "Runtime.consoleAPICalled" &&
        (p.value("type", "") == "error" || p.value("type", "") == "assert")) {
      r.errors.push_back("console." + p.value("type", "") + ": " +
                         ArgsText(p.value("args", json::array())));
    } else if (m == "Runtime.exceptionThrown") {
      r.errors.push_back("exception: " + p["exceptionDetails"].value("text", "?"));
    } else if (m == "Log.entryAdded" && p["entry"].value("level", "") == "error") {
      r.errors.push_back("log: " + p["entry"].value("text", "?") + " " +
                         p["entry"].value("url", ""));
    } else if (m == "Network.requestWillBeSent") {
      const std::string u = p["request"].value("url", "");
      if (u != url && u.rfind("data:", 0) != 0) {
        r.requests.push_back(u);
      }
    }
  }
  r.ok = true;
  return r;
}

}  // namespace sb::testing
