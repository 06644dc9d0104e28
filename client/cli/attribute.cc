#include "client/cli/attribute.h"

#include <charconv>
#include <optional>
#include <string_view>
#include <vector>

namespace onemodel::cli {
namespace {

using client::Error;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// `s` parsed entirely as a T, or nothing.
template <typename T>
std::optional<T> ParseNumber(std::string_view s) {
  T value{};
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || error != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> SplitList(std::string_view list) {
  std::vector<std::string_view> items;
  if (Trim(list).empty()) return items;
  for (size_t start = 0;;) {
    const size_t comma = list.find(',', start);
    items.push_back(Trim(list.substr(start, comma - start)));
    if (comma == std::string_view::npos) return items;
    start = comma + 1;
  }
}

// A list of ints when every item is one, else of floats when every item is one.
client::Attr ParseList(std::string_view list, const std::string& text) {
  const std::vector<std::string_view> items = SplitList(list);
  client::Ints ints;
  for (const std::string_view item : items) {
    const auto value = ParseNumber<int64_t>(item);
    if (!value) break;
    ints.push_back(*value);
  }
  if (ints.size() == items.size()) return ints;
  client::Floats floats;
  for (const std::string_view item : items) {
    const auto value = ParseNumber<float>(item);
    if (!value) {
      throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                  "attribute '" + text + "': '" + std::string(item) + "' is not a number");
    }
    floats.push_back(*value);
  }
  return floats;
}

}  // namespace

client::NamedAttr ParseAttribute(const std::string& text) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                "attribute '" + text + "' must be written name=value");
  }
  std::string name = text.substr(0, equals);
  const std::string_view value = Trim(std::string_view(text).substr(equals + 1));
  if (value.size() >= 2 && value.front() == '[' && value.back() == ']') {
    return {std::move(name), ParseList(value.substr(1, value.size() - 2), text)};
  }
  if (value.find(',') != std::string_view::npos) return {std::move(name), ParseList(value, text)};
  if (const auto i = ParseNumber<int64_t>(value)) return {std::move(name), *i};
  if (const auto f = ParseNumber<float>(value)) return {std::move(name), *f};
  return {std::move(name), std::string(value)};
}

}  // namespace onemodel::cli
