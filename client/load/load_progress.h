// The progress line of `onemodel-load`, redrawn on stderr while the sessions run:
//   warm-up [########............]  40%     4.0/10.0 s     8123 req/s  0 errors
//   load    [##..................]  10%     6.0/60.0 s    20512 req/s  0 errors
//   load    [##..................]  15%  15000/100000 requests  20512 req/s  0 errors
//
//   std::fprintf(stderr, "\r%s", FormatLoadProgress(progress).c_str());
#pragma once

#include <string>

#include "client/load/load_runner.h"

namespace onemodel::load {

// The line for `progress` (no carriage return or newline).
std::string FormatLoadProgress(const LoadProgress& progress);

}  // namespace onemodel::load
