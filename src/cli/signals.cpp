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
  // SIGPIPE too: a write to a closed pipe or socket (stdout piped into `head`, a TLS peer gone)
  // then fails with EPIPE instead of killing the process before its final write. Children
  // (launched servers, the code sandbox) start with an empty mask.
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForStopSignal() {
  sigset_t set = StopSet();
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

void WatchStopSignals(std::stop_source source, const char* note) {
  std::thread([source, note]() mutable {
    WaitForStopSignal();
    std::fputs(note != nullptr ? note
                               : "\nservebench: interrupted: stopping, writing what was measured "
                                 "(a third Ctrl-C quits at once)\n",
               stderr);
    source.request_stop();
    // A second signal is common (GNU timeout sends SIGTERM twice, people press Ctrl-C twice):
    // it must not cost the final write, which is already under way.
    WaitForStopSignal();
    std::fputs("servebench: still writing the results; a third Ctrl-C quits at once\n", stderr);
    WaitForStopSignal();
    // Every file of the run directory is replaced by rename, so quitting here leaves each one
    // either as it was or complete, never half-written.
    _exit(130);
  }).detach();
}

void QuitOnStopSignal() {
  std::thread([] {
    WaitForStopSignal();
    std::fputs("\nservebench: interrupted\n", stderr);
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
