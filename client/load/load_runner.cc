#include "client/load/load_runner.h"

#include <atomic>
#include <barrier>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "client/load/open_loop.h"
#include "client/load/step.h"

namespace onemodel::load {
namespace {

using TimePoint = LoadClock::TimePoint;
using Seconds = std::chrono::duration<double>;

std::chrono::steady_clock::duration ToDuration(double seconds) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(Seconds(seconds));
}

// One run: the sessions, their steps and threads, and what they logged.
class LoadRun {
 public:
  LoadRun(client::Client& client, const LoadOptions& options)
      : client_(client),
        options_(options),
        rates_(PhaseRates(options)),
        barrier_(options.sessions, PhaseEnd{this}),
        warmup_logs_(options.sessions),
        logs_(options.sessions),
        sent_(options.sessions) {
    result_.options = options;
  }

  // Sets up the sessions, runs the threads to the end and returns what they measured.
  LoadResult Run(const ProgressCallback& on_progress) {
    result_.before = SampleServer(client_, sessions_);
    SetUp();
    start_ = clock_.Now();
    std::vector<std::thread> threads;
    for (int i = 0; i < options_.sessions; ++i) threads.emplace_back(&LoadRun::Work, this, i);
    TimePoint last_progress = start_;
    while (running_.load() > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const TimePoint now = clock_.Now();
      if (series_.NeedsServer(now)) series_.RecordServer(now, SampleServer(client_, sessions_));
      if (on_progress && now - last_progress >= std::chrono::milliseconds(200)) {
        last_progress = now;
        on_progress(Progress());
      }
    }
    for (std::thread& thread : threads) thread.join();
    if (on_progress) on_progress(Progress());
    result_.warmup_seconds = Seconds(warmup_end_ - start_).count();
    for (const RequestLog& log : warmup_logs_) result_.warmup.Merge(log);
    result_.series = series_.points();
    result_.end = SampleServer(client_, sessions_);
    steps_.clear();
    sessions_.clear();  // closes them
    result_.after_close = SampleServer(client_, sessions_);
    return std::move(result_);
  }

 private:
  // The barrier's completion: runs once every session finished its warm-up or a phase, before
  // any starts the next.
  struct PhaseEnd {
    LoadRun* run;
    void operator()() noexcept { run->EndPhase(); }
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

  // One session's thread: warm-up, then each measured phase, pausing at the barrier after each.
  void Work(int index) {
    Step& step = *steps_[index];
    if (options_.warmup_s > 0) {
      const TimePoint end = start_ + ToDuration(options_.warmup_s);
      do {
        RunStep(step, warmup_logs_[index], clock_.Now(), warmup_requests_);
      } while (clock_.Now() < end);
    }
    barrier_.arrive_and_wait();
    for (const double rate : rates_) {
      if (rate > 0) {
        sent_[index] = RunOpenLoop(*schedule_, clock_, [&](TimePoint intended) {
          RunStep(step, logs_[index], intended, measured_requests_);
        });
      } else {
        const TimePoint end = phase_start_ + ToDuration(options_.duration_s);
        const int64_t per_step = RequestsPerStep(options_.step);
        while (options_.requests > 0 ? claimed_.fetch_add(per_step) < options_.requests
                                     : clock_.Now() < end) {
          RunStep(step, logs_[index], clock_.Now(), measured_requests_);
        }
      }
      barrier_.arrive_and_wait();
    }
    running_.fetch_sub(1);
  }

  // Runs one step started at `start` into `log`, adding its requests and errors to the live
  // counters and to the time series.
  void RunStep(Step& step, RequestLog& log, TimePoint start, std::atomic<int64_t>& phase_requests) {
    const int64_t requests = log.requests();
    const int64_t errors = log.errors();
    const std::chrono::nanoseconds latency = log.TimeStep(start, [&] { step.Run(log); });
    const int64_t step_requests = log.requests() - requests;
    const int64_t step_errors = log.errors() - errors;
    phase_requests.fetch_add(step_requests, std::memory_order_relaxed);
    errors_.fetch_add(step_errors, std::memory_order_relaxed);
    series_.RecordStep(clock_.Now(), latency, step_requests, step_errors);
  }

