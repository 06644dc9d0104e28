// The bearer token a token file holds, by the one rule the server (--auth-token-file) and the
// clients (--token-file, ONEMODEL_TOKEN_FILE) share, so a file one accepts works for the other.
//
//   const std::string token = TokenInFile(file_text);   // "Bearer " + token on the wire
#pragma once

#include <string>
#include <string_view>

namespace onemodel {

// The file's text without surrounding whitespace (spaces, tabs, line breaks): empty when the
// file holds nothing else. Throws std::invalid_argument when the token itself spans lines or
// holds a character other than printable ASCII, which no header value can carry.
std::string TokenInFile(std::string_view text);

}  // namespace onemodel
