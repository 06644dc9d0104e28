// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit MAC for short messages, used to tag
// tensor handles. Without the 128-bit key, seeing any number of (message, tag) pairs does not
// help predict another tag; one 8-byte message costs about 20 ns.
//
//   SipKey key = RandomSipKey();
//   uint64_t tag = SipHash24(key, bytes);
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace onemodel::server {

using SipKey = std::array<uint8_t, 16>;

// SipHash-2-4 of `message` under `key`, as the reference implementation's 8 output bytes read
// little-endian.
uint64_t SipHash24(const SipKey& key, std::span<const uint8_t> message);

// A key from the kernel's CSPRNG (getrandom); throws std::system_error if it fails.
SipKey RandomSipKey();

}  // namespace onemodel::server