  // Ends the warm-up (reading the statistics while every session is idle) or the measured phase
  // that ran, then starts the next phase if there is one.
  void EndPhase() noexcept {
    const TimePoint now = clock_.Now();
    if (phase_ < 0) {
      warmup_end_ = now;
      result_.after_warmup = SampleServer(client_, sessions_);
    } else {
      CollectPhase(now);
    }
    if (++phase_ < static_cast<int>(rates_.size())) StartPhase();
  }

  void StartPhase() {
    const double rate = rates_[phase_];
    phase_start_ = clock_.Now();
    if (rate > 0) {
      schedule_ = std::make_unique<ArrivalSchedule>(phase_start_,
                                                    phase_start_ + ToDuration(options_.duration_s),
                                                    rate / RequestsPerStep(options_.step));
    }
    series_.StartPhase(rate, phase_start_);
    if (phase_ == 0) measure_start_.store(phase_start_.time_since_epoch().count());
  }

  // Adds the phase that ended at `end` to the result, and clears the sessions' logs for the next.
  void CollectPhase(TimePoint end) {
    series_.EndPhase(end);
    RatePhase phase;
    phase.rate_per_s = rates_[phase_];
    phase.seconds = Seconds(end - phase_start_).count();
    int64_t sent = 0;
    for (int i = 0; i < options_.sessions; ++i) {
      phase.log.Merge(logs_[i]);
      logs_[i] = RequestLog();
      sent += sent_[i];
    }
    result_.seconds += phase.seconds;
    result_.measured.Merge(phase.log);
    if (phase.rate_per_s > 0) {
      phase.due = schedule_->due();
      phase.unsent = schedule_->Unsent(sent);
      result_.rates.push_back(std::move(phase));
    }
  }

  // When the measured phases started (the epoch while warming up).
  TimePoint MeasureStart() const { return TimePoint(TimePoint::duration(measure_start_.load())); }

  LoadProgress Progress() const {
    LoadProgress progress;
    const TimePoint measure_start = MeasureStart();
    progress.warming_up = measure_start == TimePoint();
    progress.errors = errors_.load(std::memory_order_relaxed);
    if (progress.warming_up) {
      progress.seconds = Seconds(clock_.Now() - start_).count();
      progress.total_seconds = options_.warmup_s;
      progress.requests = warmup_requests_.load(std::memory_order_relaxed);
    } else {
      progress.seconds = Seconds(clock_.Now() - measure_start).count();
      progress.total_seconds =
          options_.requests > 0 ? 0 : options_.duration_s * static_cast<double>(rates_.size());
      progress.requests = measured_requests_.load(std::memory_order_relaxed);
      progress.total_requests = options_.requests;
    }
    return progress;
  }

  client::Client& client_;
  const LoadOptions& options_;
  LoadClock& clock_ = SteadyLoadClock();
  const std::vector<double> rates_;  // of the measured phases; 0: closed loop
  std::barrier<PhaseEnd> barrier_;
  std::vector<client::Session> sessions_;
  std::vector<std::unique_ptr<Step>> steps_;
  std::vector<RequestLog> warmup_logs_;  // one per session, written by its thread only
  std::vector<RequestLog> logs_;         // of the running phase
  std::vector<int64_t> sent_;            // open-loop arrivals each session sent in the phase
  TimeSeries series_;
  // Written in the barrier's completion, read by the sessions after it.
  int phase_ = -1;  // the measured phase running; -1 while warming up
  TimePoint phase_start_;
  std::unique_ptr<ArrivalSchedule> schedule_;  // of an open-loop phase
  TimePoint start_;
  TimePoint warmup_end_;
  std::atomic<TimePoint::rep> measure_start_{0};
  std::atomic<int> running_{options_.sessions};
  std::atomic<int64_t> claimed_{0};  // requests claimed by --requests steps
  std::atomic<int64_t> warmup_requests_{0};
  std::atomic<int64_t> measured_requests_{0};
  std::atomic<int64_t> errors_{0};
  LoadResult result_;
};

}  // namespace

LoadResult RunLoad(client::Client& client, const LoadOptions& options,
                   const ProgressCallback& on_progress) {
  return LoadRun(client, options).Run(on_progress);
}

}  // namespace onemodel::load
