// A tensor as text, the way NumPy prints an array: nested brackets, one row per line, decimal
// points aligned, and only the first and last 3 entries of each dimension when it holds more than
// 1000 elements (NumPy's default threshold and edge items).
//
//   FormatTensor(TensorData::From<float>(values, {2, 3}));
//   // "[[ 1.  -2.   3.5]\n [-4.   5.  -6. ]]"
#pragma once

#include <string>

#include "client/lib/tensor_data.h"

namespace onemodel::cli {

// More elements than this are summarized with "...".
inline constexpr int64_t kPrintThreshold = 1000;
// Entries shown at each end of a summarized dimension.
inline constexpr int64_t kPrintEdgeItems = 3;

// `data`'s values as NumPy prints them (no trailing newline); Error(INVALID_ARGUMENT) for an
// element type it cannot read.
std::string FormatTensor(const client::TensorData& data);

}  // namespace onemodel::cli
