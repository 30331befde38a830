#include "cli/signals.h"

#include <csignal>
#include <cstdio>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

namespace sb::cli {

namespace {

sigset_t StopSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

void BlockStopSignals() {
  sigset_t set = StopSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForStopSignal() {
  sigset_t set = StopSet();
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

void WatchStopSignals(std::stop_source source) {
  std::thread([source]() mutable {
    WaitForStopSignal();
    std::fputs(
        "\nservebench: interrupted: stopping, writing what was measured "
        "(Ctrl-C again to quit at once)\n",
        stderr);
    source.request_stop();
    WaitForStopSignal();
    _exit(130);
  }).detach();
}

void RaiseOpenFileLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

}  // namespace sb::cli
