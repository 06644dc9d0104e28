#include "proto/bearer_token.h"

#include <algorithm>
#include <stdexcept>

namespace onemodel {

std::string TokenInFile(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const std::string_view token = text.substr(first, text.find_last_not_of(kSpace) - first + 1);
  if (token.find_first_of("\r\n") != std::string_view::npos) {
    throw std::invalid_argument("holds more than one line; put the token alone on one line");
  }
  if (std::any_of(token.begin(), token.end(), [](char c) { return c < ' ' || c > '~'; })) {
    throw std::invalid_argument(
        "holds a character other than printable ASCII, which a header cannot carry; use a "
        "token of printable ASCII characters");
  }
  return std::string(token);
}

}  // namespace onemodel
