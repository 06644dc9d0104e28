// Every operation of the Run RPC against reference loops written here (exact kernels).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::Floats;
using client::Ints;
using client::NamedAttr;
using client::RunInput;
using client::TensorHandle;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using Dims = std::vector<int64_t>;

// Row-major strides of `dims`.
Dims StridesOf(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

int64_t Count(const Dims& dims) { return client::NumElements(dims); }

// numpy's broadcast of a (dims ad) and b (dims bd) through fn.
std::vector<float> Broadcast(const std::vector<float>& a, const Dims& ad,
                             const std::vector<float>& b, const Dims& bd, const Dims& out,
                             const std::function<float(float, float)>& fn) {
  const auto strides_in = [&](const Dims& d) {  // strides aligned right, 0 where broadcast
    Dims s(out.size(), 0);
    const Dims own = StridesOf(d);
    for (size_t i = 0; i < d.size(); ++i) {
      const size_t o = out.size() - d.size() + i;
      s[o] = d[i] == 1 ? 0 : own[i];
    }
    return s;
  };
  const Dims sa = strides_in(ad), sb = strides_in(bd), so = StridesOf(out);
  std::vector<float> result(Count(out));
  for (int64_t flat = 0; flat < Count(out); ++flat) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < out.size(); ++d) {
      const int64_t index = flat / so[d] % out[d];
      ia += index * sa[d];
      ib += index * sb[d];
    }
    result[flat] = fn(a[ia], b[ib]);
  }
  return result;
}

std::vector<float> Map(const std::vector<float>& x, const std::function<float(float)>& fn) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = fn(x[i]);
  return y;
}

// Every element of `actual` within `rel` (relative, or absolute below 1) of `expected`.
void ExpectClose(const std::vector<float>& actual, const std::vector<float>& expected,
                 float rel = 1e-5f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], rel * std::max(1.0f, std::fabs(expected[i])))
        << "element " << i;
  }
}

class OpsTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (!HasFatalFailure()) session_.emplace(NewSession(v1::KERNEL_CHOICE_EXACT));
  }

  TensorHandle Put(const std::vector<float>& values, const Dims& dims) {
    return session_->Put<float>(values, dims);
  }

  // Runs `op` once (no grad) and returns its output's description.
  TensorHandle Run(const std::string& op, const std::vector<RunInput>& inputs,
                   const std::vector<NamedAttr>& attributes = {}) {
    client::RunBuilder run;
    run.Op(op, inputs, attributes);
    return session_->Run(run.NoGrad()).back();
  }

  std::vector<float> Values(const TensorHandle& handle) { return session_->Get<float>(handle); }

  std::optional<client::Session> session_;
};

TEST_F(OpsTest, BinaryOpsBroadcastLikeNumpy) {
  const Dims ad = {2, 1, 3}, bd = {4, 1}, out = {2, 4, 3};
  const std::vector<float> a = RandomFloats(6, 10, 0.5f, 2.0f);
  const std::vector<float> b = RandomFloats(4, 11, -2.0f, 2.0f);
  const TensorHandle ha = Put(a, ad), hb = Put(b, bd);
  const std::vector<std::pair<std::string, std::function<float(float, float)>>> ops = {
      {"Add", [](float x, float y) { return x + y; }},
      {"Sub", [](float x, float y) { return x - y; }},
      {"Mul", [](float x, float y) { return x * y; }},
      {"Div", [](float x, float y) { return x / y; }},
      {"Max", [](float x, float y) { return std::max(x, y); }},
      {"Min", [](float x, float y) { return std::min(x, y); }},
      {"Pow", [](float x, float y) { return std::pow(x, y); }}};
  for (const auto& [op, fn] : ops) {
    SCOPED_TRACE(op);
    const TensorHandle y = Run(op, {ha, hb});
    EXPECT_THAT(y.info().dims(), ElementsAreArray(out));
    ExpectClose(Values(y), Broadcast(a, ad, b, bd, out, fn), 1e-6f);
  }
}

TEST_F(OpsTest, UnaryOpsMatchTheirFormulas) {
  const std::vector<float> x = RandomFloats(24, 20, -3.0f, 3.0f);
  const std::vector<float> positive = RandomFloats(24, 21, 0.1f, 3.0f);
  const TensorHandle hx = Put(x, {2, 3, 4}), hp = Put(positive, {2, 3, 4});
  const std::vector<
      std::tuple<std::string, TensorHandle, const std::vector<float>*, std::function<float(float)>>>
      ops = {{"Neg", hx, &x, [](float v) { return -v; }},
             {"Abs", hx, &x, [](float v) { return std::fabs(v); }},
             {"Exp", hx, &x, [](float v) { return std::exp(v); }},
             {"Log", hp, &positive, [](float v) { return std::log(v); }},
             {"Sqrt", hp, &positive, [](float v) { return std::sqrt(v); }},
             {"Relu", hx, &x, [](float v) { return v > 0 ? v : 0.0f; }},
             {"Sigmoid", hx, &x, [](float v) { return 1.0f / (1.0f + std::exp(-v)); }},
             {"Tanh", hx, &x, [](float v) { return std::tanh(v); }},
             {"Gelu", hx, &x, [](float v) {
                return 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
              }}};
  for (const auto& [op, input, values, fn] : ops) {
    SCOPED_TRACE(op);
    const TensorHandle y = Run(op, {input});
    EXPECT_THAT(y.info().dims(), ElementsAre(2, 3, 4));
    ExpectClose(Values(y), Map(*values, fn));
  }
}

TEST_F(OpsTest, ComparisonsGiveBoolWithBroadcastingAndIeeeNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Dims ad = {2, 3}, bd = {3}, out = {2, 3};
  const std::vector<float> a = {1, 2, nan, 4, 5, 6}, b = {1, 5, nan};
  const TensorHandle ha = Put(a, ad), hb = Put(b, bd);
  const std::vector<std::pair<std::string, std::function<float(float, float)>>> ops = {
      {"Equal", [](float x, float y) { return x == y ? 1.0f : 0.0f; }},
      {"Less", [](float x, float y) { return x < y ? 1.0f : 0.0f; }},
      {"LessEqual", [](float x, float y) { return x <= y ? 1.0f : 0.0f; }},
      {"Greater", [](float x, float y) { return x > y ? 1.0f : 0.0f; }},
      {"GreaterEqual", [](float x, float y) { return x >= y ? 1.0f : 0.0f; }}};
  for (const auto& [op, fn] : ops) {
    SCOPED_TRACE(op);
    const TensorHandle y = Run(op, {ha, hb});
    EXPECT_EQ(y.data_type(), onnx::TensorProto::BOOL);
    EXPECT_THAT(y.info().dims(), ElementsAreArray(out));
    std::vector<float> got;
    for (uint8_t v : session_->Get<uint8_t>(y)) got.push_back(v);
    EXPECT_EQ(got, Broadcast(a, ad, b, bd, out, fn));
  }
}

