// SipHash-2-4 against the reference test vectors (Aumasson and Bernstein's vectors.h: key bytes
// 00..0f, message i = bytes 00..i-1) and against OpenSSL's independent implementation.
#include "server/sessions/siphash.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace onemodel::server {
namespace {

// vectors_sip64[0..15] of the reference implementation: the 8 output bytes.
constexpr uint8_t kVectors[16][8] = {
    {0x31, 0x0e, 0x0e, 0xdd, 0x47, 0xdb, 0x6f, 0x72},
    {0xfd, 0x67, 0xdc, 0x93, 0xc5, 0x39, 0xf8, 0x74},
    {0x5a, 0x4f, 0xa9, 0xd9, 0x09, 0x80, 0x6c, 0x0d},
    {0x2d, 0x7e, 0xfb, 0xd7, 0x96, 0x66, 0x67, 0x85},
    {0xb7, 0x87, 0x71, 0x27, 0xe0, 0x94, 0x27, 0xcf},
    {0x8d, 0xa6, 0x99, 0xcd, 0x64, 0x55, 0x76, 0x18},
    {0xce, 0xe3, 0xfe, 0x58, 0x6e, 0x46, 0xc9, 0xcb},
    {0x37, 0xd1, 0x01, 0x8b, 0xf5, 0x00, 0x02, 0xab},
    {0x62, 0x24, 0x93, 0x9a, 0x79, 0xf5, 0xf5, 0x93},
    {0xb0, 0xe4, 0xa9, 0x0b, 0xdf, 0x82, 0x00, 0x9e},
    {0xf3, 0xb9, 0xdd, 0x94, 0xc5, 0xbb, 0x5d, 0x7a},
    {0xa7, 0xad, 0x6b, 0x22, 0x46, 0x2f, 0xb3, 0xf4},
    {0xfb, 0xe5, 0x0e, 0x86, 0xbc, 0x8f, 0x1e, 0x75},
    {0x90, 0x3d, 0x84, 0xc0, 0x27, 0x56, 0xea, 0x14},
    {0xee, 0xf2, 0x7a, 0x8e, 0x90, 0xca, 0x23, 0xf7},
    {0xe5, 0x45, 0xbe, 0x49, 0x61, 0xca, 0x29, 0xa1},
};

// The 8 output bytes of `tag`, in the reference implementation's order (little-endian).
std::array<uint8_t, 8> Bytes(uint64_t tag) {
  std::array<uint8_t, 8> out;
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>(tag >> (8 * i));
  return out;
}

// SipHash-2-4 by OpenSSL (EVP_MAC "SIPHASH" with an 8-byte output).
std::array<uint8_t, 8> OpenSslSipHash(const SipKey& key, const std::vector<uint8_t>& message) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "SIPHASH", nullptr);
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  unsigned int size = 8;
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_uint("size", &size), OSSL_PARAM_END};
  std::array<uint8_t, 8> out{};
  size_t written = 0;
  EXPECT_EQ(EVP_MAC_init(ctx, key.data(), key.size(), params), 1);
  EXPECT_EQ(EVP_MAC_update(ctx, message.data(), message.size()), 1);
  EXPECT_EQ(EVP_MAC_final(ctx, out.data(), &written, out.size()), 1);
  EXPECT_EQ(written, 8u);
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  return out;
}

TEST(SipHash24, MatchesTheReferenceVectors) {
  SipKey key;
  for (int i = 0; i < 16; ++i) key[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
  std::vector<uint8_t> message;
  for (int length = 0; length < 16; ++length) {
    const std::array<uint8_t, 8> want = std::to_array(kVectors[length]);
    EXPECT_EQ(Bytes(SipHash24(key, message)), want) << "message of " << length << " bytes";
    message.push_back(static_cast<uint8_t>(length));
  }
}

TEST(SipHash24, MatchesOpenSslForRandomKeysAndLengths) {
  std::mt19937_64 random(19);
  for (int trial = 0; trial < 200; ++trial) {
    SipKey key;
    for (uint8_t& b : key) b = static_cast<uint8_t>(random());
    std::vector<uint8_t> message(random() % 40);
    for (uint8_t& b : message) b = static_cast<uint8_t>(random());
    EXPECT_EQ(Bytes(SipHash24(key, message)), OpenSslSipHash(key, message)) << "trial " << trial;
  }
}

TEST(SipHash24, RandomKeysDiffer) {
  std::set<SipKey> keys;
  for (int i = 0; i < 100; ++i) keys.insert(RandomSipKey());
  EXPECT_EQ(keys.size(), 100u);
}

}  // namespace
}  // namespace onemodel::server
