#include "client/load/load_runner.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "client/load/step.h"

namespace onemodel::load {
namespace {

using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;

PoolSample PoolOf(const v1::Stats& stats) {
  const v1::PoolStats& pool = stats.pool();
  return {.rented_bytes = pool.rented_bytes(),
          .rented_buffers = pool.rented_buffers(),
          .idle_bytes = pool.idle_bytes(),
          .peak_rented_bytes = pool.peak_rented_bytes(),
          .hits = pool.hits(),
          .misses = pool.misses(),
          .sessions_open = stats.sessions().open()};
}

SessionSample SessionOf(const v1::SessionStats& session) {
  const v1::ArenaStats& arena = session.arena();
  return {.arena_chunks = arena.chunks(),
          .arena_reserved_bytes = arena.reserved_bytes(),
          .arena_resets = arena.resets(),
          .arena_allocations = arena.allocations(),
          .arena_growth_events = arena.growth_events(),
          .handles = session.handles(),
          .pool_buffers = session.pool_buffers(),
          .requests = session.requests()};
}

// One run: the sessions, their steps and threads, and what they logged.
class LoadRun {
 public:
  LoadRun(client::Client& client, const LoadOptions& options)
      : client_(client),
        options_(options),
        barrier_(options.sessions, EndOfWarmup{this}),
        warmup_logs_(options.sessions),
        logs_(options.sessions),
        finish_(options.sessions) {
    result_.options = options;
  }

  // Sets up the sessions, runs the threads to the end and returns what they measured.
  LoadResult Run(const ProgressCallback& on_progress) {
    result_.before = SampleServer(client_, sessions_);
    SetUp();
    start_ = Clock::now();
    std::vector<std::thread> threads;
    for (int i = 0; i < options_.sessions; ++i) threads.emplace_back(&LoadRun::Work, this, i);
    Clock::time_point last_progress = start_;
    while (running_.load() > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (on_progress && Clock::now() - last_progress >= std::chrono::milliseconds(200)) {
        last_progress = Clock::now();
        on_progress(Progress());
      }
    }
    for (std::thread& thread : threads) thread.join();
    if (on_progress) on_progress(Progress());
    const Clock::time_point measure_start = MeasureStart();
    result_.seconds =
        Seconds(*std::max_element(finish_.begin(), finish_.end()) - measure_start).count();
    result_.warmup_seconds = Seconds(warmup_end_ - start_).count();
    for (int i = 0; i < options_.sessions; ++i) {
      result_.warmup.Merge(warmup_logs_[i]);
      result_.measured.Merge(logs_[i]);
    }
    result_.end = SampleServer(client_, sessions_);
    steps_.clear();
    sessions_.clear();  // closes them
    result_.after_close = SampleServer(client_, sessions_);
    return std::move(result_);
  }

 private:
  // The barrier's completion: runs once every session finished its warm-up, before any starts
  // the measured phase.
  struct EndOfWarmup {
    LoadRun* run;
    void operator()() noexcept { run->EndWarmup(); }
  };

  // Creates every session and uploads its tensors; throws client::Error naming the session.
  void SetUp() {
    sessions_.reserve(options_.sessions);  // steps_ refer to the sessions: no reallocation
    for (int i = 0; i < options_.sessions; ++i) {
      try {
        sessions_.push_back(
            client_.CreateSession({.kernels = options_.kernels, .client_name = "onemodel-load"}));
        steps_.push_back(MakeStep(options_, sessions_.back(), static_cast<uint32_t>(i + 1)));
      } catch (const client::Error& e) {
        throw client::Error(e.code(), "setting up session " + std::to_string(i + 1) + " of " +
                                          std::to_string(options_.sessions) + ": " + e.what());
      }
    }
  }