TEST_F(OpsTest, WhereClipLeakyReluErfAndGeluForms) {
  const std::vector<float> x = RandomFloats(24, 25, -3.0f, 3.0f);
  const TensorHandle hx = Put(x, {2, 3, 4});
  const TensorHandle zero = Put({0.0f}, {1});
  client::RunBuilder run;
  const auto mask = run.Op("Greater", {hx, zero});
  run.Op("Where", {mask, hx, Put({-1.0f, -2.0f, -3.0f, -4.0f}, {4})});
  const TensorHandle picked = session_->Run(run.NoGrad()).back();
  const std::vector<float> got = Values(picked);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(got[i], x[i] > 0 ? x[i] : -1.0f - static_cast<float>(i % 4)) << i;
  }
  ExpectClose(Values(Run("Clip", {hx}, {{"min", -1.0f}, {"max", 2.0f}})),
              Map(x, [](float v) { return std::min(std::max(v, -1.0f), 2.0f); }), 0);
  ExpectClose(Values(Run("LeakyRelu", {hx}, {{"alpha", 0.25f}})),
              Map(x, [](float v) { return v > 0 ? v : 0.25f * v; }), 0);
  ExpectClose(Values(Run("Erf", {hx})), Map(x, [](float v) { return std::erf(v); }));
  ExpectClose(Values(Run("Gelu", {hx}, {{"approximate", "none"}})),
              Map(x, [](float v) { return v * 0.5f * (1.0f + std::erf(v / std::sqrt(2.0f))); }));
  EXPECT_TRUE(FailsWith([&] { Run("Gelu", {hx}, {{"approximate", "exact"}}); },
                        grpc::StatusCode::INVALID_ARGUMENT, {"'approximate'", "\"none\""}));
  EXPECT_TRUE(FailsWith([&] { Run("Where", {hx, hx, hx}); }, grpc::StatusCode::INVALID_ARGUMENT,
                        {"condition", "BOOL"}));
}

// c[b] = a[b] x w[b or 0] for a (batch, m, k) and w (wb, k, n).
std::vector<float> MatMulReference(const std::vector<float>& a, const std::vector<float>& w,
                                   int64_t batch, int64_t m, int64_t k, int64_t n, bool w_batched) {
  std::vector<float> c(batch * m * n, 0.0f);
  for (int64_t b = 0; b < batch; ++b) {
    const float* wb = w.data() + (w_batched ? b * k * n : 0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += a[(b * m + i) * k + p] * wb[p * n + j];
        c[(b * m + i) * n + j] = static_cast<float>(sum);
      }
    }
  }
  return c;
}

TEST_F(OpsTest, MatMulOfMatricesAndBatches) {
  const std::vector<float> a = RandomFloats(2 * 3 * 4, 30), w = RandomFloats(2 * 4 * 5, 31);
  const TensorHandle matrix = Run("MatMul", {Put({a.begin(), a.begin() + 12}, {3, 4}),
                                             Put({w.begin(), w.begin() + 20}, {4, 5})});
  EXPECT_THAT(matrix.info().dims(), ElementsAre(3, 5));
  ExpectClose(Values(matrix), MatMulReference(a, w, 1, 3, 4, 5, false));

  const TensorHandle batched = Run("MatMul", {Put(a, {2, 3, 4}), Put(w, {2, 4, 5})});
  EXPECT_THAT(batched.info().dims(), ElementsAre(2, 3, 5));
  ExpectClose(Values(batched), MatMulReference(a, w, 2, 3, 4, 5, true));

  const TensorHandle shared =
      Run("MatMul", {Put(a, {2, 3, 4}), Put({w.begin(), w.begin() + 20}, {4, 5})});
  EXPECT_THAT(shared.info().dims(), ElementsAre(2, 3, 5));
  ExpectClose(Values(shared), MatMulReference(a, w, 2, 3, 4, 5, false));
}

// Window maxima of x (n, c, h, w) with implicit -inf padding.
std::vector<float> MaxPoolReference(const std::vector<float>& x, const Dims& d, int kh, int kw,
                                    int sh, int sw, int ph, int pw, Dims* out_dims) {
  const int64_t oh = (d[2] + 2 * ph - kh) / sh + 1, ow = (d[3] + 2 * pw - kw) / sw + 1;
  *out_dims = {d[0], d[1], oh, ow};
  std::vector<float> y;
  for (int64_t nc = 0; nc < d[0] * d[1]; ++nc) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        float best = -std::numeric_limits<float>::infinity();
        for (int64_t r = i * sh - ph; r < i * sh - ph + kh; ++r) {
          for (int64_t c = j * sw - pw; c < j * sw - pw + kw; ++c) {
            if (r >= 0 && r < d[2] && c >= 0 && c < d[3]) {
              best = std::max(best, x[(nc * d[2] + r) * d[3] + c]);
            }
          }
        }
        y.push_back(best);
      }
    }
  }
  return y;
}

TEST_F(OpsTest, MaxPool2dWithStridesPadsAndDefaults) {
  const Dims d = {2, 3, 5, 6};
  const std::vector<float> x = RandomFloats(Count(d), 40);
  const TensorHandle hx = Put(x, d);
  Dims expected_dims;
  const TensorHandle strided =
      Run("MaxPool2d", {hx},
          {{"kernel_shape", Ints{3, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1}}});
  const std::vector<float> expected = MaxPoolReference(x, d, 3, 2, 2, 2, 1, 1, &expected_dims);
  EXPECT_THAT(strided.info().dims(), ElementsAreArray(expected_dims));
  EXPECT_EQ(Values(strided), expected);

  const TensorHandle plain = Run("MaxPool2d", {hx}, {{"kernel_shape", Ints{2, 2}}});
  const std::vector<float> expected_plain =
      MaxPoolReference(x, d, 2, 2, 1, 1, 0, 0, &expected_dims);
  EXPECT_THAT(plain.info().dims(), ElementsAreArray(expected_dims));
  EXPECT_EQ(Values(plain), expected_plain);
}

