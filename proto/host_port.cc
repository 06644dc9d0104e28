#include "proto/host_port.h"

#include <charconv>
#include <cstdint>

namespace onemodel {

std::string HostPortProblem(std::string_view text, int min_port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return "there is no ':port'";
  const std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  int64_t n = -1;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || n < min_port ||
      n > 65535) {
    return "the port must be a number from " + std::to_string(min_port) + " to 65535";
  }
  if (host.empty()) return "the host is empty";
  if (host.find("://") != std::string_view::npos) return "an address takes no scheme";
  if (host.find_first_of(" \t\r\n") != std::string_view::npos) return "the host holds a space";
  const bool bracketed = host.starts_with('[') && host.ends_with(']');
  if (host.find(':') != std::string_view::npos && !bracketed) {
    return "an IPv6 host goes in brackets, as in [::1]:50051";
  }
  return "";
}

}  // namespace onemodel
