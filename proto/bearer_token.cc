#include "proto/bearer_token.h"

#include <algorithm>
#include <stdexcept>

namespace onemodel {

std::string TokenInFile(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const std::string_view token = text.substr(first, text.find_last_not_of(kSpace) - first + 1);
  if (std::any_of(token.begin(), token.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      })) {
    throw std::invalid_argument(
        "holds more than one line or a control character; put the token alone on one line");
  }
  return std::string(token);
}

}  // namespace onemodel