// Conv2d of x (N, C, H, W) with w (K, C / group, KH, KW), bias b (K) when not empty, by
// direct summation in double.
std::vector<float> Conv2dReference(const std::vector<float>& x, const Dims& xd,
                                   const std::vector<float>& w, const Dims& wd,
                                   const std::vector<float>& b, int sh, int sw, int pt, int pl,
                                   int pb, int pr, int dh, int dw, int group, Dims* out_dims) {
  const int64_t n = xd[0], c = xd[1], h = xd[2], wi = xd[3], k = wd[0], cg = wd[1], kh = wd[2],
                kw = wd[3];
  const int64_t oh = (h + pt + pb - dh * (kh - 1) - 1) / sh + 1;
  const int64_t ow = (wi + pl + pr - dw * (kw - 1) - 1) / sw + 1;
  *out_dims = {n, k, oh, ow};
  std::vector<float> y;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ik = 0; ik < k; ++ik)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double acc = b.empty() ? 0.0 : b[static_cast<size_t>(ik)];
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t yy = oy * sh - pt + i * dh, xx = ox * sw - pl + j * dw;
                if (yy < 0 || yy >= h || xx < 0 || xx >= wi) continue;
                const int64_t channel = ik / (k / group) * cg + ic;
                acc += double{x[static_cast<size_t>(((in * c + channel) * h + yy) * wi + xx)]} *
                       w[static_cast<size_t>(((ik * cg + ic) * kh + i) * kw + j)];
              }
          y.push_back(static_cast<float>(acc));
        }
  return y;
}

TEST_F(OpsTest, Conv2dWithBiasGroupsPadsStridesAndDilations) {
  const Dims xd = {2, 4, 7, 6}, wd = {6, 2, 3, 2};
  const std::vector<float> x = RandomFloats(Count(xd), 61), w = RandomFloats(Count(wd), 62),
                           b = RandomFloats(6, 63);
  const TensorHandle hx = Put(x, xd), hw = Put(w, wd), hb = Put(b, {6});
  Dims expected_dims;
  const TensorHandle y = Run("Conv2d", {hx, hw, hb},
                             {{"strides", Ints{2, 1}},
                              {"pads", Ints{1, 0, 2, 1}},
                              {"dilations", Ints{1, 2}},
                              {"group", 2}});
  const std::vector<float> expected =
      Conv2dReference(x, xd, w, wd, b, 2, 1, 1, 0, 2, 1, 1, 2, 2, &expected_dims);
  EXPECT_THAT(y.info().dims(), ElementsAreArray(expected_dims));
  ExpectClose(Values(y), expected);

  const Dims wd1 = {3, 4, 1, 1};
  const std::vector<float> w1 = RandomFloats(Count(wd1), 64);
  const TensorHandle plain = Run("Conv2d", {hx, Put(w1, wd1)});  // no bias, defaults
  ExpectClose(Values(plain),
              Conv2dReference(x, xd, w1, wd1, {}, 1, 1, 0, 0, 0, 0, 1, 1, 1, &expected_dims));
  EXPECT_THAT(plain.info().dims(), ElementsAreArray(expected_dims));
}

// ConvTranspose2d of x (N, C, H, W) with w (C, K / group, KH, KW) and bias b (K): each input
// element scattered through each tap, in double, rows and columns outside the output dropped.
TEST_F(OpsTest, ConvTranspose2dWithBiasGroupsPadsStridesDilationsAndOutputPadding) {
  const Dims xd = {2, 4, 4, 3}, wd = {4, 3, 2, 3};
  const int64_t sh = 2, sw = 1, pt = 1, pl = 0, pb = 0, pr = 2, dh = 1, dw = 2, oph = 1, group = 2;
  const std::vector<float> x = RandomFloats(Count(xd), 71), w = RandomFloats(Count(wd), 72),
                           b = RandomFloats(6, 73);
  const TensorHandle y = Run("ConvTranspose2d", {Put(x, xd), Put(w, wd), Put(b, {6})},
                             {{"strides", Ints{2, 1}},
                              {"pads", Ints{1, 0, 0, 2}},
                              {"dilations", Ints{1, 2}},
                              {"group", 2},
                              {"output_padding", Ints{1, 0}}});
  const int64_t kg = wd[1], k = kg * group, cg = xd[1] / group;
  const int64_t oh = (xd[2] - 1) * sh - pt - pb + dh * (wd[2] - 1) + oph + 1;
  const int64_t ow = (xd[3] - 1) * sw - pl - pr + dw * (wd[3] - 1) + 1;
  std::vector<double> acc(static_cast<size_t>(xd[0] * k * oh * ow));
  for (int64_t n = 0; n < xd[0]; ++n)
    for (int64_t ik = 0; ik < k; ++ik)
      for (int64_t e = 0; e < oh * ow; ++e)
        acc[static_cast<size_t>((n * k + ik) * oh * ow + e)] = b[static_cast<size_t>(ik)];
  for (int64_t n = 0; n < xd[0]; ++n)
    for (int64_t c = 0; c < xd[1]; ++c)
      for (int64_t yy = 0; yy < xd[2]; ++yy)
        for (int64_t xx = 0; xx < xd[3]; ++xx)
          for (int64_t kk = 0; kk < kg; ++kk)
            for (int64_t i = 0; i < wd[2]; ++i)
              for (int64_t j = 0; j < wd[3]; ++j) {
                const int64_t oy = yy * sh - pt + i * dh, ox = xx * sw - pl + j * dw;
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                const int64_t ik = c / cg * kg + kk;
                acc[static_cast<size_t>(((n * k + ik) * oh + oy) * ow + ox)] +=
                    double{x[static_cast<size_t>(((n * xd[1] + c) * xd[2] + yy) * xd[3] + xx)]} *
                    w[static_cast<size_t>(((c * kg + kk) * wd[2] + i) * wd[3] + j)];
              }
  EXPECT_THAT(y.info().dims(), ElementsAreArray(Dims{xd[0], k, oh, ow}));
  ExpectClose(Values(y), std::vector<float>(acc.begin(), acc.end()));
}