  // One session's thread: warm-up, the pause at the barrier, then the measured steps.
  void Work(int index) {
    Step& step = *steps_[index];
    if (options_.warmup_s > 0) {
      const Clock::time_point end =
          start_ + std::chrono::duration_cast<Clock::duration>(Seconds(options_.warmup_s));
      do {
        RunStep(step, warmup_logs_[index], warmup_requests_);
      } while (Clock::now() < end);
    }
    barrier_.arrive_and_wait();
    const Clock::time_point end =
        MeasureStart() + std::chrono::duration_cast<Clock::duration>(Seconds(options_.duration_s));
    const int64_t per_step = RequestsPerStep(options_.step);
    while (options_.requests > 0 ? claimed_.fetch_add(per_step) < options_.requests
                                 : Clock::now() < end) {
      RunStep(step, logs_[index], measured_requests_);
    }
    finish_[index] = Clock::now();
    running_.fetch_sub(1);
  }

  // Runs one step into `log`, adding its requests and errors to the live counters.
  void RunStep(Step& step, RequestLog& log, std::atomic<int64_t>& phase_requests) {
    const int64_t requests = log.requests();
    const int64_t errors = log.errors();
    try {
      step.Run(log);
      ++log.steps;
    } catch (const client::Error&) {
      // Logged by the request; the next step starts afresh (it resets the arena).
    }
    phase_requests.fetch_add(log.requests() - requests, std::memory_order_relaxed);
    errors_.fetch_add(log.errors() - errors, std::memory_order_relaxed);
  }

  // Reads the statistics while every session is idle, then starts the measured phase.
  void EndWarmup() noexcept {
    warmup_end_ = Clock::now();
    result_.after_warmup = SampleServer(client_, sessions_);
    measure_start_.store(Clock::now().time_since_epoch().count());
  }

  // When the measured phase started (the epoch while warming up).
  Clock::time_point MeasureStart() const {
    return Clock::time_point(Clock::duration(measure_start_.load()));
  }

  LoadProgress Progress() const {
    LoadProgress progress;
    const Clock::time_point measure_start = MeasureStart();
    progress.warming_up = measure_start == Clock::time_point();
    progress.errors = errors_.load(std::memory_order_relaxed);
    if (progress.warming_up) {
      progress.seconds = Seconds(Clock::now() - start_).count();
      progress.total_seconds = options_.warmup_s;
      progress.requests = warmup_requests_.load(std::memory_order_relaxed);
    } else {
      progress.seconds = Seconds(Clock::now() - measure_start).count();
      progress.total_seconds = options_.requests > 0 ? 0 : options_.duration_s;
      progress.requests = measured_requests_.load(std::memory_order_relaxed);
      progress.total_requests = options_.requests;
    }
    return progress;
  }

  client::Client& client_;
  const LoadOptions& options_;
  std::barrier<EndOfWarmup> barrier_;
  std::vector<client::Session> sessions_;
  std::vector<std::unique_ptr<Step>> steps_;
  std::vector<RequestLog> warmup_logs_;  // one per session, written by its thread only
  std::vector<RequestLog> logs_;
  std::vector<Clock::time_point> finish_;
  Clock::time_point start_;
  Clock::time_point warmup_end_;  // written in the barrier's completion
  std::atomic<Clock::rep> measure_start_{0};
  std::atomic<int> running_{options_.sessions};
  std::atomic<int64_t> claimed_{0};  // requests claimed by --requests steps
  std::atomic<int64_t> warmup_requests_{0};
  std::atomic<int64_t> measured_requests_{0};
  std::atomic<int64_t> errors_{0};
  LoadResult result_;
};

}  // namespace

ServerSample SampleServer(client::Client& client, const std::vector<client::Session>& sessions) {
  ServerSample sample;
  try {
    sample.pool = PoolOf(client.Stats());
    for (const client::Session& session : sessions) {
      sample.sessions.push_back(SessionOf(client.Stats(session.id()).session()));
    }
    sample.ok = true;
  } catch (const std::exception& e) {
    sample.error = e.what();
  }
  return sample;
}

LoadResult RunLoad(client::Client& client, const LoadOptions& options,
                   const ProgressCallback& on_progress) {
  return LoadRun(client, options).Run(on_progress);
}

}  // namespace onemodel::load
