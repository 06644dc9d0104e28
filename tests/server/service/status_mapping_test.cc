// The statuses that failures become (server/rpc/status_mapping.h): codes by kind, and messages cut
// at kMaxStatusMessageBytes, so a client's input cannot make a trailer or a log line grow.
#include "server/rpc/status_mapping.h"

#include <gtest/gtest.h>

#include <string>

#include "core/common/exceptions.h"
#include "server/rpc/rpc_error.h"

namespace onemodel::server {
namespace {

// The status CurrentExceptionStatus makes of `e`, thrown.
template <typename Exception>
grpc::Status StatusOf(const Exception& e) {
  try {
    throw e;
  } catch (...) {
    return CurrentExceptionStatus();
  }
}

TEST(StatusMappingTest, AShortMessageIsKeptWhole) {
  const grpc::Status s = StatusOf(TensorShapeException("shape [2, 3] has rank 2"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "shape [2, 3] has rank 2");
  const std::string exact(kMaxStatusMessageBytes, 'x');
  EXPECT_EQ(StatusOf(InvalidArgument(exact)).error_message(), exact);
}

TEST(StatusMappingTest, ALongMessageIsCutAndSaysItsLength) {
  const std::string huge = "reshape to [" + std::string(300000, '1') + "]";
  const grpc::Status s = StatusOf(TensorShapeException(huge));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << "the code stays";
  EXPECT_EQ(s.error_message(), huge.substr(0, kMaxStatusMessageBytes) + " ... (" +
                                   std::to_string(huge.size()) + " bytes in all)");
  EXPECT_EQ(StatusOf(ResourceExhausted(huge)).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST(StatusMappingTest, TheCutNeverSplitsACharacter) {
  // "é" is two bytes: with one ASCII byte first, the limit falls inside a character.
  std::string text = "a";
  while (text.size() < 2 * kMaxStatusMessageBytes) text += "\xC3\xA9";
  const std::string m = StatusOf(InvalidArgument(text)).error_message();
  const std::string kept = m.substr(0, m.find(" ... ("));
  EXPECT_EQ(kept.size(), kMaxStatusMessageBytes - 1) << "back to the character's start";
  EXPECT_EQ(kept, text.substr(0, kept.size()));
}

}  // namespace
}  // namespace onemodel::server
