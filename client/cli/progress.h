// A one-line progress bar for transfers, drawn on stderr:
//   put big.npy [##########..........]  50%   32.0/64.0 MiB  410.2 MiB/s
//
//   client::Progress progress = TransferProgress("put big.npy", /*enabled=*/isatty(2));
//   session.Put(data, {.progress = progress});
#pragma once

#include <cstdint>
#include <string>

#include "client/lib/session.h"

namespace onemodel::cli {

// Transfers smaller than this draw no bar.
inline constexpr int64_t kProgressMinBytes = int64_t{4} << 20;

// A Progress callback that draws a bar labelled `label` on stderr for transfers of at least
// kProgressMinBytes, redrawing at most ten times a second; does nothing unless `enabled`.
client::Progress TransferProgress(std::string label, bool enabled);

// The bar's text for `done` of `total` bytes after `seconds` (no carriage return).
std::string FormatProgress(const std::string& label, int64_t done, int64_t total, double seconds);

}  // namespace onemodel::cli
