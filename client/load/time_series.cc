#include "client/load/time_series.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace onemodel::load {
namespace {

constexpr double kShortestTail = 0.1;  // seconds

double SecondsBetween(LoadClock::TimePoint from, LoadClock::TimePoint to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

void TimeSeries::StartPhase(double rate_per_s, LoadClock::TimePoint start) {
  std::lock_guard lock(mutex_);
  if (phase_ < 0) first_start_ = start;
  ++phase_;
  running_ = true;
  rate_per_s_ = rate_per_s;
  phase_start_ = start;
  phase_begin_ = points_.size();
}

void TimeSeries::EndPhase(LoadClock::TimePoint end) {
  std::lock_guard lock(mutex_);
  const double length = SecondsBetween(phase_start_, end);
  // Every part of the phase gets its point, with steps or without, so the parts add up to it.
  if (length > 0) PointAt(end - std::chrono::nanoseconds(1));
  running_ = false;
  for (size_t i = phase_begin_; i < points_.size(); ++i) {
    const double begin = static_cast<double>(i - phase_begin_);
    points_[i].seconds = std::clamp(length - begin, 1e-3, 1.0);
  }
  // A last part shorter than kShortestTail (the steps still answering when the time was up)
  // joins the second before it: its per-second rates would be noise.
  if (points_.size() >= phase_begin_ + 2 && points_.back().seconds < kShortestTail) {
    SeriesPoint tail = std::move(points_.back());
    points_.pop_back();
    SeriesPoint& last = points_.back();
    last.seconds += tail.seconds;
    last.steps += tail.steps;
    last.requests += tail.requests;
    last.errors += tail.errors;
    last.step_latency.Merge(tail.step_latency);
    if (!last.server_read && tail.server_read) {
      last.server_read = true;
      last.pool_rented_bytes = tail.pool_rented_bytes;
      last.pool_idle_bytes = tail.pool_idle_bytes;
      last.arena_reserved_bytes = tail.arena_reserved_bytes;
    }
  }
}

SeriesPoint* TimeSeries::PointAt(LoadClock::TimePoint at) {
  if (!running_) return nullptr;
  const double since = std::max(SecondsBetween(phase_start_, at), 0.0);
  const size_t index = phase_begin_ + static_cast<size_t>(since);
  while (points_.size() <= index) {
    SeriesPoint point;
    point.phase = phase_;
    point.rate_per_s = rate_per_s_;
    point.t_s = SecondsBetween(first_start_, phase_start_) +
                static_cast<double>(points_.size() - phase_begin_);
    points_.push_back(std::move(point));
  }
  return &points_[index];
}

void TimeSeries::RecordStep(LoadClock::TimePoint end, std::chrono::nanoseconds latency,
                            int64_t requests, int64_t errors) {
  std::lock_guard lock(mutex_);
  SeriesPoint* point = PointAt(end);
  if (point == nullptr) return;
  if (errors == 0) {  // as RequestLog's steps and step_latency: the steps that succeeded
    ++point->steps;
    point->step_latency.Record(latency);
  }
  point->requests += requests;
  point->errors += errors;
}

void TimeSeries::RecordServer(LoadClock::TimePoint at, const ServerSample& sample) {
  if (!sample.ok) return;
  std::lock_guard lock(mutex_);
  SeriesPoint* point = PointAt(at);
  if (point == nullptr) return;
  point->server_read = true;
  point->pool_rented_bytes = sample.server.pool().rented_bytes();
  point->pool_idle_bytes = sample.server.pool().idle_bytes();
  point->arena_reserved_bytes = ArenaReservedBytes(sample);
}

bool TimeSeries::NeedsServer(LoadClock::TimePoint at) {
  std::lock_guard lock(mutex_);
  const SeriesPoint* point = PointAt(at);
  return point != nullptr && !point->server_read;
}

std::vector<SeriesPoint> TimeSeries::points() const {
  std::lock_guard lock(mutex_);
  return points_;
}

std::string FormatCsv(const std::vector<SeriesPoint>& points) {
  std::string csv =
      "phase,rate_per_s,t_s,seconds,requests_per_s,steps_per_s,errors,p50_ms,p99_ms,"
      "pool_rented_bytes,pool_idle_bytes,arena_reserved_bytes\n";
  for (const SeriesPoint& p : points) {
    char line[320];
    std::snprintf(line, sizeof line, "%d,%.6g,%.3f,%.3f,%.6g,%.6g,%lld,", p.phase, p.rate_per_s,
                  p.t_s, p.seconds, static_cast<double>(p.requests) / p.seconds,
                  static_cast<double>(p.steps) / p.seconds, static_cast<long long>(p.errors));
    csv += line;
    if (p.step_latency.count() > 0) {  // else empty: no step succeeded in that second
      std::snprintf(line, sizeof line, "%.6g,%.6g,", p.step_latency.PercentileMicros(50) / 1e3,
                    p.step_latency.PercentileMicros(99) / 1e3);
      csv += line;
    } else {
      csv += ",,";
    }
    if (p.server_read) {
      std::snprintf(line, sizeof line, "%lld,%lld,%lld",
                    static_cast<long long>(p.pool_rented_bytes),
                    static_cast<long long>(p.pool_idle_bytes),
                    static_cast<long long>(p.arena_reserved_bytes));
      csv += line;
    } else {
      csv += ",,";
    }
    csv += "\n";
  }
  return csv;
}

}  // namespace onemodel::load
