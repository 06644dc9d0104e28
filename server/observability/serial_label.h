// SerialLabel: a serial number with its one-letter kind, as logs, metrics and the status page
// show sessions ("s12") and generated request ids ("r7").
#pragma once

#include <concepts>
#include <string>

namespace onemodel::server {

// `kind` followed by `serial` in decimal. Built by insert, not `"s" + std::to_string(n)`, for
// which GCC 12 at -O3 prints a false -Wrestrict warning in a release build.
template <std::integral Serial>
std::string SerialLabel(char kind, Serial serial) {
  return std::to_string(serial).insert(0, 1, kind);
}

}  // namespace onemodel::server
