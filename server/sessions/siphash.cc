#include "server/sessions/siphash.h"

#include <sys/random.h>

#include <bit>
#include <cerrno>
#include <system_error>

namespace onemodel::server {
namespace {

// The 8 bytes at `p`, little-endian.
uint64_t Load64(const uint8_t* p, size_t n = 8) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

struct State {
  uint64_t v0, v1, v2, v3;

  // One SipRound.
  void Round() {
    v0 += v1;
    v1 = std::rotl(v1, 13) ^ v0;
    v0 = std::rotl(v0, 32);
    v2 += v3;
    v3 = std::rotl(v3, 16) ^ v2;
    v0 += v3;
    v3 = std::rotl(v3, 21) ^ v0;
    v2 += v1;
    v1 = std::rotl(v1, 17) ^ v2;
    v2 = std::rotl(v2, 32);
  }
  // Absorbs one 64-bit word with two rounds (the "2" of 2-4).
  void Absorb(uint64_t m) {
    v3 ^= m;
    Round();
    Round();
    v0 ^= m;
  }
};

}  // namespace

uint64_t SipHash24(const SipKey& key, std::span<const uint8_t> message) {
  const uint64_t k0 = Load64(key.data());
  const uint64_t k1 = Load64(key.data() + 8);
  State s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
          k1 ^ 0x7465646279746573ull};
  const size_t n = message.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) s.Absorb(Load64(message.data() + i));
  s.Absorb((uint64_t{n & 0xFF} << 56) | Load64(message.data() + i, n - i));
  s.v2 ^= 0xFF;
  for (int r = 0; r < 4; ++r) s.Round();  // the "4" of 2-4
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

SipKey RandomSipKey() {
  SipKey key;
  // getrandom never returns fewer than 256 bytes once the pool is ready, but may be interrupted
  // by a signal before it is.
  ssize_t got;
  while ((got = getrandom(key.data(), key.size(), 0)) < 0 && errno == EINTR) {
  }
  if (got != static_cast<ssize_t>(key.size())) {
    throw std::system_error(errno, std::generic_category(), "getrandom for a handle key");
  }
  return key;
}

}  // namespace onemodel::server
