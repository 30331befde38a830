// Ctrl-C handling without code in signal context: SIGINT/SIGTERM are blocked in every thread and
// a watcher thread turns the first one into stop_source.request_stop(); a second one only says the
// results are being written; a third exits at once (files are replaced atomically, so none is
// left half-written).
#pragma once

#include <stop_token>

namespace sb::cli {

// Blocks SIGINT, SIGTERM and SIGPIPE for the calling thread and every thread it creates
// afterwards (a broken pipe becomes an EPIPE error, never a death).
// Call first thing in main().
void BlockStopSignals();

// Starts the (detached) watcher. The first signal requests stop on `source` and prints a note to
// stderr (`note`, else the run's "stopping, writing what was measured"); the second prints
// another; the third ends the process with exit code 130.
void WatchStopSignals(std::stop_source source, const char* note = nullptr);

// Starts a (detached) watcher that ends the process with exit code 130 at the first SIGINT or
// SIGTERM: for commands with nothing to finish (each store write is one transaction).
void QuitOnStopSignal();

// Waits (blocking) for SIGINT or SIGTERM; returns the signal number. For `servebench sim`.
int WaitForStopSignal();

// Raises the soft open-files limit to the hard limit (1,000 streams need 1,000 sockets).
void RaiseOpenFileLimit();

}  // namespace sb::cli
