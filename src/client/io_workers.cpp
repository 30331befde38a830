#include "client/io_workers.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <thread>

#include <time.h>

#include "core/clock.h"

namespace sb::client::io {

int WorkerCount(int requested, std::size_t calls, std::size_t max_in_flight, bool scheduled) {
  const std::size_t streams = max_in_flight > 0 ? std::min(max_in_flight, calls) : calls;
  std::size_t k = 1;
  if (requested > 0) {
    k = static_cast<std::size_t>(requested);
  } else if (streams >= kFirstSplit && !(scheduled && max_in_flight == 0)) {
    k = (streams + kStreamsPerWorker - 1) / kStreamsPerWorker;
    k = std::min<std::size_t>(k, kMaxAutoWorkers);
  }
  k = std::min(k, std::max<std::size_t>(streams, 1));
  return static_cast<int>(k);
}

std::size_t InFlightShare(std::size_t max_in_flight, int workers, int w) {
  const auto k = static_cast<std::size_t>(workers);
  const auto i = static_cast<std::size_t>(w);
  return max_in_flight / k + (i < max_in_flight % k ? 1 : 0);
}

std::size_t CallShare(std::size_t calls, int workers, int w) {
  const auto k = static_cast<std::size_t>(workers);
  const auto i = static_cast<std::size_t>(w);
  return calls > i ? (calls - i + k - 1) / k : 0;
}

void StartGate::ArriveAndWait(std::stop_token stop) {
  std::unique_lock<std::mutex> lock(mu_);
  if (--left_ <= 0) {
    cv_.notify_all();
    return;
  }
  cv_.wait(lock, std::move(stop), [this] { return left_ <= 0; });
}

bool RunWorkers(int workers, const RunHooks& hooks, std::stop_token stop,
                const std::function<void(const Share&, std::stop_token)>& body,
                std::vector<std::int64_t>* cpu_ns) {
  // One mutex for every hook of every worker: client code sees one hook at a time, as it did
  // with one thread (its state needs no locking of its own).
  std::mutex hook_mu;
  std::optional<StartGate> gate;
  if (hooks.preconnect) {
    gate.emplace(workers);
  }
  std::vector<Share> shares(static_cast<std::size_t>(workers));
  for (int w = 0; w < workers; ++w) {
    Share& s = shares[static_cast<std::size_t>(w)];
    s.worker = w;
    s.workers = workers;
    s.hooks = hooks;
    s.hooks.max_in_flight = InFlightShare(hooks.max_in_flight, workers, w);
    if (hooks.on_done) {
      s.hooks.on_done = [&hook_mu, &hooks](const ChatResponse& r) {
        std::lock_guard<std::mutex> lock(hook_mu);
        hooks.on_done(r);
      };
    }
    if (hooks.on_event) {
      s.hooks.on_event = [&hook_mu, &hooks](const ChatResponse& r) {
        std::lock_guard<std::mutex> lock(hook_mu);
        return hooks.on_event(r);
      };
    }
    s.preconnected = gate ? &*gate : nullptr;
  }

  // The caller's stop, or a worker's exception: either ends every worker.
  std::stop_source inner;
  std::stop_callback forward(stop, [&inner] { inner.request_stop(); });
  std::mutex error_mu;
  std::exception_ptr error;
  std::vector<std::int64_t> cpu(static_cast<std::size_t>(workers), 0);
  const auto run = [&](int w) {
    const std::int64_t c0 = ThreadCpuNs();
    try {
      body(shares[static_cast<std::size_t>(w)], inner.get_token());
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) {
          error = std::current_exception();
        }
      }
      inner.request_stop();
    }
    cpu[static_cast<std::size_t>(w)] = ThreadCpuNs() - c0;
  };

  // Every thread is started before any worker runs, so a thread that cannot be started leaves
  // the batch untouched (the caller runs it on one thread) instead of half sent.
  enum class Go { kWait, kRun, kAbandon };
  std::mutex go_mu;
  std::condition_variable go_cv;
  Go go = Go::kWait;
  bool started = true;
  std::vector<std::jthread> threads;
  try {
    threads.reserve(static_cast<std::size_t>(workers - 1));
    for (int w = 1; w < workers; ++w) {
      threads.emplace_back([&, w] {
        {
          std::unique_lock<std::mutex> lock(go_mu);
          go_cv.wait(lock, [&] { return go != Go::kWait; });
          if (go == Go::kAbandon) {
            return;
          }
        }
        run(w);
      });
    }
  } catch (...) {  // std::system_error (no more threads), std::bad_alloc
    started = false;
  }
  {
    std::lock_guard<std::mutex> lock(go_mu);
    go = started ? Go::kRun : Go::kAbandon;
  }
  go_cv.notify_all();
  if (started) {
    run(0);
  }
  for (std::jthread& t : threads) {
    t.join();
  }
  if (error) {
    std::rethrow_exception(error);
  }
  if (started && cpu_ns != nullptr) {
    *cpu_ns = std::move(cpu);
  }
  return started;
}

}  // namespace sb::client::io
