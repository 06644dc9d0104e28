#include "server/ops/nearest_names.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace onemodel::server {
namespace {

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Levenshtein distance between `a` and `b`, ignoring case.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = diagonal + (Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string_view> NearestNames(std::string_view typed,
                                           std::span<const std::string_view> candidates) {
  constexpr size_t kMaxNames = 3;
  // Names are short: longer input is not a typo of one (and would cost time to compare).
  if (typed.size() > 64) return {};
  const size_t limit = std::max<size_t>(2, typed.size() / 3);
  size_t best = limit + 1;
  std::vector<std::string_view> nearest;
  for (std::string_view name : candidates) {
    const size_t d = EditDistance(typed, name);
    if (d > limit) continue;
    if (d < best) {
      best = d;
      nearest.clear();
    }
    if (d == best && nearest.size() < kMaxNames) nearest.push_back(name);
  }
  return nearest;
}

}  // namespace onemodel::server