TEST_F(OpsTest, ReluMaxPool2dAvgPool2dAndGlobalAvgPool2d) {
  const Dims d = {2, 3, 5, 6};
  const std::vector<float> x = RandomFloats(Count(d), 41);
  const TensorHandle hx = Put(x, d);
  const std::vector<NamedAttr> window = {{"kernel_shape", Ints{3, 2}},
                                         {"strides", Ints{2, 2}},
                                         {"pads", Ints{1, 1}},
                                         {"dilations", Ints{1, 2}},
                                         {"ceil_mode", 1}};
  const TensorHandle fused = Run("ReluMaxPool2d", {hx}, window);
  const TensorHandle apart = Run("MaxPool2d", {Run("Relu", {hx})}, window);
  EXPECT_THAT(fused.info().dims(), ElementsAreArray(Dims{2, 3, 3, 4}));
  EXPECT_EQ(Values(fused), Values(apart));

  // 2x2 windows, stride 2, ceil_mode: the last row and column of windows are half outside,
  // divided by their in-bounds count.
  const TensorHandle avg = Run(
      "AvgPool2d", {hx}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", 1}});
  std::vector<float> expected;
  for (int nc = 0; nc < 6; ++nc) {
    for (int oy = 0; oy < 3; ++oy) {
      for (int ox = 0; ox < 3; ++ox) {
        float sum = 0.0f;
        int count = 0;
        for (int y = 2 * oy; y < std::min(2 * oy + 2, 5); ++y) {
          for (int xx = 2 * ox; xx < 2 * ox + 2; ++xx, ++count) sum += x[(nc * 5 + y) * 6 + xx];
        }
        expected.push_back(sum / static_cast<float>(count));
      }
    }
  }
  EXPECT_THAT(avg.info().dims(), ElementsAreArray(Dims{2, 3, 3, 3}));
  EXPECT_EQ(Values(avg), expected);

  const TensorHandle global = Run("GlobalAvgPool2d", {hx});
  EXPECT_THAT(global.info().dims(), ElementsAreArray(Dims{2, 3, 1, 1}));
  const std::vector<float> means = Values(global);
  for (int nc = 0; nc < 6; ++nc) {
    double sum = 0;
    for (int i = 0; i < 30; ++i) sum += x[nc * 30 + i];
    EXPECT_NEAR(means[nc], sum / 30, 1e-5) << nc;
  }
}

TEST_F(OpsTest, SumAndMeanOverAxesAndEverything) {
  const std::vector<float> x = RandomFloats(24, 50);
  const TensorHandle hx = Put(x, {2, 3, 4});
  std::vector<float> over_1(8, 0.0f);  // axis 1 of (2, 3, 4)
  float total = 0;
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 3; ++b) {
      for (int c = 0; c < 4; ++c) {
        over_1[a * 4 + c] += x[(a * 3 + b) * 4 + c];
        total += x[(a * 3 + b) * 4 + c];
      }
    }
  }
  const TensorHandle sum = Run("Sum", {hx}, {{"axes", Ints{1}}});
  EXPECT_THAT(sum.info().dims(), ElementsAre(2, 4));
  ExpectClose(Values(sum), over_1);
  const TensorHandle kept = Run("Sum", {hx}, {{"axes", Ints{-2}}, {"keepdims", 1}});
  EXPECT_THAT(kept.info().dims(), ElementsAre(2, 1, 4));
  ExpectClose(Values(kept), over_1);
  const TensorHandle mean = Run("Mean", {hx}, {{"axes", Ints{1}}});
  ExpectClose(Values(mean), Map(over_1, [](float v) { return v / 3; }));
  const TensorHandle all = Run("Sum", {hx});
  EXPECT_EQ(all.info().dims_size(), 0);
  ExpectClose(Values(all), {total});
  ExpectClose(Values(Run("Mean", {hx})), {total / 24});
}

// Softmax (or log-softmax) of scale * x along the last axis of rows x cols.
std::vector<float> SoftmaxReference(const std::vector<float>& x, int rows, int cols, float scale,
                                    bool log) {
  std::vector<float> y(x.size());
  for (int r = 0; r < rows; ++r) {
    double max = -INFINITY, sum = 0;
    for (int c = 0; c < cols; ++c) max = std::max<double>(max, scale * x[r * cols + c]);
    for (int c = 0; c < cols; ++c) sum += std::exp(scale * x[r * cols + c] - max);
    for (int c = 0; c < cols; ++c) {
      const double z = scale * x[r * cols + c] - max;
      y[r * cols + c] = static_cast<float>(log ? z - std::log(sum) : std::exp(z) / sum);
    }
  }
  return y;
}

TEST_F(OpsTest, SoftmaxAndLogSoftmaxWithAxisAndScale) {
  const std::vector<float> x = RandomFloats(12, 60, -4.0f, 4.0f);
  const TensorHandle hx = Put(x, {3, 4});
  ExpectClose(Values(Run("Softmax", {hx})), SoftmaxReference(x, 3, 4, 1.0f, false));
  ExpectClose(Values(Run("Softmax", {hx}, {{"axis", -1}, {"scale", 0.5f}})),
              SoftmaxReference(x, 3, 4, 0.5f, false));
  ExpectClose(Values(Run("LogSoftmax", {hx}, {{"axis", 1}, {"scale", 2.0f}})),
              SoftmaxReference(x, 3, 4, 2.0f, true));
  // Along axis 0: the reference on the transpose.
  std::vector<float> xt(12);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) xt[c * 3 + r] = x[r * 4 + c];
  }
  const std::vector<float> yt = SoftmaxReference(xt, 4, 3, 1.0f, false);
  std::vector<float> expected(12);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) expected[r * 4 + c] = yt[c * 3 + r];
  }
  ExpectClose(Values(Run("Softmax", {hx}, {{"axis", 0}})), expected);
}

TEST_F(OpsTest, CastBetweenTypes) {
  using P = onnx::TensorProto;
  const TensorHandle x = Put({1.0f, -2.0f, 0.5f, 65504.0f}, {4});
  const TensorHandle ints =
      Run("Cast", {Put({1.0f, -2.0f, 3.0f, 100.0f}, {4})}, {{"to", P::INT32}});
  EXPECT_EQ(ints.data_type(), P::INT32);
  EXPECT_EQ(session_->Get<int32_t>(ints), (std::vector<int32_t>{1, -2, 3, 100}));
  const TensorHandle halves = Run("Cast", {x}, {{"to", P::FLOAT16}});
  EXPECT_EQ(halves.info().data_type_name(), "FLOAT16");
  EXPECT_EQ(session_->Get<uint16_t>(halves),
            (std::vector<uint16_t>{0x3C00, 0xC000, 0x3800, 0x7BFF}));
  const TensorHandle doubles = Run("Cast", {x}, {{"to", P::DOUBLE}});
  EXPECT_EQ(session_->Get<double>(doubles), (std::vector<double>{1.0, -2.0, 0.5, 65504.0}));
}

