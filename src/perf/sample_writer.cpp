#include "perf/sample_writer.h"

#include <utility>

namespace sb::perf {

SampleWriter::SampleWriter(Append append, OnError on_error, std::size_t max_queued)
    : append_(std::move(append)),
      on_error_(std::move(on_error)),
      max_queued_(max_queued > 0 ? max_queued : 1),
      wake_at_(std::min(kWakeAt, max_queued_)),
      writer_([this] { Loop(); }) {}

SampleWriter::~SampleWriter() {
  Drain();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  writer_.join();  // before the members it reads go
}

void SampleWriter::Post(Sample sample) {
  std::unique_lock<std::mutex> lock(mu_);
  if (queue_.size() >= max_queued_ && !failed_) {
    changed_.notify_all();  // the writer is behind: wake it now, then wait for room
    changed_.wait(lock, [&] { return queue_.size() < max_queued_ || failed_; });
  }
  if (failed_) {
    return;  // nothing goes after a failed line (the file ends at the last whole one)
  }
  queue_.push_back(std::move(sample));
  // No wake-up per record: on a loaded machine the woken writer can take this thread's core
  // at once (measured: a wake-up per record cost the poster 30-70 µs). It wakes by itself.
  if (queue_.size() == wake_at_) {
    changed_.notify_all();
  }
}

void SampleWriter::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  ++draining_;
  changed_.notify_all();
  changed_.wait(lock, [&] { return queue_.empty() && !writing_; });
  --draining_;
}

void SampleWriter::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  std::deque<Sample> batch;
  while (true) {
    // Woken early only with something to write (a Drain of an empty queue must not spin it).
    changed_.wait_for(lock, kPeriod, [&] {
      return stopping_ || (!queue_.empty() && (queue_.size() >= wake_at_ || draining_ > 0));
    });
    if (queue_.empty()) {
      if (stopping_) {
        return;  // everything posted is written (the destructor drained)
      }
      continue;
    }
    batch.swap(queue_);
    writing_ = true;
    changed_.notify_all();  // room for a blocked Post
    lock.unlock();
    std::optional<Error> failed;
    for (const Sample& sample : batch) {
      if (Result<void> ok = append_(sample); !ok) {
        failed = ok.error();
        break;
      }
    }
    batch.clear();  // freed outside the lock
    lock.lock();
    if (failed && !failed_) {
      failed_ = true;  // later Posts drop their records
      queue_.clear();
      // Still `writing_`: a Drain returns only once the error has been passed on.
      lock.unlock();
      on_error_(failed->message);
      lock.lock();
    }
    writing_ = false;
    changed_.notify_all();
  }
}

}  // namespace sb::perf
