// Handle tags cannot be forged: knowing any number of a session's handles does not tell another
// one. The attack of issue 19 (the old tag, splitmix64's finalizer keyed by a 64-bit secret,
// could be inverted, so one handle gave the secret and thus every other handle) is kept here
// and must fail against the real table.
#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

#include "core/memory/buffer_pool.h"
#include "server/rpc/rpc_error.h"
#include "server/sessions/handle_table.h"

namespace onemodel::server {
namespace {

// The tag function of the old table: Mix(secret ^ Mix(serial * 2 + arena)).
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The multiplicative inverse of odd `a` modulo 2^64 (Newton's iteration).
uint64_t Inverse(uint64_t a) {
  uint64_t x = a;
  for (int i = 0; i < 6; ++i) x *= 2 - a * x;
  return x;
}

// Undoes x ^= x >> shift.
uint64_t UnXorShift(uint64_t y, int shift) {
  uint64_t x = y;
  for (int i = 0; i < 64 / shift + 1; ++i) x = y ^ (x >> shift);
  return x;
}

// Mix's inverse: Unmix(Mix(x)) == x.
uint64_t Unmix(uint64_t y) {
  y = UnXorShift(y, 31) * Inverse(0x94D049BB133111EBull);
  y = UnXorShift(y, 27) * Inverse(0xBF58476D1CE4E5B9ull);
  return UnXorShift(y, 30) - 0x9E3779B97F4A7C15ull;
}

struct Handle {
  char kind;
  uint64_t serial;
  uint64_t tag;
};

Handle ParseHandle(const std::string& h) {
  Handle out{h[0], 0, 0};
  const char* dot = std::from_chars(h.data() + 1, h.data() + h.size(), out.serial).ptr;
  std::from_chars(dot + 1, h.data() + h.size(), out.tag, 16);
  return out;
}

std::string Spell(char kind, uint64_t serial, uint64_t tag) {
  char hex[17];
  for (int i = 0; i < 16; ++i) hex[i] = "0123456789abcdef"[(tag >> (60 - 4 * i)) & 15];
  hex[16] = 0;
  return kind + std::to_string(serial) + "." + hex;
}

// The handle the old attack predicts for `serial`, from one known handle.
std::string Forge(const Handle& known, char kind, uint64_t serial) {
  const uint64_t secret = Unmix(known.tag) ^ Mix(known.serial * 2 + (known.kind == 'a'));
  return Spell(kind, serial, Mix(secret ^ Mix(serial * 2 + (kind == 'a'))));
}

grpc::StatusCode FindCode(const HandleTable& table, const std::string& handle) {
  try {
    table.Find(handle);
    return grpc::StatusCode::OK;
  } catch (const RpcError& e) {
    return e.code();
  }
}

class HandleTagTest : public ::testing::Test {
 protected:
  Tensor NewTensor() { return Tensor::Empty(Shape{1}, DType::kFloat, pool_); }
  BufferPool pool_;
};

TEST_F(HandleTagTest, TheAttackMathInvertsTheOldTag) {
  // Guards the test itself: against the old tag function the attack always succeeds.
  for (uint64_t x : {uint64_t{0}, uint64_t{1}, uint64_t{0xDEADBEEF}, ~uint64_t{0}}) {
    EXPECT_EQ(Unmix(Mix(x)), x);
  }
  const uint64_t secret = 0x0123456789ABCDEFull;
  const Handle known{'p', 7, Mix(secret ^ Mix(7 * 2))};
  EXPECT_EQ(Forge(known, 'a', 8), Spell('a', 8, Mix(secret ^ Mix(8 * 2 + 1))));
}

TEST_F(HandleTagTest, ManyKnownHandlesDoNotRevealAnother) {
  constexpr int kHandles = 2000;
  HandleTable table(kHandles + 1);
  std::vector<std::string> handles;
  for (int i = 0; i < kHandles; ++i) {
    handles.push_back(table.Add(NewTensor(), i % 2 ? Placement::kArena : Placement::kPool, true));
  }
  // Every handle the client knows, used to forge each of the others it could name.
  int forged = 0, tried = 0;
  for (int i = 0; i + 1 < kHandles; ++i) {
    const Handle known = ParseHandle(handles[static_cast<size_t>(i)]);
    const Handle target = ParseHandle(handles[static_cast<size_t>(i) + 1]);
    const std::string guess = Forge(known, target.kind, target.serial);
    ++tried;
    if (guess == handles[static_cast<size_t>(i) + 1]) ++forged;
    EXPECT_EQ(FindCode(table, guess), grpc::StatusCode::NOT_FOUND) << guess;
  }
  EXPECT_EQ(forged, 0) << "of " << tried << " handles predicted from their neighbour";
}

TEST_F(HandleTagTest, EachSessionHasItsOwnKey) {
  HandleTable a(10), b(10);
  const std::string ha = a.Add(NewTensor(), Placement::kPool, true);
  const std::string hb = b.Add(NewTensor(), Placement::kPool, true);
  EXPECT_EQ(ParseHandle(ha).serial, ParseHandle(hb).serial);
  EXPECT_NE(ha, hb) << "the same serial has another tag in another session";
  EXPECT_EQ(FindCode(a, hb), grpc::StatusCode::NOT_FOUND);
}

TEST_F(HandleTagTest, EveryOneBitForgeryIsNotFound) {
  HandleTable table(10);
  const std::string h = table.Add(NewTensor(), Placement::kPool, true);
  const Handle real = ParseHandle(h);
  for (int bit = 0; bit < 64; ++bit) {
    const std::string forged = Spell('p', real.serial, real.tag ^ (uint64_t{1} << bit));
    EXPECT_EQ(FindCode(table, forged), grpc::StatusCode::NOT_FOUND) << forged;
  }
  // The right tag of the wrong placement is no handle either.
  EXPECT_EQ(FindCode(table, Spell('a', real.serial, real.tag)), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(FindCode(table, h), grpc::StatusCode::OK);
}

}  // namespace
}  // namespace onemodel::server