// x (row-major, dims d) with its axes reordered by perm, as a row-major copy.
std::vector<float> PermuteReference(const std::vector<float>& x, const Dims& d,
                                    const std::vector<int>& perm) {
  Dims out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = d[perm[i]];
  const Dims in_strides = StridesOf(d), out_strides = StridesOf(out);
  std::vector<float> y(x.size());
  for (int64_t flat = 0; flat < Count(out); ++flat) {
    int64_t source = 0;
    for (size_t i = 0; i < perm.size(); ++i) {
      source += flat / out_strides[i] % out[i] * in_strides[perm[i]];
    }
    y[flat] = x[source];
  }
  return y;
}

TEST_F(OpsTest, ContiguousCopiesAViewRowMajor) {
  const std::vector<float> x = RandomFloats(6, 80);
  const TensorHandle transposed = Run("Transpose", {Put(x, {2, 3})}, {{"dim0", 0}, {"dim1", 1}});
  EXPECT_THAT(transposed.info().strides(), ElementsAre(1, 3));
  const TensorHandle copy = Run("Contiguous", {transposed});
  EXPECT_THAT(copy.info().dims(), ElementsAre(3, 2));
  EXPECT_THAT(copy.info().strides(), ElementsAre(2, 1));
  EXPECT_EQ(Values(copy), PermuteReference(x, {2, 3}, {1, 0}));
}

TEST_F(OpsTest, CopyKeepsAViewInThePool) {
  const std::vector<float> x = RandomFloats(6, 82);
  const TensorHandle hx = session_->Put<float>(x, {2, 3}, {.requires_grad = true});
  client::RunBuilder run;
  const client::RunOutput view = run.Op("Transpose", {hx}, {{"dim0", 0}, {"dim1", 1}});
  const client::RunOutput copy = run.Op("Copy", {view}, {}, v1::PLACEMENT_POOL);
  const TensorHandle kept = session_->Run(run)[copy];
  EXPECT_EQ(kept.info().placement(), v1::PLACEMENT_POOL);
  EXPECT_EQ(kept.info().grad_fn(), "Copy");
  EXPECT_THAT(kept.info().strides(), ElementsAre(2, 1));
  session_->ResetArena();
  EXPECT_EQ(Values(kept), PermuteReference(x, {2, 3}, {1, 0}));
}

TEST_F(OpsTest, DetachDropsTheGradientButKeepsValues) {
  const std::vector<float> x = RandomFloats(4, 81);
  const TensorHandle hx = session_->Put<float>(x, {4}, {.requires_grad = true});
  client::RunBuilder run;
  run.Op("Detach", {hx});
  const TensorHandle detached = session_->Run(run).back();
  EXPECT_FALSE(detached.info().requires_grad());
  EXPECT_EQ(Values(detached), x);
}

TEST_F(OpsTest, ToLayoutChangesStorageNotValues) {
  const Dims d = {1, 8, 2, 3};
  const std::vector<float> x = RandomFloats(Count(d), 90);
  const TensorHandle hx = Put(x, d);
  const TensorHandle nhwc = Run("ToLayout", {hx}, {{"layout", "NHWC"}});
  EXPECT_EQ(nhwc.info().layout(), "NHWC");
  EXPECT_THAT(nhwc.info().dims(), ElementsAreArray(d));
  EXPECT_THAT(nhwc.info().strides(), ElementsAre(48, 1, 24, 8));
  EXPECT_EQ(Values(nhwc), x);

  const TensorHandle blocked = Run("ToLayout", {hx}, {{"layout", "blocked"}, {"block", 4}});
  EXPECT_EQ(blocked.info().layout(), "Blocked");
  EXPECT_EQ(blocked.info().block_size(), 4);
  const TensorHandle back = Run("ToLayout", {blocked}, {{"layout", "NCHW"}});
  EXPECT_EQ(back.info().layout(), "NCHW");
  EXPECT_EQ(Values(back), x);
}

TEST_F(OpsTest, ViewOpsReshapeAndReorder) {
  const Dims d = {2, 3, 4};
  const std::vector<float> x = RandomFloats(Count(d), 100);
  const TensorHandle hx = Put(x, d);

  const TensorHandle reshaped = Run("Reshape", {hx}, {{"shape", Ints{4, -1}}});
  EXPECT_THAT(reshaped.info().dims(), ElementsAre(4, 6));
  EXPECT_EQ(Values(reshaped), x);

  const TensorHandle permuted = Run("Permute", {hx}, {{"perm", Ints{2, 0, 1}}});
  EXPECT_THAT(permuted.info().dims(), ElementsAre(4, 2, 3));
  EXPECT_EQ(Values(permuted), PermuteReference(x, d, {2, 0, 1}));

  const TensorHandle transposed = Run("Transpose", {hx}, {{"dim0", 0}, {"dim1", 2}});
  EXPECT_THAT(transposed.info().dims(), ElementsAre(4, 3, 2));
  EXPECT_EQ(Values(transposed), PermuteReference(x, d, {2, 1, 0}));

  const TensorHandle sliced =
      Run("Slice", {hx}, {{"dim", 2}, {"start", 1}, {"stop", 4}, {"step", 2}});
  EXPECT_THAT(sliced.info().dims(), ElementsAre(2, 3, 2));
  std::vector<float> expected;
  for (int i = 0; i < 6; ++i) {
    for (int k = 1; k < 4; k += 2) expected.push_back(x[i * 4 + k]);
  }
  EXPECT_EQ(Values(sliced), expected);
  const TensorHandle unit_step = Run("Slice", {hx}, {{"dim", 0}, {"start", 1}, {"stop", 2}});
  EXPECT_EQ(Values(unit_step), std::vector<float>(x.begin() + 12, x.end()));
}

