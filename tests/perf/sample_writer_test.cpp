// The samples.jsonl writer thread (perf/sample_writer.h): order, Drain as the journal's barrier,
// the bounded queue, the first error passed on once, and the destructor's drain.
#include "perf/sample_writer.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sb::perf {
namespace {

// Records what the writer appended, in order. With `hold`, the first append waits until
// Open(); `first` is ready once that append has begun.
struct Sink {
  bool hold = false;
  int fail_at = -1;  // the id whose append fails (disk full)
  std::mutex mu;
  std::vector<int> ids;  // guarded by mu
  std::atomic<int> calls{0};
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();
  std::promise<void> first;

  SampleWriter::Append Append() {
    return [this](const Sample& s) -> Result<void> {
      if (calls++ == 0) {
        first.set_value();
        if (hold) {
          opened.wait();
        }
      }
      const int id = static_cast<int>(s.record.id);
      if (id == fail_at) {
        return MakeError(ErrorCode::kIo, "cannot append to samples.jsonl: No space left on device");
      }
      std::lock_guard<std::mutex> lock(mu);
      ids.push_back(id);
      return {};
    };
  }

  void Open() { gate.set_value(); }

  std::size_t Written() {
    std::lock_guard<std::mutex> lock(mu);
    return ids.size();
  }
};

Sample Numbered(int id) {
  Sample s;
  s.record.id = static_cast<std::uint64_t>(id);
  s.record.label = std::string(200, 'x');
  return s;
}

std::vector<int> Upto(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(SampleWriterTest, PostReturnsAtOnceAndDrainWaitsForEveryRecordInOrder) {
  Sink sink;
  sink.hold = true;
  std::vector<std::string> errors;
  SampleWriter w(sink.Append(), [&](const std::string& e) { errors.push_back(e); });
  // The first append is held: were Post to write (or wait for the write), this would hang.
  for (int i = 0; i < 100; ++i) {
    w.Post(Numbered(i));
  }
  sink.first.get_future().wait();
  EXPECT_EQ(sink.Written(), 0u);
  std::size_t at_drain = 0;
  std::thread drainer([&] {
    w.Drain();
    at_drain = sink.Written();
  });
  sink.Open();
  drainer.join();
  EXPECT_EQ(at_drain, 100u);  // Drain returned only with every record written
  EXPECT_EQ(sink.ids, Upto(100));
  EXPECT_TRUE(errors.empty());
}

TEST(SampleWriterTest, AFullQueueHoldsThePosterUntilTheWriterTakesOne) {
  Sink sink;
  sink.hold = true;
  SampleWriter w(
      sink.Append(), [](const std::string&) {}, /*max_queued=*/2);
  std::atomic<int> posted{0};
  std::thread poster([&] {
    for (int i = 0; i < 10; ++i) {
      w.Post(Numbered(i));
      ++posted;
    }
  });
  sink.first.get_future().wait();  // record 0 is being written and held
  // The writer took record 0, or records 0 and 1 in one batch; two more fill the queue, and the
  // poster cannot get further while the write is held.
  while (posted.load() < 3) {
    std::this_thread::yield();
  }
  for (int i = 0; i < 1000; ++i) {
    std::this_thread::yield();
  }
  EXPECT_LE(posted.load(), 4);
  sink.Open();
  poster.join();
  w.Drain();
  EXPECT_EQ(sink.ids, Upto(10));
}

TEST(SampleWriterTest, TheFirstFailedAppendIsPassedOnOnceAndNothingFollowsIt) {
  Sink sink;
  sink.fail_at = 3;
  std::mutex mu;
  std::vector<std::string> errors;
  SampleWriter w(sink.Append(), [&](const std::string& e) {
    std::lock_guard<std::mutex> lock(mu);
    errors.push_back(e);
  });
  for (int i = 0; i < 10; ++i) {
    w.Post(Numbered(i));
  }
  w.Drain();  // returns once the error has been passed on
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0], "cannot append to samples.jsonl: No space left on device");
  }
  const int calls = sink.calls.load();
  w.Post(Numbered(20));
  w.Drain();
  EXPECT_EQ(sink.ids, Upto(3));  // the file ends at the last whole line before the failure
  EXPECT_EQ(calls, 4);           // records 0-3: those queued behind the failed one were dropped
  EXPECT_EQ(sink.calls.load(), calls);  // a record posted after the failure is never written
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(errors.size(), 1u);
}

TEST(SampleWriterTest, TheDestructorWritesEverythingPosted) {
  Sink sink;
  {
    SampleWriter w(sink.Append(), [](const std::string&) {});
    for (int i = 0; i < 500; ++i) {
      w.Post(Numbered(i));
    }
  }
  EXPECT_EQ(sink.ids, Upto(500));
}

TEST(SampleWriterTest, PostsFromManyThreadsAreEachWrittenOnce) {
  Sink sink;
  auto w = std::make_unique<SampleWriter>(
      sink.Append(), [](const std::string&) {}, 8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&w, t] {
      for (int i = 0; i < 250; ++i) {
        w->Post(Numbered(t * 250 + i));
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  w->Drain();
  std::vector<int> got = sink.ids;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, Upto(1000));
}

}  // namespace
}  // namespace sb::perf
