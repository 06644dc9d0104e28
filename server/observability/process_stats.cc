#include "server/observability/process_stats.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace onemodel::server {
namespace {

// The fields of /proc/self/stat after the command name (which may hold spaces), so that
// proc(5)'s field N is fields[N - 3].
std::vector<std::string> StatFields() {
  std::ifstream file("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t end_of_name = text.rfind(')');
  std::vector<std::string> fields;
  if (end_of_name == std::string::npos) return fields;
  std::istringstream rest(text.substr(end_of_name + 1));
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;
}

// The system's boot time in seconds since the epoch (the "btime" line of /proc/stat), or 0.
int64_t BootTimeSeconds() {
  std::ifstream file("/proc/stat");
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("btime ", 0) == 0) return std::stoll(line.substr(6));
  }
  return 0;
}

// Entries of /proc/self/fd, less the one reading it.
int64_t OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  int64_t n = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n - 1;
}

}  // namespace

ProcessStats ReadProcessStats() {
  ProcessStats p;
  const std::vector<std::string> f = StatFields();
  // proc(5): utime 14, stime 15, num_threads 20, starttime 22 (clock ticks after boot), rss 24.
  if (f.size() > 24 - 3) {
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    p.cpu_seconds = (std::stod(f[14 - 3]) + std::stod(f[15 - 3])) / ticks;
    p.threads = std::stoll(f[20 - 3]);
    p.start_time_seconds = static_cast<double>(BootTimeSeconds()) + std::stod(f[22 - 3]) / ticks;
    p.resident_memory_bytes = std::stoll(f[24 - 3]) * sysconf(_SC_PAGESIZE);
  }
  p.open_fds = OpenFds();
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    p.max_fds = limit.rlim_cur == RLIM_INFINITY ? INT64_MAX : static_cast<int64_t>(limit.rlim_cur);
  }
  return p;
}

}  // namespace onemodel::server