TEST_F(OpsTest, ViewOpsChangeExtentOneDimensions) {
  const std::vector<float> x = RandomFloats(6, 110);
  const TensorHandle column = Put({x.begin(), x.begin() + 3}, {3, 1});
  const TensorHandle expanded = Run("Expand", {column}, {{"shape", Ints{2, 3, 4}}});
  EXPECT_THAT(expanded.info().dims(), ElementsAre(2, 3, 4));
  std::vector<float> expected(24);
  for (int i = 0; i < 24; ++i) expected[i] = x[i / 4 % 3];
  EXPECT_EQ(Values(expanded), expected);

  const TensorHandle padded = Put(x, {1, 3, 1, 2});
  const TensorHandle squeezed = Run("Squeeze", {padded});
  EXPECT_THAT(squeezed.info().dims(), ElementsAre(3, 2));
  EXPECT_EQ(Values(squeezed), x);
  EXPECT_THAT(Run("Squeeze", {padded}, {{"axes", Ints{0}}}).info().dims(), ElementsAre(3, 1, 2));

  const TensorHandle unsqueezed = Run("Unsqueeze", {Put(x, {3, 2})}, {{"dim", 1}});
  EXPECT_THAT(unsqueezed.info().dims(), ElementsAre(3, 1, 2));
  EXPECT_EQ(Values(unsqueezed), x);
}

// The optimizers' steps here, as torch.optim defines them (one parameter).
struct AdamWReference {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 1e-2f;
  std::vector<float> m{}, v{};
  int step = 0;
  void Step(std::vector<float>& p, const std::vector<float>& g) {
    m.resize(p.size());
    v.resize(p.size());
    ++step;
    const double bc1 = 1 - std::pow(double{beta1}, step), bc2 = 1 - std::pow(double{beta2}, step);
    for (size_t i = 0; i < p.size(); ++i) {
      p[i] *= 1 - lr * weight_decay;
      m[i] = beta1 * m[i] + (1 - beta1) * g[i];
      v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
      const double denom = std::sqrt(v[i]) / std::sqrt(bc2) + eps;
      p[i] -= static_cast<float>(lr / bc1 * m[i] / denom);
    }
  }
};

TEST_F(OpsTest, AdamWUpdatesEveryParameterAndItsStatesInPlace) {
  std::vector<float> w = RandomFloats(6, 90), b = RandomFloats(3, 91);
  const TensorHandle hw = Put(w, {2, 3}), hb = Put(b, {3});
  const TensorHandle step = session_->Put<int64_t>(std::vector<int64_t>{0}, {});
  const TensorHandle mw = Put(std::vector<float>(6), {2, 3}),
                     vw = Put(std::vector<float>(6), {2, 3});
  const TensorHandle mb = Put(std::vector<float>(3), {3}), vb = Put(std::vector<float>(3), {3});
  AdamWReference rw{.lr = 0.01f}, rb{.lr = 0.01f};
  for (int s = 1; s <= 3; ++s) {
    const std::vector<float> gw = RandomFloats(6, 92 + s), gb = RandomFloats(3, 95 + s);
    const TensorHandle result = Run(
        "AdamW", {step, hw, hb, Put(gw, {2, 3}), Put(gb, {3}), mw, mb, vw, vb}, {{"lr", 0.01f}});
    EXPECT_EQ(session_->Get<int64_t>(result), std::vector<int64_t>{s}) << "the new step count";
    rw.Step(w, gw);
    rb.Step(b, gb);
    ExpectClose(Values(hw), w);
    ExpectClose(Values(hb), b);
    ExpectClose(Values(mb), rb.m);
    ExpectClose(Values(vw), rw.v);
  }
  EXPECT_EQ(session_->Get<int64_t>(step), std::vector<int64_t>{3});
}

TEST_F(OpsTest, SgdStepsAParameterSoTheGraphThatSavedItCannotBackward) {
  const TensorHandle w =
      session_->Put<float>(std::vector<float>{1, 2}, {2}, {.requires_grad = true});
  const TensorHandle x = Put({3, 4}, {2});
  client::RunBuilder run;
  const client::RunOutput loss = run.Op("Sum", {run.Op("Mul", {w, x})});  // Mul saves w
  const TensorHandle root = session_->Run(run)[loss];
  const TensorHandle g = session_->Backward(root, {w}, {.retain_graph = true})[0];
  const TensorHandle buf = Put({0, 0}, {2});
  const TensorHandle step = session_->Put<int64_t>(std::vector<int64_t>{0}, {});
  Run("SGD", {step, w, g, buf}, {{"lr", 0.5f}, {"momentum", 0.9f}});
  EXPECT_EQ(Values(w), (std::vector<float>{1 - 1.5f, 2 - 2.0f}));
  EXPECT_EQ(Values(buf), (std::vector<float>{3, 4})) << "the first step sets the buffer to grad";
  EXPECT_EQ(w.info().version() + 1, session_->Describe(w).info().version());
  EXPECT_TRUE(FailsWith([&] { session_->Backward(root, {w}); },
                        grpc::StatusCode::FAILED_PRECONDITION, {"version"}));
}

TEST_F(OpsTest, ClipGradNormReturnsTheTotalNormAndScalesTheGradients) {
  const TensorHandle a = Put({3, 0}, {2}), b = Put({4}, {1});
  const TensorHandle norm = Run("ClipGradNorm", {a, b}, {{"max_norm", 1.0f}});
  EXPECT_THAT(Values(norm), ElementsAre(5.0f));
  ExpectClose(Values(a), {0.6f, 0});
  ExpectClose(Values(b), {0.8f});
}

TEST_F(OpsTest, MalformedOptimizerCallsAreInvalidArgumentsSayingWhatIsWrong) {
  const TensorHandle p = Put({1, 2}, {2}), g = Put({1, 1}, {2}), short_g = Put({1}, {1});
  const TensorHandle step = session_->Put<int64_t>(std::vector<int64_t>{0}, {});
  const auto fails = [&](const std::vector<RunInput>& inputs, const std::vector<NamedAttr>& attrs,
                         const std::vector<std::string>& parts) {
    return FailsWith([&] { Run("SGD", inputs, attrs); }, grpc::StatusCode::INVALID_ARGUMENT, parts);
  };
  EXPECT_TRUE(fails({step, p, g}, {}, {"attribute 'lr' (a float) is required"}));
  EXPECT_TRUE(fails({step, p, g}, {{"lr", "fast"}}, {"attribute 'lr' must be a float (f)"}));
  EXPECT_TRUE(fails({step, p, g}, {{"lr", 0.1f}, {"momentum", 0.9f}},
                    {"N params, then N grads, then N momentum_buffers", "got 2 tensors"}));
  EXPECT_TRUE(fails({step, p, short_g}, {{"lr", 0.1f}}, {"grads[0] is [1]", "params[0] is [2]"}));
  EXPECT_TRUE(fails({p, p, g}, {{"lr", 0.1f}}, {"step must be a one-element INT64 tensor"}));
  EXPECT_TRUE(fails({step, p, p}, {{"lr", 0.1f}}, {"params[0] and grads[0] share memory"}));
  EXPECT_TRUE(fails({step, p, g}, {{"lr", -1.0f}}, {"invalid lr"}));
  EXPECT_THAT(Values(p), ElementsAre(1, 2)) << "a refused call writes nothing";
  EXPECT_EQ(session_->Get<int64_t>(step), std::vector<int64_t>{0});
}

