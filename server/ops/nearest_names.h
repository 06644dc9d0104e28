// NearestNames: the names a mistyped one was probably meant to be, for "did you mean" hints.
//
// Distance is the Levenshtein edit distance between lowercased names; a candidate counts when
// it is within a third of the typed name's length (at least 2 edits).
//
//   NearestNames("softmx", {"Softmax", "LogSoftmax", "Sum"});  // {"Softmax"}
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace onemodel::server {

// The candidates nearest to `typed` (all those at the smallest distance, at most 3, in
// candidate order), or none when every candidate is too far.
std::vector<std::string_view> NearestNames(std::string_view typed,
                                           std::span<const std::string_view> candidates);

}  // namespace onemodel::server
