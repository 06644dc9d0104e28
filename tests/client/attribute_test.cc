#include "client/cli/attribute.h"

#include <gtest/gtest.h>

#include "client/cli/progress.h"

namespace onemodel::cli {
namespace {

v1::Attribute Parse(const std::string& text, const std::string& name) {
  const client::NamedAttr attribute = ParseAttribute(text);
  EXPECT_EQ(attribute.name, name);
  return attribute.value.proto();
}

TEST(AttributeTest, TypesValuesBySpelling) {
  EXPECT_EQ(Parse("axis=-1", "axis").i(), -1);
  EXPECT_EQ(Parse("scale=0.5", "scale").f(), 0.5f);
  EXPECT_EQ(Parse("scale=1.0", "scale").f(), 1.0f);
  EXPECT_EQ(Parse("layout=NHWC", "layout").s(), "NHWC");
  const v1::Attribute ints = Parse("kernel_shape=[2, 3]", "kernel_shape");
  ASSERT_TRUE(ints.has_ints());
  EXPECT_EQ(ints.ints().values_size(), 2);
  EXPECT_EQ(ints.ints().values(1), 3);
  EXPECT_EQ(Parse("axes=0,2", "axes").ints().values(1), 2);
  EXPECT_EQ(Parse("one=[4]", "one").ints().values(0), 4);
  const v1::Attribute floats = Parse("w=[1,2.5]", "w");
  ASSERT_TRUE(floats.has_floats());
  EXPECT_EQ(floats.floats().values(1), 2.5f);
  EXPECT_TRUE(Parse("none=[]", "none").has_ints());
}

TEST(AttributeTest, RefusesMalformedText) {
  EXPECT_THROW(ParseAttribute("axis"), client::Error);
  EXPECT_THROW(ParseAttribute("=1"), client::Error);
  EXPECT_THROW(ParseAttribute("axes=[1,x]"), client::Error);
}

// The message ParseAttribute(text) throws, or "" when it throws none.
std::string Refusal(const std::string& text) {
  try {
    ParseAttribute(text);
  } catch (const client::Error& e) {
    return e.what();
  }
  return "";
}

// A number its type cannot hold is refused: 1e39 was sent as the string "1e39" and
// 18446744073709551615 as a float, each then refused by the server as the wrong kind.
TEST(AttributeTest, RefusesNumbersTheirTypeCannotHold) {
  EXPECT_NE(Refusal("value=1e39").find("1e39 is outside what a 32-bit float holds"),
            std::string::npos);
  EXPECT_NE(Refusal("value=-1e-60").find("outside what a 32-bit float holds"), std::string::npos);
  EXPECT_NE(Refusal("seed=18446744073709551615").find("does not fit in a 64-bit integer"),
            std::string::npos);
  EXPECT_NE(Refusal("axes=[1,99999999999999999999]").find("does not fit in a 64-bit integer"),
            std::string::npos);
  EXPECT_NE(Refusal("w=[1.5,1e39]").find("outside what a 32-bit float holds"), std::string::npos);
  // The ends of the ranges still pass, and text that spells no number stays a string.
  EXPECT_EQ(Parse("seed=9223372036854775807", "seed").i(), INT64_MAX);
  EXPECT_EQ(Parse("seed=-9223372036854775808", "seed").i(), INT64_MIN);
  EXPECT_EQ(Parse("value=3.4e38", "value").f(), 3.4e38f);
  EXPECT_EQ(Parse("value=1e-7", "value").f(), 1e-7f);
  EXPECT_EQ(Parse("mode=1e39x", "mode").s(), "1e39x");
  EXPECT_EQ(Parse("w=[1,2.5]", "w").floats().values(0), 1.0f);
}

TEST(ProgressTest, FormatsBarPercentSizesAndRate) {
  EXPECT_EQ(FormatProgress("put x.npy", 32 << 20, 64 << 20, 2.0),
            "put x.npy [##########..........]  50%     32.0/64.0 MiB  16.0 MiB/s");
  EXPECT_EQ(FormatProgress("get", 0, 0, 0.0),
            "get [####################] 100%      0.0/0.0 MiB  0.0 MiB/s");
}

}  // namespace
}  // namespace onemodel::cli
