#include "client/cli/attribute.h"

#include <charconv>
#include <optional>
#include <string_view>
#include <variant>
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

// Whether `s` spells an integer: digits after an optional '-'.
bool SpellsInteger(std::string_view s) {
  if (s.starts_with('-')) s.remove_prefix(1);
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// Whether `s` spells a number of any size (1e39 and 1e-60 too).
bool SpellsNumber(std::string_view s) {
  double value = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  return !s.empty() && end == s.data() + s.size() &&
         (error == std::errc() || error == std::errc::result_out_of_range);
}

using Number = std::variant<int64_t, float>;

// The number `item` of attribute `text` spells, an int64 when it spells an integer, else a
// float; nothing when it spells no number. Throws Error(INVALID_ARGUMENT) when it spells one
// that its type cannot hold, rather than sending it as another type or as a string.
std::optional<Number> ParseScalar(std::string_view item, const std::string& text) {
  const auto refuse = [&](const char* why) {
    return Error(grpc::StatusCode::INVALID_ARGUMENT,
                 "attribute '" + text + "': " + std::string(item) + " " + why);
  };
  if (SpellsInteger(item)) {
    if (const auto i = ParseNumber<int64_t>(item)) return *i;
    throw refuse("does not fit in a 64-bit integer (-9223372036854775808 to 9223372036854775807)");
  }
  if (!SpellsNumber(item)) return std::nullopt;
  if (const auto f = ParseNumber<float>(item)) return *f;
  throw refuse("is outside what a 32-bit float holds (magnitudes about 1.2e-38 to 3.4e38, or 0)");
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

// A list of ints when every item is one, else of floats when every item is a number.
client::Attr ParseList(std::string_view list, const std::string& text) {
  const std::vector<std::string_view> items = SplitList(list);
  client::Ints ints;
  client::Floats floats;
  for (const std::string_view item : items) {
    const std::optional<Number> value = ParseScalar(item, text);
    if (!value) {
      throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                  "attribute '" + text + "': '" + std::string(item) + "' is not a number");
    }
    if (const int64_t* i = std::get_if<int64_t>(&*value)) ints.push_back(*i);
    floats.push_back(std::visit([](auto v) { return static_cast<float>(v); }, *value));
  }
  if (ints.size() == items.size()) return ints;
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
  if (const std::optional<Number> number = ParseScalar(value, text)) {
    return {std::move(name), std::visit([](auto v) { return client::Attr(v); }, *number)};
  }
  return {std::move(name), std::string(value)};
}

}  // namespace onemodel::cli
