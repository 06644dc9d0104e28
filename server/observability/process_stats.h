// ProcessStats: the process's own resources as Prometheus' standard process_* metrics name them
// (resident memory, CPU time, file descriptors, threads, start time), read from /proc/self.
//
//   ProcessStats p = ReadProcessStats();
//   p.resident_memory_bytes;  p.cpu_seconds;  p.open_fds;  p.start_time_seconds;
#pragma once

#include <cstdint>

namespace onemodel::server {

struct ProcessStats {
  int64_t resident_memory_bytes = 0;
  double cpu_seconds = 0;  // user + system
  int64_t open_fds = 0;
  int64_t max_fds = 0;  // the soft RLIMIT_NOFILE
  int64_t threads = 0;
  double start_time_seconds = 0;  // since the Unix epoch
};

// This process's figures now. A figure /proc does not give (not Linux, /proc not mounted) stays 0.
ProcessStats ReadProcessStats();

}  // namespace onemodel::server