TEST_F(OpsTest, EmbeddingAndGatherPickRowsAndNameTheFirstBadIndex) {
  const TensorHandle table =
      session_->Put<float>(std::vector<float>{0, 1, 2, 3, 4, 5}, {3, 2}, {.requires_grad = true});
  const TensorHandle ids = session_->Put<int32_t>(std::vector<int32_t>{2, 0, 2}, {3});
  client::RunBuilder run;
  const client::RunOutput rows = run.Op("Embedding", {table, ids}, {{"skip_id", 0}});
  const client::RunOutput loss = run.Op("Sum", {rows});
  const auto out = session_->Run(run);
  EXPECT_THAT(out[rows].info().dims(), ElementsAre(3, 2));
  EXPECT_THAT(Values(out[rows]), ElementsAre(4, 5, 0, 1, 4, 5));
  EXPECT_THAT(Values(session_->Backward(out[loss], {table})[0]), ElementsAre(0, 0, 0, 0, 2, 2))
      << "row 0 is the skip id; row 2 is picked twice";
  const TensorHandle picks = session_->Put<int64_t>(std::vector<int64_t>{-1, 0}, {2});
  EXPECT_THAT(Values(Run("Gather", {table, picks}, {{"axis", 1}})), ElementsAre(1, 0, 3, 2, 5, 4));
  EXPECT_TRUE(FailsWith(
      [&] {
        Run("Embedding", {table, session_->Put<int64_t>(std::vector<int64_t>{1, 3}, {1, 2})});
      },
      grpc::StatusCode::INVALID_ARGUMENT, {"index 3", "position [0, 1]", "table of 3 rows"}));
  EXPECT_TRUE(FailsWith([&] { Run("Gather", {table, table}); }, grpc::StatusCode::INVALID_ARGUMENT,
                        {"indices", "INT64"}));
}

TEST_F(OpsTest, ConcatTakesAnyNumberOfInputsAndSplitReturnsOnePiece) {
  const TensorHandle a = Put({1, 2}, {1, 2}), b = Put({3, 4, 5, 6}, {2, 2});
  const TensorHandle joined = Run("Concat", {a, b, a}, {{"axis", 0}});
  EXPECT_THAT(joined.info().dims(), ElementsAre(4, 2));
  EXPECT_THAT(Values(joined), ElementsAre(1, 2, 3, 4, 5, 6, 1, 2));
  EXPECT_THAT(Values(Run("Split", {joined}, {{"split", Ints{1, 3}}, {"index", 1}})),
              ElementsAre(3, 4, 5, 6, 1, 2));
  EXPECT_THAT(Values(Run("Split", {joined}, {{"axis", -1}, {"num_outputs", 2}, {"index", 1}})),
              ElementsAre(2, 4, 6, 2));
  EXPECT_TRUE(FailsWith([&] { Run("Concat", {a, Put({1, 2, 3}, {1, 3})}, {{"axis", 0}}); },
                        grpc::StatusCode::INVALID_ARGUMENT, {"Concat", "inputs[1] [1, 3]"}));
  EXPECT_TRUE(FailsWith([&] { Run("Split", {joined}, {{"split", Ints{1, 1}}, {"index", 0}}); },
                        grpc::StatusCode::INVALID_ARGUMENT, {"add up to 2", "extent 4"}));
}

TEST_F(OpsTest, ExtremaArgExtremaPadTileAndCumSum) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const TensorHandle x = Put({1, 3, 3, 2, nan, 5, nan, -1}, {2, 4});
  const TensorHandle max = Run("ReduceMax", {x}, {{"axes", Ints{1}}, {"keepdims", 1}});
  EXPECT_THAT(max.info().dims(), ElementsAre(2, 1));
  const std::vector<float> m = Values(max);
  EXPECT_EQ(m[0], 3);
  EXPECT_TRUE(std::isnan(m[1])) << "NaN wins";
  const std::vector<float> columns = Values(Run("ReduceMin", {x}, {{"axes", Ints{0}}}));
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_TRUE(std::isnan(columns[0]) && std::isnan(columns[2])) << "min(1, NaN) is NaN";
  EXPECT_EQ(columns[1], 3);
  EXPECT_EQ(columns[3], -1);
  const TensorHandle arg = Run("ArgMax", {x}, {{"axis", 1}});
  EXPECT_EQ(arg.info().data_type(), onnx::TensorProto::INT64);
  EXPECT_EQ(session_->Get<int64_t>(arg), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(session_->Get<int64_t>(Run("ArgMin", {x}, {{"axis", -1}, {"select_last_index", 1}})),
            (std::vector<int64_t>{0, 2}));
  const TensorHandle row = Put({1, 2, 3}, {1, 3});
  EXPECT_THAT(Values(Run("Pad", {row}, {{"pads", Ints{0, 2, 0, 1}}, {"mode", "reflect"}})),
              ElementsAre(3, 2, 1, 2, 3, 2));
  EXPECT_THAT(Values(Run("Pad", {row}, {{"pads", Ints{1, -1, 0, 0}}, {"value", 9.0f}})),
              ElementsAre(9, 9, 2, 3));
  EXPECT_THAT(Values(Run("Tile", {row}, {{"repeats", Ints{2, 1}}})), ElementsAre(1, 2, 3, 1, 2, 3));
  EXPECT_THAT(Values(Run("CumSum", {row}, {{"axis", 1}, {"exclusive", 1}, {"reverse", 1}})),
              ElementsAre(5, 3, 0));
  const auto mirror = [&] { Run("Pad", {row}, {{"pads", Ints{0, 1, 0, 1}}, {"mode", "mirror"}}); };
  EXPECT_TRUE(FailsWith(mirror, grpc::StatusCode::INVALID_ARGUMENT,
                        {"attribute 'mode' must be", "(got \"mirror\")"}));
  const auto empty_axis = [&] { Run("ArgMax", {Put({}, {2, 0})}, {{"axis", 1}}); };
  EXPECT_TRUE(FailsWith(empty_axis, grpc::StatusCode::INVALID_ARGUMENT, {"ArgMax", "is empty"}));
}

