// ExpectError: the core operation tests' check that a call throws a given exception type whose
// message holds every given fragment (so a test states what the reader of the error learns).
//
//   ExpectError<TensorShapeException>([&] { ops::MatMul(a, b, ctx_); }, {"MatMul", "inner"});
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace onemodel {

// Expects `f` to throw E with every fragment in its message.
template <typename E, typename F>
void ExpectError(F f, std::initializer_list<const char*> fragments) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    for (const char* s : fragments)
      EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << e.what();
  }
}

}  // namespace onemodel