// LayerNorm and RMSNorm over the last axis, BatchNorm2d in training (the running statistics
// change on the server, as later Gets see) and then in inference with them.
TEST_F(OpsTest, LayerNormRMSNormAndBatchNorm2d) {
  const std::vector<float> x = RandomFloats(12, 61);
  const TensorHandle hx = Put(x, {3, 4});
  const TensorHandle scale = Put({1, 2, 3, 4}, {4}), bias = Put({0, 1, 0, 1}, {4});
  const std::vector<float> ln = Values(Run("LayerNorm", {hx, scale, bias}, {{"epsilon", 1e-3f}}));
  const std::vector<float> rms = Values(Run("RMSNorm", {hx}));
  std::vector<float> want_ln, want_rms;
  for (int r = 0; r < 3; ++r) {
    double mean = 0, square = 0;
    for (int i = 0; i < 4; ++i) mean += x[r * 4 + i] / 4.0;
    for (int i = 0; i < 4; ++i) square += x[r * 4 + i] * double{x[r * 4 + i]} / 4.0;
    double var = 0;
    for (int i = 0; i < 4; ++i) var += (x[r * 4 + i] - mean) * (x[r * 4 + i] - mean) / 4.0;
    for (int i = 0; i < 4; ++i) {
      want_ln.push_back(
          static_cast<float>((x[r * 4 + i] - mean) / std::sqrt(var + 1e-3) * (i + 1) + (i % 2)));
      want_rms.push_back(static_cast<float>(x[r * 4 + i] / std::sqrt(square + 1e-5)));
    }
  }
  ExpectClose(ln, want_ln);
  ExpectClose(rms, want_rms);

  // Channel 0 holds 1, 3, 5, 7 and channel 1 holds 0, 2, 0, 2 over N = 2, H = 1, W = 2.
  const TensorHandle img = Put({1, 3, 0, 2, 5, 7, 0, 2}, {2, 2, 1, 2});
  const TensorHandle mean = Put({0, 0}, {2}), var = Put({1, 1}, {2});
  const std::vector<float> trained = Values(Run(
      "BatchNorm2d", {img, mean, var}, {{"training", 1}, {"momentum", 0.5f}, {"epsilon", 0.0f}}));
  const float r = 1 / std::sqrt(5.0f);  // channel 0: mean 4, variance 5
  ExpectClose(trained, {-3 * r, -r, -1, 1, r, 3 * r, -1, 1});
  ExpectClose(Values(mean), {2, 0.5f});
  ExpectClose(Values(var), {0.5f + 10.0f / 3, 0.5f + 2.0f / 3});
  const std::vector<float> inferred =
      Values(Run("BatchNorm2d", {img, mean, var, Put({2, 1}, {2})}, {{"epsilon", 0.0f}}));
  EXPECT_NEAR(inferred[0], 2 * (1 - 2) / std::sqrt(0.5 + 10.0 / 3), 1e-5);
  ExpectClose(Values(mean), {2, 0.5f});  // inference leaves them
}

TEST_F(OpsTest, CrossEntropyAndItsGradientThroughTheServer) {
  // Row 0 counts (target 2), row 1 is ignored: the mean is row 0's loss, and only row 0 gets
  // softmax - onehot.
  const TensorHandle x =
      session_->Put<float>(std::vector<float>{1, 2, 3, 5, 5, 5}, {2, 3}, {.requires_grad = true});
  const TensorHandle labels = session_->Put<int64_t>(std::vector<int64_t>{2, -100}, {2});
  client::RunBuilder run;
  const client::RunOutput loss = run.Op("CrossEntropy", {x, labels});
  const TensorHandle root = session_->Run(run)[loss];
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  ExpectClose(Values(root), {static_cast<float>(std::log(z) - 3)});
  const TensorHandle g = session_->Backward(root, {x})[0];
  ExpectClose(Values(g),
              {static_cast<float>(std::exp(1.0) / z), static_cast<float>(std::exp(2.0) / z),
               static_cast<float>(std::exp(3.0) / z - 1), 0, 0, 0});
  EXPECT_EQ(root.info().grad_fn(), "CrossEntropy");
}

TEST_F(OpsTest, LossesTakeReductionWeightsAndInt32Targets) {
  const TensorHandle lp = Put({-1, -2, -3, -4, -5, -6}, {2, 3});
  const TensorHandle t32 = session_->Put<int32_t>(std::vector<int32_t>{0, 2}, {2});
  EXPECT_THAT(Values(Run("NLLLoss", {lp, t32}, {{"reduction", "none"}})), ElementsAre(1, 6));
  EXPECT_THAT(Values(Run("NLLLoss", {lp, t32, Put({3, 1, 1}, {3})})), ElementsAre(9.0f / 4));
  EXPECT_THAT(Values(Run("MSELoss", {lp, Put({0, 0, 0, 0, 0, 0}, {2, 3})}, {{"reduction", "sum"}})),
              ElementsAre(91));
  // Dropout: the same seed gives the same mask; training 0 gives X.
  const TensorHandle x = Put(std::vector<float>(64, 1.0f), {8, 8});
  const std::vector<float> a = Values(Run("Dropout", {x}, {{"seed", int64_t{5}}}));
  EXPECT_EQ(Values(Run("Dropout", {x}, {{"seed", int64_t{5}}})), a);
  for (float v : a) EXPECT_TRUE(v == 0 || v == 2) << v;
  EXPECT_EQ(Values(Run("Dropout", {x}, {{"seed", int64_t{5}}, {"training", int64_t{0}}})),
            std::vector<float>(64, 1.0f));
}

TEST_F(OpsTest, AnOutOfRangeTargetIsAnInvalidArgumentNamingItAndTheClassCount) {
  const TensorHandle x = Put({1, 2, 3, 4, 5, 6}, {2, 3});
  const TensorHandle labels = session_->Put<int64_t>(std::vector<int64_t>{0, 3}, {2});
  EXPECT_TRUE(FailsWith([&] { Run("CrossEntropy", {x, labels}); },
                        grpc::StatusCode::INVALID_ARGUMENT, {"target 3", "3 classes"}));
  EXPECT_TRUE(FailsWith([&] { Run("CrossEntropy", {x, x}); }, grpc::StatusCode::INVALID_ARGUMENT,
                        {"target", "Cast it to INT64"}));
}

}  // namespace
}  // namespace onemodel::testing
